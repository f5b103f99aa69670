"""What every protocol package shares, so that no two protocols disagree on it: the cache of
derived facts per view, a reader's fault as a finding, the loader's bookkeeping around its
readers (`Loader`), the CSV faults frame, its findings and the line a CSV row starts on, and
the three checks of a sealed run dir (a file's hash, an unlisted file, a listed file gone),
which only read the manifest's `artifacts` and the run-dir walk.

A protocol's view only needs `manifest` (with `artifacts`), `files_on_disk` and, for the CSV
helpers, a faults frame built by `faults_frame`.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import wraps
from types import MappingProxyType
from typing import Any, TypeVar

import polars as pl

from auditor.model import ConfigSummary, Finding, RunSummary
from auditor.readers import json_doc
from auditor.readers.base import Fault
from auditor.rule import Rule
from auditor.rundir import UNHASHED, RunFiles


@dataclass(frozen=True)
class Artifact:
    """One row of a protocol's artifact table: what its loader reads, its required artifacts
    rule checks and its documentation lists."""

    kind: str
    """The key rules name in `requires` and the view lists in `available`."""
    path: str
    """The file, or the folder (ending in `/`) holding one file per pass, trial or policy."""
    reader: str
    """The module of `auditor.readers` that parses it."""
    schema: str | None
    """Its schema kind in `schemas/` (a JSON Schema, or the CSV's table schema)."""
    required: bool
    """Required by the protocol (some only when the manifest names them)."""
    what: str
    ref: str = ""
    """The protocol rule a fault in it is about, where the protocol says per artifact."""


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
                           protocol_ref=ref, evidence=named)


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
                               evidence={"manifest": MANIFEST})


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
                               observed="absent", expected="present",
                               evidence={"manifest": MANIFEST})


# -- what every protocol's loader does around its readers ---------------------------------------

class Loader:
    """The bookkeeping of loading a run dir into a view: findings from reader faults (the
    protocol's "artifact malformed" code, under the protocol rule `ref_for` names), the
    artifact kinds that loaded well (`available`), those with no file (`absent`) and why a
    kind is not available (`reason`); JSON documents and the manifest read against their
    schemas. A protocol's loader subclasses it and adds its artifacts."""

    malformed_code = "X0002"
    """The code of a reader fault in any artifact but the manifest."""

    def __init__(self, files: RunFiles) -> None:
        self.files = files
        self.data = files.data
        self.findings: list[Finding] = []
        self.available: set[str] = set()
        self.absent: set[str] = set()
        self.reason: dict[str, str] = {}
        for f in files.faults:
            self.report(f)

    def ref_for(self, fault: Fault) -> str:
        """The protocol rule a fault in FAULT's file is about."""
        raise NotImplementedError

    def report(self, fault: Fault, code: str | None = None, ref: str | None = None) -> None:
        self.findings.append(fault_finding(fault, code or self.malformed_code,
                                           ref or self.ref_for(fault)))

    def bad(self, kind: str, why: str) -> None:
        self.reason.setdefault(kind, why)

    def doc(self, rel: str, kind: str, schema: str, code: str | None = None,
            ref: str | None = None) -> dict | None:
        """One JSON document that parses and matches its schema, else None (and findings)."""
        read = json_doc.read(self.data[rel], name=rel, schema=schema)
        for f in read.faults:
            self.report(f, code, ref)
        if read.errors or not isinstance(read.value, dict):
            self.bad(kind, f"{rel} is not valid JSON" if read.value is None
                     else f"{rel} does not match its schema")
            return None
        return read.value

    def load_doc(self, rel: str, kind: str, schema: str, required: bool = True) -> dict | None:
        """The document at REL (absent: recorded when REQUIRED)."""
        if rel not in self.data:
            if required:
                self.absent.add(kind)
            return None
        doc = self.doc(rel, kind, schema)
        if doc is not None:
            self.available.add(kind)
        return doc

    def load_manifest(self, schema: str, code: str, ref_of: Callable[[str | None], str],
                      label: str) -> dict | None:
        """manifest.json against SCHEMA, each fault a CODE finding under the protocol rule
        REF_OF its pointer names. A manifest that breaks its schema is kept for the run's
        identity in the report, never made `available` to the rules."""
        if MANIFEST not in self.data:
            self.absent.add("manifest")
            return None
        read = json_doc.read(self.data[MANIFEST], name=MANIFEST, schema=schema, label=label)
        for f in read.faults:
            self.report(f, code, ref_of(f.pointer))
        if read.value is None:
            self.bad("manifest", f"{MANIFEST} is not valid JSON")
            return None
        if read.errors:
            self.bad("manifest", f"{MANIFEST} does not match its schema")
            return read.value if isinstance(read.value, dict) else None
        self.available.add("manifest")
        return read.value

    def unavailable(self) -> Mapping[str, str]:
        """Why each kind that is not available is not (absent ones included)."""
        for kind in self.absent:
            self.reason.setdefault(kind, f"no {kind} artifact in the run dir")
        return MappingProxyType({k: v for k, v in self.reason.items()
                                 if k not in self.available})


def with_csv_line(f: Finding, raw: pl.DataFrame | None) -> Finding:
    """F, a finding on a CSV row, with the physical line where the row starts (from the
    table's raw frame, `row` and `line` columns): SARIF and GitHub annotations point at
    lines."""
    if raw is None or f.row is None or f.line is not None or "line" not in raw.columns \
            or not 1 <= f.row <= raw.height:
        return f
    line = raw.get_column("line")[f.row - 1]
    return dataclasses.replace(f, line=int(line)) if line is not None else f


def manifest_findings(rule: Rule, view: Any) -> Iterator[Finding]:
    """The manifest rule's findings: no manifest at all (missing evidence), then every fault
    the loader found in it under RULE's code."""
    if "manifest" in view.absent:
        yield rule.finding("the run dir has no manifest.json: nothing was declared before "
                           "measuring and no file hash can be checked", artifact=MANIFEST,
                           missing_evidence=True)
    yield from (f for f in view.load_findings if f.code == rule.code)


def summary_of(view: Any, result: Any, configs: Iterable[ConfigSummary]) -> RunSummary:
    """The RunSummary of an audited run whose configurations the protocol summarised."""
    first_error = next((f for f in result.findings if f.severity == "error"), None)
    return RunSummary(
        run_dir=result.run_dir, manifest_sha256=view.files_on_disk.get(MANIFEST),
        protocol=result.protocol, experiment_id=result.experiment_id, verdict=result.verdict,
        counts=tuple(result.counts().items()), configurations=tuple(configs),
        main_reason=first_error.message if first_error else None)
