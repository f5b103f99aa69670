"""The runner's parts on their own: the output-file parser and set check (property-based),
the CSV writer, the quality metrics, the pass order, the corpus checks and the default
corpus."""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schemas
from runner.a.execute import draw_pass_order
from runner.a.setcheck import accepted, check_output, quality, read_lines
from runner.artifacts import csv_text
from runner.corpus import build_default_frame, corpus_revision, validate_frame
from runner.errors import RunnerError

CLASSES = ("a", "b", "c")
ids_st = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    expected=st.lists(ids_st, min_size=1, max_size=15, unique=True),
    picks=st.lists(st.tuples(st.integers(0, 20), st.sampled_from((*CLASSES, "zz"))), max_size=25),
    extra=st.lists(ids_st, max_size=3),
)
def test_set_check_equals_set_arithmetic(
    tmp_path: Path, expected: list[str], picks: list[tuple[int, str]], extra: list[str]
) -> None:
    """Whatever the file holds (duplicates, missing, extra IDs, undeclared labels), the check
    equals plain set arithmetic on the IDs, never a line count."""
    out_ids = [expected[i % len(expected)] for i, _ in picks] + extra
    labels = [lab for _, lab in picks] + ["a"] * len(extra)
    path = tmp_path / "out.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": i, "label": lab}) + "\n"
            for i, lab in zip(out_ids, labels, strict=True)
        ),
        encoding="utf-8",
    )
    refs = pl.DataFrame({"id": expected, "label": ["a"] * len(expected)})
    res = check_output(path, "out.jsonl", pl.Series(expected), CLASSES, refs, "macro_f1")
    counts = Counter(out_ids)
    assert res["observed_ids"] == len(out_ids) == res["lines"]
    assert res["unique_ids"] == len(counts)
    assert res["duplicate_ids"] == sorted(i for i, n in counts.items() if n > 1)
    assert res["missing_ids"] == sorted(set(expected) - set(out_ids))
    assert res["extra_ids"] == sorted(set(out_ids) - set(expected))
    assert res["ids_match"] == (sorted(out_ids) == sorted(expected))
    bad = [n for n, lab in enumerate(labels, 1) if lab not in CLASSES]
    assert res["invalid_lines"] == bad
    assert res["format_valid"] == (not bad)
    usable = len(out_ids) - len(bad)
    assert (res["quality_value"] is None) == (usable == 0)
    if usable:  # every reference is "a": macro-F1 is the F1 of "a" over what was answered
        first: dict[str, str] = {}
        for i, lab in zip(out_ids, labels, strict=True):
            if lab in CLASSES:
                first.setdefault(i, lab)
        tp = sum(first.get(i) == "a" for i in expected)
        answered = [first[i] for i in expected if i in first]
        per = {
            c: (2 * tp / (answered.count("a") + len(expected)) if c == "a" else 0.0)
            for c in {"a", *answered}
        }
        assert res["quality_value"] == pytest.approx(sum(per.values()) / len(per))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30).map(lambda s: s.replace("\n", " ")),
            st.just('{"id": 3, "label": "a"}'),
            st.just('{"label": "a"}'),
            st.just("[1, 2]"),
            st.just('{"id": "x", "label": "a"'),
        ),
        max_size=10,
    )
)
def test_read_lines_never_crashes_and_flags_junk(lines: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "junk.jsonl"
        path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
        frame = read_lines(path)
    assert frame.height == len(lines)
    for line, got in zip(lines, frame["id"].to_list(), strict=True):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            obj = None
        want = obj.get("id") if isinstance(obj, dict) else None
        assert got == (want if isinstance(want, str) else None)


def test_two_files_of_equal_length_are_not_equal_sets(tmp_path: Path) -> None:
    expected = [f"id-{i}" for i in range(10)]
    outs = [*expected[:9], "id-0"]  # ten lines, one duplicate, one missing
    path = tmp_path / "o.jsonl"
    path.write_text("".join(json.dumps({"id": i, "label": "a"}) + "\n" for i in outs))
    res = check_output(
        path,
        "o",
        pl.Series(expected),
        CLASSES,
        pl.DataFrame({"id": expected, "label": ["a"] * 10}),
        "macro_f1",
    )
    assert res["lines"] == 10 and not res["ids_match"]
    assert res["duplicate_ids"] == ["id-0"] and res["missing_ids"] == ["id-9"]


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=80))
def test_csv_notes_round_trip_rfc4180(note: str) -> None:
    columns = schemas.results_columns()
    text = csv_text(
        [{"notes": note, "elapsed_seconds": 0.5, "ids_match": True, "quality_value": None}]
    )
    assert text.startswith(",".join(columns) + "\r\n")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    got = dict(zip(rows[0], rows[1], strict=True))
    assert got["notes"] == note.replace("\r\n", "\n") or got["notes"] == note
    assert got["elapsed_seconds"] == "0.5" and got["ids_match"] == "true"
    assert got["quality_value"] == ""


