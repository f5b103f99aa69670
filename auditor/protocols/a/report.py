"""Protocol A's sections of the report's view model: the executive summary's rows (per
variant: accepted or not, warm median and range, throughput, cost per accepted corpus; per
offer: package cost and cost per accepted corpus, or why not in a word), what was measured,
every pass (median and min-max of the warm passes, cold apart, never a p95), memory with the
source of each figure, and the economics; plus the per-run summary an archive keeps.

One derivation: `_derive` computes the timings and the economics once, `run_summary` turns
them into the `RunSummary` an archive keeps, and the report's summary is drawn from that same
`RunSummary`, so the archive and page 1 can never disagree.

Every fact is read from the audit's derivations (`derive.py`) or the raw files' view, never
from the run's own claims: which variants are accepted, how many corpora were accepted, which
GPUs were used and what a package costs. The tree holds only JSON values, so it can be
compared with a golden file and rendered by any template.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from pathlib import PureWindowsPath
from typing import Any

import polars as pl

from auditor.model import (
    AuditResult,
    ConfigSummary,
    Finding,
    OfferCost,
    RunSummary,
    VariantFigures,
)
from auditor.present import NOT_RECORDED, json_safe, lookup
from auditor.protocols.a import derive
from auditor.protocols.a.economics import (
    PackageCost,
    device_class,
    hardware_text,
    offer_problem,
    package_total,
    same_gpu,
    usd,
)
from auditor.protocols.a.view import RunView
from auditor.protocols.base import ReportPart
from auditor.protocols.summary import summary_of

TEMPLATE = "protocol_a.html.j2"
"""The sections of protocol A in the report page (included by report.html.j2)."""

SPREAD_SHARE = 0.10
"""A variant's warm passes are pointed out as unstable when their spread (max - min) is above
this share of their median (pyperf warns at a standard deviation of 10 % of the mean; five
passes are too few for a standard deviation, so the range stands in for it)."""
LOAD_SHARE = 0.5
"""Concurrent load is pointed out when the 1-minute load average recorded before or after the
passes, less the one process that runs them, is above this share of the machine's CPUs."""

NOT_RECORDED_CPU = "not recorded (CPU: allocator not measured)"
_PASS_TOKEN = "‹pass›"
"""Stands for `<variant>/<phase>-<run>` in a note part every pass repeats with its own pass
(e.g. its artifact paths), so the part is shown once."""


# -- formatting ---------------------------------------------------------------------------

def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return NOT_RECORDED
    return f"{n / 2**20:,.1f} MiB ({n:,} B)"


def _fmt_s(seconds: float | None) -> str:
    return NOT_RECORDED if seconds is None else f"{seconds:.3f} s"


def _fmt_rate(per_s: float | None) -> str:
    if per_s is None:
        return NOT_RECORDED
    return f"{per_s:,.0f} texts/s" if per_s >= 100 else f"{per_s:,.1f} texts/s"


def decimals_for(values: list[float], *, reference: float | None = None,
                 tolerance: float | None = None, least: int = 4, most: int = 10) -> int:
    """The fewest decimals (at least LEAST) at which VALUES printed keep their order (no two
    different values print equal or the other way round) and `reference - tolerance` printed
    equals the printed reference minus the tolerance: the arithmetic on the page adds up."""
    for d in range(least, most + 1):
        shown = [Decimal(f"{v:.{d}f}") for v in values]
        ordered = all((a < b) == (sa < sb) and (a == b) == (sa == sb)
                      for a, sa in zip(values, shown, strict=True)
                      for b, sb in zip(values, shown, strict=True))
        adds_up = (reference is None or tolerance is None
                   or Decimal(f"{reference:.{d}f}") - Decimal(str(tolerance))
                   == Decimal(f"{reference - tolerance:.{d}f}"))
        if ordered and adds_up:
            return d
    return most


def corpus_name(source: Any) -> str | None:
    """A corpus source that is a local path shows only its file name (the revision hash
    identifies it); a description is kept as it is."""
    if not isinstance(source, str):
        return None
    looks_like_path = re.match(r"^(/|~|[A-Za-z]:[\\/]|\.{1,2}[\\/])", source) or (
        re.search(r"[\\/]", source) and re.search(r"\.\w{2,8}$", source))
    return PureWindowsPath(source).name if looks_like_path else source


# -- what was measured --------------------------------------------------------------------

def quality_rule(manifest: dict | None, values: list[float]) -> dict[str, Any] | None:
    """The quality rule in words, with enough digits that its arithmetic adds up, and the
    number of decimals the pass values are shown with."""
    qr = (manifest or {}).get("quality_rule") or {}
    if not qr:
        return None
    ref = qr.get("reference") if isinstance(qr.get("reference"), Mapping) else {}
    thr, tol, rv = qr.get("threshold"), qr.get("tolerance"), ref.get("value")
    nums = [v for v in (thr, rv, *values) if isinstance(v, (int, float))]
    floor = rv - tol if isinstance(rv, (int, float)) and isinstance(tol, (int, float)) else None
    if floor is not None:
        nums.append(floor)
    d = decimals_for(nums, reference=rv if floor is not None else None,
                     tolerance=tol if floor is not None else None)

    def f(v: Any) -> str:
        return f"{v:.{d}f}" if isinstance(v, float) else str(v)

    parts = [f"{qr.get('metric')} >= {f(thr)}"] if thr is not None else []
    if floor is not None:
        parts.append(f"{qr.get('metric')} >= reference {f(rv)} - tolerance {tol} = {f(floor)}"
                     f" ({qr.get('tolerance_direction')}; reference: {ref.get('name')})")
    return {"text": " and ".join(parts), "decimals": d, "metric": qr.get("metric"),
            "threshold": thr, "reference": rv, "tolerance": tol, "floor": floor}


