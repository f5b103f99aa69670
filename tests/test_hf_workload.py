"""A local Hugging Face checkpoint in protocol A, end to end, with no Python written by the
user: a tiny BERT made here (`hf_checkpoint`, never downloaded), `runner execute` with
`callable = "runner.workloads.hf:SequenceClassifier"` and `options = { path = "ckpt" }`
(relative to the config file), `audit check` accepts the run, `audit replay` agrees with
every pass through the run's own `tokenizer.json` (kind `hf-tokenizers/1`), a consistent
forgery of the outputs passes `audit check` and is caught by replay alone; a checkpoint the
workload cannot take is refused before anything is written."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

import runfactory as rf
from click.testing import CliRunner
from hf_checkpoint import make_checkpoint
from runner_workloads import tiny_rows, write_jsonl
from shared_builds import fresh_exports

from auditor.engine import run_check
from auditor.replay.core import replay
from runner.cli import cli

REPO = Path(__file__).resolve().parent.parent
OFFERS = REPO / "examples" / "offers.example.json"
CONTEXT = 12


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_config(
    folder: Path, options: str, *, precision: str = "float32", batches: str = "[1, 4]"
) -> Path:
    cfg = folder / "run.toml"
    cfg.write_text(
        f"""
experiment_id = "hf-tiny"
seed = 3
device = "cpu"
[corpus]
path = "corpus.jsonl"
[workload]
callable = "runner.workloads.hf:SequenceClassifier"
options = {options}
[variants]
batches = {batches}
precision = "{precision}"
context = {CONTEXT}
[passes]
warmup_iterations = 2
[economics]
offers_file = "{OFFERS}"
offer_id = "example-b200-7d"
lots = 1
""",
        encoding="utf-8",
    )
    return cfg


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's folder: the checkpoint `ckpt/` and the corpus beside the config."""
    tmp = tmp_path_factory.mktemp("hf")
    make_checkpoint(tmp / "ckpt")
    rows = tiny_rows(n_train=3, n_tune=30, n_eval=40)
    rows[-1]["text"] = " ".join(["apple banana cherry"] * 10)  # longer than the context
    write_jsonl(tmp / "corpus.jsonl", rows)
    return tmp


@pytest.fixture(scope="module")
def run(
    folder: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch_module: pytest.MonkeyPatch
) -> Path:
    # the relative path is the config file's folder's, not the working directory's
    monkeypatch_module.chdir(tmp_path_factory.mktemp("elsewhere"))
    cfg = write_config(folder, '{ path = "ckpt" }')
    out = folder / "run"
    with fresh_exports():  # its export is checked for the paths of this folder
        result = CliRunner().invoke(cli, ["execute", "--config", str(cfg), "--out", str(out)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    (out.parent / "progress.txt").write_text(result.stderr, encoding="utf-8")
    return out


def test_the_checkpoint_is_staged_not_trained_and_no_local_path_is_recorded(
    run: Path, folder: Path
) -> None:
    """The runner says what it does with a checkpoint (staged as it is, no training), and
    the run records the checkpoint and the config as the config names them, never as an
    absolute path of this machine (the notes go into the signed report)."""
    progress = (run.parent / "progress.txt").read_text(encoding="utf-8")
    assert "staging the model as it is (no training)" in progress
    assert "training the model" not in progress
    for path in run.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".csv", ".txt", ".toml"):
            assert str(folder) not in path.read_text(encoding="utf-8", errors="replace"), path
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["workload"]["generation_options"] == {"path": "ckpt"}
    assert manifest["config_source"] == ".../run.toml"


@pytest.fixture(scope="module")
def monkeypatch_module() -> pytest.MonkeyPatch:
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_run_is_accepted_and_pins_the_checkpoint_files(run: Path, folder: Path) -> None:
    checked = run_check(run)
    assert checked.verdict == "accepted", [f.to_json() for f in checked.findings]
    m = rf.read_json(run, "manifest.json")
    assert m["workload"]["name"] == "hf"
    assert m["revisions"]["model"] == "sha256:" + sha(folder / "ckpt/model.safetensors")
    assert m["revisions"]["tokenizer"] == "sha256:" + sha(folder / "ckpt/tokenizer.json")
    assert m["artifacts"]["model/config.json"] == sha(folder / "ckpt/config.json")
    # used as is: the config is pinned, no recipe (schemas/revision-kinds.json)
    assert m["revisions"]["config"] == "sha256:" + sha(folder / "ckpt/config.json")
    assert "recipe" not in m["revisions"] and m["workload"]["trained_at_run_time"] is False
    assert not (run / "model/recipe.json").exists()
    assert m["replay"]["tokenizer"]["kind"] == "hf-tokenizers/1"
    assert [i["name"] for i in m["replay"]["model"]["inputs"]] == [
        "input_ids",
        "attention_mask",
        "token_type_ids",
    ]
    assert m["replay"]["labels"] == ["fruit", "tools", "weather"]
    # A3.3: truncation counted in the tokenizer's tokens, special tokens included
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "ckpt/tokenizer.json"))
    tok.no_truncation()  # the file keeps the settings it was last used with
    tok.no_padding()
    texts = [r["text"] for r in rf.read_jsonl(run, "corpus/eval-inputs.jsonl")]
    longer = sum(len(e.ids) > CONTEXT for e in tok.encode_batch(texts))
    assert longer >= 1
    assert m["corpus"]["truncation"]["truncated_texts"] == longer
    # the model's answers depend on the text: more than one label in a pass
    answers = {o["label"] for o in rf.read_jsonl(run, "outputs/batch-1/warm-1.jsonl")}
    assert len(answers) > 1
    assert not list(run.glob("model/*.bin")) and not (run / "model/pytorch_model.bin").exists()
    # the export names no path of this checkout or of the user's folder (byte-reproducible)
    exported = (run / "model/model.onnx").read_bytes()
    for path in (REPO, folder):
        assert str(path).encode() not in exported


