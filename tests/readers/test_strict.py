"""Strict, faithful, bounded parsing (issue 10, class 2 and 3): every value is read exactly or
refused with the place of the fault, never silently read as something else, and no input
makes a reader raise or grow without bound."""

from __future__ import annotations

import json

import polars as pl
import pytest
import runfactory as rf
from hypothesis import given, settings
from hypothesis import strategies as st

import schemas
from auditor.readers import csv_table, json_doc, jsonl_records, strict_json, timestamps
from auditor.readers.jsonl_id_label import decode_id_label_lines, decode_many

# -- strict JSON ---------------------------------------------------------------------------

REFUSED = {
    '{"a": 1, "a": 2}': ("duplicate", "/a"),
    '{"id": "x", "\\u0069d": "y"}': ("duplicate", "/id"),
    '{"a": {"b": [1, {"c": 1, "c": 1}]}}': ("duplicate", "/a/b/1/c"),
    '{"a": NaN}': ("number", "/a"),
    '{"a": -Infinity}': ("number", "/a"),
    '{"a": 1e999}': ("number", "/a"),
    '{"a": 9223372036854775808}': ("number", "/a"),
    '{"a": -9223372036854775809}': ("number", "/a"),
    '{"a": ' + "9" * 5000 + "}": ("limit", "/a"),
    "[" * 65 + "]" * 65: (
        "limit",
        "/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0"
        "/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0"
        "/0/0",
    ),
    "[" * 100_000: ("limit", None),
    '{"id": "ev-\\udcff"}': ("syntax", None),
    '["\\ud83d"]': ("syntax", None),
}


@pytest.mark.parametrize("text", sorted(REFUSED))
def test_strict_json_refuses_with_a_place(text: str) -> None:
    value, problem = strict_json.loads(text)
    assert value is None and problem is not None
    kind, pointer = REFUSED[text]
    assert problem.kind == kind, problem
    assert problem.line == 1 and problem.column is not None
    if pointer is not None:
        assert problem.pointer == pointer


def test_strict_json_reads_exactly_what_it_accepts() -> None:
    text = json.dumps(
        {
            "i": 2**63 - 1,
            "j": -(2**63),
            "f": 1e308,
            "s": "\u00e9",
            "n": None,
            "deep": [[[[1]]]],
            "b": True,
            "pair": "\U0001f600",
        }
    )
    value, problem = strict_json.loads(text)
    assert problem is None and value == json.loads(text)
    assert strict_json.loads("[" * 64 + "]" * 64)[1] is None  # the limit itself is read


def test_the_line_of_a_repeated_key_in_a_document() -> None:
    text = '{\n  "a": 1,\n  "b": {\n    "c": 2,\n    "c": 3\n  }\n}\n'
    read = json_doc.read(text.encode(), name="doc.json")
    (f,) = read.faults
    assert (f.line, f.column, f.pointer, f.kind) == (5, 5, "/b/c", "duplicate")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
def test_strict_json_never_raises(text: str) -> None:
    value, problem = strict_json.loads(text)
    assert (value is None) or problem is None


# -- JSON Schema formats and integers ------------------------------------------------------


def test_date_time_format_is_really_checked() -> None:
    assert schemas.date_time_is_checked()
    v = schemas.validator("environment")
    doc = rf.read_json(_clean(), "environment.json")
    assert list(v.iter_errors(doc)) == []
    for bad in ("2026-13-02T09:00:00Z", "2026-11-02 09:00:00", "yesterday"):
        errors = [e.message for e in v.iter_errors({**doc, "observed_at": bad})]
        assert errors == [f"'{bad}' is not a 'date-time'"], bad


def test_an_integer_field_takes_integer_literals_only() -> None:
    v = schemas.validator("timeline_entry")
    entry = rf.read_jsonl(_clean(), "timeline.jsonl")[0]
    assert list(v.iter_errors(entry)) == []
    for bad in (5.0, 1e300, True):
        assert not v.is_valid({**entry, "pid": bad}), bad


_CLEAN: list = []


def _clean():
    if not _CLEAN:
        import tempfile
        from pathlib import Path

        _CLEAN.append(rf.make_clean_run(Path(tempfile.mkdtemp()) / "run", eval_size=6))
    return _CLEAN[0]


# -- RFC 3339 times ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, iso",
    [
        ("2026-11-02T09:00:00Z", "2026-11-02T09:00:00+00:00"),
        ("2026-11-02t09:00:00z", "2026-11-02T09:00:00+00:00"),
        ("2026-11-02T11:00:00+02:00", "2026-11-02T09:00:00+00:00"),
        ("2026-11-02T04:30:00.5-04:30", "2026-11-02T09:00:00.500000+00:00"),
        ("2026-11-02T09:00:00.123456789Z", "2026-11-02T09:00:00.123456+00:00"),
    ],
)
def test_every_rfc3339_form_is_read_as_the_same_instant(text: str, iso: str) -> None:
    got = timestamps.column([text])
    assert got.dtype == timestamps.DTYPE and got[0].isoformat() == iso


