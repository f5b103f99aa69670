"""`schemas.validator`'s quick check (jsonschema-rs) agrees with jsonschema: on every
document of a clean protocol A and protocol B run, against every schema (so most pairs are
invalid), and on many random damages of each document against its own schema. It may only
ever say "certainly valid" where jsonschema finds no error; it must also recognise every
valid document, or it would save nothing."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import schemas

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "protocols" / "b"))

import b_runs  # noqa: E402
import runfactory  # noqa: E402

NASTY: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    1.0,
    2.5,
    -0.5,
    1e300,
    2**70,
    "",
    "x",
    "2026-13-40T99:00:00Z",
    "2026-01-01T00:00:00Z",
    "2026-01-01t00:00:00z",
    "a" * 64,
    "0" * 64,
    [],
    [1, 1],
    ["a", "a"],
    ["a"],
    {},
    {"x": 1},
]


def _documents(root: Path, per_file: int = 3) -> list[Any]:
    """Every JSON document of the run at ROOT and the first lines of each JSONL file."""
    docs: list[Any] = []
    for path in sorted(root.rglob("*")):
        if path.suffix == ".json":
            docs.append(json.loads(path.read_text(encoding="utf-8")))
        elif path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8").splitlines()
            docs += [json.loads(line) for line in lines[:per_file] if line.strip()]
    return docs


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    base = tmp_path_factory.mktemp("quick")
    a = runfactory.make_clean_run(base / "a", claims=True)
    b = b_runs.synthetic(base / "b")
    examples = [json.loads((HERE.parent / "examples" / "offers.example.json").read_text())]
    return _documents(a) + _documents(Path(b)) + examples


def _agree(kind: str, doc: Any) -> tuple[bool, bool]:
    v = schemas.validator(kind)
    return v.certainly_valid(doc), v.full.is_valid(doc)


def test_every_schema_has_a_quick_check() -> None:
    assert [k for k in schemas.SCHEMA_FILES if schemas.validator(k)._quick is None] == []


def test_quick_check_agrees_on_every_document_and_schema(documents: list[Any]) -> None:
    valid_pairs = 0
    for doc in documents:
        for kind in schemas.SCHEMA_FILES:
            quick, full = _agree(kind, doc)
            assert quick == full, (kind, json.dumps(doc)[:300])
            valid_pairs += full
    assert valid_pairs >= 20  # the run's own documents are valid against their schemas


def _paths(doc: Any, at: tuple = ()) -> list[tuple]:
    out = [at]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*at, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            out += _paths(v, (*at, i))
    return out


def _damaged(doc: Any, rng: random.Random) -> Any:
    doc = copy.deepcopy(doc)
    path = rng.choice(_paths(doc)[1:] or [()])
    if not path:
        return rng.choice(NASTY)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    what = rng.random()
    if isinstance(parent, dict) and what < 0.2:
        del parent[last]
    elif isinstance(parent, dict) and what < 0.3:
        parent["unexpected_" + str(last)] = parent[last]
    elif isinstance(parent, list) and what < 0.2:
        parent.append(parent[last])
    else:
        parent[last] = copy.deepcopy(rng.choice(NASTY))
    return doc


def test_quick_check_agrees_on_damaged_documents(documents: list[Any]) -> None:
    rng = random.Random(14)
    checked = refused = recognised = 0
    for doc in documents:
        kinds = [k for k in schemas.SCHEMA_FILES if schemas.validator(k).full.is_valid(doc)]
        for kind in kinds:
            for _ in range(25):
                bad = _damaged(doc, rng)
                quick, full = _agree(kind, bad)
                assert quick == full, (kind, json.dumps(bad)[:400])
                checked += 1
                refused += not full
                recognised += quick == full
    assert checked > 500 and refused > 100
    assert recognised == checked


def test_errors_still_come_from_jsonschema() -> None:
    v = schemas.validator("timeline_entry")
    assert list(v.iter_errors({})) and not v.is_valid({})
    with pytest.raises(Exception, match="required"):
        v.validate({})
    assert v.schema == schemas.load("timeline_entry")  # anything else is jsonschema's


def test_an_integer_is_an_integer_literal_and_true_is_no_number() -> None:
    """JSON Schema (and jsonschema-rs alone) takes 5.0 for an integer; this package's
    validators, the quick one included, do not; `True` is neither 1 nor an integer."""
    v = schemas.validator("timeline_entry")
    doc = next(d for d in _documents_of_a_run() if v.full.is_valid(d))
    key = next(k for k, x in doc.items() if type(x) is int and not isinstance(x, bool))
    assert v.certainly_valid(doc)
    for bad in (float(doc[key]), True):
        damaged = {**doc, key: bad}
        assert not v.certainly_valid(damaged) and not v.full.is_valid(damaged), (key, bad)


def _documents_of_a_run() -> list[Any]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return _documents(
            runfactory.make_clean_run(Path(tmp) / "a", eval_size=10, warm_passes=2), per_file=5
        )


def test_values_no_json_parser_returns_are_left_to_jsonschema() -> None:
    from collections import OrderedDict

    v = schemas.validator("waivers")
    assert v.certainly_valid({"A0201": "a written justification"})
    assert not v.certainly_valid(OrderedDict(A0201="a written justification"))  # unsure
    assert not v.certainly_valid(("a",))
    assert v.is_valid(OrderedDict(A0201="a written justification"))  # jsonschema decides


def test_a_valid_document_does_not_import_jsonschema() -> None:
    code = (
        "import sys, schemas\n"
        "v = schemas.validator('waivers')\n"
        "assert list(v.iter_errors({'A0201': 'a written justification'})) == []\n"
        "assert 'jsonschema' not in sys.modules\n"
        "assert list(v.iter_errors({'A0201': 3}))\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=HERE.parent
    )
    assert proc.returncode == 0, proc.stderr


def test_date_time_check_is_rfc3339_validators() -> None:
    from rfc3339_validator import validate_rfc3339

    rng = random.Random(3339)
    texts = [
        "2026-01-01T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "2024-02-29T23:59:59.5+01:00",
        "0000-01-01T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01 00:00:00Z",
        "2026-01-01T00:00:00",
        "2026-01-01T00:00:00Z\n",
        "2026-01-01T00:00:00-23:59",
        "٢٠٢٦-01-01T00:00:00Z",
        "2026-01-01t00:00:00z",
        "",
    ]
    alphabet = "0123456789-:TZtz.+ "
    for _ in range(3000):
        t = list(rng.choice(texts[:3]))
        for _ in range(rng.randint(1, 3)):
            t[rng.randrange(len(t))] = rng.choice(alphabet)
        texts.append("".join(t))
    for text in texts:
        assert schemas.validate_rfc3339(text) == validate_rfc3339(text), text
