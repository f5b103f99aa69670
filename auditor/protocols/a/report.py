"""Protocol A's sections of the report's view model: what was measured, timings per
variant (median and min-max of the warm passes, cold apart, never a p95), memory with the
source of each figure, and the economics; plus the per-run summary an archive keeps.

Every fact is read from the audit's derivations (`derive.py`) or the raw files' view, never
from the run's own claims: which variants are accepted, how many corpora were accepted, which
GPUs were used and what a package costs. The tree holds only JSON values, so it can be
compared with a golden file and rendered by any template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from auditor.model import AuditResult, ConfigSummary, OfferCost, RunSummary
from auditor.protocols.a import derive
from auditor.protocols.a.economics import (
    PackageCost,
    offer_problem,
    package_total,
    same_gpu,
    usd,
)
from auditor.protocols.a.view import RunView
from auditor.report.viewmodel import NOT_RECORDED, json_safe, lookup

NOT_RECORDED_CPU = "not recorded (CPU: allocator not measured)"
TEMPLATE = "protocol_a.html.j2"
"""The sections of protocol A in the report page (included by report.html.j2)."""


def _fmt_bytes(n: int | None) -> str:
    if n is None:
        return NOT_RECORDED
    return f"{n / 2**20:,.1f} MiB ({n:,} B)"

def _fmt_metric(value: Any) -> str:
    """A metric value to 4 decimals, as the CSV is read; anything else as it is."""
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def measured_section(manifest: dict | None, env: dict | None,
                     results: pl.DataFrame | None) -> dict[str, Any]:
    m = manifest or {}
    qr = m.get("quality_rule") or {}
    ref = qr.get("reference") or {}
    trunc = lookup(m, "corpus", "truncation") or {}
    truncation = None
    if trunc:
        n, cut = trunc.get("eval_texts"), trunc.get("truncated_texts")
        share = (f" ({100 * cut / n:.1f} %)"
                 if isinstance(n, int) and n and isinstance(cut, int) else "")
        truncation = (f"{cut} of {n} evaluation texts cut at {trunc.get('context_tokens')} "
                      f"tokens{share}" + (f"; rule: {trunc['rule']}" if trunc.get("rule") else ""))
    quality = None
    if qr:
        quality = (f"{qr.get('metric')} >= {qr.get('threshold')} and >= reference "
                   f"{ref.get('name')!s} ({_fmt_metric(ref.get('value'))}) - {qr.get('tolerance')} "
                   f"({qr.get('tolerance_direction')})")
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
        "quality_rule": quality,
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
        "corpus": {k: lookup(m, "corpus", k) for k in ("source", "revision", "eval_size")},
        "environment": environment_rows(env),
        "notes": m.get("notes"),
    }


def environment_rows(env: dict | None) -> list[dict[str, str]]:
    if not env:
        return [{"label": "environment.json", "value": NOT_RECORDED}]
    rt = env.get("runtime") or {}
    load = lookup(env, "concurrent_load", "loadavg")
    host = env.get("host") or {}
    rows = [
        ("device", env.get("device")),
        ("GPU model", env.get("gpu_model") or "none (no GPU used)"),
        ("GPUs used (from placement evidence)", env.get("gpu_count")),
        ("GPUs visible", env.get("gpus_visible")),
        ("driver", env.get("driver_version") or "not applicable"),
        ("runtime", f"{rt.get('name')} {rt.get('version') or ''}".strip()),
        ("Python", env.get("python_version")),
        ("PyTorch", env.get("torch_version")),
        ("code version", env.get("code_version")),
        ("host", " ".join(str(host[k]) for k in ("platform", "machine") if host.get(k))
         + (f", {host['cpu_count']} CPUs" if host.get("cpu_count") else "")),
        ("load average (1, 5, 15 min)", ", ".join(f"{x:.2f}" for x in load) if load else None),
        ("NVML", lookup(env, "concurrent_load", "nvml")),
        ("observed at", env.get("observed_at")),
    ]
    return [{"label": k, "value": NOT_RECORDED if v is None or v == "" else str(v)}
            for k, v in rows]


def _status_frame(timeline: pl.DataFrame | None) -> pl.DataFrame | None:
    need = {"variant_id", "phase", "run_index", "status"}
    if timeline is None or not need <= set(timeline.columns):
        return None
    return (timeline.filter(pl.col("phase").is_in(["cold", "warm"]))
            .select(["variant_id", "phase", pl.col("run_index").cast(pl.Int64), "status"])
            .unique(subset=["variant_id", "phase", "run_index"], keep="first"))


def timings_section(results: pl.DataFrame | None, timeline: pl.DataFrame | None,
                    ) -> list[dict[str, Any]]:
    """Per variant: every pass (status from timeline.jsonl), and the median and min-max of
    the successful warm passes; cold passes summarised apart. Failed passes keep their
    time-to-failure in the table but never enter a summary (A6.4, A10.3)."""
    cols = {"variant_id", "phase", "run_index", "elapsed_seconds"}
    if results is None or not cols <= set(results.columns):
        return []
    keep = [c for c in ("row", "variant_id", "phase", "run_index", "elapsed_seconds",
                        "corpus_accepted", "quality_value", "notes") if c in results.columns]
    df = results.select(keep).with_columns(pl.col("run_index").cast(pl.Int64))
    status = _status_frame(timeline)
    if status is not None:
        df = df.join(status, on=["variant_id", "phase", "run_index"], how="left")
    else:
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias("status"))
    df = df.sort(["variant_id", "phase", "run_index"])
    ok = df.filter((pl.col("status") == "ok") & pl.col("elapsed_seconds").is_not_null())
    summary = (ok.group_by(["variant_id", "phase"])
               .agg(n=pl.len(), median_s=pl.col("elapsed_seconds").median(),
                    min_s=pl.col("elapsed_seconds").min(),
                    max_s=pl.col("elapsed_seconds").max()))
    summ = {(r["variant_id"], r["phase"]): r for r in summary.iter_rows(named=True)}
    order = list(dict.fromkeys(df.get_column("variant_id").to_list()))
    out = []
    for vid, passes in zip(order, df.partition_by("variant_id", maintain_order=True),
                           strict=True):
        prow = passes.to_dicts()
        entry: dict[str, Any] = {"variant_id": vid, "passes": [{
            "row": p.get("row"), "phase": p["phase"], "run_index": p["run_index"],
            "elapsed_seconds": p["elapsed_seconds"], "status": p["status"],
            "corpus_accepted": p.get("corpus_accepted"), "quality_value": p.get("quality_value"),
            "notes": p.get("notes") or "",
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
        entry["failed"] = sum(1 for p in prow if p["status"] not in ("ok", None))
        entry["status_known"] = status is not None
        out.append(entry)
    return out


def memory_section(results: pl.DataFrame | None, traces: Mapping | None,
                   ) -> list[dict[str, Any]]:
    """Per variant and phase: the allocator figures (from the CSV, source torch.cuda) when
    recorded, and any figure from another named source (A7.5) in the memory traces."""
    if results is None or "variant_id" not in results.columns:
        return []
    mem_cols = ["baseline_allocated_bytes", "baseline_reserved_bytes",
                "peak_allocated_bytes", "peak_reserved_bytes"]
    have = [c for c in mem_cols if c in results.columns]
    exprs = [pl.col(c).cast(pl.Int64).max().alias(c) for c in have]
    if "device" in results.columns:
        exprs.append(pl.col("device").first().alias("device"))
    agg = results.group_by(["variant_id", "phase"]).agg(exprs).sort(["variant_id", "phase"])
    by_variant: dict[str, dict[str, Any]] = {}
    for r in agg.iter_rows(named=True):
        v = by_variant.setdefault(r["variant_id"], {"variant_id": r["variant_id"], "rows": [],
                                                    "series": []})
        cuda = str(r.get("device") or "").startswith("cuda")
        recorded = any(r.get(c) is not None for c in have)
        v["rows"].append({
            "phase": r["phase"],
            "recorded": recorded,
            "source": "torch.cuda allocator (resultats-bruts.csv, max over passes)"
                      if recorded else (NOT_RECORDED if cuda else NOT_RECORDED_CPU),
            **{c: r.get(c) for c in mem_cols},
            **{c + "_text": _fmt_bytes(r.get(c)) if recorded else
               (NOT_RECORDED if cuda else NOT_RECORDED_CPU) for c in mem_cols},
        })
        if recorded:
            v["series"].append({"label": f"{r['phase']} peak reserved (torch.cuda)",
                                "peak_bytes": r.get("peak_reserved_bytes")})
    # Figures from outside the allocator, with their own name and source (A7.5).
    other: dict[tuple[str, str, str, str, str], float] = {}
    for key, trace in (traces or {}).items():
        if not isinstance(trace, Mapping) or not isinstance(key, tuple) or len(key) < 2:
            continue
        for src in trace.get("other_sources") or []:
            if not isinstance(src, Mapping) or not isinstance(src.get("value"), (int, float)):
                continue
            k = (str(key[0]), str(key[1]), str(src.get("name")), str(src.get("source")),
                 str(src.get("unit")))
            other[k] = max(other.get(k, float("-inf")), src["value"])
    for (vid, phase, name, source, unit), value in sorted(other.items()):
        v = by_variant.setdefault(vid, {"variant_id": vid, "rows": [], "series": []})
        in_bytes = unit.lower() in ("bytes", "byte", "b")
        v.setdefault("other", []).append({
            "phase": phase, "name": name, "source": source, "unit": unit, "max_value": value,
            "value_text": _fmt_bytes(int(value)) if in_bytes else f"{value:,} {unit}"})
        if in_bytes:
            v["series"].append({"label": f"{phase} {name}", "peak_bytes": int(value)})
    for v in by_variant.values():
        v.setdefault("other", [])
    return [by_variant[k] for k in sorted(by_variant)]


def economics_section(view: RunView, offers: dict | None, result: AuditResult,
                      timings: list[dict[str, Any]], offers_label: str) -> dict[str, Any]:
    """A9/A10.2: package price x lots per offer; a cost per accepted corpus only from the
    accepted count the audit recomputed, and only when the audit accepted the run;
    configurations that are not accepted listed apart, never ranked."""
    econ = (view.manifest or {}).get("economics") or {}
    lots = econ.get("lots") if isinstance(econ.get("lots"), int) else 1
    accepted_corpora: int | None = None
    basis: str
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
                 "the GPU the run measured: an accepted count says nothing of other hardware. "
                 "No cadence is projected over the package's days.")
        if accepted_corpora is None:
            basis = "No accepted corpus was measured: only the package cost is given (A9.5)."
    measured_on = derive.gpu_models(view)
    gpus_used = derive.gpus_used(view)
    rows = []
    for o in (offers or {}).get("offers") or []:
        if not isinstance(o, Mapping):
            continue
        problem = offer_problem(dict(o))
        price = o.get("price_per_lot_usd_minor")
        total = package_total(dict(o), lots) if isinstance(price, int) and problem is None \
            else None
        # An accepted count says something only about the hardware it was measured on.
        same_hw = same_gpu(o.get("gpu_model"), measured_on)
        per = (PackageCost(dict(o), lots, total, accepted_corpora).per_corpus_usd_minor
               if total is not None and same_hw else None)
        why_not = ("not computed (no measured accepted count)" if accepted_corpora is None
                   or total is None else
                   f"not computed: run measured on {', '.join(sorted(measured_on)) or 'CPU'}")
        rows.append({
            "offer_id": o.get("offer_id"), "provider": o.get("provider"),
            "gpu_model": o.get("gpu_model"), "gpus_per_lot": o.get("gpus_per_lot"),
            "duration_days": o.get("duration_days"), "lots": lots,
            "price_per_lot_usd_minor": price,
            "price_per_lot_text": usd(price) if isinstance(price, int) else NOT_RECORDED,
            "total_usd_minor": total, "total_text": usd(total) if total is not None else "—",
            "per_corpus_usd_minor": float(per) if per is not None else None,
            "per_corpus_text": usd(per) if per is not None else why_not,
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
    return {
        "offers_source": offers_label,
        "example_prices": bool((offers or {}).get("example")),
        "chosen_offer": econ.get("offer_id"),
        "lots": lots,
        "accepted_corpora": accepted_corpora,
        "basis": basis,
        "offers": rows,
        "accepted_configurations": [
            {"rank": i + 1, "variant_id": v, "median_warm_s": warm.get(v, {}).get("median_s")}
            for i, v in enumerate(accepted)],
        "not_accepted_configurations": [
            {"variant_id": v, "median_warm_s": warm.get(v, {}).get("median_s"),
             "why": "a pass was not accepted" if result.verdict == "accepted"
                    else f"the run is {result.verdict}"}
            for v in not_accepted],
    }


def factor_common_notes(timings: list[dict[str, Any]]) -> str:
    """Move the `; `-separated parts of `notes` that every pass repeats into one text, shown
    once above the pass table, and leave each pass only what is its own. Nothing is dropped:
    common text + a pass's own text is the pass's whole note, part for part."""
    passes = [p for t in timings for p in t["passes"]]
    if len(passes) < 2:
        return ""
    split = [p["notes"].split("; ") if p["notes"] else [] for p in passes]
    common = set(split[0]).intersection(*split[1:])
    for p, parts in zip(passes, split, strict=True):
        p["notes"] = "; ".join(part for part in parts if part not in common)
    return "; ".join(part for part in split[0] if part in common)


def sections(view: RunView, result: AuditResult, *, offers: dict | None = None,
             offers_label: str | None = None) -> dict[str, Any]:
    """Protocol A's part of the report's view model; OFFERS overrides the run's own offers
    (`audit report --offers`)."""
    timings = timings_section(view.results, view.timeline)
    notes_common = factor_common_notes(timings)
    if offers is None:
        offers, offers_label = view.offers, "economics/offers.json (the run's own offers)"
    return {
        "measured": measured_section(view.manifest, view.environment, view.results),
        "timings": timings,
        "notes_common": notes_common,
        "memory": memory_section(view.results, view.memory_traces),
        "economics": economics_section(view, offers, result, timings,
                                       offers_label or "not given"),
    }


def figures(vm: dict[str, Any]) -> dict[str, str | None]:
    """The SVG figures of protocol A's sections, drawn from the view model only."""
    from auditor.report import plots

    return {"durations": plots.durations(vm["timings"]), "memory": plots.memory(vm["memory"]),
            "cost": plots.cost(vm["economics"])}


