"""A configuration that breaks its protocol is refused before anything runs, unless the user
says the run is a diagnostic (`--off-protocol`): the audit would reject such a run anyway,
after all the time it took. Each protocol lists what a configuration can break
(`runner.a.config.protocol_breaks`, `runner.b.config.protocol_breaks`) as `Break`s naming
the rule of docs/protocol.md; `enforce` refuses them, or, for a diagnostic run, returns the
manifest's `off_protocol` record, so that the audit and the report can say so."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runner.errors import RunnerError


@dataclass(frozen=True)
class Break:
    """One setting that breaks one protocol rule."""

    rule: str
    """The rule of docs/protocol.md, e.g. `A6.1`."""
    requirement: str
    """What the rule asks, in a few words: `five warm passes per variant`."""
    setting: str
    """The configuration key, dotted as in the TOML file: `passes.warm_passes`."""
    value: Any

    @property
    def message(self) -> str:
        return f"{self.rule}: {self.requirement}; {self.setting} = {self.value!r} breaks it"

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "requirement": self.requirement,
            "setting": self.setting,
            "value": self.value,
            "message": self.message,
        }


def enforce(
    breaks: list[Break], off_protocol: bool, protocol: str, source: str
) -> dict[str, Any] | None:
    """Refuse BREAKS (a RunnerError listing each) unless OFF_PROTOCOL; for a diagnostic run,
    the manifest's `off_protocol` record (None for a run on protocol)."""
    if breaks and not off_protocol:
        lines = "\n".join(f"  {b.message}" for b in breaks)
        raise RunnerError(
            f"the configuration ({source}) breaks {protocol}, so the audit would "
            f"reject the run; nothing was run:\n{lines}\nFix the configuration, "
            "or pass --off-protocol to run it as a diagnostic (its manifest "
            "records that it is off protocol, and why)"
        )
    if not off_protocol:
        return None
    return {
        "diagnostic": True,
        "declared_by": "runner --off-protocol",
        "breaks": [b.to_json() for b in breaks],
        "note": (
            "a diagnostic run, declared off protocol before it ran: its figures do "
            "not stand for the protocol's"
        ),
    }
