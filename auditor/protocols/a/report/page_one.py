"""Page 1 of protocol A's report, drawn from the run's `Summary` (`auditor/protocols/a/
summary.py`), the one derivation the archive keeps too: per variant, accepted or not, warm
median and range, throughput and its cheapest cost per accepted corpus; per offer, the
package cost and the cost per accepted corpus or why not; what to buy; how sure to be."""

from __future__ import annotations

from typing import Any

from auditor.present import NOT_RECORDED
from auditor.protocols.a.figures import VariantFigures
from auditor.protocols.a.report.text import fmt_rate
from auditor.protocols.a.summary import LOAD_SHARE, SPREAD_SHARE, HowSure, Load, Summary


def _load_text(load: Load) -> str:
    parts = [
        f"{x:.2f} {when}"
        for when, x in (("before the passes", load.before), ("after", load.after))
        if x is not None
    ]
    return ", ".join(parts)


def cautions(how: HowSure) -> list[dict[str, str]]:
    """Measurements to take with care: warm passes spread above SPREAD_SHARE of their
    median, concurrent load above LOAD_SHARE of the CPUs, a GPU shared, example prices."""
    out = []
    if how.unstable:
        which = ", ".join(
            f"{s.variant_id} {s.min_s:.3f}–{s.max_s:.3f} s ({100 * s.share:.0f} %)"
            for s in how.unstable
        )
        out.append(
            {
                "kind": "unstable",
                "text": (
                    f"Unstable timings: the warm passes of {which} spread over more than "
                    f"{100 * SPREAD_SHARE:.0f} % of their median, so the medians are uncertain; "
                    "re-run on an idle machine, or with a larger corpus so that each pass lasts "
                    "longer."
                ),
            }
        )
    if how.load is not None:
        out.append(
            {
                "kind": "load",
                "text": (
                    f"Concurrent load: 1-minute load average {_load_text(how.load)} on "
                    f"{how.load.cpus} CPUs, more than {100 * LOAD_SHARE:.0f} % of the CPUs busy "
                    "besides the run itself: other work shared the machine during the passes."
                ),
            }
        )
    if how.gpu_processes:
        out.append(
            {
                "kind": "load",
                "text": (
                    f"{how.gpu_processes} other process(es) held GPU memory during the run "
                    "(NVML): the GPU was shared."
                ),
            }
        )
    if how.example_prices:
        out.append(
            {
                "kind": "prices",
                "text": "The offer prices are example figures, not "
                "quotes: replace them with real offers (audit report --offers FILE) "
                "before buying.",
            }
        )
    return out


