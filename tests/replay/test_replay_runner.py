"""The runner's side of replay (`runner.replay.archive`): a workload without a tensor form,
or whose tokenizer is not data of a known kind, or whose export fails, gets
`replay_unavailable` with the reason and no section (a failed export stops a protocol B run
only when an ONNX Runtime policy needs the file); the archived model of a run is the
byte-reproducible export of its weights."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import runner.replay as archive_mod
import schemas
from runner.errors import RunnerError
from runner.workloads.bow import BagOfWords


def _args(root: Path) -> dict:
    return {
        "workload": "runner.workloads.bow:BagOfWords",
        "options": {},
        "root": root,
        "model_dir": root / "model",
        "tokenizer_file": root / "model/tokenizer.json",
        "context": 64,
        "inputs_file": "corpus/eval-inputs.jsonl",
        "model_revision": "sha256:" + "0" * 64,
    }


def test_no_tensor_form_is_not_replayable(tmp_path: Path) -> None:
    got = archive_mod.archive(None, **_args(tmp_path))
    assert got.onnx is None and list(got.manifest) == ["replay_unavailable"]
    assert "tensor form" in got.manifest["replay_unavailable"]


def test_failed_export(tmp_path: Path, run_a: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    form = BagOfWords().load(run_a / "model", "cpu", "float32", 5, {}).tensor_form()

    def fail(*args: object, **kwargs: object) -> None:
        (tmp_path / "model").mkdir(exist_ok=True)
        (tmp_path / "model/model.onnx").write_bytes(b"half")
        raise RunnerError("ONNX export of the workload failed (exit 2): boom")

    monkeypatch.setattr(archive_mod, "export_in_fresh_process", fail)
    got = archive_mod.archive(form, **_args(tmp_path))
    assert got.manifest == {
        "replay_unavailable": "ONNX export of the workload failed (exit 2): boom"
    }
    assert not (tmp_path / "model/model.onnx").exists()  # no half file left in the run
    with pytest.raises(RunnerError, match="boom"):
        archive_mod.archive(form, **_args(tmp_path), required=True)


def test_tokenizer_without_a_kind(tmp_path: Path, run_a: Path) -> None:
    form = BagOfWords().load(run_a / "model", "cpu", "float32", 5, {}).tensor_form()
    assert form is not None
    got = archive_mod.archive(dataclasses.replace(form, tokenizer_kind=None), **_args(tmp_path))
    assert got.onnx is None and "not data of a kind" in got.manifest["replay_unavailable"]


@pytest.mark.fresh_export
def test_archived_model_is_the_reproducible_export(run_a: Path, tmp_path: Path) -> None:
    manifest = json.loads((run_a / "manifest.json").read_text())
    section = manifest["replay"]
    assert list(schemas.validator("replay_contract").iter_errors(section)) == []
    assert section["model"]["exported_from"] == manifest["revisions"]["model"]
    assert section["labels"] == manifest["task"]["classes"]
    assert section["context"] == manifest["variants"][0]["context"]
    again = archive_mod.export_in_fresh_process(
        manifest["workload"]["callable"],
        manifest["workload"]["generation_options"],
        run_a / "model",
        section["context"],
        tmp_path / "model.onnx",
    )
    assert again.sha256 == section["model"]["sha256"] == manifest["artifacts"]["model/model.onnx"]
