"""Helpers of the replay tests, in a plain module (not conftest.py) so that `from
replay_helpers import copy` names this file whichever conftest pytest imported first."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import runfactory as rf


def copy(run: Path, tmp_path: Path) -> Path:
    root = tmp_path / "run"
    shutil.copytree(run, root)
    return root


def redeclare(root: Path) -> None:
    """Re-declare the archived model and tokenizer as they now are (the replay section's
    hashes, `revisions.tokenizer`), then every file's hash: what a forger who edits the
    archive does, so that only what replay checks beyond hashes can catch the edit."""
    manifest = rf.read_json(root, "manifest.json")
    section = manifest["replay"]
    for part in (section["model"], section["tokenizer"]):
        part["sha256"] = hashlib.sha256((root / part["file"]).read_bytes()).hexdigest()
    manifest["revisions"]["tokenizer"] = "sha256:" + section["tokenizer"]["sha256"]
    rf.write_json(root, "manifest.json", manifest)
    rf.rehash(root)
