"""`audit replay` on a real protocol B run, read from its files (no protocol B package): the
reference, every gate and every trial (two repetitions of the sequence each) agree with the
archived model; a candidate the run rejected at its parity gate is compared but not judged;
answers swapped consistently in every file are rejected (B8)."""

from __future__ import annotations

from pathlib import Path

import runfactory as rf
from replay_helpers import copy

from auditor.replay.core import replay


def test_protocol_b_run_replays(run_b: Path) -> None:
    result = replay(run_b)
    assert result.verdict == "accepted", [f.to_json() for f in result.findings]
    by_file = {a.file: a for a in result.files}
    assert by_file["reference/outputs.jsonl"].threshold.exact
    for pid in ("torch-cpu", "ort-cpu"):
        assert by_file[f"gates/{pid}.jsonl"].status == "met"
        trials = [a for f, a in by_file.items() if f.startswith(f"outputs/{pid}/trial-")]
        assert len(trials) == 5
        for a in trials:
            assert a.status == "met" and a.threshold.exact and a.agreed == a.compared == 200
            assert a.answers == 2 * a.compared  # each trial repeats the sequence twice
    gate = by_file["gates/cand-f16.jsonl"]
    assert gate.status == "not judged" and not gate.judged and "rejected" in (gate.note or "")
    assert gate.threshold.floor == 0.99 and gate.disagreements  # a degraded candidate
    assert not any(f.startswith("outputs/cand-f16/") for f in by_file)  # no trials run
    assert result.model is not None and result.findings == ()


def test_protocol_b_forgery_is_rejected(run_b: Path, tmp_path: Path) -> None:
    root = copy(run_b, tmp_path)
    refs = {r["id"]: r["label"] for r in rf.read_jsonl(root, "reference/outputs.jsonl")}
    a, b = (next(i for i in sorted(refs) if refs[i] == c) for c in sorted(set(refs.values()))[:2])
    swap = {a: refs[b], b: refs[a]}
    files = [
        "reference/outputs.jsonl",
        *(
            p.relative_to(root).as_posix()
            for p in [*root.glob("outputs/*/*.jsonl"), *root.glob("gates/*.jsonl")]
        ),
    ]
    for rel in files:
        lines = rf.read_jsonl(root, rel)
        for line in lines:
            line["label"] = swap.get(line["id"], line["label"])
        rf.write_jsonl(root, rel, lines)
    rf.rehash(root)
    result = replay(root, sample_size=200)
    failed = {f.artifact for f in result.findings if f.code == "RB06"}
    assert result.verdict == "rejected" and {f.code for f in result.findings} == {"RB06"}
    assert "reference/outputs.jsonl" in failed and "gates/torch-cpu.jsonl" in failed
    assert all(f.protocol_ref == "B8" for f in result.findings)
    assert len([f for f in failed if f.startswith("outputs/")]) == 10
    assert "gates/cand-f16.jsonl" not in failed  # rejected by the run itself: not judged
