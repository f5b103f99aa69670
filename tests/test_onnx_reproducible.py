"""The archived ONNX file depends on the model alone: exported from two checkouts at different
paths (each its own copy of the runner, each process started in its own folder), the same
staged model gives the same bytes, and no path of either checkout (nor of this one, nor of
the Python installation) is written into the file. torch's exporter puts each node's stack
trace (absolute source paths) in the file's metadata; `runner.onnx_export.strip_debug`
removes it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
from runner_workloads import tiny_rows

from runner.workloads.base import TrainingData
from runner.workloads.bow import BagOfWords

ROOT = Path(__file__).resolve().parents[1]


def _checkout(at: Path) -> Path:
    """A copy of the packages `python -m runner.onnx_export` imports, at AT."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("runner", "schemas"):
        shutil.copytree(ROOT / package, at / package, ignore=skip)
    return at


def _export(checkout: Path, model_dir: Path, out: Path) -> bytes:
    job = json.dumps(
        {
            "workload": "runner.workloads.bow:BagOfWords",
            "options": {},
            "model_dir": str(model_dir),
            "context": 16,
            "path": str(out),
        }
    )
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        [sys.executable, "-m", "runner.onnx_export", job],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the export really ran from the copy, not from this checkout
    assert json.loads(proc.stdout.strip().splitlines()[-1])["file"] == str(out)
    return out.read_bytes()


def test_exports_from_two_checkouts_are_byte_identical_and_name_no_path(tmp_path: Path) -> None:
    rows = [r for r in tiny_rows(n_train=30, n_tune=0, n_eval=0) if r["split"] == "train"]
    model_dir = tmp_path / "model"
    BagOfWords().prepare(
        TrainingData(
            [r["text"] for r in rows],
            [r["label"] for r in rows],
            tuple(sorted({r["label"] for r in rows})),
        ),
        model_dir,
        seed=3,
        context=16,
        options={"epochs": 2},
    )
    first = _checkout(tmp_path / "checkout-one")
    second = _checkout(tmp_path / "elsewhere" / "checkout-two")
    a = _export(first, model_dir, tmp_path / "a.onnx")
    b = _export(second, model_dir, tmp_path / "b.onnx")
    assert a == b
    for path in (first, second, ROOT, Path(sys.prefix), Path(onnx.__file__).parents[1]):
        assert str(path).encode() not in a, f"{path} is written in the exported file"
    assert b"workloads/bow.py" not in a and b"stack_trace" not in a
    proto = onnx.load_model_from_string(a)
    assert len(proto.graph.node) > 0
    assert all(len(n.metadata_props) == 0 for n in proto.graph.node)
