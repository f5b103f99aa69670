"""What every protocol's loader does around its readers, driven by the protocol's artifact
table (`Artifact` rows, `auditor/protocols/<p>/artifacts.py`): each single-file artifact is
handed to the reader its row names and checked against the schema its row names, a reader's
fault becomes a finding (the protocol's "artifact malformed" code, under the protocol rule
the row names), and the kinds that loaded well (`available`), those with no file (`absent`)
and why a kind is not available (`reason`) are kept. A protocol's `view.py` subclasses
`Loader` and adds only its special cases: folders of per-pass or per-trial files, files a
manifest names, documents whose content needs more than its schema."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import polars as pl

import schemas
from auditor.model import Finding
from auditor.readers import csv_table, id_list, json_doc, jsonl_id_label, jsonl_records
from auditor.readers.base import Fault
from auditor.rundir import RunFiles

MANIFEST = "manifest.json"


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
    special: bool = False
    """Loaded by the protocol's view, not by the table: its path is named by the manifest
    (an offers file, an inputs file) or its content needs more than its reader."""
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Keyword options of its reader (`surely_valid`: a fast check of a plain line)."""

    @property
    def is_folder(self) -> bool:
        """One file per pass, trial or policy under `path`: the view's special case."""
        return self.path.endswith("/")


@dataclass(frozen=True)
class Table:
    """A CSV artifact as the loader keeps it."""

    raw: pl.DataFrame | None
    """Every cell as written (strings), with `row` and `line`; None when absent."""
    typed: pl.DataFrame | None
    """Typed per its table schema; None when absent or with format errors."""
    faults: pl.DataFrame
    """Its format faults (`faults_frame`)."""


def fault_finding(fault: Fault, code: str, ref: str) -> Finding:
    """A reader's fault as a finding of the loader's rule CODE, cited under protocol rule REF,
    with the file and its line, column or JSON pointer."""
    evidence = {} if fault.value is None else {"observed": fault.value}
    return Finding(
        code=code,
        severity=fault.severity,
        protocol_ref=ref,
        message=fault.message,
        artifact=fault.file,
        row=fault.row,
        line=fault.line,
        column=fault.column,
        pointer=fault.pointer,
        evidence=evidence,
    )


_FAULTS_SCHEMA = {
    "kind": pl.String,
    "severity": pl.String,
    "row": pl.Int64,
    "line": pl.Int64,
    "column": pl.String,
    "value": pl.String,
    "message": pl.String,
    "file": pl.String,
}


