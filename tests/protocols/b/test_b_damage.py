"""Whatever happens to one file of a protocol B run (bytes flipped, a truncation, a repeated
key, a file removed or added, a non-UTF-8 name, a sparse file), the audit never crashes:
every fault is a finding, never an internal error (B0000)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from damage import damage

from auditor.engine import run_check


@pytest.mark.parametrize("seed", range(16))
def test_damage_never_crashes_the_audit(runs, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "run"
    shutil.copytree(runs["synthetic" if seed % 4 else "windows"], root)
    what = damage(root, rng)
    result = run_check(root)
    crashes = [f.message for f in result.findings if f.code == "B0000"]
    assert crashes == [], what
    assert result.verdict in ("accepted", "rejected", "incomplete")
