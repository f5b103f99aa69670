"""The architecture stays visible in the imports: no import cycle between the auditor's
modules, the report formats what the protocols derive without being imported back, no
protocol module knows a reader by name, `auditor` never imports `runner`, and no module of
the auditor, the runner or `schemas` grows past `MAX_LINES`."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AUDITOR = ROOT / "auditor"
RUNNER = ROOT / "runner"
SCHEMAS = ROOT / "schemas"
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, *, lazy: bool) -> Iterator[str]:
    """The modules PATH imports: at module level only (what runs when it is imported), or
    LAZY ones inside functions too; never those under `if TYPE_CHECKING:`."""
    module = _module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def walk(nodes: list[ast.stmt]) -> Iterator[str]:
        for node in nodes:
            if isinstance(node, ast.Import):
                yield from (a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(module, node, is_package)
                yield target
                yield from (f"{target}.{a.name}" for a in node.names)
            elif isinstance(node, ast.If):
                if not _is_type_checking(node.test):
                    yield from walk(node.body)
                yield from walk(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (
                    node.body,
                    node.orelse,
                    node.finalbody,
                    *(h.body for h in node.handlers),
                ):
                    yield from walk(block)
            elif lazy and isinstance(
                node,
                ast.FunctionDef
                | ast.AsyncFunctionDef
                | ast.ClassDef
                | ast.With
                | ast.For
                | ast.While,
            ):
                yield from walk(node.body)

    yield from walk(tree.body)


def _auditor_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(AUDITOR.rglob("*.py"))}


def _graph(*, lazy: bool) -> dict[str, set[str]]:
    modules = _auditor_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {m for m in _imports(path, lazy=lazy) if m in modules and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_between_auditor_modules() -> None:
    assert _cycles(_graph(lazy=False)) == []


def test_the_report_is_never_imported_back() -> None:
    """`auditor.report` formats what the protocols, the archive and the readers derive; none
    of those imports it, not even lazily inside a function (the protocols' report parts name
    their figures, the report draws them)."""
    graph = _graph(lazy=True)
    offenders = sorted(
        (m, t)
        for m, targets in graph.items()
        if not m.startswith(("auditor.report", "auditor.cli", "auditor.archive.compare"))
        for t in targets
        if t.startswith("auditor.report")
    )
    assert offenders == []


def _reader_tests(tree: ast.AST) -> Iterator[ast.AST]:
    """Comparisons and string tests of a reader's name (`x.reader == ...`, `family == ...`,
    `reader.startswith(...)`, `... in READERS`)."""

    def names_reader(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "reader") or (
            isinstance(node, ast.Name) and node.id in ("reader", "family")
        )

    for node in ast.walk(tree):
        compares = isinstance(node, ast.Compare) and any(
            names_reader(x) for x in (node.left, *node.comparators)
        )
        calls = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and (names_reader(node.func.value) or node.func.attr == "by_name")
        )
        if compares or calls:
            yield node


def test_no_protocol_module_names_a_reader() -> None:
    """Protocols read what a frame's columns say (counter or interval, domain, what it
    includes) and what a reader's `meta` records, never which reader wrote it: a new reader
    needs no protocol change. No protocol module compares a reader's name or looks a reader
    up by name."""
    found = []
    packages = [AUDITOR / "protocols" / p for p in ("a", "b")]
    for path in sorted(f for package in packages for f in package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}"
            for node in _reader_tests(tree)
        ]
    assert found == []


def test_the_auditor_never_imports_the_runner() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {m}"
        for path in sorted(AUDITOR.rglob("*.py"))
        for m in _imports(path, lazy=True)
        if m == "runner" or m.startswith("runner.")
    ]
    assert offenders == []


def test_the_reader_check_finds_a_reader_test() -> None:
    tree = ast.parse(
        "if p.reader == 'x' or family.startswith('y') or evidence_kinds.by_name('z'): pass"
    )
    assert len(list(_reader_tests(tree))) == 3


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_is_over_the_line_limit() -> None:
    """A module of the auditor, the runner or the schemas package that grows past
    `MAX_LINES` holds more than one concern: split it."""
    long = sorted(
        f"{p.relative_to(ROOT)}: {n}"
        for package in (AUDITOR, RUNNER, SCHEMAS)
        for p in package.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    )
    assert long == []


def _protocol_branches(tree: ast.AST) -> Iterator[int]:
    """Lines of comparisons with a protocol's name (`x == PROTOCOL_B`, `PROTOCOL_A != y`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names = [
                n
                for n in (node.left, *node.comparators)
                if isinstance(n, ast.Name) and n.id.startswith("PROTOCOL_")
            ]
            if names:
                yield node.lineno


def test_shared_code_has_no_protocol_branch() -> None:
    """What is protocol-shaped (figures, ranking, subjects, citations, replay's files) is
    each protocol's part (`auditor/protocols/<p>/`): the archive, the comparison, replay, the
    report and the outputs never test which protocol they hold."""
    shared = [p for p in AUDITOR.rglob("*.py") if "protocols" not in p.relative_to(AUDITOR).parts]
    offenders = [
        f"{p.relative_to(ROOT)}:{line}"
        for p in shared
        for line in _protocol_branches(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert offenders == []


def test_the_branch_check_finds_a_branch() -> None:
    tree = ast.parse("if protocol == PROTOCOL_B or PROTOCOL_A != x: pass")
    assert list(_protocol_branches(tree)) == [1, 1]


def test_subjects_are_built_in_their_protocols_words() -> None:
    """A `Subject` is built by its protocol's `subject.py` (`variant_subject`,
    `policy_subject`), in its protocol's words, never with another protocol's keywords."""
    makers = {AUDITOR / "protocols" / p / "subject.py" for p in ("a", "b")}
    offenders = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for p in AUDITOR.rglob("*.py")
        if p not in makers
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "Subject"
    ]
    assert offenders == []
