"""`audit check` on a real run with a replay section: the model and tokenizer files the run
keeps are the ones its revisions pin, never swapped (A1.2: A0106 hashes the files each
revision kind names, A0107 the archived files the replay section declares). Replay would
refuse such a run before running anything; check must not accept it either."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf
from replay_helpers import copy

from auditor.engine import run_check


def _a0102(root: Path) -> list[str]:
    result = run_check(root)
    assert not [f for f in result.findings if f.code == "A0000"]
    return [
        f.message
        for f in result.findings
        if f.code in ("A0102", "A0106", "A0107") and f.severity == "error"
    ]


def test_the_real_run_pins_its_model_files(run_a: Path) -> None:
    assert _a0102(run_a) == []


def test_model_and_tokenizer_revisions_swapped(run_a: Path, tmp_path: Path) -> None:
    root = copy(run_a, tmp_path)
    m = rf.read_json(root, "manifest.json")
    rev = m["revisions"]
    rev["model"], rev["tokenizer"] = rev["tokenizer"], rev["model"]
    rf.write_json(root, "manifest.json", m)
    rows = rf.read_rows(root)
    for r in rows:
        r["model_revision"], r["tokenizer_revision"] = rev["model"], rev["tokenizer"]
    rf.write_rows(root, rows)
    rf.rehash(root)
    assert _a0102(root), "a model revision that is the tokenizer's hash was accepted"


def test_model_and_tokenizer_files_swapped(run_a: Path, tmp_path: Path) -> None:
    root = copy(run_a, tmp_path)
    tok = rf.read_json(root, "manifest.json")["replay"]["tokenizer"]["file"]
    weights = next(
        p
        for p in sorted((root / "model").iterdir())
        if p.name != Path(tok).name and p.suffix != ".onnx"
    )
    a, b = weights.read_bytes(), (root / tok).read_bytes()
    weights.write_bytes(b)
    (root / tok).write_bytes(a)
    rf.rehash(root)
    assert _a0102(root), "weights and tokenizer swapped under their names were accepted"
