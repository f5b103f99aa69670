"""The fast paths `audit check` takes on large runs give the same answers as the general ones:
the vectorized byte gate of the output files, the per-file fallback when the joint read of
the outputs fails, the first usable line as the prediction in a file with a repeated ID, and
A0303's shortcut for files in the expected list's order."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
import runfactory as rf
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.engine import load_run, run_check
from auditor.protocols.a.facts.passes import pass_stats
from auditor.readers.jsonl_id_label import _gate, _gates, decode_id_label_lines
from auditor.readers.jsonl_id_label import decode_many as _decode_many

PIECES = [
    b'{"id": "a", "label": "b"}',
    b'{"id":"a","label":"b"}',
    b'{"id": "a","label":"b"}',
    b'{"id": "a", "label": "b", "score": null}',
    b'{"id": "a", "label": "b", "score":null}',
    b'{"id": "a", "label": "b", "score": 0.5}',
    b'{"id": 5, "label": "b"}',
    b'{"label": "b"}',
    b"",
    b" ",
    b"\r",
    b"\xff",
    b'"id": "',
    b'"label": "',
    b"{",
    b'{"meta": {"id": "x"}, "id": 5, "label": "b"}',
    b'{"id": "a", "id": 5, "label": "b"}',
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.lists(st.sampled_from(PIECES), max_size=6), st.booleans()), max_size=8)
)
def test_vectorized_gate_equals_the_per_file_gate(files: list[tuple[list[bytes], bool]]) -> None:
    blobs = [b"\n".join(lines) + (b"\n" if nl else b"") for lines, nl in files]
    assert _gates(blobs) == [_gate(b) for b in blobs]


def test_a_file_that_spoils_the_joint_read_alone_takes_the_slow_path() -> None:
    good = b"".join(b'{"id": "ev-%d", "label": "x"}\n' % i for i in range(30))
    # Passes the byte gate (string id and label on every line) but not the parse.
    spoiler = good + b'{"id": "ev-99", "label": "x", "score": "high"}\n'
    blobs = [good, spoiler, good.rstrip(b"\n")]
    many = _decode_many(blobs, "output_line")
    for k, blob in enumerate(blobs):
        one = decode_id_label_lines(blob, "output_line")
        assert many.filter(pl.col("file_no") == k).drop("file_no").equals(one), k
    assert many.filter(~pl.col("valid")).select("file_no", "line").rows() == [(1, 31)]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rf.make_clean_run(tmp_path_factory.mktemp("fast") / "run", eval_size=12)


def _copy(clean: Path, tmp: Path) -> Path:
    root = tmp / "run"
    shutil.copytree(clean, root)
    return root


def test_repeated_id_first_usable_line_is_the_prediction(clean: Path, tmp_path: Path) -> None:
    root = _copy(clean, tmp_path)
    rel = "outputs/batch-1/warm-1.jsonl"
    lines = rf.read_jsonl(root, rel)
    refs = {r["id"]: r["label"] for r in rf.read_jsonl(root, "corpus/references.jsonl")}
    wrong = next(c for c in rf.CLASSES if c != refs[lines[0]["id"]])
    # ID 0 answered three times: an undeclared label, then a wrong and a right class.
    lines[0:1] = [
        {"id": lines[0]["id"], "label": "Undeclared"},
        {"id": lines[0]["id"], "label": wrong},
        {"id": lines[0]["id"], "label": refs[lines[0]["id"]]},
    ]
    rf.write_jsonl(root, rel, lines)
    stats = pass_stats(load_run(root)).filter(pl.col("file") == rel).row(0, named=True)
    assert (stats["n_dup"], stats["dup_line"], stats["n_bad_label"]) == (1, 2, 1)
    preds: dict[str, str] = {}
    for r in lines:
        if r["label"] in rf.CLASSES:
            preds.setdefault(r["id"], r["label"])
    assert preds[lines[0]["id"]] == wrong
    want = rf.quality(refs, preds, rf.CLASSES, "macro_f1")
    assert stats["quality_value"] == pytest.approx(want, abs=1e-12)
    others = pass_stats(load_run(root)).filter(pl.col("file") != rel)
    assert others["n_dup"].sum() == 0 and others["ids_match"].all()


def _order_findings(root: Path) -> list[tuple[str | None, str | None, object, object]]:
    return [
        (f.artifact, f.location, f.evidence.get("observed"), f.evidence.get("expected"))
        for f in run_check(root).findings
        if f.code == "A0303"
    ]


def test_a0303_shortcut_for_files_in_list_order(clean: Path, tmp_path: Path) -> None:
    root = _copy(clean, tmp_path)
    rel = "outputs/batch-4/warm-1.jsonl"
    lines = rf.read_jsonl(root, rel)
    lines[3], lines[7] = lines[7], lines[3]
    rf.write_jsonl(root, rel, lines)
    stats = pass_stats(load_run(root))
    assert stats.filter(pl.col("file") == rel)["order_diffs"].item() == 2
    assert _order_findings(root) == [(rel, "line 4", lines[3]["id"], lines[7]["id"])]


def test_a0303_general_path_for_another_common_order(clean: Path, tmp_path: Path) -> None:
    root = _copy(clean, tmp_path)
    files = sorted(p.relative_to(root).as_posix() for p in (root / "outputs").rglob("*.jsonl"))
    for rel in files:  # every file in the same order, not the list's: no finding
        rf.write_jsonl(root, rel, list(reversed(rf.read_jsonl(root, rel))))
    assert _order_findings(root) == []
    rel = files[-1]
    lines = rf.read_jsonl(root, rel)
    lines[0], lines[1] = lines[1], lines[0]
    rf.write_jsonl(root, rel, lines)
    assert _order_findings(root) == [(rel, "line 1", lines[0]["id"], lines[1]["id"])]
    assert "(2 position(s))" in next(
        f.message for f in run_check(root).findings if f.code == "A0303"
    )


@pytest.mark.parametrize("data", [b"\n", b" \n", b"\t"])
def test_a_file_of_one_blank_line_is_a_finding_not_a_crash(
    clean: Path, tmp_path: Path, data: bytes
) -> None:
    # polars' json_decode drops the lines when every one is blank: the decoder must not
    # trust its length (found by test_malformed_jsonl_never_crashes).
    df = decode_id_label_lines(data, "output_line")
    assert df.select("line", "valid").rows() == [(1, False)]
    root = _copy(clean, tmp_path)
    (root / "outputs/batch-1/warm-2.jsonl").write_bytes(data)
    (f,) = [f for f in run_check(root).findings if f.code == "A0203"]
    assert (f.artifact, f.location) == ("outputs/batch-1/warm-2.jsonl", "line 1")


@pytest.mark.parametrize(
    "line",
    [
        b'{"meta": {"id": "x"}, "id": 5, "label": "b"}',  # nested string id, numeric top-level id
        b'{"id": "a", "label": "b", "extra": {"label": "c"}, "id": 7}',  # repeated key
    ],
)
def test_a_non_string_id_hidden_behind_another_id_key_is_invalid(line: bytes) -> None:
    good = b'{"id": "ev-1", "label": "x"}\n'
    decoded = decode_id_label_lines(good + line + b"\n", "output_line")
    assert decoded.filter(~pl.col("valid")).get_column("line").to_list() == [2]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.sampled_from(["e0", "e1", "e2", "e3", "x"])), max_size=6),
    st.lists(st.sampled_from(["e0", "e1", "e2", "e3"]), unique=True, max_size=4),
)
def test_expected_ids_by_position_equal_the_join(ids: list[str | None], listed: list[str]) -> None:
    """`_with_expected` takes the expected list by position only when that is the join."""
    from auditor.protocols.a.facts.passes import _with_expected

    lines = pl.DataFrame(
        {"file_no": [0] * len(ids), "line": list(range(1, len(ids) + 1)), "id": ids},
        schema={"file_no": pl.Int64, "line": pl.Int64, "id": pl.String},
    )
    exp = pl.DataFrame(
        {
            "id": listed,
            "exp": list(range(len(listed))),
            "ref": [f"r{i}" for i in range(len(listed))],
        },
        schema={"id": pl.String, "exp": pl.Int64, "ref": pl.String},
    )
    joined = lines.join(exp, on="id", how="left", maintain_order="left")
    assert _with_expected(lines, exp).equals(joined)
    in_order = lines.head(len(listed)).with_columns(
        id=pl.Series(listed[: len(ids)], dtype=pl.String)
    )
    assert _with_expected(in_order, exp).equals(
        in_order.join(exp, on="id", how="left", maintain_order="left")
    )
