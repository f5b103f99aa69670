"""What an evidence file says of the machine that wrote it, as typed data (`Identity`): its
host model, CPU and GPU names and each GPU's UUID and serial, each only where the file names
it. Readers put it in `meta["identity"]`; the protocols compare it with the run's own
environment record. A reader never judges whether it matches.

- powermetrics (text and plist): the header's `Machine model:` / `hw_model` (`Mac15,6`);
- HWiNFO: the footer's sensor groups, `System: <model>`, `CPU [#n]: <name>`,
  `GPU [#n]: <name>` (what follows the group's own `: <sub-sensor>` is left out);
- nvidia-smi: each GPU's `name`, `uuid` and `serial` (the --query-gpu fields, -q's
  `Product Name`, `GPU UUID`, `Serial Number`, -q -x's `product_name`, `uuid`, `serial`);
- a Windows ML record: the `device_name` of each assigned GPU.
Values the tool writes for "not known" (`[N/A]`, `N/A`, empty) and firmware placeholders
(`To Be Filled By O.E.M.`, `System Product Name`) are left out."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_MISSING = re.compile(r"^\s*(?:\[?N/?A\]?|\[.*\]|none|null|)\s*$", re.IGNORECASE)
_PLACEHOLDER = re.compile(
    r"^\s*(?:to be filled by o\.?e\.?m\.?|system product name|system manufacturer|"
    r"default string|not specified|not applicable|unknown|o\.?e\.?m\.?|x\.x)\s*$",
    re.IGNORECASE,
)
"""What firmware writes where the maker named no model (SMBIOS placeholders): no value."""


@dataclass(frozen=True)
class Gpu:
    """One GPU as a file names it."""

    name: str | None = None
    uuid: str | None = None
    serial: str | None = None


@dataclass(frozen=True)
class Identity:
    """The machine an evidence file names (each part only where the file names it)."""

    machines: tuple[str, ...] = ()
    """The host model(s) (`Mac15,6`, `DELL Precision 5570`): more than one when the file
    joins the logs of several machines."""
    cpus: tuple[str, ...] = ()
    gpus: tuple[Gpu, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.machines and not self.cpus and not self.gpus


def of_machines(values: Iterable[Any]) -> Identity:
    """The identity of a file that names only host models (powermetrics)."""
    return Identity(tuple(dict.fromkeys(v for v in map(known, values) if v)))


def known(value: Any) -> str | None:
    """VALUE as a stripped string, None when it is no value or a tool's "not known"."""
    if not isinstance(value, str) or _MISSING.match(value) or _PLACEHOLDER.match(value):
        return None
    return value.strip()


def gpus_of(devices: Iterable[Mapping[str, Any]]) -> tuple[Gpu, ...]:
    """The GPUs of a reader's device list (`name`, `uuid`, `serial` keys), those that name
    anything."""
    out = [
        Gpu(known(d.get("name")), known(d.get("uuid")), known(d.get("serial")))
        for d in devices
        if isinstance(d, Mapping)
    ]
    return tuple(g for g in out if g.name or g.uuid or g.serial)


def from_hwinfo_groups(groups: Iterable[str]) -> Identity:
    """The identity HWiNFO's sensor groups name: `System: <model>`, `CPU [#n]: <name>`,
    `GPU [#n]: <name>`, each group's sub-sensor suffix (`: DTS`, `: Enhanced`) left out."""
    machines: list[str] = []
    cpus: list[str] = []
    gpus: list[Gpu] = []
    for g in dict.fromkeys(groups):
        head, _, rest = g.partition(":")
        name = known(rest.split(":", 1)[0])
        if name is None:
            continue
        kind = head.strip().split(" [", 1)[0].lower()
        if kind == "system" and name not in machines:
            machines.append(name)
        elif kind == "cpu" and name not in cpus:
            cpus.append(name)
        elif kind == "gpu" and all(x.name != name for x in gpus):
            gpus.append(Gpu(name))
    return Identity(tuple(machines), tuple(cpus), tuple(gpus))
