"""Pinned revisions (A1.2): hashes of what the run used, the same in every row.

- corpus: `corpus.corpus_revision` (the canonical content);
- model: sha256 of the staged weights file under the run dir's `model/`;
- tokenizer: sha256 of the staged vocabulary-and-rules file;
- code: the package version, a sha256 over the runner's own source files, and
  `git describe` when the source lives in a git work tree (read-only git calls).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import runner

RUNNER_DIR = Path(runner.__file__).resolve().parent


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def source_sha256(root: Path = RUNNER_DIR) -> str:
    """sha256 over the runner's .py and default files: relative path, NUL, content, NUL."""
    h = hashlib.sha256()
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and p.suffix in (".py", ".toml", ".json"))
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def git_describe(root: Path = RUNNER_DIR) -> str | None:
    """`git describe --always` plus `-dirty` when the work tree differs from it (untracked
    files included); None outside git.
    GIT_OPTIONAL_LOCKS=0: never write the index while merely looking."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        desc = subprocess.run(["git", "describe", "--always"], cwd=root, env=env,
                              capture_output=True, text=True, timeout=5)
        if desc.returncode != 0:
            return None
        status = subprocess.run(["git", "status", "--porcelain"],
                                cwd=root, env=env, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = "-dirty" if status.returncode == 0 and status.stdout.strip() else ""
    return desc.stdout.strip() + dirty


def code_revision() -> str:
    parts = [f"gpubench-audit {runner.__version__}",
             f"runner-src sha256:{source_sha256()[:16]}"]
    git = git_describe()
    if git:
        parts.append(f"git {git}")
    return "; ".join(parts)
