"""`audit compare` keys a configuration by what the run measured (issue 31): runs of another
model or corpus never share a row with the default run, ranks restart in each workload, page 1
says per workload what to buy, the index keeps each run's revisions as the auditor hashed its
files, and every sentence of the signed page is true of the index."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import archfactory
import polars as pl
import pytest
import runfactory
from click.testing import CliRunner
from jsonschema import Draft202012Validator

import schemas
from auditor.archive import index
from auditor.archive.compare import compare
from auditor.archive.compare_report import build_comparison_report
from auditor.archive.core import audit_archive
from auditor.cli import cli
from auditor.report.keygen import keygen


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def two_workloads(tmp_path_factory) -> tuple[Path, Path]:
    """The default run (model `exp-batch`, 30 texts), a second run of it (another
    experiment), and a run of another model on another corpus (40 texts) with the same batch
    variants plus batch-32, which only that model has."""
    base = tmp_path_factory.mktemp("workloads")
    src = base / "src"
    archfactory.accepted(src / "default")
    archfactory.accepted(src / "default-again", experiment_id="exp-batch-again")
    archfactory.accepted(
        src / "other-model",
        experiment_id="exp-other",
        model="other-model",
        eval_size=40,
        variants=("batch-1", "batch-4", "batch-32"),
    )
    out = base / "out"
    audit_archive([src], out, jobs=1)
    return src, out


def test_runs_of_two_workloads_never_share_a_row(two_workloads) -> None:
    _, out = two_workloads
    cmp = compare(out)
    assert [w.label for w in cmp.workloads] == ["W1", "W2"]
    by_runs = {w.runs: w for w in cmp.workloads}
    default, other = by_runs[2], by_runs[1]
    assert default.model != other.model and default.corpus != other.corpus
    assert default.precision == other.precision == "float32" and default.context == 128
    rows = {(r.workload_label, r.config_id): r for r in cmp.ranked}
    for r in cmp.ranked:
        mine = (
            {"default", "default-again"} if r.workload_label == default.label else {"other-model"}
        )
        assert set(r.sources) <= mine, r
    # batch-1 of each workload is its own row, on its own runs
    assert rows[(default.label, "batch-1")].sources == ("default", "default-again")
    assert rows[(other.label, "batch-1")].sources == ("other-model",)
    # batch-32 (one model only) is ranked within its workload, never beside the default's
    assert (default.label, "batch-32") not in rows and (other.label, "batch-32") in rows
    for label in (default.label, other.label):
        ranks = [r.rank for r in cmp.ranked if r.workload_label == label]
        assert ranks == list(range(1, len(ranks) + 1))
    # what to buy: one choice per workload on the one offer, each resting on its own runs
    assert sorted(c.best.workload_label for c in cmp.choices) == ["W1", "W2"]
    doc = json.loads(CliRunner().invoke(cli, ["compare", str(out), "--format", "json"]).output)
    Draft202012Validator(schemas.load("comparison")).validate(doc)
    assert {w["key"] for w in doc["workloads"]} == {default.key, other.key}
    text = CliRunner().invoke(cli, ["compare", str(out)]).output
    buy = text.split("\n\n")[1]
    assert f"{default.label} (protocol A, 2 runs): synthetic-classifier: model " in buy
    assert f"{other.label} (protocol A, 1 run): " in buy


def test_the_index_keeps_the_revisions_of_the_files(two_workloads) -> None:
    """The revisions are the SHA-256 of the files their kinds name, never the manifest's
    declaration (the factory declares a corpus revision `sha256:cccc...` no file hashes to)."""
    src, out = two_workloads
    idx = pl.read_parquet(out / index.INDEX).sort("source")
    row = idx.filter(pl.col("source") == f"{src}/default").row(0, named=True)
    run = src / "default"
    assert row["model_revision"] == _sha(run / "model/model.safetensors")
    assert row["tokenizer_revision"] == _sha(run / "model/tokenizer.json")
    assert row["config_revision"] is None
    declared = json.loads((run / "manifest.json").read_text())["revisions"]
    assert row["corpus_revision"].startswith("sha256:")
    assert row["corpus_revision"] != declared["corpus"]
    assert row["gpus"] == ["NVIDIA H100 80GB HBM3 (GPU-0000)"]
    assert row["session_start"] < row["session_end"]
    keys = {c["workload"] for r in idx.iter_rows(named=True) for c in r["configurations"]}
    assert len(keys) == 2 and None not in keys


def test_a_precision_or_context_apart_is_another_workload(tmp_path: Path) -> None:
    """The same files run at another context are another workload: the identity follows the
    run's declared configuration, and the two runs never share a row."""
    src = tmp_path / "src"
    archfactory.accepted(src / "ctx-128")
    run = archfactory.accepted(src / "ctx-256", experiment_id="exp-ctx-256")
    rows = runfactory.read_rows(run)
    for r in rows:
        r["context"] = "256"
    runfactory.write_rows(run, rows)

    def bump(m: dict) -> None:
        for v in m["variants"]:
            v["context"] = 256
        m["corpus"]["truncation"]["context_tokens"] = 256

    runfactory.edit_json(run, "manifest.json", bump, rehash=False)
    runfactory.rehash(run)
    out = tmp_path / "out"
    audit_archive([src], out, jobs=1)
    cmp = compare(out)
    assert sorted(w.context for w in cmp.workloads) == [128, 256]
    assert all(len(r.sources) == 1 for r in (*cmp.ranked, *cmp.not_accepted))


