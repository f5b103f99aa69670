"""The mutation modules' discovery and the meta-check the protocols' mutation tests assert:
a rule without its module, a module naming no rule, and a module that is not complete are each
named; a complete set is not."""

from __future__ import annotations

from pathlib import Path

import mutation_modules

COMPLETE = '''"""X0001: a doc."""

TEMPLATE = "clean"


def mutate(root):
    (root / "x").write_text("")


MUTATION = mutate
'''


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "mutations"
    folder.mkdir()
    (folder / "__init__.py").write_text('"""Test mutations."""\n')
    (folder / "_helpers.py").write_text("SHARED = 1\n")
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_a_complete_set_has_no_fault(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        {
            "x0001.py": COMPLETE,
            "x0002.py": COMPLETE.replace(
                'TEMPLATE = "clean"', 'TEMPLATE = None\nCOMPANIONS = frozenset({"X0001"})'
            ),
        },
    )
    found = mutation_modules.discover(folder, "complete_mutations")
    assert list(found) == ["X0001", "X0002"]  # `_helpers` is no rule's
    assert found["X0002"].template is None and found["X0002"].companions == {"X0001"}
    root = tmp_path / "run"
    root.mkdir()
    assert found["X0001"].mutate is not None
    found["X0001"].mutate(root)
    assert (root / "x").exists()
    assert mutation_modules.faults(["X0001", "X0002"], found, folder, ("clean", None)) == []


def test_each_fault_is_named(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        {
            "x0002.py": COMPLETE.replace('"""X0001: a doc."""\n', ""),
            "x0003.py": COMPLETE.replace("MUTATION = mutate\n", ""),
            "x0004.py": COMPLETE.replace('TEMPLATE = "clean"\n', ""),
            "x0005.py": COMPLETE.replace('"clean"', '"dirty"'),
            "x0006.py": COMPLETE + 'COMPANIONS = frozenset({"X0099"})\n',
            "x9999.py": COMPLETE,
        },
    )
    found = mutation_modules.discover(folder, "faulty_mutations")
    codes = ["X0001", "X0002", "X0003", "X0004", "X0005", "X0006"]
    faults = mutation_modules.faults(codes, found, folder, ("clean",))
    assert faults == [
        f"X0001: no mutation module (add {folder / 'x0001.py'})",
        "x0002.py: no docstring (what it changes, why only X0002 catches it)",
        "x0003.py: no callable MUTATION",
        "x0004.py: no TEMPLATE (the clean run it starts from)",
        "x0005.py: TEMPLATE 'dirty' is none of ['clean']",
        "x0006.py: companion X0099 is no rule of the protocol",
        "x9999.py: names X9999, which is no rule of the protocol",
    ]