def measured_section(view: RunView, quality_values: list[float]) -> dict[str, Any]:
    m = view.manifest or {}
    trunc = lookup(m, "corpus", "truncation") or {}
    truncation = None
    if trunc:
        n, cut = trunc.get("eval_texts"), trunc.get("truncated_texts")
        share = (f" ({100 * cut / n:.1f} %)"
                 if isinstance(n, int) and n and isinstance(cut, int) else "")
        truncation = (f"{cut} of {n} evaluation texts cut at {trunc.get('context_tokens')} "
                      f"tokens{share}" + (f"; rule: {trunc['rule']}" if trunc.get("rule") else ""))
    timer = {"full_chain": "full chain: reading, tokenization, classification and writing",
             "processing_only": "processing only: classification alone"}.get(
                 m.get("timer_scope"), NOT_RECORDED)
    variants = [{k: v.get(k) for k in ("variant_id", "batch", "precision", "context", "device")}
                for v in m.get("variants") or [] if isinstance(v, Mapping)]
    return {
        "experiment_id": m.get("experiment_id"),
        "protocol": m.get("protocol"),
        "status": m.get("status"),
        "declared_at": m.get("declared_at"),
        "unit_of_work": lookup(m, "task", "unit_of_work"),
        "classes": json_safe(lookup(m, "task", "classes")),
        "quality_rule": quality_rule(m, quality_values),
        "revisions": json_safe(m.get("revisions")),
        "seed": m.get("seed"),
        "announced_variable": m.get("announced_variable"),
        "variants": json_safe(variants),
        "warmup_iterations": m.get("warmup_iterations"),
        "warm_passes_per_variant": m.get("warm_passes_per_variant"),
        "pass_order_method": m.get("pass_order_method"),
        "timer_scope": timer,
        "timer_scope_description": m.get("timer_scope_description"),
        "truncation": truncation or NOT_RECORDED,
        "corpus": {"source": corpus_name(lookup(m, "corpus", "source")),
                   "revision": lookup(m, "corpus", "revision"),
                   "eval_size": lookup(m, "corpus", "eval_size")},
        "environment": environment_rows(view.environment),
        "notes": m.get("notes"),
    }


def _load_text(env: dict) -> str | None:
    load = env.get("concurrent_load") or {}
    parts = [f"{x[0]:.2f} {when}" for when, x in (("before the passes",
                                                    load.get("loadavg_before_passes")),
                                                   ("after", load.get("loadavg")))
             if isinstance(x, list) and x]
    return ", ".join(parts) or None


def environment_rows(env: dict | None) -> list[dict[str, str]]:
    """The environment as observed, in a few rows (A4.1)."""
    if not env:
        return [{"label": "environment.json", "value": NOT_RECORDED}]
    rt = env.get("runtime") or {}
    host = env.get("host") or {}
    procs = lookup(env, "concurrent_load", "gpu_processes")
    gpu = (f"{env.get('gpu_model')} x {env.get('gpu_count')} used of "
           f"{env.get('gpus_visible', '?')} visible, driver {env.get('driver_version')}"
           if env.get("gpu_model") else "none used (placement evidence)")
    rows = [
        ("Device", env.get("device")),
        ("GPU", gpu),
        ("Software", f"Python {env.get('python_version')}, PyTorch {env.get('torch_version')}, "
                     f"runtime {rt.get('name')} {rt.get('version') or ''}".strip()),
        ("Host", " ".join(str(host[k]) for k in ("platform", "machine") if host.get(k))
         + (f", {host['cpu_count']} CPUs" if host.get("cpu_count") else "")),
        ("Code version", env.get("code_version")),
        ("Concurrent load", "1-minute load average " + (_load_text(env) or NOT_RECORDED)
         + "; other GPU processes: " + ("not observed (NVML "
                                        f"{lookup(env, 'concurrent_load', 'nvml')})"
                                        if procs is None else str(len(procs)))),
        ("Observed at", env.get("observed_at")),
    ]
    return [{"label": k, "value": NOT_RECORDED if v is None or v == "" else str(v)}
            for k, v in rows]


# -- passes and durations -----------------------------------------------------------------

def _status_frame(timeline: pl.DataFrame | None) -> pl.DataFrame | None:
    need = {"variant_id", "phase", "run_index", "status"}
    if timeline is None or not need <= set(timeline.columns):
        return None
    cols = ["variant_id", "phase", pl.col("run_index").cast(pl.Int64), "status"]
    if "pid" in timeline.columns:
        cols.append(pl.col("pid").cast(pl.Int64))
    return (timeline.filter(pl.col("phase").is_in(["cold", "warm"])).select(cols)
            .unique(subset=["variant_id", "phase", "run_index"], keep="first"))


def _recomputed(view: RunView) -> pl.DataFrame | None:
    """Per pass, what the auditor recomputed from its output file: accepted, quality."""
    if view.outputs is None or view.expected_ids is None:
        return None
    return (derive.pass_stats(view)
            .select("variant_id", "phase", pl.col("run_index").cast(pl.Int64),
                    pl.col("accepted").alias("re_accepted"),
                    pl.col("quality_value").alias("re_quality")))


