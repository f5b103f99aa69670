"""The slow tier (`pytest -m slow`): `bench/fuzz_audit.py` over 2,000 damaged runs: no crash
of `audit check` (nor of the report's rendering on a sample), and no change to a fact file
accepted."""

from __future__ import annotations

import importlib.util
import io

import pytest
from paths import REPO


@pytest.mark.slow
def test_two_thousand_damaged_runs_never_crash_the_audit() -> None:
    spec = importlib.util.spec_from_file_location("fuzz_audit", REPO / "bench/fuzz_audit.py")
    assert spec is not None and spec.loader is not None
    fuzz_audit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz_audit)
    out = io.StringIO()
    stats = fuzz_audit.fuzz(2000, seed=1, report_every=50, out=out)
    print(out.getvalue())
    assert stats["crashes"] == [] and stats["missed"] == [], out.getvalue()
