"""Hostile inputs in a protocol B run (every file re-sealed, as a submitter may): JSON nested
a hundred thousand deep, numbers of 400 digits where a reading or a time stands, a file of
gigabytes listed in the manifest. Each is a finding naming the file, never a crash of the
auditor (B0000), never an accepted run, and the audit's memory stays bounded before any
file is read (under 1 GiB for the whole process)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import b_runs as br
import pytest

from auditor.engine import run_check

DEEP = "[" * 100_000 + "]" * 100_000
DIGITS = "9" * 400


def _lines(root: Path, rel: str) -> list[dict]:
    return [json.loads(x) for x in (root / rel).read_text(encoding="utf-8").splitlines()]


def _write_lines(root: Path, rel: str, recs: list[dict]) -> None:
    (root / rel).write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")


def _counter_of_400_digits(root: Path) -> None:
    recs = _lines(root, "power/cpu/trial-1.jsonl")
    next(r for r in recs if r["kind"] == "counter")["value"] = int(DIGITS)
    _write_lines(root, "power/cpu/trial-1.jsonl", recs)


def _latency_of_400_digits(root: Path) -> None:
    path = root / "outputs/cpu/trial-1.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = re.sub(r'"latency_ms": [0-9.e+-]+', f'"latency_ms": {DIGITS}', lines[3])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _wall_of_400_digits(root: Path) -> None:
    rows = br.read_csv(root / "trials.csv")
    rows[0]["wall_seconds"] = DIGITS
    br.write_csv(root / "trials.csv", br.TRIALS_COLUMNS, rows)


def _elapsed_of_400_digits(root: Path) -> None:
    path = root / "power/cpu/trial-1.txt"
    text = re.sub(
        r"\(([\d.]+)ms elapsed\)",
        f"({DIGITS}ms elapsed)",
        path.read_text(encoding="utf-8"),
        count=1,
    )
    path.write_text(text, encoding="utf-8")


def _watts_of_400_digits(root: Path) -> None:
    path = root / "power/cpu/trial-1.txt"
    text = re.sub(
        r"CPU Power: \d+ mW", f"CPU Power: {DIGITS} mW", path.read_text(encoding="utf-8"), count=1
    )
    path.write_text(text, encoding="utf-8")


def _deep(rel: str, prefix: str = "", suffix: str = "") -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        (root / rel).write_text(prefix + DEEP + suffix, encoding="utf-8")

    return edit


HOSTILE: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "environment.json nested 100,000 deep": (
        "synthetic",
        _deep("environment.json"),
        "environment.json",
    ),
    "gates.json nested 100,000 deep": ("synthetic", _deep("gates/gates.json"), "gates/gates.json"),
    "an energy summary nested 100,000 deep": (
        "synthetic",
        _deep("energy/cpu/trial-1.json"),
        "energy/cpu/trial-1.json",
    ),
    "an ORT record nested 100,000 deep": (
        "synthetic",
        _deep("placement/ort-cuda.ort.json", '{"format": "ort-placement/1", "nodes": ', "}"),
        "placement/ort-cuda.ort.json",
    ),
    "a counter reading of 400 digits": (
        "synthetic",
        _counter_of_400_digits,
        "power/cpu/trial-1.jsonl",
    ),
    "a latency of 400 digits": ("synthetic", _latency_of_400_digits, "outputs/cpu/trial-1.jsonl"),
    "a wall time of 400 digits": ("synthetic", _wall_of_400_digits, "trials.csv"),
    "a powermetrics interval of 400 digits": (
        "macos",
        _elapsed_of_400_digits,
        "power/cpu/trial-1.txt",
    ),
    "a powermetrics reading of 400 digits": (
        "macos",
        _watts_of_400_digits,
        "power/cpu/trial-1.txt",
    ),
}


@pytest.mark.parametrize("what", sorted(HOSTILE))
def test_hostile_input_is_a_finding_naming_its_file(runs, tmp_path: Path, what: str) -> None:
    template, edit, rel = HOSTILE[what]
    root = tmp_path / "run"
    shutil.copytree(runs[template], root)
    edit(root)
    br.rehash(root)
    result = run_check(root)
    crashes = [f.message for f in result.findings if f.code == "B0000"]
    assert crashes == [], crashes
    assert result.verdict != "accepted"
    assert any(f.artifact == rel and f.severity == "error" for f in result.findings), [
        (f.code, f.artifact, f.message) for f in result.findings
    ]


_PEAK = """
import json, re, sys
from pathlib import Path
from auditor.engine import run_check
r = run_check(sys.argv[1])
status = Path("/proc/self/status").read_text()
print(json.dumps({"verdict": r.verdict,
                  "crashes": [f.message for f in r.findings if f.code == "B0000"],
                  "limits": sorted(f.artifact for f in r.findings
                                   if "hashed, not parsed" in f.message),
                  "peak_kib": int(re.search(r"VmHWM:\\s+(\\d+)", status)[1])}))
"""
"""The audit in a fresh process, its own peak memory (VmHWM: ru_maxrss would carry the
parent's high-water mark across fork and exec)."""


def test_a_file_of_gigabytes_listed_in_the_manifest_is_never_read(runs, tmp_path: Path) -> None:
    """A power trace of 2 GiB and a placement file of 200 MB (sparse: they cost no disk),
    listed with their hashes: each is hashed and reported as over its kind's parse limit,
    never read whole; the audit of the run stays under 1 GiB of memory."""
    if not Path("/proc/self/status").is_file():
        pytest.skip("VmHWM is read from /proc (Linux)")
    root = tmp_path / "run"
    shutil.copytree(runs["synthetic"], root)
    with open(root / "power/cpu/trial-1.jsonl", "r+b") as fh:
        fh.truncate(2 << 30)
    with open(root / "placement/cpu.torch.json", "r+b") as fh:
        fh.truncate(200 << 20)
    br.rehash(root)
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK, str(root)], capture_output=True, text=True, check=True
    )
    got = json.loads(proc.stdout)
    assert got["verdict"] == "rejected" and got["crashes"] == []
    assert got["limits"] == ["placement/cpu.torch.json", "power/cpu/trial-1.jsonl"]
    assert got["peak_kib"] < (1 << 20), f"peak RSS {got['peak_kib'] // 1024} MiB"
