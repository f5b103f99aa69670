"""`audit archive` over a folder and a .tar.gz of mixed runs: one index row per run (and per
source that holds none), the findings beside it, incrementally, resuming after an
interruption; never a crash for a bad source."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import archfactory
import polars as pl
import pytest
from jsonschema import Draft202012Validator

import schemas
from auditor.archive import frames, index
from auditor.archive.core import audit_archive
from auditor.archive.progress import Progress
from auditor.archive.sources import Job
from auditor.archive.worker import audit_one

AUDIT = [sys.executable, "-c", "from auditor.cli import main; main()"]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    return archfactory.mixed(tmp_path_factory.mktemp("mixed"))


@pytest.fixture(scope="module")
def archived(mixed: Path, tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("archive") / "out"
    return out, audit_archive([mixed], out, jobs=2)


def _labels(df: pl.DataFrame, src: Path) -> dict[str, str]:
    return {s.removeprefix(f"{src}/"): v for s, v in df.select("source", "verdict").iter_rows()}


def test_every_run_and_bad_source_gets_one_row(mixed: Path, archived) -> None:
    out, outcome = archived
    df = pl.read_parquet(out / index.INDEX)
    assert dict(df.schema) == frames.INDEX_SCHEMA
    assert _labels(df, mixed) == archfactory.EXPECTED_VERDICTS
    assert df["source"].to_list() == sorted(df["source"].to_list())
    assert outcome.found == len(archfactory.EXPECTED_VERDICTS)
    assert outcome.audited == 8 and outcome.already == 0 and outcome.failed == 1
    assert not (out / index.PARTS).exists() or not any((out / index.PARTS).iterdir())
    acc = df.filter(pl.col("source") == f"{mixed}/team-a/acc-1").row(0, named=True)
    assert acc["gpu_models"] == ["NVIDIA H100 80GB HBM3"] and acc["gpu_count"] == 1
    assert acc["variants"] == ["batch-1", "batch-4"] == acc["accepted_variants"]
    assert acc["errors"] == 0 and acc["reason"] is None and acc["manifest_sha256"]
    cfg = acc["configurations"][0]
    assert cfg["median_s"] > 0 and cfg["throughput_per_s"] > 0
    (cost,) = cfg["costs"]
    assert cost["offer_id"] == "h100-7d" and cost["measured_here"]
    # money is integer minor units with its currency, never a double
    assert cost["currency"] == "USD" and cost["package_total_minor"] == 123456
    assert cost["cost_per_accepted_corpus_minor"] == 123456
    assert isinstance(cost["cost_per_accepted_corpus_minor"], int)
    # times are timestamps with a zone; the run is its bytes and matches its manifest
    assert df.schema["audited_at"] == pl.Datetime("us", "UTC")
    assert acc["audited_at"].tzinfo is not None
    assert len(acc["content_sha256"]) == 64 and acc["matches_manifest"] is True
    assert cfg["verdict"] == "accepted" and cfg["detail"] is None
    rej = df.filter(pl.col("source") == f"{mixed}/team-b/rej-1").row(0, named=True)
    assert rej["errors"] >= 1 and rej["accepted_variants"] == []
    # the reason is one finding's code and message, never a title joined to another message
    assert rej["reason"].startswith("A0205: ") and rej["matches_manifest"] is True
    inc = df.filter(pl.col("source") == f"{mixed}/team-b/inc-1").row(0, named=True)
    assert inc["verdict"] == "incomplete"
    assert inc["reason"].startswith("A0006: ") and "set-check" in inc["reason"]
    broken = df.filter(pl.col("source") == f"{mixed}/broken.tar.gz").row(0, named=True)
    assert broken["kind"] == "source" and "cannot be read" in broken["reason"]


def test_findings_belong_to_their_rows(mixed: Path, archived) -> None:
    out, _ = archived
    df = pl.read_parquet(out / index.INDEX)
    f = pl.read_parquet(out / index.FINDINGS)
    assert dict(f.schema) == frames.FINDINGS_SCHEMA
    assert set(f["audit_id"]) <= set(df["audit_id"])
    per = (
        f.filter(pl.col("kind") == "finding")
        .group_by("audit_id")
        .agg((pl.col("severity") == "error").sum().alias("n"))
    )
    errors = dict(df.select("audit_id", "errors").iter_rows())
    assert all(errors[a] == n for a, n in per.iter_rows())
    codes = set(f.filter(pl.col("source") == f"{mixed}/team-b/rej-1")["code"])
    assert "A0205" in codes
    assert set(f.filter(pl.col("source") == f"{mixed}/broken.tar.gz")["code"]) == {"R0105"}
    ev = f.filter(pl.col("code") == "A0205")["evidence_json"][0]
    assert isinstance(json.loads(ev), dict)


def test_a_second_run_audits_nothing_and_force_audits_all(mixed: Path, archived) -> None:
    out, first = archived
    before = pl.read_parquet(out / index.INDEX)
    again = audit_archive([mixed], out, jobs=1)
    assert again.audited == 0 and again.already == first.found and again.failed == 0
    after = pl.read_parquet(out / index.INDEX)
    assert after.equals(before)
    forced = audit_archive([mixed], out, jobs=2, force=True)
    assert forced.audited == 8 and forced.failed == 1
    redone = pl.read_parquet(out / index.INDEX)
    assert redone.height == before.height
    assert set(redone["audit_id"]).isdisjoint(before["audit_id"])
    keep = ["source", "verdict", "errors", "manifest_sha256", "fingerprint"]
    assert redone.select(keep).equals(before.select(keep))
    f = pl.read_parquet(out / index.FINDINGS)
    assert set(f["audit_id"]) <= set(redone["audit_id"])  # the old findings went with their rows


def test_a_changed_run_is_audited_again(tmp_path: Path) -> None:
    src = tmp_path / "src"
    archfactory.accepted(src / "a")
    run_b = archfactory.accepted(src / "b")
    out = tmp_path / "out"
    assert audit_archive([src], out, jobs=1).audited == 2
    os.utime(run_b / "timeline.jsonl", ns=(1, 1))  # touched, manifest unchanged
    assert audit_archive([src], out, jobs=1).audited == 1
    archfactory.accepted(src / "c")
    again = audit_archive([src], out, jobs=1)
    assert (again.audited, again.already) == (1, 2)


class Stop(Exception):
    pass


def test_an_interrupted_audit_resumes_where_it_stopped(
    mixed: Path, archived, tmp_path: Path
) -> None:
    full = pl.read_parquet(archived[0] / index.INDEX)
    out = tmp_path / "out"
    seen = []

    def stop_after_three(record) -> None:
        seen.append(record.source)
        if len(seen) == 3:
            raise Stop

    with pytest.raises(Stop):
        audit_archive([mixed], out, jobs=2, on_record=stop_after_three)
    assert not (out / index.INDEX).exists()  # never compacted, only committed parts
    partial = index.load_index(out)
    assert set(seen) <= set(partial["source"])
    resumed = audit_archive([mixed], out, jobs=2)
    assert resumed.audited == 8 - 3
    final = pl.read_parquet(out / index.INDEX)
    keep = ["source", "verdict", "errors", "warnings", "manifest_sha256", "fingerprint"]
    assert final.select(keep).equals(full.select(keep))
    f = pl.read_parquet(out / index.FINDINGS)
    assert set(f["audit_id"]) <= set(final["audit_id"])
    assert f.group_by("audit_id").len().height == f["audit_id"].n_unique()


def test_compaction_survives_a_crash_at_any_step(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for n in range(3):
        archfactory.accepted(src / f"r{n}")
    out = tmp_path / "out"
    audit_archive([src], out, jobs=1)
    first = pl.read_parquet(out / index.INDEX)
    # An audit killed mid-way: a committed part, an orphan findings part, temp files.
    w = index.IndexWriter(out, index.auditor_version())
    w.add(audit_one(Job(source=f"{src}/r0", run_dir=str(src / "r0"))))
    w.flush()
    (out / index.PARTS / "findings-99999999-orphan.parquet").write_bytes(b"half")
    (out / f".{index.INDEX}.tmp-1").write_bytes(b"half")
    df = index.load_index(out)
    assert (
        df.height == 3
        and df.filter(pl.col("source") == f"{src}/r0")["audit_id"][0]
        != first.filter(pl.col("source") == f"{src}/r0")["audit_id"][0]
    )
    index.compact(out)
    assert pl.read_parquet(out / index.INDEX).height == 3
    assert list((out / index.PARTS).iterdir()) == [] and not list(out.glob(".*.tmp-*"))


def test_the_worker_never_raises(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    rec = audit_one(Job(source="x", run_dir=str(tmp_path / "notes")))
    assert rec.summary is None and rec.failure and rec.findings[0].code == "R0002"
    rec = audit_one(Job(source="y", run_dir=str(tmp_path / "missing")))
    assert rec.summary is None and "no such file or directory" in rec.failure


def test_progress_line_and_failures(tmp_path: Path) -> None:
    import io

    buf = io.StringIO()
    p = Progress(buf)
    p.set_total(10, 2)
    p.failure("/a/run", "not a run")
    assert buf.getvalue() == "FAILED /a/run: not a run\n"
    assert p.line().startswith("0/8 runs, ") and "2 already in the index" in p.line()
    p.close()
    quiet = io.StringIO()
    q = Progress(quiet, quiet=True)
    q.set_total(10, 0)
    q.failure("x", "y")
    q.advance()
    q.close()
    assert quiet.getvalue() == ""


def test_progress_off_a_terminal_every_five_percent_and_at_the_end() -> None:
    import io

    buf = io.StringIO()
    p = Progress(buf)
    p.set_total(100, 0)
    for _ in range(4):
        p.advance()
    assert buf.getvalue() == ""  # 4 % done: not yet
    p.advance()
    (line,) = buf.getvalue().splitlines()
    assert line.startswith("5/100 runs, ") and "runs/s, ETA " in line
    for _ in range(7):
        p.advance()
    p.close()  # 12 of 100: the last line says where it ended
    lines = buf.getvalue().splitlines()
    assert [line.split(" ")[0] for line in lines] == ["5/100", "10/100", "12/100"]


def test_progress_off_a_terminal_every_few_seconds_while_a_run_lasts() -> None:
    import io
    import time

    buf = io.StringIO()
    p = Progress(buf)
    p.LOG_SECONDS = 0.05  # the default is 10 s
    p.set_total(1000, 0)
    deadline = time.monotonic() + 10
    while not buf.getvalue() and time.monotonic() < deadline:  # no run finishes meanwhile
        time.sleep(0.02)
    p.close()
    assert buf.getvalue().startswith("0/1,000 runs, ")


def test_cli_archive_text_json_and_exit_status(mixed: Path, archived, tmp_path: Path) -> None:
    out = archived[0]
    cmd = [*AUDIT, "archive", str(mixed), "--out", str(out)]
    proc = subprocess.run([*cmd, "--format", "json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr  # nothing failed this time: all in the index
    doc = json.loads(proc.stdout)
    Draft202012Validator(
        schemas.load("archive_outcome"), format_checker=Draft202012Validator.FORMAT_CHECKER
    ).validate(doc)
    assert doc["audited"] == 0 and doc["verdicts"]["accepted"] == 3
    assert doc["started_at"].endswith("Z") and doc["started_at"] <= doc["finished_at"]
    fresh = tmp_path / "fresh"
    proc = subprocess.run(
        [
            *AUDIT,
            "archive",
            str(mixed / "broken.tar.gz"),
            str(mixed / "team-a" / "acc-1"),
            "--out",
            str(fresh),
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr
    assert f"FAILED {mixed}/broken.tar.gz: the archive cannot be read" in proc.stderr
    assert "2 found: 1 audited now" in proc.stdout
    proc = subprocess.run(
        [*cmd, "--executor", "local", "--address", "x"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "--address goes with --executor ray" in proc.stderr


def test_the_documented_columns_are_the_written_ones() -> None:
    for kind, written in (
        ("archive_index", frames.INDEX_SCHEMA),
        ("archive_findings", frames.FINDINGS_SCHEMA),
    ):
        fields = schemas.frame(kind)["fields"]
        assert [f["name"] for f in fields] == list(written)
        assert all(f["description"] and isinstance(f["nullable"], bool) for f in fields)
    text = (Path(__file__).resolve().parents[2] / "docs" / "archive.md").read_text()
    for name in (*frames.INDEX_SCHEMA, *frames.FINDINGS_SCHEMA):
        assert f"`{name}`" in text, name


def poisonous(job: Job, threads: int | None = None):
    """A worker function whose run `poison` kills its worker, as running out of memory
    would (module-level, so spawned workers can import it)."""
    if job.source == "poison":
        os._exit(1)
    from auditor.archive.worker import lost

    return lost(job, "fine")  # a cheap record standing for a real audit


def test_a_worker_that_dies_loses_only_its_own_run() -> None:
    from auditor.archive.local import LocalExecutor

    jobs = [Job(source=s, run_dir="/nonexistent") for s in ("a", "poison", "b", "c", "d")]
    got = {r.source: r.failure for r in LocalExecutor(2, fn=poisonous).map(jobs)}
    assert set(got) == {"a", "poison", "b", "c", "d"}
    assert "died" in got.pop("poison") and set(got.values()) == {"fine"}


def _children_of(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except OSError:
                continue
    return out


def test_an_audit_killed_outright_resumes_and_leaves_no_worker(tmp_path: Path) -> None:
    import shutil
    import signal
    import time

    one = archfactory.accepted(tmp_path / "one")
    src = tmp_path / "src"
    for n in range(60):
        shutil.copytree(one, src / f"run-{n:02d}", copy_function=os.link)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [*AUDIT, "archive", str(src), "--out", str(out), "--jobs", "2", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not list((out / index.PARTS).glob("index-*")) and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    workers = _children_of(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    committed = index.load_index(out).height
    resumed = audit_archive([src], out, jobs=2)
    assert resumed.audited == 60 - committed and resumed.already == committed
    assert pl.read_parquet(out / index.INDEX).height == 60
    time.sleep(1.5)  # the workers notice their parent is gone within a second
    alive = [
        w
        for w in workers
        if Path(f"/proc/{w}/cmdline").exists()
        and b"spawn_main" in Path(f"/proc/{w}/cmdline").read_bytes()
    ]
    assert not alive


def test_a_record_from_other_code_is_not_indexed_as_a_verdict(tmp_path: Path) -> None:
    """A cluster node running another auditor: its record is a failure, retried next time."""
    import dataclasses

    from auditor.archive.core import other_version

    run = archfactory.accepted(tmp_path / "run")
    rec = audit_one(Job(source=str(run), run_dir=str(run)))
    assert rec.auditor_version == index.auditor_version()
    foreign = other_version(
        dataclasses.replace(rec, auditor_version="0.0.1+0123456789ab"), index.auditor_version()
    )
    assert foreign.summary is None and foreign.fingerprint == ""
    assert "install the same auditor on every node" in foreign.failure


def test_an_index_of_an_older_layout_is_rebuilt(tmp_path: Path) -> None:
    src = tmp_path / "src"
    archfactory.accepted(src / "a")
    out = tmp_path / "out"
    out.mkdir()
    pl.DataFrame(
        {"source": [f"{src}/a"], "audited_at": ["2026-01-01T00:00:00Z"], "cost": [1200.0]}
    ).write_parquet(out / index.INDEX)
    assert audit_archive([src], out, jobs=1).audited == 1
    assert dict(pl.read_parquet(out / index.INDEX).schema) == frames.INDEX_SCHEMA


def test_the_fingerprint_sees_every_change_without_reading(tmp_path: Path) -> None:
    from auditor.archive.worker import walk_stats

    run = archfactory.accepted(tmp_path / "run")
    first, odd = walk_stats(run)
    assert odd == () and walk_stats(run)[0] == first
    os.utime(run / "timeline.jsonl", ns=(5, 5))
    touched = walk_stats(run)[0]
    assert touched != first
    (run / "extra").symlink_to("/etc/passwd")
    linked, odd = walk_stats(run)
    assert linked != touched and odd == ("extra\0link",)
    rec = audit_one(Job(source="x", run_dir=str(run)))
    assert rec.matches_manifest is False  # a link the manifest cannot list


class _Terminal:
    """A stream that says it is a terminal, as click and rich detect one."""

    def __init__(self) -> None:
        import io

        self.buf = io.StringIO()

    def write(self, text: str) -> int:
        return self.buf.write(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_with_or_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal: rich's live line where rich is installed (runs of the total, the rate,
    the failures printed above it), the line drawn here where it is not; the same facts."""
    import importlib.util

    for with_rich in (False, True):
        if not with_rich:
            monkeypatch.setitem(sys.modules, "rich.progress", None)  # ImportError
        elif importlib.util.find_spec("rich") is None:
            pytest.skip("rich is not installed: its path is not exercised here")
        else:
            monkeypatch.delitem(sys.modules, "rich.progress", raising=False)
        term = _Terminal()
        p = Progress(term)  # type: ignore[arg-type]
        assert p.live and (p._rich is not None) is with_rich
        p.set_total(4, 1)
        p.advance()
        p.failure("/a/run", "not a run")
        p.advance()
        p.close()
        out = term.buf.getvalue()
        assert "FAILED /a/run: not a run" in out
        assert "2/3" in out and "runs/s" in out and "1 already in the index" in out
