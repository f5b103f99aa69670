"""How protocol B's report writes its figures: a value with its unit, a share as a
percentage, a policy's figures (`PolicyFigures`)."""

from __future__ import annotations

from auditor.model import ConfigSummary
from auditor.present import NOT_RECORDED
from auditor.protocols.b.figures import PolicyFigures


def fmt(value: float | None, unit: str, digits: int = 4) -> str:
    if value is None:
        return NOT_RECORDED
    return f"{value:.{digits}g} {unit}".strip()


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.2f} %"


def policy_figures(c: ConfigSummary) -> PolicyFigures:
    assert isinstance(c.figures, PolicyFigures)
    return c.figures
