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
