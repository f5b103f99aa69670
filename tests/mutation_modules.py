"""Each rule's mutation is one module of its protocol's `mutations/` folder, named after the
rule's code in lower case (`tests/protocols/b/mutations/b0401.py` is B0401's): its docstring says
what it changes and why only that rule can catch it; `TEMPLATE` names the clean run it starts
from (None: it builds its own run); `MUTATION` edits the copy of that run, given its folder;
`COMPANIONS`, where present, names the rules whose error is by nature the consequence of this
one. Modules whose name starts with `_` hold what several mutations share.

Both protocols' folders are called `mutations`, so neither can be imported by that name: each is
imported as a package of its own (`a_mutations`, `b_mutations`), once per session."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

Mutation = Callable[[Path], None]


@dataclass(frozen=True)
class RuleMutation:
    """One mutation module, read: the rule code its file name gives, and what it declares."""

    code: str
    path: Path
    doc: str
    template: str | None
    mutate: Mutation | None
    companions: frozenset[str]
    declares_template: bool


def package(folder: Path, name: str) -> ModuleType:
    """FOLDER (a package: it has an `__init__.py`) imported as NAME, or the one already so."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None, folder
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def discover(folder: Path, name: str) -> dict[str, RuleMutation]:
    """The mutation modules of FOLDER by rule code (upper case), imported as NAME.<module>."""
    pkg = package(folder, name)
    found: dict[str, RuleMutation] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{name}.{info.name}")
        found[info.name.upper()] = RuleMutation(
            code=info.name.upper(),
            path=Path(module.__file__ or folder / info.name),
            doc=inspect.getdoc(module) or "",
            template=getattr(module, "TEMPLATE", None),
            mutate=getattr(module, "MUTATION", None),
            companions=frozenset(getattr(module, "COMPANIONS", ())),
            declares_template=hasattr(module, "TEMPLATE"),
        )
    return dict(sorted(found.items()))


def faults(
    codes: Iterable[str],
    mutations: Mapping[str, RuleMutation],
    folder: Path,
    templates: Iterable[str | None],
) -> list[str]:
    """What keeps the mutations one per rule, each complete: a rule without its module, a
    module whose name is no rule's code, one without docstring, `MUTATION` or a known
    `TEMPLATE`, companions that are no rules."""
    rules = set(codes)
    known = set(templates)
    out = [
        f"{code}: no mutation module (add {_shown(folder / (code.lower() + '.py'))})"
        for code in sorted(rules - set(mutations))
    ]
    for code, m in mutations.items():
        where = m.path.name
        if code not in rules:
            out.append(f"{where}: names {code}, which is no rule of the protocol")
        if not m.doc:
            out.append(f"{where}: no docstring (what it changes, why only {code} catches it)")
        if not callable(m.mutate):
            out.append(f"{where}: no callable MUTATION")
        if not m.declares_template:
            out.append(f"{where}: no TEMPLATE (the clean run it starts from)")
        elif m.template not in known:
            out.append(f"{where}: TEMPLATE {m.template!r} is none of {sorted(map(str, known))}")
        out.extend(
            f"{where}: companion {c} is no rule of the protocol"
            for c in sorted(m.companions - rules)
        )
    return out


def _shown(path: Path) -> str:
    """PATH from the repository's root when it lies inside it."""
    root = Path(__file__).resolve().parent.parent
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
