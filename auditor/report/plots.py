"""The report's figures, as SVG text, drawn only from the view model (never from files).

Deterministic on purpose, so two renders of the same run are byte-identical: Agg backend,
a fixed `svg.hashsalt` (ids), text kept as text (`svg.fonttype: none`, also searchable in
the PDF), and no date in the SVG metadata. Text from a run (variant IDs, source names) is
drawn literally (`text.parse_math` off: a `$...$` in a name is not a formula), and a value
that is not finite is left out of the axes' scale and labelled as what it is.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import Any

_RC: dict[str, Any] = {
    "svg.hashsalt": "gpubench-audit",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "text.parse_math": False,
}
_COLD, _WARM, _FAIL = "#1f77b4", "#2ca02c", "#d62728"


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buf.getvalue()
    # Drop the XML prolog and DOCTYPE: the SVG is embedded, not a standalone file.
    return text[text.index("<svg") :]


MAX_PLOTTED = 1e15
"""Values beyond this (seconds, MiB, USD) are not scaled into an axis: its ticks would
overflow; they stay in the tables, written out."""


def _limit(values: list[float], factor: float) -> float:
    """An axis's upper limit: FACTOR x the largest plottable value (1 when there is none)."""
    finite = [v for v in values if math.isfinite(v) and abs(v) <= MAX_PLOTTED]
    return max(finite, default=0.0) * factor or 1.0


def _plottable(value: float) -> bool:
    return math.isfinite(value) and abs(value) <= MAX_PLOTTED