def timings_section(view: RunView) -> list[dict[str, Any]]:
    """Per variant: every pass (status from timeline.jsonl; acceptance and quality as the
    auditor recomputed them), and the median and min-max of the successful warm passes; cold
    passes summarised apart. Failed passes keep their time to failure in the table but never
    enter a summary (A6.4, A10.3)."""
    results = view.results
    cols = {"variant_id", "phase", "run_index", "elapsed_seconds"}
    if results is None or not cols <= set(results.columns):
        return []
    keep = [c for c in ("row", "variant_id", "phase", "run_index", "elapsed_seconds", "notes")
            if c in results.columns]
    df = results.select(keep).with_columns(pl.col("run_index").cast(pl.Int64))
    key = ["variant_id", "phase", "run_index"]
    status = _status_frame(view.timeline)
    if status is not None:
        df = df.join(status, on=key, how="left")
    else:
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias("status"))
    re_stats = _recomputed(view)
    if re_stats is not None:
        df = df.join(re_stats, on=key, how="left")
    df = df.sort(key)
    ok = df.filter((pl.col("status") == "ok") & pl.col("elapsed_seconds").is_not_null())
    summary = (ok.group_by(["variant_id", "phase"])
               .agg(n=pl.len(), median_s=pl.col("elapsed_seconds").median(),
                    min_s=pl.col("elapsed_seconds").min(),
                    max_s=pl.col("elapsed_seconds").max()))
    summ = {(r["variant_id"], r["phase"]): r for r in summary.iter_rows(named=True)}
    out = []
    for passes in df.partition_by("variant_id", maintain_order=True):
        prow = passes.to_dicts()
        vid = prow[0]["variant_id"]
        entry: dict[str, Any] = {"variant_id": vid, "passes": [{
            "row": p.get("row"), "phase": p["phase"], "run_index": p["run_index"],
            "elapsed_seconds": p["elapsed_seconds"], "status": p["status"],
            "pid": p.get("pid"), "accepted": p.get("re_accepted"),
            "quality_value": p.get("re_quality"), "notes": p.get("notes") or "",
        } for p in prow]}
        for phase in ("warm", "cold"):
            s = summ.get((vid, phase))
            total = sum(1 for p in prow if p["phase"] == phase)
            entry[phase] = {
                "passes": total,
                "ok": s["n"] if s else 0,
                "median_s": s["median_s"] if s else None,
                "min_s": s["min_s"] if s else None,
                "max_s": s["max_s"] if s else None,
            }
        w = entry["warm"]
        entry["warm"]["spread_share"] = (
            (w["max_s"] - w["min_s"]) / w["median_s"] if w["ok"] >= 2 and w["median_s"] else None)
        entry["failed"] = sum(1 for p in prow if p["status"] not in ("ok", None))
        entry["status_known"] = status is not None
        out.append(entry)
    return out


def factor_common_notes(timings: list[dict[str, Any]]) -> str:
    """Move the `; `-separated parts of `notes` that every pass repeats into one text, shown
    once above the pass table, and leave each pass only what is its own. A part that differs
    only by the pass's own `<variant>/<phase>-<run>` (its artifact paths) counts as repeated
    and is shown once with ‹pass› in its place. Nothing is dropped: the common text, with
    ‹pass› read as the pass, plus a pass's own text is the pass's whole note, part for part."""
    passes = [(t["variant_id"], p) for t in timings for p in t["passes"]]
    if len(passes) < 2:
        return ""

    def template(vid: str, p: dict, part: str) -> str:
        return part.replace(f"{vid}/{p['phase']}-{p['run_index']}", _PASS_TOKEN)

    split = [[template(vid, p, part) for part in p["notes"].split("; ")] if p["notes"] else []
             for vid, p in passes]
    common = set(split[0]).intersection(*split[1:])
    for (_, p), raw, parts in zip(passes, [p["notes"].split("; ") if p["notes"] else []
                                           for _, p in passes], split, strict=True):
        p["notes"] = "; ".join(r for r, t in zip(raw, parts, strict=True) if t not in common)
    return "; ".join(part for part in split[0] if part in common)


def pass_matrix(timings: list[dict[str, Any]], decimals: int) -> dict[str, Any]:
    """Every raw duration in one table: a row per variant, a column per pass (cold 1, warm
    1..n), with the quality and acceptance the auditor recomputed summed up per variant."""
    columns = sorted({(p["phase"], p["run_index"]) for t in timings for p in t["passes"]},
                     key=lambda c: (c[0] != "cold", c[1]))
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
            text = _fmt_s(p["elapsed_seconds"])
            if failed:
                text = f"{p['status']} after {text}"
            elif p["accepted"] is False:
                text += " ✗"  # the legend under the table: not accepted
            cells.append({"text": text, "bad": failed or p["accepted"] is False})
        qs = sorted({p["quality_value"] for p in t["passes"] if p["quality_value"] is not None})
        quality = ("—" if not qs else f"{qs[0]:.{decimals}f}" if len(qs) == 1
                   else f"{qs[0]:.{decimals}f} – {qs[-1]:.{decimals}f}")
        known = [p["accepted"] for p in t["passes"] if p["accepted"] is not None]
        rows.append({"variant_id": t["variant_id"], "cells": cells, "quality": quality,
                     "accepted": f"{sum(known)} / {len(t['passes'])}" if known else "—",
                     "all_accepted": bool(known) and all(known)
                     and len(known) == len(t["passes"])})
    return {"columns": [f"{ph} {n}" for ph, n in columns], "rows": rows,
            "marked": any(c["text"].endswith("✗") for r in rows for c in r["cells"])}


