"""Before the runner declares a run complete it validates every file it wrote against the
schemas: a fault in any kind of artifact stops it, naming the file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from runfactory import make_clean_run

from runner.artifacts import validate_run_dir
from runner.errors import RunnerError


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_clean_run(tmp_path_factory.mktemp("v") / "run", eval_size=6)


def test_a_clean_run_dir_validates(clean: Path) -> None:
    validate_run_dir(clean)


def _drop_key(path: Path, key: str) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    del doc[key]
    path.write_text(json.dumps(doc), encoding="utf-8")


@pytest.mark.parametrize(
    ("rel", "break_it"),
    [
        ("outputs/batch-1/warm-1.jsonl", lambda p: p.write_text('{"id": 5, "label": "x"}\n')),
        ("corpus/references.jsonl", lambda p: p.write_text('{"id": "a"}\n')),
        ("timeline.jsonl", lambda p: p.write_text('{"order_index": -1}\n')),
        ("environment.json", lambda p: _drop_key(p, "torch_version")),
        ("economics/offers.json", lambda p: _drop_key(p, "offers")),
        ("checks/set-check.json", lambda p: _drop_key(p, "passes")),
        ("traces/memory/batch-1/warm-1.json", lambda p: _drop_key(p, "device")),
        ("evidence/placement/batch-1/warm-1.json", lambda p: _drop_key(p, "gpus_used")),
        ("resultats-bruts.csv", lambda p: p.write_text(p.read_text().replace(",", ";", 1))),
    ],
)
def test_a_fault_in_any_artifact_stops_the_run(
    clean: Path, tmp_path: Path, rel: str, break_it
) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(clean, run)
    break_it(run / rel)
    with pytest.raises(RunnerError, match=re.escape(rel)):
        validate_run_dir(run)
