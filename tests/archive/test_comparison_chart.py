"""The comparison chart (`plots.cost_vs_throughput`), as a reader sees it: every point label
whole and inside the drawn figure (no "atch-1"), a zero-cost point above the x axis, the
point of the largest throughput inside the frame, and the legend beside the plot, not over
it. Checked on the figure's own layout (display coordinates after drawing)."""

from __future__ import annotations

from typing import Any

import pytest

from auditor.report import plots


@pytest.fixture
def figure(monkeypatch: pytest.MonkeyPatch) -> Any:
    kept: dict[str, Any] = {}

    def keep(fig: Any) -> str:
        kept["fig"] = fig
        return "<svg/>"

    monkeypatch.setattr(plots, "_svg", keep)
    pts = [
        {
            "offer_id": offer,
            "config_id": cfg,
            "throughput_per_s": thr,
            "cost_per_accepted_corpus_usd_minor": cost,
        }
        for offer, cost in (("example-h100-7d", 123456), ("cpu-7d", 1500))
        for cfg, thr in (("batch-1", 2100.0), ("batch-8", 9500.0), ("batch-32", 19500.0))
    ]
    assert plots.cost_vs_throughput(pts) == "<svg/>"
    fig = kept["fig"]
    fig.canvas.draw()
    return fig


def test_labels_whole_and_inside_the_figure(figure: Any) -> None:
    renderer = figure.canvas.get_renderer()
    ax = figure.axes[0]
    tight = figure.get_tightbbox(renderer)
    labels = [t for t in ax.texts]
    assert sorted(t.get_text() for t in labels) == sorted(["batch-1", "batch-8", "batch-32"] * 2)
    for t in labels:
        box = t.get_window_extent(renderer)
        # inside what the saved figure holds (bbox_inches="tight"), and not clipped
        assert box.x0 >= tight.x0 * figure.dpi - 1 and box.x1 <= tight.x1 * figure.dpi + 1
        assert not t.get_clip_on() or t.get_annotation_clip() is False


def test_points_clear_the_axes_and_the_legend_is_beside_the_plot(figure: Any) -> None:
    renderer = figure.canvas.get_renderer()
    ax = figure.axes[0]
    frame = ax.get_window_extent(renderer)
    for coll in ax.collections:
        for x, y in ax.transData.transform(coll.get_offsets()):
            assert frame.y0 + 3 < y <= frame.y1 and frame.x0 < x < frame.x1 - 3
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.x0 >= frame.x1  # right of the plot, never over it


def test_sources_are_shown_without_local_paths() -> None:
    """A signed comparison names its runs relative to the folder that holds them all, never
    by a local absolute path of the machine that built the archive."""
    from auditor.archive.compare import shown_sources

    shown = shown_sources(
        ["/home/me/runs/a", "/home/me/runs/b", "/home/me/runs.tar.gz!/x/run", "rel/run"]
    )
    assert shown == {
        "/home/me/runs/a": "runs/a",
        "/home/me/runs/b": "runs/b",
        "/home/me/runs.tar.gz!/x/run": "runs.tar.gz!/x/run",
    }
    assert shown_sources(["/only/one/run"]) == {"/only/one/run": "run"}
    assert shown_sources(["a", "b"]) == {}
