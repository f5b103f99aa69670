"""Properties of `audit check` over random single-file changes to a clean run (the manifest
re-hashed, as a submitter may): it never crashes (no exception, no internal-error finding,
exit 0 or 1), and every change to a file a recomputed fact depends on is rejected. The
changes are `tests/damage.py`'s; `bench/fuzz_audit.py` runs thousands of them."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import damage
import pytest
import runfactory as rf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.engine import run_check

_TEMPLATES: dict[str, Path] = {}


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not _TEMPLATES:
        base = tmp_path_factory.mktemp("props")
        _TEMPLATES["cpu"] = rf.make_clean_run(base / "cpu", eval_size=12, claims=True)
        _TEMPLATES["cuda"] = rf.make_clean_run(
            base / "cuda", eval_size=12, device="cuda:0", claims=True
        )
    return _TEMPLATES


def _fresh(templates: dict[str, Path], flavour: str, tmp: Path) -> Path:
    root = tmp / "run"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(templates[flavour], root)
    return root


def _no_crash(root: Path, what: str) -> None:
    result = run_check(root)
    crashed = [f.message for f in result.findings if f.code == "A0000"]
    assert crashed == [], f"{what}: {crashed}"
    assert result.exit_code in (0, 1)


_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@_SETTINGS
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), flavour=st.sampled_from(["cpu", "cuda"]))
def test_any_single_file_damage_never_crashes(
    templates: dict[str, Path], tmp_path: Path, seed: int, flavour: str
) -> None:
    root = _fresh(templates, flavour, tmp_path)
    what = damage.damage(root, random.Random(seed))
    _no_crash(root, what)


@_SETTINGS
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    flavour=st.sampled_from(["cpu", "cuda"]),
    family=st.sampled_from(sorted(damage.FACTS)),
)
def test_a_change_to_a_fact_file_is_rejected(
    templates: dict[str, Path], tmp_path: Path, seed: int, flavour: str, family: str
) -> None:
    root = _fresh(templates, flavour, tmp_path)
    what = damage.fact_change(root, random.Random(seed), family)
    result = run_check(root)
    assert not [f for f in result.findings if f.code == "A0000"], what
    assert result.verdict != "accepted", f"{what} was accepted"
    assert result.exit_code == 1