def test_quality_metrics_by_hand() -> None:
    pred = pl.Series(["a", "a", "b", "c"])
    ref = pl.Series(["a", "b", "b", "b"])
    # a: F1 2/3, b: F1 1/2, c: F1 0 -> macro 7/18; weighted by support (1, 3, 0) -> 13/24
    assert quality(pred, ref, "macro_f1") == pytest.approx(7 / 18)
    assert quality(pred, ref, "weighted_f1") == pytest.approx(13 / 24)
    assert quality(pred, ref, "accuracy") == quality(pred, ref, "micro_f1") == 0.5
    # a missing answer (None) is never right and is not a prediction of any class
    gap = pl.Series(["a", None, "b", "b"], dtype=pl.String)
    assert quality(gap, ref, "accuracy") == 0.75
    assert quality(gap, ref, "micro_f1") == pytest.approx(2 * 3 / (3 + 4))
    assert accepted(0.70, 0.63, 0.73, 0.10) and not accepted(0.62, 0.60, 0.73, 0.10)
    assert not accepted(None, 0.0, 0.0, 1.0)


def test_pass_order_is_seeded_and_alternates() -> None:
    variants = ["batch-1", "batch-4", "batch-8"]
    order = draw_pass_order(variants, 5, seed=3)
    assert order == draw_pass_order(variants, 5, seed=3)
    assert order != draw_pass_order(variants, 5, seed=4)
    assert [o["order_index"] for o in order] == list(range(21))
    phases = [o["phase"] for o in order]
    assert phases == ["cold"] * 3 + ["warmup"] * 3 + ["warm"] * 15
    rounds = [[o["variant_id"] for o in order[6 + 3 * r : 9 + 3 * r]] for r in range(5)]
    assert all(sorted(r) == variants for r in rounds)
    assert all(a[-1] != b[0] for a, b in itertools.pairwise(rounds))
    assert [o["run_index"] for o in order[6:]] == [r for r in range(1, 6) for _ in range(3)]


def test_corpus_revision_ignores_row_order_but_not_content() -> None:
    df = pl.DataFrame(
        {"id": ["1", "2"], "text": ["x", "y"], "label": ["a", "b"], "split": ["train", "eval"]}
    )
    assert corpus_revision(df) == corpus_revision(df.reverse())
    assert corpus_revision(df) != corpus_revision(df.with_columns(pl.lit("a").alias("label")))


def test_validate_frame_names_the_fault() -> None:
    df = pl.DataFrame(
        {"id": ["1", "2"], "text": ["x", ""], "label": ["a", "b"], "split": ["train", "eval"]}
    )
    with pytest.raises(RunnerError, match=r"f\.csv: empty text in row 2"):
        validate_frame(df, "f.csv")