def test_every_sentence_of_the_page_is_true_of_the_index(tmp_path: Path) -> None:
    """An accepted run and a tampered copy of it (rejected, set aside): nothing is listed
    apart, and the page says so of the runs compared while naming the rejected copy, never
    'every configuration of every audited run was accepted'."""
    src = tmp_path / "src"
    genuine = archfactory.accepted(src / "z-genuine")
    copy = shutil.copytree(genuine, src / "a-copy")
    lines = runfactory.read_jsonl(copy, "outputs/batch-1/warm-2.jsonl")
    lines[3]["label"] = "not-" + lines[3]["label"]
    runfactory.write_jsonl(copy, "outputs/batch-1/warm-2.jsonl", lines)
    out = tmp_path / "out"
    audit_archive([src], out, jobs=1)
    keys = tmp_path / "keys"
    keygen(keys)
    report = tmp_path / "report"
    cmp = build_comparison_report(
        out, report, key=keys / "signer.key", cert=keys / "signer.pem", chain=keys / "ca.pem"
    )
    assert cmp.not_accepted == () and cmp.set_aside == 1
    verdicts = pl.read_parquet(out / index.INDEX)["verdict"].to_list()
    assert "rejected" in verdicts
    html = (report / "report.html").read_text(encoding="utf-8")
    apart = html[html.index('id="not-accepted"') : html.index('id="copies"')]
    assert "every configuration of every audited run was accepted" not in apart
    assert "None: every configuration of the 1 run compared was accepted" in apart
    assert "1 conflicting copy (rejected) set aside and not compared" in apart
    buy = html[html.index('id="buy"') : html.index('id="basis"')]
    assert "W1 (protocol A, 1 run): synthetic-classifier: model sha256:" in buy


def _trained(path: Path, *, model: str, seed: int, experiment_id: str) -> Path:
    """A run whose model was trained at run time (runfactory's `trained`: its weights
    `model/weights.pt`, its recipe `model/recipe.json`, the revisions pinning both), its
    weights named by MODEL and its recipe's seed SEED, re-sealed."""
    run = archfactory.accepted(path, experiment_id=experiment_id, trained=True, model=model)
    if seed == 7:  # the factory's own seed
        return run
    runfactory.edit_json(run, "model/recipe.json", lambda r: r.update(seed=seed), rehash=False)
    rows = runfactory.read_rows(run)
    for r in rows:
        r["seed"] = str(seed)
    runfactory.write_rows(run, rows)

    def pin(m: dict) -> None:
        m["seed"] = seed
        m["revisions"]["recipe"] = _sha(run / "model/recipe.json")

    runfactory.edit_json(run, "manifest.json", pin, rehash=False)
    runfactory.rehash(run)
    return run


def test_runs_trained_at_run_time_are_one_workload_by_their_recipe(tmp_path: Path) -> None:
    """Two trainings of one recipe that produced different weights (a GPU's training is not
    bit-exact) are the same workload; another seed is another recipe, and another
    workload."""
    src = tmp_path / "src"
    _trained(src / "h100", model="trained on an H100", seed=7, experiment_id="exp-h100")
    _trained(src / "b200", model="trained on a B200", seed=7, experiment_id="exp-b200")
    _trained(src / "seed-8", model="trained with seed 8", seed=8, experiment_id="exp-seed-8")
    out = tmp_path / "out"
    audit_archive([src], out, jobs=1)
    idx = pl.read_parquet(out / index.INDEX).sort("source")
    assert idx["trained"].to_list() == [True, True, True]
    assert idx["model_revision"].n_unique() == 3 and idx["recipe"].n_unique() == 2
    cmp = compare(out)
    by_runs = sorted((w.runs, w.recipe is not None, w.model) for w in cmp.workloads)
    assert by_runs == [(1, True, None), (2, True, None)]
    shared = next(r for r in cmp.ranked if len(r.sources) == 2)
    # sources are shown relative to the folder that holds them all (no local path signed)
    assert shared.sources == ("b200", "h100")
    assert all("seed-8" not in r.sources or len(r.sources) == 1 for r in cmp.ranked)
    assert "recipe sha256:" in CliRunner().invoke(cli, ["compare", str(out)]).output


def test_the_workload_key_is_every_part_of_the_same_workload() -> None:
    """Another corpus, model, tokenizer, config, precision or context is another workload;
    the machine, the span and the workload's name are not part of it; a model trained at
    run time with a recipe is keyed by the recipe, not by the weights it produced."""
    from dataclasses import replace as change

    from auditor.model import RunIdentity, workload_key

    base = RunIdentity(
        corpus="sha256:c",
        model="sha256:m",
        tokenizer="sha256:t",
        config=None,
        name="bow",
        host="host-1",
        gpus=("H100 (GPU-1)",),
        started_at="2026-01-01T00:00:00Z",
        ended_at="2026-01-01T01:00:00Z",
    )
    key = workload_key(base, "float32", 128)
    assert key is not None and key.startswith("sha256:")
    same = change(
        base, name="renamed", host="host-2", gpus=("B200 (GPU-9)",), started_at=None, ended_at=None
    )
    assert workload_key(same, "float32", 128) == key
    for other in (
        change(base, corpus="sha256:c2"),
        change(base, model="sha256:m2"),
        change(base, tokenizer="sha256:t2"),
        change(base, config="sha256:k"),
    ):
        assert workload_key(other, "float32", 128) != key
    assert workload_key(base, "bfloat16", 128) != key
    assert workload_key(base, "float32", 256) != key
    assert workload_key(change(base, model=None), "float32", 128) is None
    trained = change(base, trained=True, recipe="sha256:r")
    assert workload_key(
        change(trained, model="sha256:m2", tokenizer="sha256:t2"), "float32", 128
    ) == workload_key(trained, "float32", 128)
    assert workload_key(change(trained, recipe="sha256:r2"), "float32", 128) != workload_key(
        trained, "float32", 128
    )