def summary_section(s: Summary, econ: dict[str, Any]) -> dict[str, Any]:
    """Page 1's rows for protocol A from summary S and ECON, the economics section (its
    offers as shown)."""
    summary = s.run
    texts = next(
        (c.figures.texts for c in summary.configurations if isinstance(c.figures, VariantFigures)),
        None,
    )
    per_text = {o["offer_id"]: o["per_corpus_text"] for o in econ["offers"]}
    rows = []
    for c in summary.configurations:
        costed = sorted(
            (o for o in c.costs if o.cost_per_accepted_corpus_usd_minor is not None),
            key=lambda o: (o.cost_per_accepted_corpus_usd_minor, o.offer_id),
        )
        best = costed[0] if costed else None
        words = sorted({o.why_not for o in c.costs if o.why_not})
        rows.append(
            {
                "tone": "ok" if c.accepted else "bad",
                "values": {
                    "median_s": c.median_s,
                    "min_s": c.min_s,
                    "max_s": c.max_s,
                    "throughput_per_s": c.throughput_per_s,
                    "best_offer": best.offer_id if best else None,
                    "best_cost_per_corpus_usd_minor": (
                        best.cost_per_accepted_corpus_usd_minor if best else None
                    ),
                },
                "cells": {
                    "config": c.config_id,
                    "accepted": "accepted" if c.accepted else f"no: {c.reason}",
                    "median": (
                        NOT_RECORDED
                        if c.median_s is None
                        else f"{c.median_s:.3f} s ({c.min_s:.3f}–{c.max_s:.3f})"
                    ),
                    "throughput": fmt_rate(c.throughput_per_s),
                    "cost": (
                        f"{per_text[best.offer_id]} ({best.offer_id})"
                        if best
                        else "not accepted"
                        if not c.accepted
                        else "; ".join(words) or "no offer"
                    ),
                },
            }
        )
    offers = [
        {
            "tone": "ok" if o["per_corpus_usd_minor"] is not None else "muted",
            "values": {
                "total_usd_minor": o["total_usd_minor"],
                "per_corpus_usd_minor": o["per_corpus_usd_minor"],
            },
            "cells": {
                "offer": o["offer_id"] + (" (example)" if o["example"] else ""),
                "hardware": o["hardware"],
                "package": f"{o['duration_days']} days × "
                f"{o['lots']} lot{'s' if o['lots'] != 1 else ''}",
                "total": o["total_text"] if o["total_usd_minor"] is not None else "not costed",
                "per_corpus": o["per_corpus_text"]
                if o["per_corpus_usd_minor"] is not None
                else o["why_not"] or "—",
            },
        }
        for o in econ["offers"]
    ]
    accepted = [c for c in summary.configurations if c.accepted]
    n = len(summary.configurations)
    decision = []
    measured = s.how_sure.measured
    if measured is not None and measured.busy:
        decision.append(
            f"Measured on a BUSY machine: {measured.sentence().split(': ', 1)[1]} while the "
            "passes ran. The times are slower and more spread than this configuration's own: "
            "measure again on an idle machine before comparing or buying."
        )
    priced = sorted(
        (o for o in econ["offers"] if o["per_corpus_usd_minor"] is not None),
        key=lambda o: (o["per_corpus_usd_minor"], o["offer_id"]),
    )
    if not accepted:
        decision.append(
            "No configuration is accepted: none can be bought on this run, and "
            "none is ranked (A10.2)."
        )
    else:
        by_id = {c.config_id: c for c in accepted}
        fastest = next(
            (by_id[v] for v in s.fastest_first if v in by_id and by_id[v].median_s is not None),
            None,
        )
        if priced:
            o = priced[0]
            decision.append(
                f"Cheapest per accepted corpus: offer {o['offer_id']}, {o['hardware']}: "
                f"{o['per_corpus_text']} per accepted corpus ({o['total_text']} for the "
                f"{o['duration_days']}-day package / {econ['accepted_corpora']} accepted "
                "corpus"
                + ("; an example price, not a quote" if o["example"] else "")
                + "). It is the same for every accepted configuration: the package price "
                "does not depend on the configuration, and no cadence is projected (A9.5)."
            )
        else:
            decision.append(
                "No cost per accepted corpus can be computed. " + (econ["no_cost_per_corpus"] or "")
            )
        if fastest is not None:
            decision.append(
                f"Fastest accepted configuration: {fastest.config_id}, warm median "
                f"{fastest.median_s:.3f} s per corpus of {texts} texts "
                f"({fmt_rate(fastest.throughput_per_s)})."
            )
    return {
        "headline": (
            f"{len(accepted)} of {n} configuration(s) accepted"
            if n
            else "No configuration could be read"
        ),
        "columns": [
            {"key": "config", "label": "Configuration"},
            {"key": "accepted", "label": "Accepted (recomputed)"},
            {"key": "median", "label": "Warm median (min–max)", "align": "r"},
            {"key": "throughput", "label": "Throughput", "align": "r"},
            {"key": "cost", "label": "Cheapest cost per accepted corpus", "align": "r"},
        ],
        "rows": rows,
        "offers": {
            "columns": [
                {"key": "offer", "label": "Offer"},
                {"key": "hardware", "label": "Hardware"},
                {"key": "package", "label": "Package", "align": "r"},
                {"key": "total", "label": "Package total", "align": "r"},
                {"key": "per_corpus", "label": "Per accepted corpus", "align": "r"},
            ],
            "rows": offers,
            "source": econ["offers_source"],
            "example_prices": econ["example_prices"],
        },
        "decision": decision,
        "cautions": cautions(s.how_sure),
        "notes": (
            [
                f"Throughput = {texts} evaluation texts / warm median, within the timer's "
                "scope; times are the median and range of the successful warm passes."
            ]
            if texts
            else []
        )
        + (
            [f"{measured.sentence()[0].upper()}{measured.sentence()[1:]}."]
            if measured is not None
            else []
        ),
    }
