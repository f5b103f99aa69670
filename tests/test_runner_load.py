"""The machine's load while measuring (`runner.loadwatch`), with real processes: a busy loop
that is not the runner's (an orphan, as another user's job would be) makes the machine busy;
a busy child of the runner itself (a cold pass's fresh process) is the run's own load, never
another's. And end to end: a short `runner execute` beside a busy loop records it, says it on
stderr (even with --quiet), in the notes and in environment.json, and `audit check` warns."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import schemas
from runner import loadwatch

pytestmark = pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="needs /proc/stat")

BUSY = "import time\nend = time.time() + 120\nwhile time.time() < end: pass\n"


@pytest.fixture
def other_process() -> Iterator[int]:
    """A busy loop whose parent is not this process (started through a shell that exits)."""
    out = subprocess.run(["sh", "-c", f"{sys.executable} -c '{BUSY}' >/dev/null 2>&1 & "
                          "echo $!"], capture_output=True, text=True, check=True)
    pid = int(out.stdout.strip())
    time.sleep(0.3)
    yield pid
    os.kill(pid, signal.SIGTERM)


def test_another_process_makes_the_machine_busy(other_process: int) -> None:
    with loadwatch.LoadWatch(interval_s=0.5) as watch:
        time.sleep(2.0)
    rec = watch.record()
    assert list(schemas.validator("load_record").iter_errors(rec)) == []
    assert rec["other_cpus_mean"] >= 0.8, rec  # the loop holds one CPU
    assert rec["busy"] is (rec["other_cpus_mean"] >= rec["busy_threshold_cpus"])
    assert rec["busy"] is True
    text = loadwatch.sentence(rec)
    assert text.startswith("machine BUSY while measuring: other processes used")


def test_the_runs_own_child_is_not_another_process() -> None:
    child = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(0.3)
        with loadwatch.LoadWatch(interval_s=0.5) as watch:
            time.sleep(2.0)
    finally:
        child.terminate()
        child.wait()
    rec = watch.record()
    # the child's CPU is the run's: others are at most the machine less about one CPU
    assert rec["other_cpus_mean"] <= rec["machine_cpus_mean"] - 0.7, rec


def test_not_measurable_is_none_never_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loadwatch, "machine_cpu_seconds", lambda *a: None)
    with loadwatch.LoadWatch(interval_s=0.2) as watch:
        time.sleep(0.3)
    rec = watch.record()
    assert rec["other_cpus_mean"] is None and rec["busy"] is None
    assert "not measurable" in loadwatch.sentence(rec)