def _pinned_lie(root: Path, change: Any) -> set[str]:
    m = rf.read_json(root, "manifest.json")
    change(m)
    rf.write_json(root, "manifest.json", m)
    rows = rf.read_rows(root)
    for r in rows:
        r["model_revision"] = m["revisions"]["model"]
    rf.write_rows(root, rows)
    rf.rehash(root)
    return {f.code for f in run_check(root).findings if f.severity == "error"}


def test_check_recomputes_the_checkpoint_revisions_and_truncation(
    run: Path, tmp_path: Path
) -> None:
    """A0106: the model revision is the weights' hash, not the config's; A0307: the truncated
    texts recounted with the archived tokenizer.json (hf-tokenizers/1), special tokens in."""
    config = "sha256:" + sha(run / "model/config.json")
    root = tmp_path / "config-as-model"
    shutil.copytree(run, root)
    codes = _pinned_lie(root, lambda m: m["revisions"].update(model=config))
    assert "A0106" in codes and codes <= {"A0106", "A0107"}  # A0107: exported_from too
    root = tmp_path / "none-cut"
    shutil.copytree(run, root)
    assert _pinned_lie(root, lambda m: m["corpus"]["truncation"].update(truncated_texts=0)) == {
        "A0307"
    }


def test_replay_agrees_with_every_pass(run: Path) -> None:
    result = replay(run, sample_size=1000)
    assert result.verdict == "accepted" and result.findings == ()
    assert len(result.files) == 12  # 2 variants x (1 cold + 5 warm)
    assert all(
        a.status == "met" and a.agreed == a.compared == 40 and a.threshold.exact
        for a in result.files
    )
    assert result.tokenizer is not None and result.tokenizer["kind"] == "hf-tokenizers/1"


def test_consistent_forgery_passes_check_and_is_caught_by_replay(run: Path, tmp_path: Path) -> None:
    root = tmp_path / "forged"
    shutil.copytree(run, root)
    first = {o["id"]: o["label"] for o in rf.read_jsonl(root, "outputs/batch-1/cold-1.jsonl")}
    a = sorted(first)[0]
    b = next(i for i in sorted(first) if first[i] != first[a])
    forged = {a: first[b], b: first[a]}  # two answers swapped, in every file alike
    for path in sorted(root.glob("outputs/*/*.jsonl")):
        rel = path.relative_to(root).as_posix()
        lines = rf.read_jsonl(root, rel)
        for line in lines:
            line["label"] = forged.get(line["id"], line["label"])
        rf.write_jsonl(root, rel, lines)
    rf.recompute_claims(root)
    assert run_check(root).verdict == "accepted"
    result = replay(root, sample_size=1000)
    assert result.verdict == "rejected"
    assert {f.code for f in result.findings} == {"RA06"}
    assert all(
        a_.status == "failed" and {d.id for d in a_.disagreements} == set(forged)
        for a_ in result.files
    )


def test_bfloat16_variant_runs_and_replays_against_the_float32_export(folder: Path) -> None:
    cfg = write_config(folder, '{ path = "ckpt" }', precision="bfloat16", batches="[8]")
    out = folder / "run-bf16"
    result = CliRunner().invoke(
        cli, ["execute", "--config", str(cfg), "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    rows = rf.read_rows(out)
    assert {r["precision"] for r in rows} == {"bfloat16"}
    replayed = replay(out, sample_size=1000)
    # reduced precision: judged against the 0.99 floor, not exactly
    assert all(not a.threshold.exact for a in replayed.files)
    assert replayed.verdict in ("accepted", "incomplete")


def _refused(folder: Path, options: str, *needles: str) -> None:
    cfg = write_config(folder, options)
    out = folder / "refused"
    result = CliRunner().invoke(cli, ["execute", "--config", str(cfg), "--out", str(out)])
    assert result.exit_code == 2, result.output
    for needle in needles:
        assert needle in result.output
    assert not out.exists() and not list(folder.glob("refused.partial-*"))


def test_pickled_weights_are_refused(folder: Path) -> None:
    bad = folder / "pickled"
    bad.mkdir(exist_ok=True)
    for name in ("config.json", "tokenizer.json"):
        shutil.copyfile(folder / "ckpt" / name, bad / name)
    (bad / "pytorch_model.bin").write_bytes(b"not loaded")
    _refused(
        folder,
        '{ path = "pickled" }',
        "has no model.safetensors",
        "pytorch_model.bin",
        "never loaded",
    )


def test_missing_checkpoint_and_unknown_option_are_refused(folder: Path) -> None:
    _refused(folder, '{ path = "nowhere" }', "checkpoint directory", "not found")
    _refused(folder, '{ path = "ckpt", revision = "main" }', "unknown option", "revision")


def test_labels_other_than_the_corpus_are_refused(folder: Path) -> None:
    other = folder / "other-labels"
    shutil.copytree(folder / "ckpt", other, dirs_exist_ok=True)
    config = json.loads((other / "config.json").read_text())
    config["id2label"] = {"0": "fruit", "1": "tools", "2": "sport"}
    config["label2id"] = {v: int(k) for k, v in config["id2label"].items()}
    (other / "config.json").write_text(json.dumps(config))
    _refused(folder, '{ path = "other-labels" }', "not the corpus labels", "'sport'", "'weather'")
