"""`audit compare --format text`: the comparison table, for a terminal."""

from __future__ import annotations

from typing import Any

from auditor.output import Format
from auditor.protocols.names import LETTER, PROTOCOL_B


def _money(minor: float | None) -> str:
    return "" if minor is None else f"${minor / 100:,.2f}"


def _num(x: float | None, fmt: str) -> str:
    return "" if x is None else format(x, fmt)


def render(cmp: Any, *, color: bool = False) -> str:
    lines = [f"{cmp.runs:,} run(s) in the index ({cmp.duplicates:,} duplicate copies counted "
             f"once); configurations ranked: {len(cmp.ranked)}, not accepted: "
             f"{len(cmp.not_accepted)}, runs with none to compare: {len(cmp.other_runs)}"]
    ranked_a = [r for r in cmp.ranked if r.protocol != PROTOCOL_B]
    ranked_b = [r for r in cmp.ranked if r.protocol == PROTOCOL_B]
    head = ("rank", "GPU", "configuration", "precision", "offer", "runs", "warm median s",
            "texts/s", "package", "per accepted corpus")
    rows = [(str(r.rank), r.gpu_model, r.config_id, r.precision or "", r.offer_id or "",
             f"{r.accepted_runs}/{r.runs}", _num(r.median_warm_s, ".3f"),
             _num(r.throughput_per_s, ",.1f"), _money(r.package_total_usd_minor),
             _money(r.cost_per_accepted_corpus_usd_minor) or (r.reason or ""))
            for r in ranked_a]
    if ranked_a or not ranked_b:
        lines += ["", "Ranked (accepted configurations only, A10.2), by cost per accepted "
                  "corpus, then warm median:", *_table(head, rows)]
    if ranked_b:
        head_b = ("rank", "policy", "runtime and units", "precision", "runs", "J/inference",
                  "average W", "p95 ms", "median trial s", "inferences/s")
        rows_b = [(str(r.rank), r.config_id, r.gpu_model, r.precision or "",
                   f"{r.accepted_runs}/{r.runs}",
                   _num(r.joules_per_inference, ".4g") or "not measured",
                   _num(r.average_power_w, ".2f"), _num(r.p95_ms, ".3f"),
                   _num(r.median_warm_s, ".3f"), _num(r.throughput_per_s, ",.1f"))
                  for r in ranked_b]
        lines += ["", "Protocol B policies accepted (ranked apart: by joules per inference, "
                  "then median trial wall time):", *_table(head_b, rows_b)]
    if cmp.not_accepted:
        head2 = ("status", "protocol", "GPU", "configuration", "precision", "runs",
                 "median s", "main reason")
        rows2 = [(r.status, LETTER.get(r.protocol, "?"), r.gpu_model,
                  r.config_id, r.precision or "", str(r.runs),
                  _num(r.median_warm_s, ".3f"), r.reason or "") for r in cmp.not_accepted]
        lines += ["", "Not accepted (never ranked):", *_table(head2, rows2)]
    if cmp.other_runs:
        lines += ["", "With no configuration to compare:"] + [f"  {s}: {why}"
                                                              for s, why in cmp.other_runs]
    return "\n".join(lines) + "\n"


def _table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    if not rows:
        return ["  (none)"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = "  " + "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*head).rstrip(), *(fmt.format(*r).rstrip() for r in rows)]


FORMAT = Format("text", "the comparison table for a terminal", render)
