"""What every protocol package shares, so that no two protocols disagree on it: the cache of
derived facts per view, a reader's fault as a finding, the CSV faults frame and its findings,
and the three checks of a sealed run dir (a file's hash, an unlisted file, a listed file
gone), which only read the manifest's `artifacts` and the run-dir walk.

A protocol's view only needs `manifest` (with `artifacts`), `files_on_disk` and, for the CSV
helpers, a faults frame built by `faults_frame`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping
from functools import wraps
from typing import Any, TypeVar

import polars as pl

from auditor.model import Finding
from auditor.readers.base import Fault
from auditor.rule import Rule
from auditor.rundir import UNHASHED

V = TypeVar("V")
T = TypeVar("T")

MANIFEST = "manifest.json"


def per_view(fn: Callable[[V], T]) -> Callable[[V], T]:
    """Compute FN once per view; the result lives as long as the view (a weak key), so a
    long benchmark or a server does not keep old runs' frames alive."""
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @wraps(fn)
    def wrapper(view: V) -> T:
        if view not in cache:
            cache[view] = fn(view)
        return cache[view]

    wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
    return wrapper


def fault_finding(fault: Fault, code: str, ref: str) -> Finding:
    """A reader's fault as a finding of the loader's rule CODE, cited under protocol rule REF,
    with the file and its line, column or JSON pointer."""
    evidence = {} if fault.value is None else {"observed": fault.value}
    return Finding(code=code, severity=fault.severity, protocol_ref=ref, message=fault.message,
                   artifact=fault.file, row=fault.row, line=fault.line, column=fault.column,
                   pointer=fault.pointer, evidence=evidence)


_FAULTS_SCHEMA = {"kind": pl.String, "severity": pl.String, "row": pl.Int64, "line": pl.Int64,
                  "column": pl.String, "value": pl.String, "message": pl.String,
                  "file": pl.String}


def faults_frame(faults: tuple[Fault, ...] | list[Fault]) -> pl.DataFrame:
    """CSV faults as the frame the CSV rules read (`column` is the CSV column's name, `file`
    the table it is in)."""
    return pl.DataFrame(
        [{"kind": f.kind, "severity": f.severity, "row": f.row, "line": f.line,
          "column": f.field, "value": f.value, "message": f.message, "file": f.file}
         for f in faults], schema=_FAULTS_SCHEMA, orient="row")


def csv_fault_findings(rule: Rule, faults: pl.DataFrame, kinds: tuple[str, ...], expected: str,
                       column_refs: Mapping[str, str] | None = None) -> Iterator[Finding]:
    """Findings of RULE for the CSV faults of KINDS (each in its own file); with COLUMN_REFS,
    each under the protocol rule its column serves, the most specific one."""
    f = faults.filter(pl.col("kind").is_in(list(kinds))).sort("file", "line", "column")
    for r in f.iter_rows(named=True):
        named = {"field": r["column"]} if r["column"] else {}
        ref = (column_refs or {}).get(r["column"]) if r["column"] else None
        yield rule.finding(r["message"], artifact=r["file"], row=r["row"], line=r["line"],
                           observed=r["value"], expected=expected, severity=r["severity"],
                           protocol_ref=ref, **named)


# -- the sealed run dir: the manifest's `artifacts` against the files on disk ---------------

def hash_mismatches(rule: Rule, view: Any) -> Iterator[Finding]:
    """A finding per listed file whose SHA-256 on disk differs from the manifest's (a file
    too large to hash is the loader's finding, not this one)."""
    listed = view.manifest["artifacts"]
    for rel in sorted(listed):
        actual = view.files_on_disk.get(rel)
        if actual is not None and actual != UNHASHED and actual != listed[rel]:
            yield rule.finding(f"{rel} changed after the manifest was written (SHA-256 differs)",
                               artifact=rel, observed=actual, expected=listed[rel],
                               manifest=MANIFEST)


def unlisted_files(rule: Rule, view: Any) -> Iterator[Finding]:
    """A finding per file of the run dir (other than the manifest) the manifest does not
    list."""
    listed = view.manifest["artifacts"]
    for rel in sorted(view.files_on_disk):
        if rel != MANIFEST and rel not in listed:
            yield rule.finding(f"{rel} is in the run dir but not in the manifest's artifacts",
                               artifact=rel, observed="unlisted", expected="listed with its "
                               "SHA-256 in manifest.json")


def listed_missing(rule: Rule, view: Any) -> Iterator[Finding]:
    """A finding (missing evidence) per file the manifest lists that is not in the run
    dir."""
    for rel in sorted(view.manifest["artifacts"]):
        if rel not in view.files_on_disk:
            yield rule.finding(f"{rel} is listed in the manifest but not in the run dir",
                               artifact=rel, missing_evidence=True,
                               observed="absent", expected="present", manifest=MANIFEST)
