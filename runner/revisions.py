"""Pinned revisions (A1.2): hashes of what the run used, the same in every row.

- corpus: `corpus.corpus_revision` (the canonical content);
- model, tokenizer, config, recipe: the SHA-256 of the file(s) under the run dir's `model/`
  each kind names in `schemas/revision-kinds.json` (the data the auditor recomputes them
  from: `model_revisions`); a workload trained at run time first writes its recipe
  (`write_recipe`: code, seed, workload, options, context, training inputs);
- code: the package version, a sha256 over the runner's own source files, and
  `git describe` when the source lives in a git work tree (read-only git calls).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import runner
import schemas
from runner.errors import RunnerError

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
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".toml", ".json")
    )
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
        desc = subprocess.run(
            ["git", "describe", "--always"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=5,
        )
        if desc.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "status", "--porcelain"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = "-dirty" if status.returncode == 0 and status.stdout.strip() else ""
    return desc.stdout.strip() + dirty


def code_revision() -> str:
    parts = [f"gpubench-audit {runner.__version__}", f"runner-src sha256:{source_sha256()[:16]}"]
    git = git_describe()
    if git:
        parts.append(f"git {git}")
    return "; ".join(parts)


def _revision(files: list[Path]) -> str:
    """One file's `sha256:` hash; several files' the hash of their `sha256sum` listing in
    name order (revision-kinds.json, `hash`)."""
    if len(files) == 1:
        return "sha256:" + file_sha256(files[0])
    listing = "".join(f"{file_sha256(p)}  {p.name}\n" for p in sorted(files))
    return "sha256:" + hashlib.sha256(listing.encode("utf-8")).hexdigest()


def model_revisions(model_dir: Path) -> dict[str, str]:
    """Revision kind -> the revision of the files it names in MODEL_DIR (kinds whose files
    are absent are left out; the weights and the tokenizer must be there)."""
    spec = schemas.data("revision_kinds")["kinds"]
    names = {p.name: p for p in model_dir.iterdir() if p.is_file()}
    out: dict[str, str] = {}
    for kind, k in spec.items():
        chosen = [names[n] for n in k["files"] if n in names]
        if not chosen and k.get("shards"):
            rx = re.compile(k["shards"])
            chosen = [p for n, p in sorted(names.items()) if rx.match(n)]
        if not chosen:
            chosen = [names[n] for n in k.get("trained_files") or () if n in names]
            if len(chosen) > 1:  # the auditor could not tell which one ran (A0106)
                raise RunnerError(
                    f"workload: {model_dir} holds several weights files "
                    f"({', '.join(p.name for p in chosen)}); keep one"
                )
        if chosen:
            out[kind] = _revision(chosen)
        elif k["required"]:
            raise RunnerError(
                f"workload: {model_dir} holds none of the files revision kind "
                f"{kind!r} names ({', '.join(k['files'])}): nothing to pin"
            )
    return out


RECIPE = "recipe.json"
TRAIN_IDS = "corpus/splits/train_ids.txt"


def write_recipe(
    root: Path,
    model_dir: Path,
    *,
    code: str,
    seed: int,
    workload: str,
    options: dict[str, Any],
    context: int,
    corpus: str,
) -> Path:
    """`model/recipe.json` of a workload trained at run time (schemas/recipe.schema.json),
    written after the train split's ID list (`TRAIN_IDS` under ROOT), whose hash it states."""
    doc = {
        "kind": "trained-at-run-time/1",
        "code": code,
        "seed": seed,
        "workload": workload,
        "options": options,
        "context": context,
        "training_inputs": {
            "corpus": corpus,
            "split": "train",
            "ids_file": TRAIN_IDS,
            "ids_sha256": file_sha256(root / TRAIN_IDS),
        },
    }
    path = model_dir / RECIPE
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
