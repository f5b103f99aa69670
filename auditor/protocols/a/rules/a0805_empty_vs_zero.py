"""A0805: a cell is empty only where "not recorded" is allowed.

What it checks: cells of columns the table schema marks as required (`empty_allowed` false:
IDs, revisions, seed, counts, flags, the quality rule, `accepted_unique_corpora`...) are not
empty. Each finding cites the protocol rule its column serves (an empty `model_revision` is
an A1.2 fault: the model is not pinned).
Reads: every cell of `resultats-bruts.csv` (`empty_allowed` of its column).
Why it matters: A8.3: an empty cell means "not recorded", zero means really zero; a required
figure left empty is a claim nobody made, and a reader that turns it into 0 invents one.
Example: row 5 with `observed_ids` empty.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.rules._csvfaults import faults
from auditor.protocols.a.view import RunView
from auditor.rule import rule


@rule(
    code="A0805",
    title="empty only where allowed",
    protocol_ref="A8.3",
    severity="error",
    fix=(
        'Fill the required cell, or leave it empty only where the protocol allows "not recorded".'
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    yield from faults(RULE, view, ("empty",), "a value (empty means not recorded)", by_column=True)


RULE = check
