"""Issue 31's case end to end: the runner's default workload (a bag-of-words model trained at
run time) and a tiny BERT checkpoint (`hf_checkpoint`, made here, never downloaded), each run
by `runner execute` with the same batch variants on its own corpus, archived together: the
comparison never merges their `batch-8 (float32)`, ranks each model's variants apart, and
page 1 names one choice per workload. Two real runs (about 50 s of CPU): the slow tier
(`pytest -m slow`); tests/archive/test_workloads.py checks the same on the factory's runs."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from click.testing import CliRunner
from hf_checkpoint import make_checkpoint
from runner_workloads import tiny_rows, write_jsonl

from auditor.archive.compare import compare
from auditor.archive.core import audit_archive
from runner.cli import cli

pytestmark = pytest.mark.slow

OFFERS = Path(__file__).resolve().parents[2] / "examples" / "offers.example.json"


def _config(folder: Path, experiment: str, workload: str, context: int) -> Path:
    cfg = folder / "run.toml"
    cfg.write_text(
        f"""
experiment_id = "{experiment}"
seed = 3
device = "cpu"
[corpus]
path = "corpus.jsonl"
[workload]
{workload}
[variants]
batches = [1, 4, 8]
context = {context}
[passes]
warmup_iterations = 1
warm_passes = 5
[economics]
offers_file = "{OFFERS}"
offer_id = "example-b200-7d"
lots = 1
""",
        encoding="utf-8",
    )
    return cfg


def _execute(folder: Path, cfg: Path) -> Path:
    out = folder / "run"
    result = CliRunner().invoke(
        cli, ["execute", "--config", str(cfg), "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    src = tmp_path_factory.mktemp("src")
    bow = src / "bow"
    bow.mkdir()
    write_jsonl(bow / "corpus.jsonl", tiny_rows(n_eval=40, seed=7))
    _execute(bow, _config(bow, "bow", 'callable = "runner.workloads.bow:BagOfWords"', 12))
    bert = src / "bert"
    bert.mkdir()
    make_checkpoint(bert / "ckpt")
    write_jsonl(bert / "corpus.jsonl", tiny_rows(n_train=3, n_tune=30, n_eval=40, seed=8))
    _execute(
        bert,
        _config(
            bert,
            "bert",
            'callable = "runner.workloads.hf:SequenceClassifier"\noptions = { path = "ckpt" }',
            12,
        ),
    )
    out = tmp_path_factory.mktemp("out")
    audit_archive([src / "bow" / "run", src / "bert" / "run"], out, jobs=1)
    return src, out


def test_a_bag_of_words_run_and_a_bert_run_are_compared_apart(archive) -> None:
    _, out = archive
    cmp = compare(out)
    assert cmp.runs == 2 and len(cmp.workloads) == 2
    names = {w.name for w in cmp.workloads}
    assert len(names) == 2, names
    batch8 = [r for r in (*cmp.ranked, *cmp.not_accepted) if r.config_id == "batch-8"]
    assert len({r.workload for r in batch8}) == len(batch8) == 2
    assert all(len(r.sources) == 1 for r in (*cmp.ranked, *cmp.not_accepted))
    for w in cmp.workloads:
        ranks = [r.rank for r in cmp.ranked if r.workload_label == w.label]
        assert ranks == list(range(1, len(ranks) + 1))
    assert {c.best.workload_label for c in cmp.choices} <= {w.label for w in cmp.workloads}
    bert = next(w for w in cmp.workloads if w.config is not None)  # the checkpoint's config
    assert bert.model is not None and bert.tokenizer is not None
