"""What several of protocol B's mutations share: an edit of the manifest (not re-sealed: it is
not in its own hash table), a cell of trials.csv or policies.csv, a trial's energy summary, and a
run built from a changed spec, whose claims the harness computes honestly from what it then
holds. Every import from `auditor` a mutation needs is to be made here, in one place."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import b_runs as br
from mutation_modules import Mutation


def edit_manifest(root: Path, fn: Callable[[dict], None]) -> None:
    br.edit_json(root, "manifest.json", fn, seal=False)


def set_row(name: str, pid: str, k: int | None, **cells: str) -> Mutation:
    """Set CELLS of policy PID's row (trial K's in trials.csv) of the CSV NAME."""

    def m(root: Path) -> None:
        br.edit_csv(root, name, lambda rows: br.row(rows, pid, k).update(cells))

    return m


def set_energy_summary(pid: str, k: int, **fields: object) -> Mutation:
    """Set FIELDS of the runner's energy summary of PID's trial K (energy/<pid>/trial-<k>.json)."""

    def m(root: Path) -> None:
        br.edit_json(root, f"energy/{pid}/trial-{k}.json", lambda d: d.update(fields))

    return m


def build(spec: br.Spec) -> Mutation:
    """The run built from SPEC instead of the template."""

    def m(root: Path) -> None:
        shutil.rmtree(root)
        br.build(root, spec)

    return m


def synthetic_with(**policy_changes: dict) -> br.Spec:
    """The synthetic run's spec with each named policy's changes."""
    spec = br.synthetic_spec()
    for pid, changes in policy_changes.items():
        spec = br.with_policy(spec, pid, **changes)
    return spec