def test_nanoseconds_are_kept() -> None:
    ns = timestamps.epoch_ns("2026-11-02T09:00:00.123456789Z")
    assert ns is not None and ns % 1_000_000_000 == 123_456_789


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-02T09:00:00",
        "2026-02-30T00:00:00Z",
        "2026-11-02T23:59:60Z",
        "2026-11-02T09:00:00+24:00",
        "2026-11-02 09:00:00Z",
        "",
        None,
        5,
    ],
)
def test_what_is_not_rfc3339_is_null(text: object) -> None:
    assert timestamps.epoch_ns(text) is None


# -- JSONL ---------------------------------------------------------------------------------


def test_jsonl_records_name_the_line_of_a_repeated_key() -> None:
    data = b'{"a": 1}\n{"a": 1, "\\u0061": 2}\n{"a": NaN}\n'
    read = jsonl_records.read(data, name="t.jsonl")
    assert [n for n, _ in read.value] == [1]
    assert [(f.line, f.kind) for f in read.faults] == [(2, "duplicate"), (3, "number")]


def test_id_label_gate_sends_repeated_or_escaped_keys_to_the_strict_path() -> None:
    good = b"".join(b'{"id": "ev-%d", "label": "x"}\n' % i for i in range(100))
    for bad in (
        b'{"id": "ev-a", "\\u0069d": "ev-b", "label": "x"}\n',
        b'{"id": "ev-a", "label": "x", "label": "y"}\n',
        b'{"id": "ev-a", "label": "x", "l\\u0061bel": "y"}\n',
        b'{"id": "ev-a", "label": "x", "score": 0.5, "score": "x"}\n',
        b'{"id": "ev-a", "label": "x", "score": NaN}\n',
        b'{"id": "ev-a", "label": "x", "score": 1e999}\n',
    ):
        for data in (good + bad, bad + good):
            df = decode_id_label_lines(data, "output_line")
            assert df.filter(~pl.col("valid")).height == 1, bad
            many = decode_many([good, data], "output_line")
            assert many.filter(~pl.col("valid")).height == 1, bad


def test_id_label_fast_path_stays_for_clean_files() -> None:
    """The gate keeps clean files (also with a score on every line) on the fast path."""
    from auditor.readers.jsonl_id_label import _gate, _gates

    plain = b"".join(b'{"id": "ev-%d", "label": "x"}\n' % i for i in range(10))
    scored = b"".join(b'{"id":"ev-%d","label":"x","score":0.5}\n' % i for i in range(10))
    assert _gate(plain) == (10, False) and _gate(scored) == (10, True)
    assert _gates([plain, scored]) == [(10, False), (10, True)]


# -- CSV -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "column, value, why",
    [
        ("context", "9" * 30, "beyond the 64-bit integer range"),
        ("seed", "9" * 101, "more than 100 digits"),  # a seed is of any size, up to 100 digits
        ("batch", "9223372036854775808", "beyond the 64-bit integer range"),
        ("elapsed_seconds", "1e999", "not a finite number"),
        ("quality_value", "-1e400", "not a finite number"),
        ("elapsed_seconds", "inf", ""),
        ("elapsed_seconds", "NaN", ""),
    ],
)
def test_csv_values_polars_cannot_hold_are_type_faults(column: str, value: str, why: str) -> None:
    rows = rf.read_rows(_clean())
    rows[1][column] = value
    import csv
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=rf.COLUMNS, lineterminator="\r\n")
    w.writeheader()
    w.writerows(rows)
    read = csv_table.read(buf.getvalue().encode(), name="r.csv", table=schemas.results_table())
    (f,) = read.faults
    assert (f.kind, f.row, f.line, f.field) == ("type", 2, 3, column)
    assert why in f.message and len(f.value) <= 120


def test_a_csv_beyond_the_size_limit_is_a_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(csv_table, "MAX_BYTES", 100)
    read = csv_table.read(b"x" * 101, name="r.csv", table=schemas.results_table())
    assert [f.kind for f in read.faults] == ["limit"] and read.value.typed is None


def test_a_document_beyond_the_size_limit_is_a_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_doc, "MAX_DOC_BYTES", 10)
    read = json_doc.read(b'{"a": "0123456789"}', name="d.json")
    assert read.value is None and read.faults[0].kind == "limit"
