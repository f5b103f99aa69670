"""The quality metrics the auditor recomputes with polars (auditor/protocols/a/facts/quality.py)
against a hand-computed case and, property-based, against the plain-Python implementation in
tests/runfactory.py (the sklearn conventions, zero_division=0)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
import runfactory as rf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.engine import load_run
from auditor.protocols.a.facts.passes import pass_stats

METRICS = ("macro_f1", "accuracy", "micro_f1", "weighted_f1")
FILE = "outputs/batch-1/warm-1.jsonl"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rf.make_clean_run(
        tmp_path_factory.mktemp("m") / "run", eval_size=4, variants=("batch-1",)
    )


def _run_with(
    small: Path, tmp: Path, refs: list[str], preds: list[str | None], metric: str
) -> Path:
    root = tmp / "run"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(small, root)
    ids = [f"ev-{i:06d}" for i in range(len(refs))]
    rf._ids(root / "corpus/expected_ids.txt", ids)
    rf.write_jsonl(
        root,
        "corpus/references.jsonl",
        ({"id": i, "label": r} for i, r in zip(ids, refs, strict=True)),
    )
    rf.write_jsonl(
        root,
        FILE,
        ({"id": i, "label": p} for i, p in zip(ids, preds, strict=True) if p is not None),
    )
    m = rf.read_json(root, "manifest.json")
    m["quality_rule"]["metric"] = metric
    rf.write_json(root, "manifest.json", m)
    return root


def _value(root: Path) -> float | None:
    stats = pass_stats(load_run(root))
    return stats.filter(pl.col("file") == FILE)["quality_value"][0]


@pytest.mark.parametrize(
    ("metric", "want"),
    [("macro_f1", 4 / 9), ("accuracy", 0.5), ("micro_f1", 4 / 7), ("weighted_f1", 0.5)],
)
def test_hand_computed_case(small: Path, tmp_path: Path, metric: str, want: float) -> None:
    # refs a a b c; preds a b b (missing): TP a1 b1 c0; predicted a1 b2; reference a2 b1 c1.
    root = _run_with(
        small,
        tmp_path,
        ["negative", "negative", "neutral", "positive"],
        ["negative", "neutral", "neutral", None],
        metric,
    )
    assert _value(root) == pytest.approx(want)


def test_no_usable_line_has_no_value(small: Path, tmp_path: Path) -> None:
    root = _run_with(small, tmp_path, ["negative"] * 4, [None] * 4, "macro_f1")
    assert _value(root) is None


def test_class_absent_everywhere_is_not_averaged(small: Path, tmp_path: Path) -> None:
    root = _run_with(
        small,
        tmp_path,
        ["negative", "negative", "neutral", "neutral"],
        ["negative", "negative", "neutral", "neutral"],
        "macro_f1",
    )
    assert _value(root) == pytest.approx(1.0)  # "positive" absent: not a 0 in the mean


labels = st.sampled_from(rf.CLASSES)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.lists(st.tuples(labels, st.one_of(st.none(), labels)), min_size=1, max_size=25),
    metric=st.sampled_from(METRICS),
)
def test_polars_metric_equals_plain_python(
    small: Path, tmp_path: Path, data: list[tuple[str, str | None]], metric: str
) -> None:
    refs = [r for r, _ in data]
    preds = [p for _, p in data]
    root = _run_with(small, tmp_path, refs, preds, metric)
    ids = [f"ev-{i:06d}" for i in range(len(refs))]
    want = rf.quality(
        dict(zip(ids, refs, strict=True)),
        {i: p for i, p in zip(ids, preds, strict=True) if p is not None},
        rf.CLASSES,
        metric,
    )
    got = _value(root)
    assert (got is None) == (want is None)
    if want is not None:
        assert got == pytest.approx(want, abs=1e-12)
    json.dumps(got)  # a plain float, serialisable in findings
