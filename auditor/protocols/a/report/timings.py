"""The report's passes of protocol A: per variant every pass (its status from timeline.jsonl,
its acceptance and quality as the auditor recomputed them) with the median and range of the
warm passes that completed and the cold passes apart, never a p95 (A6.3); failed passes
keep their time to failure in the table and enter no summary (A6.4, A10.3); and every raw
duration in one matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from auditor.present import natural_key
from auditor.protocols.a.facts.timing import PhaseDurations, pass_table, variant_durations
from auditor.protocols.a.report.text import fmt_s

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView


def _phase(d: PhaseDurations) -> dict[str, Any]:
    return {
        "passes": d.passes,
        "ok": d.ok,
        "median_s": d.median_s,
        "min_s": d.min_s,
        "max_s": d.max_s,
    }


def timings_section(view: RunView) -> list[dict[str, Any]]:
    """Per variant (`facts.timing.variant_durations`), its passes (`facts.timing.pass_table`)
    and the summaries of its warm and cold passes."""
    table = pass_table(view)
    if table is None:
        return []
    durations = {d.variant_id: d for d in variant_durations(view)}
    out = []
    for passes in sorted(
        table.partition_by("variant_id", maintain_order=True),
        key=lambda p: natural_key(p["variant_id"][0]),
    ):
        d = durations[passes["variant_id"][0]]
        entry: dict[str, Any] = {
            "variant_id": d.variant_id,
            "passes": [
                {
                    "row": p["row"],
                    "phase": p["phase"],
                    "run_index": p["run_index"],
                    "elapsed_seconds": p["elapsed_seconds"],
                    "status": p["status"],
                    "pid": p["pid"],
                    "accepted": p["accepted"],
                    "quality_value": p["quality_value"],
                    "notes": p["notes"] or "",
                }
                for p in passes.iter_rows(named=True)
            ],
        }
        entry["warm"] = _phase(d.warm)
        entry["cold"] = _phase(d.cold)
        entry["warm"]["spread_share"] = d.warm.spread_share
        entry["failed"] = d.failed
        entry["status_known"] = view.timeline is not None
        out.append(entry)
    return out


def pass_matrix(timings: list[dict[str, Any]], decimals: int) -> dict[str, Any]:
    """Every raw duration in one table: a row per variant, a column per pass (cold 1, warm
    1..n), with the quality and acceptance the auditor recomputed summed up per variant."""
    columns = sorted(
        {(p["phase"], p["run_index"]) for t in timings for p in t["passes"]},
        key=lambda c: (c[0] != "cold", c[1]),
    )
    rows = []
    for t in timings:
        by = {(p["phase"], p["run_index"]): p for p in t["passes"]}
        cells = []
        for c in columns:
            p = by.get(c)
            if p is None:
                cells.append({"text": "—", "bad": False})
                continue
            failed = p["status"] not in ("ok", None)
            text = fmt_s(p["elapsed_seconds"])
            if failed:
                text = f"{p['status']} after {text}"
            elif p["accepted"] is False:
                text += " ✗"  # the legend under the table: not accepted
            cells.append({"text": text, "bad": failed or p["accepted"] is False})
        qs = sorted({p["quality_value"] for p in t["passes"] if p["quality_value"] is not None})
        quality = (
            "—"
            if not qs
            else f"{qs[0]:.{decimals}f}"
            if len(qs) == 1
            else f"{qs[0]:.{decimals}f} – {qs[-1]:.{decimals}f}"
        )
        known = [p["accepted"] for p in t["passes"] if p["accepted"] is not None]
        rows.append(
            {
                "variant_id": t["variant_id"],
                "cells": cells,
                "quality": quality,
                "accepted": f"{sum(known)} / {len(t['passes'])}" if known else "—",
                "all_accepted": bool(known) and all(known) and len(known) == len(t["passes"]),
            }
        )
    return {
        "columns": [f"{ph} {n}" for ph, n in columns],
        "rows": rows,
        "marked": any(c["text"].endswith("✗") for r in rows for c in r["cells"]),
    }
