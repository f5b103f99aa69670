"""Output files are streamed: read and hashed one at a time, counted in batches, and the view
keeps the lines of the files with a fault only. Whatever is wrong with the outputs, the findings
are the same as when every line is kept; and the hashes are those of the bytes on disk."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
import runfactory as rf
from test_mutations import MUTATIONS, templates  # noqa: F401 (a fixture)

from auditor.engine import load_run, run_check
from auditor.protocols.a.facts import passes

#: Mutations of the outputs, the expected list and the references, and of the claims on them.
OUTPUT_RULES = [c for c in MUTATIONS if c[:3] in ("A02", "A03") or c == "A0104"]


def _first_file_reordered(root: Path) -> None:
    """The first complete file (by name) out of list order: A0303's path that compares the
    others line by line with it, including the clean files the view does not hold."""
    rel = "outputs/batch-1/cold-1.jsonl"
    rows = rf.read_jsonl(root, rel)
    rf.write_jsonl(root, rel, rows[1:] + rows[:1])
    rf.recompute_claims(root)


def _findings(root: Path) -> list[dict]:
    return [f.to_json() for f in run_check(root).findings]


@pytest.mark.parametrize("code", [*OUTPUT_RULES, "reordered"])
def test_streamed_findings_equal_those_of_every_line(
    templates: dict[str, Path],  # noqa: F811
    tmp_path: Path,
    code: str,
    monkeypatch,
) -> None:
    flavour, mutate = (
        ("cpu", _first_file_reordered)
        if code == "reordered"
        else (MUTATIONS[code].template, MUTATIONS[code].mutate)
    )
    from auditor.protocols.a import view as view_module

    root = tmp_path / "run"
    shutil.copytree(templates[flavour], root)
    mutate(root)
    streamed = _findings(root)
    monkeypatch.setattr(view_module, "BATCH_BYTES", 2000)  # batches of a file or two
    assert _findings(root) == streamed
    every_file_kept = view_module.output_file_stats

    def keep_all(lines, exp, classes):
        rows, clean = every_file_kept(lines, exp, classes)
        return rows, clean.clear()

    monkeypatch.setattr(view_module, "output_file_stats", keep_all)  # where the view calls it
    assert streamed == _findings(root)
    if code == "reordered":
        assert sum(f["code"] == "A0303" for f in streamed) == 11  # every other file, clean


def test_a_clean_run_keeps_no_line_and_hashes_what_it_read(tmp_path: Path, monkeypatch) -> None:
    from auditor.protocols.a import view as view_module

    monkeypatch.setattr(view_module, "BATCH_BYTES", 1000)  # a batch per file or two
    root = rf.make_clean_run(tmp_path / "run")
    view = load_run(root)
    assert view.outputs is not None and view.outputs.height == 0
    assert view.output_stats is not None and view.output_stats.height == len(view.output_files)
    for rel in view.output_files:
        assert view.files_on_disk[rel] == hashlib.sha256((root / rel).read_bytes()).hexdigest()
    assert passes.pass_stats(view)["accepted"].all()
