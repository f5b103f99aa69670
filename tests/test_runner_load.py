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
    out = subprocess.run(
        ["sh", "-c", f"{sys.executable} -c '{BUSY}' >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        check=True,
    )
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


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_the_runs_own_child_is_not_another_process() -> None:
    """A busy child of the run (a cold pass's process) is counted as the run's own: the CPU
    it used (read from its own /proc entry) is not in what 'other processes' used."""
    child = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(0.3)
        before, t0 = _cpu_seconds(child.pid), time.monotonic()
        with loadwatch.LoadWatch(interval_s=0.5) as watch:
            time.sleep(2.0)
        used = (_cpu_seconds(child.pid) - before) / (time.monotonic() - t0)
    finally:
        child.terminate()
        child.wait()
    rec = watch.record()
    assert used > 0.05, "the child never ran: the machine is too busy to tell"
    # what the machine used less what 'others' used is at least the child's share
    assert rec["machine_cpus_mean"] - rec["other_cpus_mean"] >= used - 0.15, (rec, used)


def test_not_measurable_is_none_never_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loadwatch, "machine_cpu_seconds", lambda *a: None)
    with loadwatch.LoadWatch(interval_s=0.2) as watch:
        time.sleep(0.3)
    rec = watch.record()
    assert rec["other_cpus_mean"] is None and rec["busy"] is None
    assert "not measurable" in loadwatch.sentence(rec)


def _config(tmp: Path, corpus: Path, threads: int) -> Path:
    cfg = tmp / "run.toml"
    cfg.write_text(
        f"""
experiment_id = "busy-test"
seed = 11
device = "cpu"
[corpus]
path = "{corpus}"
eval_size = 40
[workload]
callable = "runner_workloads:Faulty"
options = {{ epochs = 8, sleep_per_batch = 0.004 }}
[variants]
batches = [1, 8, 32]
context = 5
[passes]
warmup_iterations = 2
[threads]
torch = {threads}
""",
        encoding="utf-8",
    )
    return cfg


def test_a_short_run_beside_a_busy_loop_says_so_everywhere(
    tmp_path: Path, other_process: int
) -> None:
    """What a user meets: the warning on stderr under --quiet, the notes, environment.json,
    the manifest's threads as declared and observed per pass, `audit check`'s warning, and
    page 1 of the report."""
    from click.testing import CliRunner
    from runner_workloads import tiny_rows, write_jsonl

    from auditor.engine import run_check
    from auditor.report.build import build_report
    from runner.cli import cli

    corpus = write_jsonl(tmp_path / "corpus.jsonl", tiny_rows())
    out = tmp_path / "run"
    result = CliRunner().invoke(
        cli,
        ["execute", "--config", str(_config(tmp_path, corpus, 1)), "--out", str(out), "--quiet"],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out)
    assert result.stderr.startswith("warning: machine BUSY while measuring"), result.stderr
    env = json.loads((out / "environment.json").read_text())
    rec = env["concurrent_load"]["while_measuring"]
    assert rec["busy"] is True and rec["other_cpus_mean"] >= rec["busy_threshold_cpus"]
    assert env["concurrent_load"]["before"]["cpus"] == rec["cpus"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["threads"]["torch_intra_op"] == 1
    assert manifest["threads"]["source"]["torch"] == "config threads.torch"
    assert "machine BUSY while measuring" in manifest["notes"]
    timeline = [json.loads(line) for line in (out / "timeline.jsonl").open()]
    assert {e["torch_threads"] for e in timeline} == {1}  # cold passes' processes included
    checked = run_check(out)
    busy = [f for f in checked.findings if f.code == "A0407"]
    assert busy and busy[0].severity == "warning"
    assert not [f for f in checked.findings if f.code == "A0406"]
    build_report(out, tmp_path / "report")
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    page_one = html[: html.find("How sure")] if "How sure" in html else html
    assert "Measured on a BUSY machine" in page_one
