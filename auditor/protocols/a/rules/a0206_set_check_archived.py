"""A0206: the archived set and duplicate verification matches the raw files.

What it checks: `checks/set-check.json` (the runner's own verification, A2.6) against the
auditor's recomputation: the expected count and duplicates, and per output file the lines,
IDs, duplicates, missing and extra IDs, invalid lines and the flags; and that every output
file has its entry.
Reads: `checks/set-check.json` (every field); every output line's `id` and `label`;
`corpus/expected_ids.txt`; manifest `/task/classes`.
Why it matters: A2.6 archives the set verification with the run so a reviewer can see it was
done; an archive that disagrees with the files was not made from them.
Example: the set check says `batch-1/warm-2` has no missing ID; the file lacks `ev-000004`.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from auditor.model import Finding
from auditor.protocols.a.artifacts import SET_CHECK
from auditor.protocols.a.facts.passes import pass_stats
from auditor.protocols.a.view import RunView
from auditor.rule import rule

_LISTS = {
    "duplicate_ids": ("n_dup", "dup_ids"),
    "missing_ids": ("n_missing", "missing_ids"),
    "extra_ids": ("n_extra", "extra_ids"),
}
_SCALARS = {
    "lines": "lines",
    "observed_ids": "observed_ids",
    "unique_ids": "unique_ids",
    "ids_match": "ids_match",
    "format_valid": "format_valid",
    "corpus_accepted": "accepted",
}


@rule(
    code="A0206",
    title="set check archived and right",
    protocol_ref="A2.6",
    severity="error",
    requires=("set_check", "outputs", "expected_ids", "manifest"),
    fix=(
        "Find what changed after the set check was written (an output or the check itself); "
        "re-run so both come from the same files."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    sc = view.set_check
    exp = view.expected_ids
    dups = exp.filter(pl.col("id").is_duplicated())["id"].unique().sort().to_list()
    if sc["expected_count"] != exp.height:
        yield RULE.finding(
            "expected_count differs from corpus/expected_ids.txt",
            artifact=SET_CHECK,
            pointer="/expected_count",
            observed=sc["expected_count"],
            expected=exp.height,
        )
    if sorted(sc["expected_duplicates"]) != dups:
        yield RULE.finding(
            "expected_duplicates differs from corpus/expected_ids.txt",
            artifact=SET_CHECK,
            pointer="/expected_duplicates",
            observed=sc["expected_duplicates"][:20],
            expected=dups[:20],
        )
    stats = {s["file"]: s for s in pass_stats(view).iter_rows(named=True)}
    seen: set[str] = set()
    for n, p in enumerate(sc["passes"]):
        f = f"outputs/{p['variant_id']}/{p['phase']}-{p['run_index']}.jsonl"
        s = stats.get(f)
        if s is None:
            continue  # an entry for a pass without output: A0104 reports the missing file
        seen.add(f)
        wrong = [k for k, c in _SCALARS.items() if p[k] != s[c]]
        wrong += [
            k
            for k, (cnt, _) in _LISTS.items()
            if len(p[k]) != s[cnt] or sorted(p[k])[:20] != list(s[_LISTS[k][1]])
        ]
        if len(p["invalid_lines"]) != s["n_invalid"] + s["n_bad_label"]:
            wrong.append("invalid_lines")
        for k in wrong:
            yield RULE.finding(
                f"archived {k} of {f} differs from the recomputation",
                artifact=SET_CHECK,
                pointer=f"/passes/{n}/{k}",
                observed=p[k] if not isinstance(p[k], list) else p[k][:20],
                expected=_expected(k, s),
                evidence={"output": f},
            )
    for f in sorted(set(stats) - seen):
        yield RULE.finding(
            f"no archived set check for {f}",
            artifact=SET_CHECK,
            pointer="/passes",
            observed="no entry",
            expected=f,
        )


def _expected(key: str, s: dict) -> object:
    if key in _SCALARS:
        return s[_SCALARS[key]]
    if key == "invalid_lines":
        return f"{s['n_invalid'] + s['n_bad_label']} line(s)"
    return list(s[_LISTS[key][1]])


RULE = check
