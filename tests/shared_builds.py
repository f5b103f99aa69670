"""What the suite builds once for every test process of a session (issue 26: `make test` on
two cores): run directories several test files read, and the ONNX exports of the runner.

`pytest -n auto --dist loadfile` gives each file to one worker, so a session fixture is
built once per worker; `shared(tmp_path_factory, name, build)` builds NAME once for the
whole session instead, in a folder every worker of the session sees (the parent of the
workers' base temp folders; the base temp folder itself without xdist), under a file lock:
the first worker to ask builds it, the others wait and read it. What is shared is read
only: a test that changes a run copies it first (`shutil.copytree`).

The runner exports each run's model to ONNX in a fresh process (`runner.onnx_export`, about
7 s of CPU, most of a small run's cost). That export is byte-reproducible: the same staged
model, workload, options and context give the same file (tests/test_onnx_reproducible.py,
and the tests marked `fresh_export`, check it on real exports). `install_export_cache`
makes `runner.replay` reuse the file of an earlier real export of the same model (keyed by
the SHA-256 of every file of the model folder and the rest of the job); a test that is
about the export itself is marked `@pytest.mark.fresh_export`, and a fixture whose run must
export for itself builds inside `with fresh_exports():`. A fresh export still fills the
cache; a failed one stores nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_DONE = ".built"


def session_dir(factory: pytest.TempPathFactory) -> Path:
    """The folder this session's workers share (created)."""
    base = factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared"
    root.mkdir(exist_ok=True)
    return root


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def shared(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]) -> Path:
    """The folder NAME, which BUILD(folder) fills once per session (whatever it returns is
    kept in `result.json` beside what it wrote: read it with `built_result`)."""
    root = session_dir(factory)
    folder = root / name
    with _locked(root / f"{name}.lock"):
        if not (folder / _DONE).is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            folder.mkdir()
            result = build(folder)
            (folder / "result.json").write_text(json.dumps(result, default=str), encoding="utf-8")
            (folder / _DONE).touch()
    return folder


def built_result(folder: Path) -> Any:
    return json.loads((folder / "result.json").read_text(encoding="utf-8"))


# --- the ONNX export cache --------------------------------------------------------------

_fresh = False
_cache_root: Path | None = None


@contextlib.contextmanager
def fresh_exports() -> Iterator[None]:
    """Inside: every export runs the real exporter (and refreshes the cache)."""
    global _fresh
    before, _fresh = _fresh, True
    try:
        yield
    finally:
        _fresh = before


#: Options of the test workloads (tests/runner_workloads.py) that change how they classify,
#: never the model they load and export: runs that differ only in them share an export.
CLASSIFY_ONLY = {
    "runner_workloads:Faulty": ("fail", "sleep_per_batch"),
    "runner_workloads:Degraded": ("degrade_every",),
}


def _export_key(workload: str, options: dict[str, Any], model_dir: Path, context: int) -> str:
    kept = {k: v for k, v in options.items() if k not in CLASSIFY_ONLY.get(workload, ())}
    h = hashlib.sha256(json.dumps([workload, kept, context], sort_keys=True, default=str).encode())
    for f in sorted(p for p in Path(model_dir).rglob("*") if p.is_file()):
        rel = f.relative_to(model_dir).as_posix()
        if rel == "model.onnx":  # the export's own target, when it lies in the model dir
            continue
        h.update(rel.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def install_export_cache(factory: pytest.TempPathFactory) -> None:
    """Wrap `runner.replay.export_in_fresh_process` (what `archive` calls) by the cache."""
    global _cache_root
    import runner.replay as replay_mod
    from runner.onnx_export import OnnxExport

    _cache_root = session_dir(factory) / "onnx"
    _cache_root.mkdir(exist_ok=True)
    real = replay_mod.export_in_fresh_process

    def cached(
        workload: str, options: dict[str, Any], model_dir: Path, context: int, path: Path
    ) -> OnnxExport:
        assert _cache_root is not None
        key = _export_key(workload, options, model_dir, context)
        entry = _cache_root / key
        # the lock is held over the export: a second worker waits for it, then copies it
        with _locked(_cache_root / f"{key}.lock"):
            if not _fresh and (entry / "export.json").is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(entry / "model.onnx", path)
                done = json.loads((entry / "export.json").read_text(encoding="utf-8"))
                return OnnxExport(
                    **{**done, "file": path, "input_names": tuple(done["input_names"])}
                )
            made = real(workload, options, model_dir, context, path)
            shutil.rmtree(entry, ignore_errors=True)
            entry.mkdir()
            shutil.copyfile(made.file, entry / "model.onnx")
            (entry / "export.json").write_text(
                json.dumps({**dataclasses.asdict(made), "file": None}), encoding="utf-8"
            )
        return made

    replay_mod.export_in_fresh_process = cached
