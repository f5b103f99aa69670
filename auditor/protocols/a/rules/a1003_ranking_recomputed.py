"""A1003: a ranking's order, members and figures equal the ones recomputed from the passes.

What it checks: each typed ranking of `claims.json` (`rankings`, schema version 2: `basis`
names a statistic of one phase's `elapsed_seconds`, its unit and the order) is recomputed
from the raw durations, as the summaries are (the variant's passes of that phase whose
timeline status is ok): every accepted variant with such passes is ranked; a ranked accepted
variant has such passes; each of `values` is its variant's figure (1 ms slack, in the unit
given); and the variants follow the stated order of those figures. Figures within 1 ms of
each other are a tie and may come in either order. Variants that are not accepted are
A1002's to report and are left out here. A ranking whose basis is free text (schema version
1, older runs) cannot be recomputed: a warning says its order was not checked.
Reads: claims `/rankings` (`basis`: `measure`, `phase`, `statistic`, `unit`, `order`;
`variants`; `values`); CSV `variant_id`, `phase`, `run_index`, `elapsed_seconds`; timeline
`status`; the output files, references and expected IDs (acceptance recomputed).
Why it matters: A10.2: a ranking is the comparison a reader acts on; one in the wrong order,
that leaves out an accepted configuration or states figures its passes do not give ranks
configurations on work that was not measured (A6.3: the raw durations are kept so that it
can be checked).
Example: `{"basis": {"measure": "elapsed_seconds", "phase": "warm", "statistic": "median",
"unit": "s", "order": "ascending"}, "variants": ["batch-1", "batch-4"], "values": [1.10,
1.03]}`: batch-1 ranked first with the larger median.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.a.artifacts import CLAIMS
from auditor.protocols.a.facts.passes import variants_accepted
from auditor.protocols.a.facts.timing import basis_text, ranked, ranking_figures
from auditor.protocols.a.view import RunView
from auditor.rule import rule

SLACK_S = 1e-3
"""The slack on a figure (A0610's on a summary); two figures closer than it are a tie."""
_SCALE = {"s": 1.0, "ms": 1e-3}


@rule(
    code="A1003",
    title="rankings recomputed from the passes",
    protocol_ref="A10.2",
    severity="error",
    requires=("results", "timeline", "outputs", "expected_ids", "manifest"),
    fix=(
        "Rank every accepted variant by the figure the basis names, recomputed from the "
        "kept durations, in the stated order, with those figures."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    rankings = (view.claims or {}).get("rankings") or []
    accepted = variants_accepted(view) if rankings else frozenset()
    for n, r in enumerate(rankings):
        where, basis = f"/rankings/{n}", r["basis"]
        if isinstance(basis, str):
            yield RULE.finding(
                f"the basis of this ranking is free text ({basis!r}): its order is not recomputed",
                artifact=CLAIMS,
                pointer=f"{where}/basis",
                severity="warning",
                observed=basis,
                expected="a typed basis (claims.json schema_version 2)",
            )
            continue
        yield from _judge(
            r, where, accepted, ranking_figures(view, basis["phase"], basis["statistic"])
        )


def _judge(
    r: dict, where: str, accepted: frozenset[str], figures: dict[str, float]
) -> Iterator[Finding]:
    basis, listed, values = r["basis"], r["variants"], r.get("values")
    unit, scale = basis["unit"], _SCALE[basis["unit"]]
    what = basis_text(basis)
    figure = f"{basis['statistic']} {basis['phase']} {basis['measure']}"
    want = ranked(figures, basis["order"])

    def shown(seconds: float) -> str:
        return f"{seconds / scale:.6g} {unit}"

    own = [(k, v) for k, v in enumerate(listed) if v in accepted]  # the others: A1002
    for k, v in own:
        if v not in figures:
            yield RULE.finding(
                f"variant {v} is ranked by its {figure}, but none of its "
                f"{basis['phase']} passes completed with a duration",
                artifact=CLAIMS,
                pointer=f"{where}/variants/{k}",
                observed=v,
                expected=f"a variant ranked by its {basis['phase']} passes",
            )
    missing = [v for v in want if v not in listed]
    if missing:
        yield RULE.finding(
            f"the ranking ({what}) leaves out accepted variant(s) {', '.join(missing)}",
            artifact=CLAIMS,
            pointer=f"{where}/variants",
            observed=listed,
            expected=want,
        )
    if values is not None and len(values) != len(listed):
        yield RULE.finding(
            f"the ranking gives {len(values)} figure(s) for {len(listed)} variants",
            artifact=CLAIMS,
            pointer=f"{where}/values",
            observed=len(values),
            expected=len(listed),
        )
    elif values is not None:
        for k, v in own:
            if v in figures and abs(values[k] * scale - figures[v]) > SLACK_S:
                yield RULE.finding(
                    f"the {figure} of {v} in the ranking differs from the one of "
                    "its kept durations",
                    artifact=CLAIMS,
                    pointer=f"{where}/values/{k}",
                    observed=f"{values[k]} {unit}",
                    expected=shown(figures[v]),
                )
    sign = 1 if basis["order"] == "ascending" else -1
    seq = [(k, v, figures[v]) for k, v in own if v in figures]
    for j, (k, b, fb) in enumerate(seq):
        worse = [(a, fa) for _, a, fa in seq[:j] if sign * (fa - fb) > SLACK_S]
        if worse:
            a, fa = worse[0]
            yield RULE.finding(
                f"{a} is ranked before {b} ({what}), but its {figure} is "
                f"{shown(fa)} against {shown(fb)}",
                artifact=CLAIMS,
                pointer=f"{where}/variants/{k}",
                observed=listed,
                expected=[v for v in want if v in listed],
            )
            break


RULE = check
