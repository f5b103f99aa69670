"""How a claim of a protocol B run is compared with the figure the auditor recomputed: a
claim agrees when it differs by at most half a unit of its last written decimal (its
rounding), never by more than `CLAIM_REL_CAP` of the value (a claim written with too few
digits to be checked does not agree), plus `CLAIM_REL_FLOOR` of the value (a harness's
arithmetic on float epoch seconds loses about a microsecond of a window, so a claim written
with more digits than that is still read as its value). A claim agrees only with a finite
figure."""

from __future__ import annotations

import math
import re

CLAIM_REL_CAP = 0.005
"""A claim never agrees with a value more than 0.5 % away, whatever its rounding."""
CLAIM_REL_FLOOR = 1e-6
"""A claim within a millionth of the recomputed value agrees whatever digits it shows."""
FLOAT_EPS = 1e-9


def claim_tolerance(text: str | None, value: float) -> float:
    """Half a unit of the last decimal written in TEXT (a claim's rounding), capped at
    `CLAIM_REL_CAP` of VALUE, plus `CLAIM_REL_FLOOR` of VALUE."""
    digits = 0
    if text and re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text.strip()):
        mantissa, _, exponent = text.strip().lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        digits = decimals - (int(exponent) if exponent and len(exponent) < 6 else 0)
    rounding = 0.5 * 10.0 ** (-min(max(digits, -300), 300))
    return min(rounding, CLAIM_REL_CAP * abs(value)) + CLAIM_REL_FLOOR * abs(value) + FLOAT_EPS


def agrees(claim: float | None, text: str | None, value: float | None) -> bool:
    """Whether CLAIM (written as TEXT) is VALUE at the claim's rounding; two absent values
    agree, one absent and one present do not, and nothing agrees with a value that is not
    finite."""
    if claim is None or value is None:
        return claim is None and value is None
    if not (math.isfinite(claim) and math.isfinite(value)):
        return False
    return abs(claim - value) <= claim_tolerance(text, value)