def load_matplotlib() -> None:
    """Import matplotlib as the first figure would (Agg backend), ahead of drawing."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot


def _figure(n_rows: int) -> Any:
    load_matplotlib()
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update(_RC)  # type: ignore[arg-type]  # the stub types keys as literals
    return plt.subplots(figsize=(6.8, max(1.4, 0.3 * n_rows + 1.0)))


def durations(timings: list[dict[str, Any]]) -> str | None:
    """Every pass's duration per variant: each point shown, cold and warm apart, failures
    marked (their time is time-to-failure, not a result)."""
    if not timings:
        return None
    fig, ax = _figure(2 * len(timings))
    labels, ypos = [], 0
    seen: set[str] = set()
    for t in timings:
        for phase, color, marker in (("warm", _WARM, "o"), ("cold", _COLD, "s")):
            passes = [p for p in t["passes"] if p["phase"] == phase]
            labels.append(f"{t['variant_id']} · {phase}")
            for p in passes:
                if p["elapsed_seconds"] is None or not _plottable(p["elapsed_seconds"]):
                    continue
                failed = p["status"] not in ("ok", None)
                lab = "failed pass (time to failure)" if failed else f"{phase} pass"
                ax.scatter(
                    [p["elapsed_seconds"]],
                    [ypos],
                    s=30,
                    c=_FAIL if failed else color,
                    marker="x" if failed else marker,
                    zorder=3,
                    label=None if lab in seen else lab,
                )
                seen.add(lab)
            median = t["warm"]["median_s"]
            if phase == "warm" and median is not None and _plottable(median):
                ax.plot(
                    [median] * 2,
                    [ypos - 0.3, ypos + 0.3],
                    color="black",
                    lw=1.5,
                    zorder=4,
                    label=None if "median" in seen else "warm median",
                )
                seen.add("median")
            ypos += 1
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.invert_yaxis()
    ax.set_xlabel("duration of the pass (seconds)")
    ax.set_xlim(
        0,
        _limit(
            [
                p["elapsed_seconds"]
                for t in timings
                for p in t["passes"]
                if p["elapsed_seconds"] is not None
            ],
            1.05,
        ),
    )
    # Above the axes: below them it collides with the x label whatever the figure height.
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, frameon=False, fontsize=8)
    return _svg(fig)


def memory(mem: list[dict[str, Any]]) -> str | None:
    """The largest recorded peak per variant and source, in MiB; None when nothing recorded."""
    bars = [
        (m["variant_id"], s["label"], s["peak_bytes"])
        for m in mem
        for s in m["series"]
        if s["peak_bytes"] is not None
    ]
    if not bars:
        return None
    fig, ax = _figure(len(bars))
    labels = [f"{v} · {lab}" for v, lab, _ in bars]
    values = [b / 2**20 for _, _, b in bars]
    ax.barh(range(len(bars)), [v if _plottable(v) else 0 for v in values], color="#7f7fbf")
    for i, v in enumerate(values):
        ax.text(v if _plottable(v) else 0, i, f" {v:,.1f} MiB", va="center", fontsize=8)
    ax.set_yticks(range(len(bars)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("peak memory of the phase (MiB), by source")
    ax.set_xlim(0, _limit(values, 1.3))
    return _svg(fig)


def cost(econ: dict[str, Any]) -> str | None:
    """The cost per accepted corpus of the offers it could be computed for (the hardware the
    run measured, an accepted run); None when there is none: the report then says why in
    words (a chart of package prices would read as a cost per corpus)."""
    rows = [o for o in econ.get("offers", []) if o.get("per_corpus_usd_minor") is not None]
    if not rows:
        return None
    fig, ax = _figure(len(rows))
    values = [o["per_corpus_usd_minor"] / 100 for o in rows]
    ax.barh(range(len(rows)), [v if _plottable(v) else 0 for v in values], color="#e8a33d")
    for i, v in enumerate(values):
        ax.text(v if _plottable(v) else 0, i, f" ${v:,.2f}", va="center", fontsize=8)
    ax.set_yticks(
        range(len(rows)),
        [
            f"{o['offer_id']} ({o['duration_days']} d x "
            f"{o['lots']} lot{'s' if o['lots'] > 1 else ''})"
            for o in rows
        ],
    )
    ax.invert_yaxis()
    ax.set_xlim(0, _limit(values, 1.35))
    from matplotlib.ticker import StrMethodFormatter

    ax.xaxis.set_major_formatter(StrMethodFormatter("${x:,.0f}"))
    ax.set_xlabel("USD per accepted corpus (package total / accepted corpora)")
    return _svg(fig)


def cost_vs_throughput(points: list[dict[str, Any]]) -> str | None:
    """Archive comparison: each ranked configuration's cost per accepted corpus against its
    throughput, one marker and colour per offer (only points measured on the offer's GPU).
    The axes leave room around every point (a point at zero cost sits above the axis, one at
    the largest throughput inside the frame), each label is offset from its point in points,
    on the side with room, and never clipped; the legend sits outside, right of the plot."""
    pts = [
        p
        for p in points
        if p.get("cost_per_accepted_corpus_usd_minor") is not None
        and p.get("throughput_per_s") is not None
        and _plottable(p["throughput_per_s"])
        and _plottable(p["cost_per_accepted_corpus_usd_minor"] / 100)
    ]
    if not pts:
        return None
    fig, ax = _figure(6)
    offers = sorted({p["offer_id"] for p in pts})
    markers = "osD^vP*X"
    colours = ["#1f77b4", "#e8a33d", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#7f7f7f"]
    x_top = _limit([p["throughput_per_s"] for p in pts], 1.12)
    y_top = _limit([p["cost_per_accepted_corpus_usd_minor"] / 100 for p in pts], 1.15)
    for n, offer in enumerate(offers):
        mine = [p for p in pts if p["offer_id"] == offer]
        ax.scatter(
            [p["throughput_per_s"] for p in mine],
            [p["cost_per_accepted_corpus_usd_minor"] / 100 for p in mine],
            s=36,
            marker=markers[n % len(markers)],
            c=colours[n % len(colours)],
            label=offer,
            zorder=3,
            clip_on=False,
        )
        for p in mine:
            x, y = p["throughput_per_s"], p["cost_per_accepted_corpus_usd_minor"] / 100
            right = x < 0.8 * x_top  # room on the right; else the label goes left
            ax.annotate(
                p["config_id"],
                (x, y),
                xytext=(6 if right else -6, 5),
                textcoords="offset points",
                ha="left" if right else "right",
                va="bottom",
                fontsize=7,
                annotation_clip=False,
            )
    from matplotlib.ticker import StrMethodFormatter

    ax.yaxis.set_major_formatter(StrMethodFormatter("${x:,.0f}"))
    ax.set_xlabel("throughput at the warm median (texts per second)")
    ax.set_ylabel("USD per accepted corpus")
    ax.set_xlim(left=0, right=x_top)
    ax.set_ylim(bottom=-0.06 * y_top, top=y_top)  # a zero-cost point clears the axis
    ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= y_top])
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        frameon=False,
        fontsize=8,
        title="offer",
        title_fontsize=8,
        alignment="left",
        borderaxespad=0,
    )
    return _svg(fig)


_DEVICE_COLORS = {
    "cpu": "#9e9e9e",
    "gpu": "#2ca02c",
    "ane": "#1f77b4",
    "npu": "#9467bd",
    "unknown": "#e0e0e0",
}


def power_traces(power: list[dict[str, Any]]) -> str | None:
    """Protocol B: the summed power of every ok trial over time, one panel per policy,
    seconds from the trial's window start; each window shaded, the trace around it shown.
    None when no trace holds a reading."""
    panels = [p for p in power if any(t["points"] for t in p["trials"])]
    if not panels:
        return None
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update(_RC)  # type: ignore[arg-type]  # the stub types keys as literals
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(6.8, 1.5 * len(panels) + 0.5), squeeze=False, layout="constrained"
    )
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    top = _limit([w for p in panels for t in p["trials"] for _, w in t["points"]], 1.15)
    for ax, p in zip(axes[:, 0], panels, strict=True):
        for i, t in enumerate(p["trials"]):
            c = colors[i % len(colors)]
            if _plottable(t["wall_s"]):
                ax.axvspan(0, t["wall_s"], color=c, alpha=0.07, lw=0)
                ax.axvline(t["wall_s"], color=c, lw=0.6, ls="--")
            pts = [(x, w) for x, w in t["points"] if _plottable(x) and _plottable(w)]
            if pts:
                ax.step(
                    [x for x, _ in pts],
                    [w for _, w in pts],
                    where="post",
                    color=c,
                    lw=1.0,
                    label=f"trial {t['trial_index']}",
                )
        ax.axvline(0, color="black", lw=0.6)
        ax.set_ylim(0, top)
        ax.set_ylabel("W")
        ax.set_title(p["policy_id"], fontsize=8, loc="left")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=6, frameon=False)
    axes[-1, 0].set_xlabel("seconds from the trial's window start")
    return _svg(fig)


def placement_shares(placement: list[dict[str, Any]]) -> str | None:
    """Protocol B: per policy, the share of its placed operations on each device, with the
    accelerator's declared floor marked. None when no policy has placed operations."""
    rows = [p for p in placement if p["placed"]]
    if not rows:
        return None
    fig, ax = _figure(len(rows))
    seen: set[str] = set()
    for i, p in enumerate(rows):
        left = 0.0
        total = sum(n for d, n in p["by_device"].items() if d != "unknown") or 1
        for device in ("ane", "npu", "gpu", "cpu"):
            n = p["by_device"].get(device, 0)
            if n:
                share = n / total
                ax.barh(
                    i,
                    share,
                    left=left,
                    color=_DEVICE_COLORS[device],
                    label=None if device in seen else device,
                )
                seen.add(device)
                if share >= 0.08:
                    ax.text(
                        left + share / 2,
                        i,
                        f"{device} {100 * share:.1f} %",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if device != "cpu" else "black",
                    )
                left += share
        if p["floor"] is not None and p["role"] == "accelerator":
            ax.plot(
                [p["floor"]] * 2,
                [i - 0.42, i + 0.42],
                color="#b3261e",
                lw=2,
                label=None if "floor" in seen else "declared floor",
            )
            seen.add("floor")
    ax.set_yticks(range(len(rows)), [p["policy_id"] for p in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    from matplotlib.ticker import PercentFormatter

    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("share of the operations with placement information, by device")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(
        handles,
        labels,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=6,
        frameon=False,
        fontsize=8,
    )
    return _svg(fig)


PLOTS: dict[str, Callable[[Any], str | None]] = {
    "durations": durations,
    "memory": memory,
    "cost": cost,
    "cost_vs_throughput": cost_vs_throughput,
    "power_traces": power_traces,
    "placement_shares": placement_shares,
}
"""The figures a report part may ask for (`ReportPart.figures`), by kind."""


def draw(specs: dict[str, tuple[str, Any]]) -> dict[str, str | None]:
    """Each figure of SPECS (name -> (plot kind, its data)) as SVG text, None where there is
    nothing to draw."""
    return {name: PLOTS[kind](data) for name, (kind, data) in specs.items()}
