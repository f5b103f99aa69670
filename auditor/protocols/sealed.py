"""The checks every protocol makes of a sealed run dir and of its CSVs, which only read the
manifest's `artifacts`, the run-dir walk and the CSV faults frame: a file's hash, an
unlisted file, a listed file gone, the manifest's own faults, the CSV faults of some kinds,
and the physical line a CSV row starts on. A protocol's rule module calls one of these with
itself; the view only needs `manifest` (with `artifacts`), `files_on_disk`, `absent`,
`load_findings` and, for the CSV helpers, a faults frame built by `loader.faults_frame`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import polars as pl

from auditor.model import Finding
from auditor.rule import Rule
from auditor.rundir import UNHASHED

MANIFEST = "manifest.json"


def matches_manifest(view: Any) -> bool | None:
    """Whether the run dir holds exactly the files its manifest lists, each with the listed
    SHA-256 (what the three checks below find no fault with); None when there is no readable
    list to match (no manifest, or its `artifacts` unreadable). An archive tells the genuine
    run from a copy that shares its manifest by this."""
    manifest = view.manifest if isinstance(view.manifest, Mapping) else None
    listed = manifest.get("artifacts") if manifest is not None else None
    if not isinstance(listed, Mapping):
        return None
    on_disk = {rel: h for rel, h in view.files_on_disk.items() if rel != MANIFEST}
    return (
        set(on_disk) == set(listed)
        and UNHASHED not in on_disk.values()
        and all(on_disk[rel] == listed[rel] for rel in listed)
    )


def hash_mismatches(rule: Rule, view: Any) -> Iterator[Finding]:
    """A finding per listed file whose SHA-256 on disk differs from the manifest's (a file
    too large to hash is the loader's finding, not this one)."""
    listed = view.manifest["artifacts"]
    for rel in sorted(listed):
        actual = view.files_on_disk.get(rel)
        if actual is not None and actual != UNHASHED and actual != listed[rel]:
            yield rule.finding(
                f"{rel} changed after the manifest was written (SHA-256 differs)",
                artifact=rel,
                observed=actual,
                expected=listed[rel],
                evidence={"manifest": MANIFEST},
            )


def unlisted_files(rule: Rule, view: Any) -> Iterator[Finding]:
    """A finding per file of the run dir (other than the manifest) the manifest does not
    list."""
    listed = view.manifest["artifacts"]
    for rel in sorted(view.files_on_disk):
        if rel != MANIFEST and rel not in listed:
            yield rule.finding(
                f"{rel} is in the run dir but not in the manifest's artifacts",
                artifact=rel,
                observed="unlisted",
                expected="listed with its SHA-256 in manifest.json",
            )


def listed_missing(rule: Rule, view: Any) -> Iterator[Finding]:
    """A finding (missing evidence) per file the manifest lists that is not in the run
    dir."""
    for rel in sorted(view.manifest["artifacts"]):
        if rel not in view.files_on_disk:
            yield rule.finding(
                f"{rel} is listed in the manifest but not in the run dir",
                artifact=rel,
                missing_evidence=True,
                observed="absent",
                expected="present",
                evidence={"manifest": MANIFEST},
            )


def csv_fault_findings(
    rule: Rule,
    faults: pl.DataFrame,
    kinds: tuple[str, ...],
    expected: str,
    column_refs: Mapping[str, str] | None = None,
) -> Iterator[Finding]:
    """Findings of RULE for the CSV faults of KINDS (each in its own file); with COLUMN_REFS,
    each under the protocol rule its column serves, the most specific one."""
    if not faults.height:  # the usual clean table: no query at all (seven rules ask)
        return
    f = faults.filter(pl.col("kind").is_in(list(kinds))).sort("file", "line", "column")
    for r in f.iter_rows(named=True):
        named = {"field": r["column"]} if r["column"] else {}
        ref = (column_refs or {}).get(r["column"]) if r["column"] else None
        yield rule.finding(
            r["message"],
            artifact=r["file"],
            row=r["row"],
            line=r["line"],
            observed=r["value"],
            expected=expected,
            severity=r["severity"],
            protocol_ref=ref,
            evidence=named,
        )


def with_csv_line(f: Finding, raw: pl.DataFrame | None) -> Finding:
    """F, a finding on a CSV row, with the physical line where the row starts (from the
    table's raw frame, `row` and `line` columns): SARIF and GitHub annotations point at
    lines."""
    if (
        raw is None
        or f.row is None
        or f.line is not None
        or "line" not in raw.columns
        or not 1 <= f.row <= raw.height
    ):
        return f
    line = raw.get_column("line")[f.row - 1]
    return dataclasses.replace(f, line=int(line)) if line is not None else f


def manifest_findings(rule: Rule, view: Any) -> Iterator[Finding]:
    """The manifest rule's findings: no manifest at all (missing evidence), then every fault
    the loader found in it under RULE's code."""
    if "manifest" in view.absent:
        yield rule.finding(
            "the run dir has no manifest.json: nothing was declared before "
            "measuring and no file hash can be checked",
            artifact=MANIFEST,
            missing_evidence=True,
        )
    yield from (f for f in view.load_findings if f.code == rule.code)
