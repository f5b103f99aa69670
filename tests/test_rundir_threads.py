"""`rundir.scan` reads a small run on the calling thread and a large one on a few threads
(and reads streamed files ahead on one): both paths give the same hashes, bytes and faults."""

from __future__ import annotations

from pathlib import Path

import pytest
import runfactory

from auditor import rundir
from auditor.protocols.a import PROTOCOL


def _walk(root: Path) -> tuple[dict, dict, tuple, list]:
    files = rundir.scan(root, PROTOCOL.parsed_prefixes, PROTOCOL.streamed_prefixes)
    streamed = [(rel, blob, fault) for rel, blob, fault in files.stream(files.paths("outputs/"))]
    return dict(files.hashes), dict(files.data), files.faults, streamed


def test_threaded_and_inline_reads_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = runfactory.make_clean_run(tmp_path / "run")
    (root / "notes-link").symlink_to(root / "manifest.json")  # a fault on both paths
    inline = _walk(root)
    monkeypatch.setattr(rundir, "SMALL_RUN_BYTES", 0)  # every run is "large": threads
    threaded = _walk(root)
    assert inline == threaded
    hashes, data, faults, streamed = inline
    assert streamed and all(blob for _, blob, _ in streamed)
    assert "manifest.json" in data and len(hashes) > len(data)
    assert [f.file for f in faults] == ["notes-link"]
