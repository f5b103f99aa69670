"""The runner's layout mirrors the auditor's protocols: `runner/a/` is protocol A, `runner/b/`
protocol B, and the modules beside them are shared. Each protocol's package imports only its
own modules and the shared ones; the shared modules import neither protocol (the CLI alone
dispatches to both); `auditor/` never imports `runner`. Read from the source with `ast`, so
an import inside a function counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNNER = ROOT / "runner"


def _imports(source: bytes | str) -> set[str]:
    """The absolute module names a source imports (`from runner.a import x` gives `runner.a.x`
    as well as `runner.a`, since `x` may be a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _part(module: str) -> str | None:
    """`a`, `b` or `shared` for a runner module name; None outside the runner."""
    parts = module.split(".")
    if parts[0] != "runner":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in ("a", "b") else "shared"


def _crossings(own: str, imported: set[str]) -> list[str]:
    """The runner modules imported that are neither `own`'s nor shared."""
    return sorted(m for m in imported if _part(m) not in (None, own, "shared"))


def _modules() -> list[Path]:
    return sorted(p for p in RUNNER.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_runner_module_imports_only_its_protocol_and_shared(path: Path) -> None:
    rel = path.relative_to(RUNNER)
    if rel.as_posix() == "cli.py":
        return  # the commands: the one place that reaches both protocols
    own = rel.parts[0] if rel.parts[0] in ("a", "b") else "shared"
    wrong = _crossings(own, _imports(path.read_bytes()))
    assert not wrong, f"runner/{rel.as_posix()} ({own}) imports {wrong}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_runner_module_has_a_docstring(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_bytes()))
    assert doc and doc.strip(), f"{path.relative_to(ROOT)} has no module docstring"


def test_auditor_never_imports_runner() -> None:
    offenders = sorted(
        f"{p.relative_to(ROOT)}: {m}"
        for p in (ROOT / "auditor").rglob("*.py")
        if "__pycache__" not in p.parts
        for m in _imports(p.read_bytes())
        if m.split(".")[0] == "runner"
    )
    assert not offenders


def test_the_check_sees_a_crossing() -> None:
    """The checks above can fail: protocol B importing protocol A, a shared module importing
    a protocol (`from runner import b` too), and a protocol importing the shared modules and
    the standard library is fine."""
    assert _crossings("b", _imports("from runner.a.passes import now_iso")) == [
        "runner.a.passes",
        "runner.a.passes.now_iso",
    ]
    assert _crossings("shared", _imports("from runner import b")) == ["runner.b"]
    assert _crossings("shared", _imports("import runner.a.memory")) == ["runner.a.memory"]
    assert (
        _crossings(
            "a",
            _imports(
                "import json\nimport runner\n"
                "from runner.records import now_iso\n"
                "from runner.a import claims"
            ),
        )
        == []
    )