def own_notes(timings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The notes that say more than what every pass shares, each once with the passes that
    carry it (a note repeated by every warm pass is one line, not one per pass)."""
    by_note: dict[str, list[tuple[str, str, int]]] = {}
    rows: dict[str, list[int]] = {}
    for t in timings:
        for p in t["passes"]:
            if p["notes"]:
                by_note.setdefault(p["notes"], []).append((t["variant_id"], p["phase"],
                                                           p["run_index"]))
                rows.setdefault(p["notes"], []).append(p["row"])
    out = []
    for note, passes in by_note.items():
        nums = {r for r in rows[note] if r is not None}
        out.append({"passes": passes_text(passes), "count": len(passes), "notes": note,
                    "rows": (f"CSV row{'s' if len(nums) > 1 else ''} {_runs(nums)}"
                             if nums else None)})
    return out


# -- memory -------------------------------------------------------------------------------

def memory_section(view: RunView, timings: list[dict[str, Any]]) -> dict[str, Any]:
    """The allocator figures (from the CSV, source torch.cuda) where recorded, the passes
    where they are not in one sentence, and figures from other named sources (A7.5) per
    process: a process's peak RSS covers every pass it ran, so it is never a variant's."""
    results = view.results
    if results is None or "variant_id" not in results.columns:
        return {"variants": [], "not_recorded": None, "other": []}
    mem_cols = ["baseline_allocated_bytes", "baseline_reserved_bytes",
                "peak_allocated_bytes", "peak_reserved_bytes"]
    have = [c for c in mem_cols if c in results.columns]
    exprs = [pl.col(c).cast(pl.Int64).max().alias(c) for c in have]
    if "device" in results.columns:
        exprs.append(pl.col("device").first().alias("device"))
    agg = results.group_by(["variant_id", "phase"]).agg(exprs).sort(["variant_id", "phase"])
    by_variant: dict[str, dict[str, Any]] = {}
    missing: list[tuple[str, str, bool]] = []
    for r in agg.iter_rows(named=True):
        recorded = any(r.get(c) is not None for c in have)
        cuda = str(r.get("device") or "").startswith("cuda")
        if not recorded:
            missing.append((r["variant_id"], r["phase"], cuda))
            continue
        v = by_variant.setdefault(r["variant_id"], {"variant_id": r["variant_id"], "rows": [],
                                                    "series": []})
        v["rows"].append({
            "phase": r["phase"],
            "source": "torch.cuda allocator (resultats-bruts.csv, max over passes)",
            **{c: r.get(c) for c in mem_cols},
            **{c + "_text": _fmt_bytes(r.get(c)) for c in mem_cols},
        })
        v["series"].append({"label": f"{r['phase']} peak reserved (torch.cuda)",
                            "peak_bytes": r.get("peak_reserved_bytes")})
    not_recorded = None
    if missing:
        on_cpu = all(not cuda for _, _, cuda in missing)
        which = ("every pass" if not by_variant
                 else ", ".join(f"{v} {ph}" for v, ph, _ in missing))
        not_recorded = (f"PyTorch allocator memory: not recorded for {which}"
                        + (" (the passes ran on the CPU, where the allocator is not measured)."
                           if on_cpu else "."))
    return {"variants": [by_variant[k] for k in sorted(by_variant)],
            "not_recorded": not_recorded, "other": other_sources(view, timings)}


def _runs(runs: set[int]) -> str:
    """{1, 2, 3, 5} -> `1–3, 5`."""
    out, seq = [], sorted(runs)
    i = 0
    while i < len(seq):
        j = i
        while j + 1 < len(seq) and seq[j + 1] == seq[j] + 1:
            j += 1
        out.append(str(seq[i]) if i == j else f"{seq[i]}–{seq[j]}")
        i = j + 1
    return ", ".join(out)


def passes_text(passes: list[tuple[str, str, int]]) -> str:
    """Passes in few words: `warm 1–5 of batch-1, batch-4` (phases in the cold, warm order)."""
    by_phase: dict[str, dict[str, set[int]]] = {}
    for vid, phase, run in passes:
        by_phase.setdefault(phase, {}).setdefault(vid, set()).add(run)
    parts = []
    for phase in sorted(by_phase, key=lambda ph: (ph != "cold", ph)):
        runs = by_phase[phase]
        if len({frozenset(r) for r in runs.values()}) == 1:
            parts.append(f"{phase} {_runs(next(iter(runs.values())))} of "
                         + ", ".join(sorted(runs)))
        else:
            parts.extend(f"{vid} {phase} {_runs(r)}" for vid, r in sorted(runs.items()))
    return "; ".join(parts)


def other_sources(view: RunView, timings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Figures from outside the allocator (A7.5), per figure and process (the timeline's
    pid): the largest value and the passes that process ran. Processes that each ran one
    pass of the same phase (fresh cold processes) share one row."""
    pid_of = {(t["variant_id"], p["phase"], p["run_index"]): p["pid"]
              for t in timings for p in t["passes"]}
    figures: dict[tuple[str, str, str], dict[Any, dict[str, Any]]] = {}
    for key, trace in (view.memory_traces or {}).items():
        if not isinstance(trace, Mapping) or not isinstance(key, tuple) or len(key) < 3:
            continue
        pass_key = (str(key[0]), str(key[1]), int(key[2]))
        for src in trace.get("other_sources") or []:
            if not isinstance(src, Mapping) or not isinstance(src.get("value"), (int, float)):
                continue
            pid = pid_of.get(pass_key)
            # without a pid, each pass is its own process: never merge what may differ
            proc = pid if pid is not None else pass_key
            procs = figures.setdefault((str(src.get("name")), str(src.get("source")),
                                        str(src.get("unit"))), {})
            g = procs.setdefault(proc, {"values": [], "passes": []})
            g["values"].append(src["value"])
            g["passes"].append(pass_key)
    out = []
    for (name, source, unit), procs in sorted(figures.items()):
        in_bytes = unit.lower() in ("bytes", "byte", "b")

        def show(v: float, short: bool = False, in_bytes: bool = in_bytes,
                 unit: str = unit) -> str:
            if not in_bytes:
                return f"{v:,} {unit}"
            return f"{v / 2**20:,.1f} MiB" if short else _fmt_bytes(int(v))

        rows: list[dict[str, Any]] = []
        singles: dict[str, list[tuple[Any, dict[str, Any]]]] = {}
        for proc, g in procs.items():
            if len(g["passes"]) == 1:
                singles.setdefault(g["passes"][0][1], []).append((proc, g))
            else:
                rows.append({"process": f"pid {proc}" if isinstance(proc, int) else "—",
                             "passes": sorted(g["passes"]), "values": g["values"]})
        for group in singles.values():
            many = len(group) > 1
            rows.append({"process": (f"{len(group)} processes, one per pass" if many
                                     else f"pid {group[0][0]}" if isinstance(group[0][0], int)
                                     else "—"),
                         "passes": sorted(p for _, g in group for p in g["passes"]),
                         "values": [v for _, g in group for v in g["values"]],
                         "range": many})
        rows.sort(key=lambda r: (r["passes"][0][1] != "cold", r["passes"]))
        out.append({"name": name, "source": source, "unit": unit, "rows": [{
            "process": r["process"], "passes": [" ".join(map(str, k)) for k in r["passes"]],
            "passes_text": passes_text(r["passes"]), "max_value": max(r["values"]),
            # one process: its largest value; one process per pass: the range over them
            "value_text": (f"{show(min(r['values']), True)} to {show(max(r['values']), True)}"
                           if r.get("range") and min(r["values"]) != max(r["values"])
                           else show(max(r["values"]))),
        } for r in rows]})
    return out


# -- economics ----------------------------------------------------------------------------

def same_hardware(offer: Mapping[str, Any], view: RunView) -> bool:
    """Whether OFFER rents the hardware the run measured. A GPU offer: every word of its
    model is in a name the driver reported ("H100 80GB" matches "NVIDIA H100 80GB HBM3"). A
    CPU offer: the placement evidence shows passes that used no GPU at all."""
    if device_class(dict(offer)) == "cpu":
        return derive.pass_gpus(view).height > 0 and derive.gpus_used(view) == 0
    return same_gpu(offer.get("gpu_model"), derive.gpu_models(view))


def _why_not_word(problem: str | None, verdict: str, accepted: int | None,
                  same_hw: bool) -> str | None:
    """Why an offer has no cost per accepted corpus, in a word or two (None: it has one)."""
    if problem is not None:
        return "per-GPU quote" if "per GPU" in problem else "lot mismatch"
    if verdict != "accepted":
        return f"run {verdict}"
    if not accepted:
        return "none accepted"
    return None if same_hw else "other hardware"


def economics_section(view: RunView, offers: dict | None, result: AuditResult,
                      timings: list[dict[str, Any]], offers_label: str) -> dict[str, Any]:
    """A9/A10.2: package price x lots per offer; a cost per accepted corpus only from the
    accepted count the audit recomputed, only when the audit accepted the run, and only for
    offers of the hardware the run measured; configurations that are not accepted listed
    apart, never ranked."""
    econ = (view.manifest or {}).get("economics") or {}
    lots = econ.get("lots") if isinstance(econ.get("lots"), int) else 1
    accepted_corpora: int | None = None
    accepted_variants: set[str] = set()
    if result.verdict != "accepted":
        basis = (f"The audit verdict is {result.verdict}: no accepted count is established, so "
                 "only the package cost is given (A9.5).")
    else:
        accepted_variants = derive.variants_accepted(view)
        accepted_corpora = derive.accepted_corpora(view) or None
        basis = (f"{accepted_corpora} distinct accepted corpus(es) measured in this run (distinct "
                 "corpus revisions with an accepted pass; repetitions are not deliverables, "
                 "A9.3). Cost per accepted corpus = package total / that count, only for offers of "
                 "the hardware the run measured: an accepted count says nothing of other "
                 "hardware. No cadence is projected over the package's days (A9.5).")
        if accepted_corpora is None:
            basis = "No accepted corpus was measured: only the package cost is given (A9.5)."
    measured_on = ", ".join(sorted(derive.gpu_models(view))) or "CPU"
    gpus_used = derive.gpus_used(view)
    rows = []
    for o in (offers or {}).get("offers") or []:
        if not isinstance(o, Mapping):
            continue
        problem = offer_problem(dict(o))
        price = o.get("price_per_lot_usd_minor")
        total = package_total(dict(o), lots) if isinstance(price, int) and problem is None \
            else None
        same_hw = same_hardware(o, view)
        word = _why_not_word(problem, result.verdict, accepted_corpora, same_hw)
        per = (PackageCost(dict(o), lots, total, accepted_corpora).per_corpus_usd_minor
               if total is not None and word is None else None)
        why_not = (None if per is not None else
                   f"not computed: the run measured {measured_on}" if word == "other hardware"
                   else "not costed" if problem else
                   "not computed (no measured accepted count)")
        rows.append({
            "offer_id": o.get("offer_id"), "provider": o.get("provider"),
            "gpu_model": o.get("gpu_model"), "device_class": device_class(dict(o)),
            "hardware": hardware_text(dict(o)), "gpus_per_lot": o.get("gpus_per_lot"),
            "duration_days": o.get("duration_days"), "lots": lots,
            "example": bool(o.get("example") or (offers or {}).get("example")),
            "price_per_lot_usd_minor": price,
            "price_per_lot_text": usd(price) if isinstance(price, int) else NOT_RECORDED,
            "total_usd_minor": total, "total_text": usd(total) if total is not None else "—",
            "per_corpus_usd_minor": float(per) if per is not None else None,
            "per_corpus_text": usd(per) if per is not None else why_not,
            "why_not": word,
            "measured_here": same_hw,
            # A4.2: the lot's price covers every GPU in it, used or not.
            "lot_use": (f"The run used {gpus_used} GPU(s); a lot of this offer holds "
                        f"{o.get('gpus_per_lot')} and its price covers all of them (A4.2)."
                        if same_hw and isinstance(o.get("gpus_per_lot"), int)
                        and 0 < gpus_used < o["gpus_per_lot"] else None),
            "problem": problem,
            "chosen": o.get("offer_id") == econ.get("offer_id"),
        })
    warm = {t["variant_id"]: t["warm"] for t in timings}
    variants = sorted(warm) or sorted(accepted_variants)
    accepted = sorted((v for v in variants if v in accepted_variants),
                      key=lambda v: (warm.get(v, {}).get("median_s") is None,
                                     warm.get(v, {}).get("median_s") or 0.0, v))
    not_accepted = [v for v in variants if v not in accepted_variants]
    priced = [r for r in rows if r["per_corpus_usd_minor"] is not None]
    return {
        "intro": ("The price compared is the whole package (3, 7 or 30 days) x lots (A9.1); a "
                  "B200 lot is two GPUs and its rate covers the lot (A9.2). " + basis),
        "not_accepted_title": ("Not accepted (shown apart, never ranked; A10.2)"
                               if not_accepted else None),
        "offers_source": offers_label,
        "example_prices": bool((offers or {}).get("example"))
        or any(r["example"] for r in rows),
        "chosen_offer": econ.get("offer_id"),
        "lots": lots,
        "accepted_corpora": accepted_corpora,
        "basis": basis,
        "offers": rows,
        "no_cost_per_corpus": None if priced else (
            "No offer could be costed." if not any(r["total_usd_minor"] is not None
                                                   for r in rows)
            else basis if result.verdict != "accepted" or accepted_corpora is None
            else f"No offer is for the hardware the run measured ({measured_on})."),
        "accepted_configurations": [
            {"rank": i + 1, "variant_id": v, "median_warm_s": warm.get(v, {}).get("median_s")}
            for i, v in enumerate(accepted)],
        "not_accepted_configurations": [
            {"variant_id": v, "median_warm_s": warm.get(v, {}).get("median_s"),
             "why": "a pass was not accepted" if result.verdict == "accepted"
                    else f"the run is {result.verdict}"}
            for v in not_accepted],
    }


# -- the summary: one derivation for the archive and page 1 ------------------------------

def _derive(view: RunView, result: AuditResult, offers: dict | None,
            offers_label: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    timings = timings_section(view)
    return timings, economics_section(view, offers, result, timings, offers_label)


def run_summary(view: RunView, result: AuditResult, timings: list[dict[str, Any]],
                econ: dict[str, Any]) -> RunSummary:
    """The RunSummary of already derived timings and economics."""
    accepted = {c["variant_id"] for c in econ["accepted_configurations"]}
    declared = {v.get("variant_id"): v for v in lookup(view.manifest, "variants") or []
                if isinstance(v, Mapping)}
    n_texts = (derive.expected_index(view).height if view.expected_ids is not None else None)
    gpus = derive.pass_gpus(view)
    passes_ok = derive.variants_accepted(view)
    configs = []
    for t in timings:
        vid = t["variant_id"]
        mine = gpus.filter(pl.col("variant_id") == vid)
        models = sorted(set(mine.get_column("gpu_models").explode().drop_nulls().to_list()))
        median = t["warm"]["median_s"]
        costs = tuple(
            OfferCost(offer_id=str(o["offer_id"]), gpu_model=str(o["gpu_model"]),
                      lots=int(o["lots"]), package_total_usd_minor=o["total_usd_minor"],
                      cost_per_accepted_corpus_usd_minor=(
                          o["per_corpus_usd_minor"] if vid in accepted else None),
                      why_not=(None if vid in accepted and o["per_corpus_usd_minor"] is not None
                               else o["why_not"] if vid in accepted or o["problem"]
                               else "not accepted"),
                      measured_here=bool(o["measured_here"]))
            for o in econ["offers"])
        verdict = ("accepted" if vid in accepted else "rejected" if vid not in passes_ok
                   or result.verdict == "accepted" else result.verdict)
        configs.append(ConfigSummary(
            config_id=vid, verdict=verdict,
            gpu_model=", ".join(models) or None,
            gpu_count=int(mine.get_column("gpu_count").max() or 0) if mine.height else 0,
            precision=lookup(declared.get(vid), "precision"),
            median_s=median, min_s=t["warm"]["min_s"], max_s=t["warm"]["max_s"],
            throughput_per_s=(n_texts / median if n_texts and median else None),
            reason=None if vid in accepted else (
                "a pass is not accepted" if vid not in passes_ok
                else f"run {result.verdict} (its own passes pass)"),
            costs=costs,
            figures=VariantFigures(batch=lookup(declared.get(vid), "batch"),
                                   cold_median_s=t["cold"]["median_s"], texts=n_texts)))
    return summary_of(view, result, configs)


def summarize(view: RunView, result: AuditResult) -> RunSummary:
    """The small summary an archive keeps of one protocol A run: per variant, accepted or not
    (recomputed, and only in an accepted run), the GPUs used as evidenced, the warm median
    and range, throughput, and each offer's package cost and cost per accepted corpus."""
    timings, econ = _derive(view, result, view.offers, "the run's own offers")
    return run_summary(view, result, timings, econ)


def cautions(view: RunView, timings: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Measurements to take with care, pointed out on page 1: warm passes spread above
    SPREAD_SHARE of their median, and concurrent load above LOAD_SHARE of the CPUs."""
    out = []
    spread = [(t["variant_id"], t["warm"]) for t in timings
              if t["warm"]["spread_share"] is not None
              and t["warm"]["spread_share"] > SPREAD_SHARE]
    if spread:
        which = ", ".join(f"{vid} {w['min_s']:.3f}–{w['max_s']:.3f} s "
                          f"({100 * w['spread_share']:.0f} %)" for vid, w in spread)
        out.append({"kind": "unstable", "text": (
            f"Unstable timings: the warm passes of {which} spread over more than "
            f"{100 * SPREAD_SHARE:.0f} % of their median, so the medians are uncertain; re-run "
            "on an idle machine, or with a larger corpus so that each pass lasts longer.")})
    env = view.environment or {}
    load = env.get("concurrent_load") or {}
    cpus = lookup(env, "host", "cpu_count")
    ones = [x[0] for x in (load.get("loadavg_before_passes"), load.get("loadavg"))
            if isinstance(x, list) and x and isinstance(x[0], (int, float))]
    if ones and isinstance(cpus, int) and cpus > 0 and max(ones) - 1 > LOAD_SHARE * cpus:
        out.append({"kind": "load", "text": (
            f"Concurrent load: 1-minute load average {_load_text(env)} on {cpus} CPUs, "
            f"more than {100 * LOAD_SHARE:.0f} % of the CPUs busy besides the run itself: "
            "other work shared the machine during the passes.")})
    procs = load.get("gpu_processes")
    if isinstance(procs, list) and procs:
        out.append({"kind": "load", "text": (
            f"{len(procs)} other process(es) held GPU memory during the run (NVML): the "
            "GPU was shared.")})
    return out


def summary_section(view: RunView, result: AuditResult, summary: RunSummary,
                    timings: list[dict[str, Any]], econ: dict[str, Any]) -> dict[str, Any]:
    """Page 1's rows for protocol A, from the RunSummary: per variant, accepted or not, warm
    median and range, throughput and its cheapest cost per accepted corpus; per offer, the
    package cost and the cost per accepted corpus or why not; then what to buy."""
    texts = next((c.figures.texts for c in summary.configurations
                  if isinstance(c.figures, VariantFigures)), None)
    per_text = {o["offer_id"]: o["per_corpus_text"] for o in econ["offers"]}
    rows = []
    for c in summary.configurations:
        costed = sorted((o for o in c.costs if o.cost_per_accepted_corpus_usd_minor is not None),
                        key=lambda o: (o.cost_per_accepted_corpus_usd_minor, o.offer_id))
        best = costed[0] if costed else None
        words = sorted({o.why_not for o in c.costs if o.why_not})
        rows.append({"tone": "ok" if c.accepted else "bad", "values": {
            "median_s": c.median_s, "min_s": c.min_s, "max_s": c.max_s,
            "throughput_per_s": c.throughput_per_s,
            "best_offer": best.offer_id if best else None,
            "best_cost_per_corpus_usd_minor": (best.cost_per_accepted_corpus_usd_minor
                                               if best else None)},
            "cells": {
                "config": c.config_id,
                "accepted": "accepted" if c.accepted else f"no: {c.reason}",
                "median": (NOT_RECORDED if c.median_s is None else
                           f"{c.median_s:.3f} s ({c.min_s:.3f}–{c.max_s:.3f})"),
                "throughput": _fmt_rate(c.throughput_per_s),
                "cost": (f"{per_text[best.offer_id]} ({best.offer_id})" if best else
                         "not accepted" if not c.accepted else
                         "; ".join(words) or "no offer"),
            }})
    offers = [{"tone": "ok" if o["per_corpus_usd_minor"] is not None else "muted", "values": {
        "total_usd_minor": o["total_usd_minor"], "per_corpus_usd_minor": o["per_corpus_usd_minor"]},
        "cells": {"offer": o["offer_id"] + (" (example)" if o["example"] else ""),
                  "hardware": o["hardware"], "package": f"{o['duration_days']} days × "
                  f"{o['lots']} lot{'s' if o['lots'] != 1 else ''}",
                  "total": o["total_text"] if o["total_usd_minor"] is not None else "not costed",
                  "per_corpus": o["per_corpus_text"] if o["per_corpus_usd_minor"] is not None
                  else o["why_not"] or "—"}} for o in econ["offers"]]
    accepted = [c for c in summary.configurations if c.accepted]
    n = len(summary.configurations)
    decision = []
    priced = sorted((o for o in econ["offers"] if o["per_corpus_usd_minor"] is not None),
                    key=lambda o: (o["per_corpus_usd_minor"], o["offer_id"]))
    if not accepted:
        decision.append("No configuration is accepted: none can be bought on this run, and "
                        "none is ranked (A10.2).")
    else:
        fastest = min((c for c in accepted if c.median_s is not None),
                      key=lambda c: c.median_s, default=None)
        if priced:
            o = priced[0]
            decision.append(
                f"Cheapest per accepted corpus: offer {o['offer_id']}, {o['hardware']}: "
                f"{o['per_corpus_text']} per accepted corpus ({o['total_text']} for the "
                f"{o['duration_days']}-day package / {econ['accepted_corpora']} accepted "
                "corpus" + ("; an example price, not a quote" if o["example"] else "")
                + "). It is the same for every accepted configuration: the package price "
                "does not depend on the configuration, and no cadence is projected (A9.5).")
        else:
            decision.append("No cost per accepted corpus can be computed. "
                            + (econ["no_cost_per_corpus"] or ""))
        if fastest is not None:
            decision.append(
                f"Fastest accepted configuration: {fastest.config_id}, warm median "
                f"{fastest.median_s:.3f} s per corpus of {texts} texts "
                f"({_fmt_rate(fastest.throughput_per_s)}).")
    return {
        "headline": (f"{len(accepted)} of {n} configuration(s) accepted" if n
                     else "No configuration could be read"),
        "columns": [
            {"key": "config", "label": "Configuration"},
            {"key": "accepted", "label": "Accepted (recomputed)"},
            {"key": "median", "label": "Warm median (min–max)", "align": "r"},
            {"key": "throughput", "label": "Throughput", "align": "r"},
            {"key": "cost", "label": "Cheapest cost per accepted corpus", "align": "r"},
        ],
        "rows": rows,
        "offers": {"columns": [
            {"key": "offer", "label": "Offer"}, {"key": "hardware", "label": "Hardware"},
            {"key": "package", "label": "Package", "align": "r"},
            {"key": "total", "label": "Package total", "align": "r"},
            {"key": "per_corpus", "label": "Per accepted corpus", "align": "r"}],
            "rows": offers,
            "source": econ["offers_source"],
            "example_prices": econ["example_prices"]},
        "decision": decision,
        "cautions": cautions(view, timings) + (
            [{"kind": "prices", "text": "The offer prices are example figures, not quotes: "
              "replace them with real offers (audit report --offers FILE) before buying."}]
            if econ["example_prices"] and econ["offers"] else []),
        "notes": [f"Throughput = {texts} evaluation texts / warm median, within the timer's "
                  "scope; times are the median and range of the successful warm passes."]
        if texts else [],
    }


def sections(view: RunView, result: AuditResult, *, offers: dict | None = None,
             offers_label: str | None = None) -> dict[str, Any]:
    """Protocol A's part of the report's view model; OFFERS overrides the run's own offers
    (`audit report --offers`)."""
    if offers is None:
        offers, offers_label = view.offers, "economics/offers.json (the run's own offers)"
    timings, econ = _derive(view, result, offers, offers_label or "not given")
    # What every row repeats is shown once; what the run notes already say, not again.
    common = factor_common_notes(timings)
    run_notes = set(str((view.manifest or {}).get("notes") or "").split("; "))
    parts = common.split("; ") if common else []
    notes_common = "; ".join(part for part in parts if part not in run_notes)
    qvals = [p["quality_value"] for t in timings for p in t["passes"]
             if p["quality_value"] is not None]
    measured = measured_section(view, qvals)
    decimals = (measured["quality_rule"] or {}).get("decimals", 4)
    return {
        "summary": summary_section(view, result, run_summary(view, result, timings, econ),
                                   timings, econ),
        "measured": measured,
        "timings": timings,
        "pass_matrix": pass_matrix(timings, decimals),
        "notes_common": notes_common,
        "notes_common_in_run": any(part in run_notes for part in parts),
        "notes_own": own_notes(timings),
        "memory": memory_section(view, timings),
        "economics": econ,
    }


def attachments(view: RunView) -> list[tuple[str, str]]:
    """The run files the signed PDF carries besides the manifest: the raw results."""
    return [("resultats-bruts.csv", "The raw results, one row per pass")]


def finding_scope(view: RunView, finding: Finding) -> str | None:
    """The pass or variant a finding is about, in words (`batch-4 warm pass 2`); None when
    it is about the whole run."""
    return finding.subject.describe() if finding.subject is not None else None


def figures(vm: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """The figures of protocol A's sections: name -> (plot kind, its data from VM)."""
    return {"durations": ("durations", vm["timings"]),
            "memory": ("memory", vm["memory"]["variants"]),
            "cost": ("cost", vm["economics"])}


REPORT = ReportPart(template=TEMPLATE, sections=sections, figures=figures,
                    finding_scope=finding_scope, attachments=attachments)
