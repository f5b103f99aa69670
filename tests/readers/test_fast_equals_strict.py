"""The vectorized fast paths of the line readers read exactly what the strict per-line path
reads: the same values for the lines it takes, and every line it must refuse (a repeated key,
also `\\u`-escaped; an integer beyond 64 bits; NaN or an infinite number; a BOM; bytes that
are not UTF-8; a blank line) left to the strict path, which names it. Each file is read both
ways: as it is, and with the fast path switched off."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schemas
from auditor.protocols.a.records import INPUT_LINE, plain_input
from auditor.readers import jsonl_id_label, jsonl_records, strict_json

OUTPUT_LINES = [
    b'{"id": "ev-1", "label": "pos"}',
    b'{"id":"ev-2","label":"neg"}',
    b'  {"label": "pos", "id": "ev-3"}\t',
    b'{"id": "ev-4", "label": "neg"}\r',
    b'{"id": "ev-5", "label": "pos", "score": 0.25}',
    b'{"id": "ev-6", "label": "x", "score": -3}',
    b'{"id": "ev-7", "label": "x", "score": 1e99}',
    b'{"id": "ev-8", "label": "x", "score": 9e999}',
    b'{"id": "ev-9", "label": "x", "score": NaN}',
    b'{"id": "ev-9", "label": "x", "score": null}',
    b'{"id": "ev-a", "label": "x", "score": 123456789012345678901234567890}',
    b'{"id": "ev-b", "label": "x", "score": 9223372036854775807}',
    b'{"id": "ev-c", "label": "x", "id": "ev-d"}',
    b'{"id": "ev-e", "\\u0069d": "ev-f", "label": "x"}',
    b'{"id": "ev-g", "label": "x", "l\\u0061bel": "y"}',
    b'{"id": "\\u0065v-h", "label": "x"}',
    b'{"id": "ev-\\ud800", "label": "x"}',
    b'{"id": "caf\\u00e9", "label": "x"}',
    '{"id": "caf\u00e9", "label": "x"}'.encode(),
    '{"id": "cafe\u0301", "label": "x"}'.encode(),
    b'{"id": " ev-1", "label": "x"}',
    '{"id": "ev\u20281", "label": "x"}'.encode(),
    b'{"id": "ev\t1", "label": "x"}',
    b'{"id": "", "label": "x"}',
    b'{"id": 5, "label": "x"}',
    b'{"id": "ev-i"}',
    b'{"id": "ev-j", "label": "x", "extra": 1}',
    b'["ev-k", "x"]',
    b'\xef\xbb\xbf{"id": "ev-l", "label": "x"}',
    b'{"id": "ev-\xff", "label": "x"}',
    b'{"id": "ev-m", "label": "x"} {"id": "ev-n", "label": "y"}',
    b'{"id": "ev-o", "label": "x",}',
    b"",
    b" ",
    b"\r",
    b"{",
    b'{"meta": {"id": "x"}, "id": 5, "label": "b"}',
]


def _strict_reference(
    data: bytes, schema_kind: str
) -> list[tuple[int, bool, str | None, str | None]]:
    """(line, valid, id, label) of each physical line, read by `strict_json` and the schema
    alone: what the fast path must agree with."""
    v = schemas.validator(schema_kind)
    chunks = data.split(b"\n") if data else []  # an empty file has no line
    if data.endswith(b"\n"):
        chunks.pop()
    out = []
    for n, chunk in enumerate(chunks, start=1):
        try:
            obj, problem = strict_json.loads(chunk.decode("utf-8"))
        except UnicodeDecodeError:
            obj, problem = None, "utf-8"
        ok = (
            problem is None
            and isinstance(obj, dict)
            and next(iter(v.iter_errors(obj)), None) is None
        )
        out.append((n, ok, obj["id"] if ok else None, obj["label"] if ok else None))
    return out


def _slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl_id_label, "_gate", lambda data: None)
    monkeypatch.setattr(jsonl_id_label, "_gates", lambda blobs: [None] * len(blobs))


files_of_lines = st.lists(
    st.tuples(st.lists(st.sampled_from(OUTPUT_LINES), max_size=5), st.booleans()),
    min_size=1,
    max_size=5,
)


def _blobs(files: list[tuple[list[bytes], bool]]) -> list[bytes]:
    return [b"\n".join(lines) + (b"\n" if nl else b"") for lines, nl in files]


@settings(max_examples=150, deadline=None)
@given(files_of_lines)
def test_output_lines_read_as_the_strict_parser_reads_them(files) -> None:
    blobs = _blobs(files)
    many = jsonl_id_label.decode_many(blobs, "output_line")
    for k, blob in enumerate(blobs):
        got = many.filter(pl.col("file_no") == k).select(
            "line", "valid", pl.when("valid").then("id"), pl.when("valid").then("label")
        )
        assert got.rows() == _strict_reference(blob, "output_line"), blob
        one = jsonl_id_label.decode_id_label_lines(blob, "output_line")
        assert many.filter(pl.col("file_no") == k).drop("file_no").equals(one), blob


@settings(max_examples=60, deadline=None)
@given(files_of_lines)
def test_the_fast_path_gives_the_frames_of_the_slow_path(files) -> None:
    blobs = _blobs(files)
    fast = jsonl_id_label.decode_many(blobs, "output_line")
    with pytest.MonkeyPatch.context() as mp:
        _slow(mp)
        slow = jsonl_id_label.decode_many(blobs, "output_line")
    assert fast.equals(slow)


@pytest.mark.parametrize(
    "line",
    [
        b'{"id": "ev-1", "label": "pos"}',
        b'  {"label":"pos" ,"id" : "ev-1"}  \r',
        b'{"id": "ev-1", "label": "pos", "score": 0.5}',
        b'{"id": "ev-1", "label": "pos", "score": -12.5e-07}',
    ],
)
def test_canonical_lines_take_the_fast_path(line: bytes) -> None:
    data = b"\n".join([line] * 3) + b"\n"
    assert jsonl_id_label._gate(data) is not None
    assert jsonl_id_label._gates([data])[0] == jsonl_id_label._gate(data)


@pytest.mark.parametrize(
    "line",
    [
        b'{"id": "ev-c", "label": "x", "id": "ev-d"}',
        b'{"id": "ev-e", "\\u0069d": "ev-f", "label": "x"}',
        b'{"id": "ev-1", "label": "x", "score": 123456789012345678901234567890}',
        b'{"id": "ev-1", "label": "x", "score": 1e999}',
        b'{"id": "ev-1", "label": "x", "score": NaN}',
        b'\xef\xbb\xbf{"id": "ev-l", "label": "x"}',
        b'{"id": "ev-\xff", "label": "x"}',
        b"",
        b'{"id": "ev-\\ud800", "label": "x"}',
        b'{"id": "ev\t1", "label": "x"}',
    ],
)
def test_what_the_strict_parser_refuses_never_takes_the_fast_path(line: bytes) -> None:
    good = b'{"id": "ev-0", "label": "x"}\n'
    for data in (good + line + b"\n", line + b"\n" + good):
        assert jsonl_id_label._gate(data) is None
        assert jsonl_id_label._gates([good, data])[1] is None
        df = jsonl_id_label.decode_many([good, data], "output_line")
        bad = df.filter(~pl.col("valid"))
        assert bad.select("file_no", "line").rows() == [(1, data.split(b"\n").index(line) + 1)]


INPUT_LINES = [
    b'{"id": "ev-1", "text": "plain"}',
    b'{"id":"ev-2","text":"say \\"hi\\": \\u00e9\\n"}',
    b' {"id": "ev-3", "text": ""}\r',
    b'{"id": "ev-4", "text": "\\ud83d\\ude00"}',
    b'{"id": "ev-5", "text": "\\ud800"}',
    b'{"id": "ev-6", "text": "x", "id": "ev-7"}',
    b'{"id": "ev-8", "text": "x", "\\u0069d": "ev-9"}',
    b'{"text": "x", "id": "ev-a"}',
    b'{"id": "ev-b", "text": "x", "n": 99999999999999999999}',
    b'{"id": "ev-c", "text": NaN}',
    b'{"id": "", "text": "x"}',
    b'{"id": "ev-d"}',
    b'{"id": "ev-\xff", "text": "x"}',
    b'\xef\xbb\xbf{"id": "ev-e", "text": "x"}',
    b'{"id": "ev-f", "text": "tab\there"}',
    b'{"id": "ev-g", "text": "bad \\q escape"}',
    b"",
    b"  ",
    b"{",
]


def _read_inputs(data: bytes, pattern: str) -> tuple[list[tuple[int, str]] | None, list]:
    read = jsonl_records.read_ids(
        data,
        name="in.jsonl",
        line_pattern=pattern,
        schema="input_line",
        label="input-line",
        surely_valid=plain_input,
        text_key="text",
    )
    faults = [(f.line, f.kind, f.message) for f in read.faults]
    return (None if read.value is None else read.value.rows()), faults


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(INPUT_LINES), max_size=6), st.booleans())
def test_input_ids_read_as_the_strict_parser_reads_them(lines: list[bytes], nl: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if nl else b"")
    fast = _read_inputs(data, INPUT_LINE)
    assert fast == _read_inputs(data, r"^\x00(\x00)\x01$")  # no line matches: line by line
    read = jsonl_records.read(data, name="in.jsonl", schema="input_line", label="input-line")
    if read.value is not None:
        assert fast[0] == [(n, obj["id"], obj["text"]) for n, obj in read.value]


def test_a_canonical_inputs_file_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps({"id": f"ev-{i}", "text": f'"quoted" \u00e9 {i}\n'}) for i in range(5)]
    data = ("\n".join(lines) + "\n").encode()
    monkeypatch.setattr(jsonl_records, "read", None)  # the line-by-line path would fail
    read = jsonl_records.read_ids(data, name="in.jsonl", line_pattern=INPUT_LINE, text_key="text")
    assert (
        read.value.rows() == [(i + 1, f"ev-{i}", f'"quoted" \u00e9 {i}\n') for i in range(5)]
        and not read.faults
    )
    ids_only = jsonl_records.read_ids(data, name="in.jsonl", line_pattern=INPUT_LINE)
    assert ids_only.value.columns == ["line", "id"]
