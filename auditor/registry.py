"""One way to find plug-ins, whatever their family: a package holds one module per plug-in,
and each module names its plug-in in one attribute (`RULE`, `READER`, `FORMAT`, `REPORT`).
Adding a plug-in is adding its module; no list is edited anywhere.

A `Registry` lists its package's modules without importing them (so `--format` choices
cost nothing), imports one module when its plug-in is asked for, and checks that what the
module declares is of the family's type (a `typing.Protocol` marked `runtime_checkable`, or
a class): a module that looks like a plug-in but declares none, or declares one under
another name, is a bug and raises here instead of silently never running.

Modules whose name starts with `_` are the family's helpers, never plug-ins.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, TypeVar

P = TypeVar("P")


class RegistryError(TypeError):
    """A plug-in module that does not declare what its family needs (a bug of the auditor)."""


@dataclass(frozen=True, eq=False)
class Registry(Generic[P]):
    """The plug-ins of one family, found in PACKAGE.

    `key` says what a plug-in is looked up by: by default its module's name (an output
    format `sarif` lives in `sarif.py`, and the module name must equal the plug-in's
    `name`); a family whose modules are named otherwise (rules: `a0201_ids_exactly_once`,
    looked up by code) gives its own."""

    family: str
    """What the plug-ins are, in words (`check output format`), for error messages."""
    package: str
    """Dotted name of the package holding one module per plug-in."""
    attribute: str
    """The module attribute that holds the plug-in."""
    kind: type[P]
    """What every plug-in must be (checked with `isinstance`)."""
    module_pattern: str = r"^[a-z][a-z0-9_]*$"
    """Modules of the package that are plug-ins (others are helpers)."""
    key: Callable[[Any], str] | None = None
    """The name a plug-in is looked up by; None: its module's name, which must equal the
    plug-in's `name` attribute."""
    first: tuple[str, ...] = ()
    """Names listed first, in this order (the default format); the rest sorted."""
    validate: Callable[[str, Any], None] | None = None
    """An extra check of a plug-in against its module's name; raises `RegistryError`."""
    _loaded: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def modules(self) -> tuple[str, ...]:
        """The plug-in modules' names, without importing any."""
        package = importlib.import_module(self.package)
        pattern = re.compile(self.module_pattern)
        found = sorted(
            info.name for info in pkgutil.iter_modules(package.__path__) if pattern.match(info.name)
        )
        head = [n for n in self.first if n in found]
        return (*head, *(n for n in found if n not in head))

    def _load(self, module_name: str) -> P:
        if module_name in self._loaded:
            return self._loaded[module_name]
        module = importlib.import_module(f"{self.package}.{module_name}")
        plugin = getattr(module, self.attribute, None)
        if plugin is None:
            raise RegistryError(
                f"{module.__name__} declares no {self.attribute} (a {self.family} module must)"
            )
        if not isinstance(plugin, self.kind):
            raise RegistryError(
                f"{module.__name__}.{self.attribute} is a "
                f"{type(plugin).__name__}, not a {self.kind.__name__}"
            )
        named = getattr(plugin, "name", module_name)
        if self.key is None and named != module_name:
            raise RegistryError(
                f"{module.__name__}.{self.attribute} is named "
                f"{named!r}, not {module_name!r} like its module"
            )
        if self.validate is not None:
            self.validate(module_name, plugin)
        self._loaded[module_name] = plugin
        return plugin

    def names(self) -> list[str]:
        """Every plug-in's name. Without a custom `key`, no module is imported."""
        if self.key is None:
            return list(self.modules)
        return [self.key(p) for p in self.all()]

    def all(self) -> tuple[P, ...]:
        """Every plug-in, in `modules` order, each module imported once."""
        return tuple(self._load(m) for m in self.modules)

    def __iter__(self) -> Iterator[P]:
        return iter(self.all())

    def get(self, name: str) -> P | None:
        """The plug-in named NAME, or None when there is none."""
        if self.key is None:
            return self._load(name) if name in self.modules else None
        return next((p for p in self.all() if self.key(p) == name), None)

    def __getitem__(self, name: str) -> P:
        plugin = self.get(name)
        if plugin is None:
            raise KeyError(f"no {self.family} named {name!r} (known: {', '.join(self.names())})")
        return plugin


def lazy(dotted: str, attribute: str, kind: type) -> Callable[[], Any]:
    """A single plug-in (a protocol's report part) imported on first use and checked like a
    registry's: `lazy("auditor.protocols.a.report", "REPORT", ReportPart)()`."""
    holder: dict[str, Any] = {}

    def load() -> Any:
        if "plugin" not in holder:
            module = importlib.import_module(dotted)
            plugin = getattr(module, attribute, None)
            if not isinstance(plugin, kind):
                raise RegistryError(f"{dotted}.{attribute} is not a {kind.__name__}")
            holder["plugin"] = plugin
        return holder["plugin"]

    return load
