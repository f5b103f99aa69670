"""Protocol A's own figures of one variant, besides those every configuration has
(`auditor.model.ConfigSummary`): what page 1 shows and the archive keeps as `figures_json`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class VariantFigures:
    """Protocol A's figures of one variant besides the shared ones."""

    batch: int | None
    cold_median_s: float | None
    """The median of the variant's cold passes."""
    texts: int | None
    """The evaluation texts of one corpus (the unit of throughput)."""

    def to_json(self, verdict: str) -> dict[str, Any]:
        return {"batch": self.batch, "cold_median_s": self.cold_median_s, "texts": self.texts}
