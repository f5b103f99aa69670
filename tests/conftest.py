"""Test-suite setup: the shared helpers at the top of tests/ (`runfactory`, the runner's test
workloads) are importable from every folder of the suite, which mirrors the code's layout
(tests/readers/, tests/protocols/a/, tests/output/). The runner's ONNX exports are cached
for the session (shared_builds.py); a test about the export itself is marked
`fresh_export`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest
from shared_builds import fresh_exports, install_export_cache


@pytest.fixture(scope="session", autouse=True)
def _export_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The runner's ONNX exports, made once per model for the session (shared_builds)."""
    install_export_cache(tmp_path_factory)


@pytest.fixture(autouse=True)
def _fresh_export(request: pytest.FixtureRequest):
    """A test marked `fresh_export` runs the real exporter for every export it asks for."""
    if request.node.get_closest_marker("fresh_export") is None:
        yield
        return
    with fresh_exports():
        yield


#: The files that take longest (issue 26's measurements, about 20 s and more each), in that
#: order, before all others: `make test` hands files to its workers in collection order
#: (`--dist loadfile --no-loadscope-reorder`), so the long ones start first and the two
#: workers finish together instead of one running a long file alone at the end.
FIRST = (
    "test_residency_e2e.py",
    "test_hf_workload.py",
    "archive/test_archive.py",
    "protocols/b/test_b_mutations.py",
    "test_signer_validation.py",
    "test_hf_residency.py",
    "test_integration.py",
    "test_runner_atomic.py",
    "protocols/b/test_b_redteam_evidence.py",
    "archive/test_ray.py",
    "readers/test_inputs.py",
    "cli/test_conventions.py",
    "replay/test_replay_a.py",
    "test_runner_e2e.py",
    "protocols/b/test_b_verdicts.py",
)
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        rel = item.path.resolve().relative_to(TESTS).as_posix()
        return FIRST.index(rel) if rel in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: the rest keep their order