def faults_frame(faults: tuple[Fault, ...] | list[Fault]) -> pl.DataFrame:
    """CSV faults as the frame the CSV rules read (`column` is the CSV column's name, `file`
    the table it is in)."""
    return pl.DataFrame(
        [
            {
                "kind": f.kind,
                "severity": f.severity,
                "row": f.row,
                "line": f.line,
                "column": f.field,
                "value": f.value,
                "message": f.message,
                "file": f.file,
            }
            for f in faults
        ],
        schema=_FAULTS_SCHEMA,
        orient="row",
    )


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
        self.findings.append(
            fault_finding(fault, code or self.malformed_code, ref or self.ref_for(fault))
        )

    def bad(self, kind: str, why: str) -> None:
        self.reason.setdefault(kind, why)

    def doc(
        self, rel: str, kind: str, schema: str, code: str | None = None, ref: str | None = None
    ) -> dict | None:
        """One JSON document that parses and matches its schema, else None (and findings)."""
        read = json_doc.read(self.data[rel], name=rel, schema=schema)
        for f in read.faults:
            self.report(f, code, ref)
        if read.errors or not isinstance(read.value, dict):
            self.bad(
                kind,
                f"{rel} is not valid JSON"
                if read.value is None
                else f"{rel} does not match its schema",
            )
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

    def read_manifest(
        self, schema: str, code: str, ref_of: Callable[[str | None], str], label: str
    ) -> dict | None:
        """manifest.json against SCHEMA, each fault a CODE finding under the protocol rule
        REF_OF its pointer names. A manifest that breaks its schema is kept for the run's
        identity in the report, never made `available` to the rules."""
        if MANIFEST not in self.data:
            self.absent.add("manifest")
            return None
        read = json_doc.read(self.data[MANIFEST], name=MANIFEST, schema=schema, label=label)
        for f in read.faults:
            self.report(f, code, ref_of(declaration_pointer(f)))
        if read.value is None:
            self.bad("manifest", f"{MANIFEST} is not valid JSON")
            return None
        if read.errors:
            self.bad("manifest", f"{MANIFEST} does not match its schema")
            return read.value if isinstance(read.value, dict) else None
        self.available.add("manifest")
        return read.value

    # -- the artifact table's single files, each by the reader its row names ---------------
    def load_artifacts(self, artifacts: Iterable[Artifact]) -> dict[str, Any]:
        """Every single-file artifact of ARTIFACTS (not the manifest, not a folder) whose
        reader has a handler below: kind -> what it loaded (None when absent or malformed:
        `absent` and `reason` say which)."""
        out: dict[str, Any] = {}
        for a in artifacts:
            if a.is_folder or a.special or a.path == MANIFEST or a.reader not in _HANDLERS:
                continue
            out[a.kind] = _HANDLERS[a.reader](self, a)
        return out

    def _absent(self, a: Artifact) -> bool:
        """True (and recorded when the protocol requires it) when A's file is not there."""
        if a.path in self.data:
            return False
        if a.required:
            self.absent.add(a.kind)
        return True

    def _json_doc(self, a: Artifact) -> dict | None:
        return (
            None
            if self._absent(a)
            else self.load_doc(a.path, a.kind, a.schema or "", required=a.required)
        )

    def _csv_table(self, a: Artifact) -> Table:
        if self._absent(a):
            return Table(None, None, faults_frame(()))
        read = csv_table.read(
            self.data[a.path], name=a.path, table=schemas.table(a.schema or a.kind)
        )
        table = read.value
        assert table is not None  # the CSV reader always returns a Table
        if table.typed is None or read.errors:
            self.bad(a.kind, f"{a.path} has format errors (see its CSV findings)")
            return Table(table.raw, None, faults_frame(read.faults))
        self.available.add(a.kind)
        return Table(table.raw, table.typed, faults_frame(read.faults))

    def _jsonl_id_label(self, a: Artifact) -> pl.DataFrame | None:
        if self._absent(a):
            return None
        df = jsonl_id_label.decode_id_label_lines(self.data[a.path], a.schema or "")
        bad = df.filter(~pl.col("valid")).head(20)
        for line, err in zip(bad["line"], bad["error"], strict=True):
            self.report(
                Fault(a.path, f"bad line: {err}", line=line, kind="schema"), ref=a.ref or None
            )
        if bad.height:
            self.bad(a.kind, f"{a.path} has malformed lines")
            return None
        self.available.add(a.kind)
        return df.select("line", "id", "label")

    def _jsonl_records(self, a: Artifact) -> list[tuple[int, Any]] | None:
        if self._absent(a):
            return None
        read = jsonl_records.read(
            self.data[a.path],
            name=a.path,
            schema=a.schema or "",
            label=(a.schema or "").replace("_", "-"),
            **a.options,
        )
        for f in read.faults:
            self.report(f, ref=a.ref or None)
        if read.value is None or read.errors:
            self.bad(
                a.kind,
                f"{a.path} has malformed lines"
                if read.value is not None
                else f"{a.path} is not valid UTF-8",
            )
            return None
        self.available.add(a.kind)
        return list(read.value)

    def _id_list(self, a: Artifact) -> pl.DataFrame | None:
        return None if self._absent(a) else self.load_id_list(a.path, a.kind)

    def load_id_list(self, rel: str, kind: str) -> pl.DataFrame | None:
        """The ID list at REL (`line`, `id`), its faults reported."""
        if rel not in self.data:
            self.absent.add(kind)
            return None
        read = id_list.read(self.data[rel], name=rel)
        for f in read.faults:
            self.report(f)
        if read.value is None:
            self.bad(kind, f"{rel} is not valid UTF-8")
            return None
        self.available.add(kind)
        return read.value

    def unavailable(self) -> Mapping[str, str]:
        """Why each kind that is not available is not (absent ones included)."""
        for kind in self.absent:
            self.reason.setdefault(kind, f"no {kind} artifact in the run dir")
        return MappingProxyType({k: v for k, v in self.reason.items() if k not in self.available})


_HANDLERS: dict[str, Callable[[Loader, Artifact], Any]] = {
    "json_doc": Loader._json_doc,
    "csv_table": Loader._csv_table,
    "jsonl_id_label": Loader._jsonl_id_label,
    "jsonl_records": Loader._jsonl_records,
    "id_list": Loader._id_list,
}
"""The artifact table's `reader` -> how the loader reads such a file."""


def declaration_pointer(fault: Fault) -> str | None:
    """Where the declaration a manifest fault is about sits: its pointer, or for a missing
    property (`field`) the pointer it would have had, so that an undeclared
    `/corpus/truncation` is about A3.3, not about `/corpus`."""
    if fault.kind != "schema" or not fault.field:
        return fault.pointer
    return f"{fault.pointer or ''}/{fault.field.replace('~', '~0').replace('/', '~1')}"
