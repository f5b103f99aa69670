"""A runner killed in the middle of a run never leaves a directory that looks complete: the
work happens in `<RUN_DIR>.partial-<pid>`, which has no manifest until the very end, and
RUN_DIR itself only appears by the final rename."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from runner_workloads import tiny_rows, write_jsonl

TESTS = Path(__file__).resolve().parent


def _slow_run(tmp_path: Path, quiet: bool = True) -> tuple[subprocess.Popen, Path, Path]:
    """A slow `runner execute` started in its own process group; (process, out, partial)."""
    corpus = write_jsonl(tmp_path / "c.jsonl", tiny_rows())
    cfg = tmp_path / "slow.toml"
    cfg.write_text(
        f"""
device = "cpu"
[corpus]
path = "{corpus}"
[workload]
callable = "runner_workloads:Faulty"
options = {{ epochs = 2, sleep_per_batch = 0.05 }}
[variants]
batches = [1, 4]
""",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "runner.cli",
            "execute",
            "--config",
            str(cfg),
            "--out",
            str(out),
            *(["--quiet"] if quiet else []),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return proc, out, tmp_path / f"run.partial-{proc.pid}"


def _wait_for_passes(proc: subprocess.Popen, partial: Path) -> None:
    deadline = time.monotonic() + 60
    while not (partial / "outputs").is_dir():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never started its passes"
        time.sleep(0.05)


def test_ctrl_c_removes_the_partial_directory(tmp_path: Path) -> None:
    proc, out, partial = _slow_run(tmp_path)
    try:
        _wait_for_passes(proc, partial)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends to the terminal's group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert not out.exists() and not partial.exists()
    assert f"no run dir written at {out}" in err and "were removed" in err
    assert "Traceback" not in err


def test_killed_run_leaves_no_complete_looking_dir(tmp_path: Path) -> None:
    proc, out, partial = _slow_run(tmp_path)
    deadline = time.monotonic() + 60
    try:
        # wait until passes are being written, then kill without warning
        while not (partial / "outputs").is_dir():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never started its passes"
            time.sleep(0.05)
        # the runner and its cold-pass process, as a machine crash would
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()
    assert partial.is_dir() and not (partial / "manifest.json").exists()
