"""The issue's acceptance check on this CPU machine: `runner residency` with the embedded
default writes a complete protocol B run dir with both CPU policies, five trials each,
placement evidence, and energy measured or marked not measured with the reason. The two
minutes that issue gave are reported, not asserted: no test asserts an absolute time (a loaded
machine would make it flaky); a run over them is a warning in the test summary."""

from __future__ import annotations

import csv
import json
import time
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from runner.cli import cli


@pytest.mark.slow
def test_default_run_is_complete(tmp_path: Path) -> None:
    out = tmp_path / "rb"
    t = time.perf_counter()
    result = CliRunner().invoke(cli, ["residency", "--out", str(out), "--quiet"])
    seconds = time.perf_counter() - t
    assert result.exit_code == 0, result.output + repr(result.exception)
    if seconds >= 120:
        warnings.warn(
            f"the default residency run took {seconds:.1f} s (aim: under 120 s)", stacklevel=1
        )
    m = json.loads((out / "manifest.json").read_text())
    assert m["status"] == "complete" and m["energy"]["inferences_per_trial"] == 20_000
    with open(out / "trials.csv", encoding="utf-8", newline="") as f:
        trials = list(csv.DictReader(f))
    ok = {(r["policy_id"], r["trial_index"]) for r in trials if r["status"] == "ok"}
    for pid in ("torch-cpu", "ort-cpu"):
        assert {(pid, str(n)) for n in range(1, 6)} <= ok
        suffix = "torch" if pid.startswith("torch") else "ort"
        assert (out / f"placement/{pid}.{suffix}.json").is_file()
    for r in trials:
        if r["status"] == "ok":
            assert (
                r["energy_j"] != ""
                or "energy not measured: " in r["notes"]
                or "below resolution" in r["notes"]
            )