def test_default_corpus_has_1000_eval_texts_in_disjoint_splits() -> None:
    frame = build_default_frame(seed=20260924, eval_size=1000, max_texts=None)
    validate_frame(frame, "default")  # unique IDs, no ID in two splits
    sizes = dict(frame.group_by("split").len().rows())
    assert sizes["eval"] == 1000 and sizes["train"] > 1000 and sizes["tune"] > 100
    assert frame["label"].n_unique() == 7
    assert frame["text"].n_unique() == frame.height  # deduplicated texts
    # deterministic for a seed; another seed draws another split of the same texts
    again = build_default_frame(seed=20260924, eval_size=1000, max_texts=None)
    assert again.equals(frame)
    other = build_default_frame(seed=1, eval_size=1000, max_texts=None)
    assert set(other["id"]) == set(frame["id"]) and not other.equals(frame)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d", "e"]), st.sampled_from(["train", "tune", "eval"])
        ),
        min_size=1,
        max_size=8,
    )
)
def test_validate_frame_refuses_exactly_repeats_and_overlaps(rows: list[tuple[str, str]]) -> None:
    df = pl.DataFrame(
        {
            "id": [i for i, _ in rows],
            "text": ["t"] * len(rows),
            "label": ["x"] * len(rows),
            "split": [s for _, s in rows],
        }
    )
    splits_of: dict[str, set[str]] = {}
    for i, s in rows:
        splits_of.setdefault(i, set()).add(s)
    overlap = any(len(s) > 1 for s in splits_of.values())
    repeated = len(splits_of) < len(rows)
    no_eval = all(s != "eval" for _, s in rows)
    if overlap:
        with pytest.raises(RunnerError, match="overlapping splits"):
            validate_frame(df, "f.jsonl")
    elif repeated:
        with pytest.raises(RunnerError, match="repeated IDs"):
            validate_frame(df, "f.jsonl")
    elif no_eval:
        with pytest.raises(RunnerError, match="eval split is empty"):
            validate_frame(df, "f.jsonl")
    else:
        assert validate_frame(df, "f.jsonl").height == len(rows)


def test_user_corpus_formats_give_the_same_corpus(tmp_path: Path) -> None:
    from runner_workloads import tiny_rows, write_jsonl

    from runner.corpus import load_corpus

    rows = tiny_rows()
    frame = pl.DataFrame(rows)
    write_jsonl(tmp_path / "c.jsonl", rows)
    frame.write_csv(tmp_path / "c.csv")
    frame.write_parquet(tmp_path / "c.parquet")
    loaded = [
        load_corpus(tmp_path / f"c.{ext}", 40, None, 1) for ext in ("jsonl", "csv", "parquet")
    ]
    assert len({c.revision for c in loaded}) == 1
    assert loaded[0].split("eval")["id"].to_list() == [
        r["id"] for r in rows if r["split"] == "eval"
    ]
    with pytest.raises(RunnerError, match=r"c\.txt: unknown format"):
        (tmp_path / "c.txt").write_text("x")
        load_corpus(tmp_path / "c.txt", None, None, 1)


def test_model_revisions_follow_the_revision_kinds(tmp_path: Path) -> None:
    """The runner pins each kind's files as schemas/revision-kinds.json names them: every
    shard together (the hash of their sha256sum listing), the tokenizer and the config;
    no weights at all is refused before anything is measured."""
    import hashlib

    from runner.revisions import model_revisions

    def sha(b: bytes) -> str:
        return hashlib.sha256(b).hexdigest()

    shards = {
        "model-00001-of-00002.safetensors": b"first",
        "model-00002-of-00002.safetensors": b"second",
    }
    for name, data in {
        **shards,
        "tokenizer.json": b"{}",
        "config.json": b'{"a": 1}',
        "model.onnx": b"onnx",
    }.items():
        (tmp_path / name).write_bytes(data)
    listing = "".join(f"{sha(b)}  {n}\n" for n, b in sorted(shards.items()))
    assert model_revisions(tmp_path) == {
        "model": "sha256:" + sha(listing.encode()),
        "tokenizer": "sha256:" + sha(b"{}"),
        "config": "sha256:" + sha(b'{"a": 1}'),
    }
    for name in shards:
        (tmp_path / name).unlink()
    with pytest.raises(RunnerError, match="revision kind 'model'"):
        model_revisions(tmp_path)