def summarize(view: RunView, result: AuditResult) -> RunSummary:
    """The small summary an archive keeps of one protocol A run: per variant, accepted or not
    (recomputed, and only in an accepted run), the GPUs used as evidenced, the warm median
    and range, throughput, and each offer's package cost and cost per accepted corpus."""
    timings = timings_section(view.results, view.timeline)
    econ = economics_section(view, view.offers, result, timings, "the run's own offers")
    accepted = {c["variant_id"] for c in econ["accepted_configurations"]}
    declared = {v.get("variant_id"): v for v in lookup(view.manifest, "variants") or []
                if isinstance(v, Mapping)}
    n_texts = view.expected_ids.height if view.expected_ids is not None else None
    gpus = derive.pass_gpus(view)
    first_error = next((f for f in result.findings if f.severity == "error"), None)
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
                               else o["problem"] or o["per_corpus_text"]
                               if vid in accepted else "configuration not accepted"))
            for o in econ["offers"])
        configs.append(ConfigSummary(
            config_id=vid, accepted=vid in accepted,
            gpu_model=", ".join(models) or None,
            gpu_count=int(mine.get_column("gpu_count").max() or 0) if mine.height else 0,
            precision=lookup(declared.get(vid), "precision"),
            median_s=median, min_s=t["warm"]["min_s"], max_s=t["warm"]["max_s"],
            throughput_per_s=(n_texts / median if n_texts and median else None),
            reason=None if vid in accepted else (
                "a pass was not accepted" if result.verdict == "accepted"
                else f"run {result.verdict}"),
            costs=costs,
            extra=(("batch", lookup(declared.get(vid), "batch")),
                   ("cold_median_s", t["cold"]["median_s"]))))
    return RunSummary(
        run_dir=result.run_dir, manifest_sha256=view.files_on_disk.get("manifest.json"),
        protocol=result.protocol, experiment_id=result.experiment_id, verdict=result.verdict,
        counts=tuple(result.counts().items()), configurations=tuple(configs),
        main_reason=first_error.message if first_error else None)
