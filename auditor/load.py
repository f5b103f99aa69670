"""Load a run directory once into one immutable view (`RunView`) that every rule reads.

Each file is read once (on a few threads): its bytes are hashed (manifest integrity) and, when
it is an artifact of the run, the same bytes are parsed. Tabular artifacts become polars
frames. The outputs, possibly millions of lines, are decoded vectorized: a byte gate (polars
literal counts, all files at once) picks the files whose every line has a string `id` and
`label`, those are parsed together by one multi-threaded `pl.read_ndjson` call, and only a
file that fails (or spoils that call) goes line by line, so a bad line is pinpointed. JSON
documents are validated with `schemas.validator(kind)`. Nothing here raises on bad input: a
fault becomes a `Finding` with the file and the line or JSON pointer, and the artifact kind is
left out of `available`, so the rules that need it are skipped with the reason.

Finding codes the loader emits (documented by their rule modules): A0001 (manifest), A0002
(another artifact malformed). The CSV's format faults are kept as data (`results_faults`)
and reported by the A08xx rules.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import polars as pl

import schemas
from auditor.errors import AuditorError
from auditor.fsutil import sha256_file
from auditor.model import Finding

MANIFEST = "manifest.json"
EXPECTED = "corpus/expected_ids.txt"
REFERENCES = "corpus/references.jsonl"
SPLITS = {"train": "corpus/splits/train_ids.txt", "tune": "corpus/splits/tune_ids.txt"}
RESULTS = "resultats-bruts.csv"
TIMELINE = "timeline.jsonl"
ENVIRONMENT = "environment.json"
OFFERS = "economics/offers.json"
SET_CHECK = "checks/set-check.json"

PASS_FILE = re.compile(
    r"^(?P<variant>[A-Za-z0-9._-]+)/(?P<phase>cold|warm)-(?P<run>[1-9][0-9]*)\.(?P<ext>jsonl|json)$")

PassKey = tuple[str, str, int]

#: Files under these prefixes may be parsed, so their bytes are kept after hashing; any other
#: file is kept only up to this size (a custom offers file, say), else hashed in chunks.
_PARSED_PREFIXES = ("outputs/", "corpus/", "traces/", "evidence/", "checks/", "economics/")
_KEEP_BYTES = 8 << 20

_ID_LABEL = pl.Struct({"id": pl.String, "label": pl.String})

#: Kinds of artifact; `Rule.requires` names them. Required ones missing make the run incomplete.
REQUIRED_KINDS = ("manifest", "results", "expected_ids", "references", "outputs", "timeline",
                  "environment", "set_check", "splits", "memory_traces", "placement")


@dataclass(frozen=True, eq=False)
class RunView:
    """The one immutable view of a run dir. Frames are never mutated by rules (polars frames
    are values: every operation returns a new frame). Identity-hashed, so derived tables can
    be cached per view."""

    root: Path
    manifest: dict | None
    """manifest.json parsed; None when absent or not JSON (schema faults: see load_findings)."""
    results: pl.DataFrame | None
    """resultats-bruts.csv typed per its table schema, plus `row` (1-based data row) and
    `line` (physical line where the record starts). None when the CSV is structurally broken."""
    results_raw: pl.DataFrame | None
    """The same rows as strings, exactly as in the file (for A8 format rules)."""
    results_faults: pl.DataFrame
    """CSV format faults: `kind`, `row`, `line`, `column`, `value`, `message`."""
    expected_ids: pl.DataFrame | None
    """`line`, `id` from corpus/expected_ids.txt (duplicates kept)."""
    references: pl.DataFrame | None
    """`line`, `id`, `label`."""
    outputs: pl.DataFrame | None
    """All output lines: `variant_id`, `phase`, `run_index`, `file`, `file_no` (the file's
    row in `output_index`; lines are in file, then line order), `line`, `id`, `label`,
    `valid` (parses and matches the line schema), `error` (why not)."""
    output_files: tuple[str, ...]
    """Every output file (empty ones included), relative paths."""
    output_index: pl.DataFrame
    """One row per output file: `variant_id`, `phase`, `run_index`, `file`."""
    timeline: pl.DataFrame | None
    memory_traces: Mapping[PassKey, dict]
    memory_trace_files: Mapping[PassKey, str]
    placement: Mapping[PassKey, dict]
    placement_files: Mapping[PassKey, str]
    environment: dict | None
    offers: dict | None
    offers_path: str
    set_check: dict | None
    splits: Mapping[str, pl.DataFrame]
    files_on_disk: Mapping[str, str]
    """Relative path -> sha256 of every file under the run dir."""
    load_findings: tuple[Finding, ...]
    available: frozenset[str]
    """Artifact kinds that loaded well (what `Rule.requires` names)."""
    absent: frozenset[str] = field(default_factory=frozenset)
    """Required artifact kinds with no file at all."""
    unavailable_reason: Mapping[str, str] = field(default_factory=dict)
    """Why a kind is not available (absent or malformed, naming the file)."""

    @property
    def classes(self) -> tuple[str, ...]:
        m = self.manifest or {}
        return tuple((m.get("task") or {}).get("classes") or ())


def load_run(run_dir: Path) -> RunView:
    """Read RUN_DIR once into a `RunView`. Raises `AuditorError` only when RUN_DIR itself is
    not a directory; every fault inside it becomes a finding."""
    root = Path(run_dir)
    if not root.is_dir():
        raise AuditorError(f"{run_dir}: not a directory")
    return _Loader(root).load()


class _Loader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.findings: list[Finding] = []
        self.available: set[str] = set()
        self.absent: set[str] = set()
        self.reason: dict[str, str] = {}
        self.data: dict[str, bytes] = {}
        self.hashes: dict[str, str] = {}

    # -- helpers -------------------------------------------------------------------------
    def fault(self, code: str, ref: str, message: str, artifact: str, location: str | None,
              **evidence: Any) -> None:
        self.findings.append(Finding(code=code, severity="error", protocol_ref=ref,
                                     message=message, artifact=artifact, location=location,
                                     evidence=evidence))

    def bad(self, kind: str, why: str) -> None:
        self.reason.setdefault(kind, why)

    def read_all(self) -> None:
        """Hash every file; keep the bytes of those an artifact may be parsed from. Other
        large files (model weights) are hashed in chunks, never held in memory. Files are
        read and hashed on a few threads (both release the GIL), each read exactly once:
        the bytes hashed are the bytes parsed."""
        files: list[tuple[str, Path]] = []
        for p in sorted(self.root.rglob("*")):
            rel = p.relative_to(self.root).as_posix()
            if p.is_symlink():
                self.fault("A0002", "A1.4", "a symbolic link: run dir files must be plain files",
                           rel, None)
                continue
            if p.is_file():
                files.append((rel, p))
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            read = list(pool.map(_read_and_hash, files))
        for (rel, _), (data, digest, error) in zip(files, read, strict=True):
            if error is not None:
                self.fault("A0002", "A1.4", f"cannot read the file: {error}", rel, None)
                continue
            if data is not None:
                self.data[rel] = data
            self.hashes[rel] = digest

    def text(self, rel: str, kind: str) -> str | None:
        b = self.data.get(rel)
        if b is None:
            return None
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = b.count(b"\n", 0, exc.start) + 1
            code, ref = ("A0001", "A10.1") if rel == MANIFEST else ("A0002", "A1.4")
            self.fault(code, ref, f"not valid UTF-8 (byte {exc.start})", rel, f"line {line}",
                       observed=repr(b[exc.start:exc.start + 4]), expected="UTF-8")
            self.bad(kind, f"{rel} is not valid UTF-8")
            return None

    def json_doc(self, rel: str, kind: str, schema_kind: str, code: str = "A0002",
                 ref: str = "A1.4") -> dict | None:
        """Parse and validate one JSON document; None (and findings) when it is not valid."""
        text = self.text(rel, kind)
        if text is None:
            return None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            self.fault(code, ref, f"not valid JSON: {exc.msg}", rel, f"line {exc.lineno}",
                       column=exc.colno)
            self.bad(kind, f"{rel} is not valid JSON")
            return None
        errors = sorted(schemas.validator(schema_kind).iter_errors(doc),
                        key=lambda e: list(map(str, e.absolute_path)))
        for e in errors[:20]:
            self.fault(code, ref, f"does not match {schema_kind} schema: {e.message}", rel,
                       _pointer(e.absolute_path), observed=_short(e.instance),
                       expected=_short({e.validator: e.validator_value}))
        if errors:
            self.bad(kind, f"{rel} does not match its schema")
            return None
        return doc

    # -- the artifacts -------------------------------------------------------------------
    def load(self) -> RunView:
        self.read_all()
        manifest = self.load_manifest()
        expected = self.load_id_list(EXPECTED, "expected_ids")
        splits: dict[str, pl.DataFrame] = {}
        for name, rel in SPLITS.items():
            df = self.load_id_list(rel, "splits")
            if df is not None:
                splits[name] = df
        if len(splits) < 2:  # both lists are needed; one absent or malformed: neither counts
            self.available.discard("splits")
        references = self.load_references()
        results_raw, results, faults = self.load_results()
        outputs, out_files, out_index = self.load_outputs()
        timeline = self.load_timeline()
        traces, trace_files = self.load_pass_docs("traces/memory/", "memory_traces",
                                                  "memory_trace")
        placement, placement_files = self.load_pass_docs("evidence/placement/", "placement",
                                                         "placement")
        environment = self.load_doc(ENVIRONMENT, "environment", "environment")
        offers_path = OFFERS
        econ = (manifest or {}).get("economics")
        if isinstance(econ, dict) and isinstance(econ.get("offers_file"), str):
            offers_path = econ["offers_file"]
        offers = self.load_doc(offers_path, "offers", "offers", required=bool(econ))
        set_check = self.load_doc(SET_CHECK, "set_check", "set_check")
        for kind in self.absent:
            self.reason.setdefault(kind, f"no {kind} artifact in the run dir")
        return RunView(
            root=self.root, manifest=manifest, results=results, results_raw=results_raw,
            results_faults=faults, expected_ids=expected, references=references,
            outputs=outputs, output_files=out_files, output_index=out_index, timeline=timeline,
            memory_traces=MappingProxyType(traces),
            memory_trace_files=MappingProxyType(trace_files),
            placement=MappingProxyType(placement),
            placement_files=MappingProxyType(placement_files), environment=environment,
            offers=offers, offers_path=offers_path, set_check=set_check,
            splits=MappingProxyType(splits), files_on_disk=MappingProxyType(self.hashes),
            load_findings=tuple(self.findings), available=frozenset(self.available),
            absent=frozenset(self.absent),
            unavailable_reason=MappingProxyType(
                {k: v for k, v in self.reason.items() if k not in self.available}),
        )

    def load_manifest(self) -> dict | None:
        if MANIFEST not in self.data:
            self.absent.add("manifest")
            return None
        text = self.text(MANIFEST, "manifest")
        if text is None:
            return None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            self.fault("A0001", "A10.1", f"not valid JSON: {exc.msg}", MANIFEST,
                       f"line {exc.lineno}", column=exc.colno)
            self.bad("manifest", f"{MANIFEST} is not valid JSON")
            return None
        errors = list(schemas.validator("manifest").iter_errors(doc))
        for e in sorted(errors, key=lambda e: list(map(str, e.absolute_path)))[:20]:
            self.fault("A0001", "A10.1", f"does not match the manifest schema: {e.message}",
                       MANIFEST, _pointer(e.absolute_path), observed=_short(e.instance))
        if errors:
            self.bad("manifest", f"{MANIFEST} does not match its schema")
            # Keep a dict for the run's identity in the report, never for the rules.
            return doc if isinstance(doc, dict) else None
        self.available.add("manifest")
        return doc

    def load_doc(self, rel: str, kind: str, schema_kind: str, required: bool = True
                 ) -> dict | None:
        if rel not in self.data:
            if required:
                self.absent.add(kind)
            return None
        doc = self.json_doc(rel, kind, schema_kind)
        if doc is not None:
            self.available.add(kind)
        return doc

    def load_id_list(self, rel: str, kind: str) -> pl.DataFrame | None:
        if rel not in self.data:
            self.absent.add(kind)
            return None
        text = self.text(rel, kind)
        if text is None:
            return None
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        self.available.add(kind)
        return pl.DataFrame({"id": pl.Series(lines, dtype=pl.String)}).with_row_index(
            "line", offset=1).with_columns(pl.col("line").cast(pl.Int64),
                                          pl.col("id").str.strip_suffix("\r"))

    def load_references(self) -> pl.DataFrame | None:
        if REFERENCES not in self.data:
            self.absent.add("references")
            return None
        df = decode_id_label_lines(self.data[REFERENCES], "reference_line")
        bad = df.filter(~pl.col("valid")).head(20)
        for line, err in zip(bad["line"], bad["error"], strict=True):
            self.fault("A0002", "A2.4", f"bad reference line: {err}", REFERENCES, f"line {line}")
        if bad.height:
            self.bad("references", f"{REFERENCES} has malformed lines")
            return None
        self.available.add("references")
        return df.select("line", "id", "label")

    def load_outputs(self) -> tuple[pl.DataFrame | None, tuple[str, ...], pl.DataFrame]:
        index: list[tuple[int, str, str, int, str]] = []
        for rel in sorted(r for r in self.data if r.startswith("outputs/")):
            m = PASS_FILE.match(rel[len("outputs/"):])
            if not m or m["ext"] != "jsonl":
                self.fault("A0002", "A1.4", "output file name is not "
                           "outputs/<variant_id>/<cold|warm>-<run_index>.jsonl", rel, None)
                continue
            index.append((len(index), m["variant"], m["phase"], int(m["run"]), rel))
        idx = pl.DataFrame(index, schema={"file_no": pl.Int64, "variant_id": pl.String,
                                          "phase": pl.String, "run_index": pl.Int64,
                                          "file": pl.String}, orient="row")
        if not index:
            self.absent.add("outputs")
            return None, (), idx.drop("file_no")
        self.available.add("outputs")
        frames = _decode_many([self.data[r[4]] for r in index], "output_line")
        # file_no is the row of `idx`: a gather (no hash join over a million lines) labels
        # each line with its pass and file.
        fno = frames["file_no"]
        outputs = frames.select(
            *[idx[c].gather(fno) for c in ("variant_id", "phase", "run_index", "file")],
            pl.col("file_no").set_sorted(), "line", "id", "label", "valid", "error")
        return outputs, tuple(r[4] for r in index), idx.drop("file_no")

    def load_timeline(self) -> pl.DataFrame | None:
        if TIMELINE not in self.data:
            self.absent.add("timeline")
            return None
        text = self.text(TIMELINE, "timeline")
        if text is None:
            return None
        rows: list[dict] = []
        ok = True
        v = schemas.validator("timeline_entry")
        # One line per pass: a few hundred at most, so validating each with jsonschema is cheap.
        for n, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                self.fault("A0002", "A6.4", f"not valid JSON: {exc.msg}", TIMELINE, f"line {n}")
                ok = False
                continue
            errs = list(v.iter_errors(obj))
            for e in errs[:3]:
                self.fault("A0002", "A6.4", f"does not match timeline-entry schema: {e.message}",
                           TIMELINE, f"line {n}{_pointer(e.absolute_path)}")
            if errs:
                ok = False
                continue
            inc = obj.get("incident") or {}
            rows.append({
                "line": n, "order_index": obj["order_index"], "variant_id": obj["variant_id"],
                "phase": obj["phase"], "run_index": obj["run_index"], "status": obj["status"],
                "started_at": obj["started_at"], "ended_at": obj["ended_at"],
                "elapsed_seconds": _num(obj.get("elapsed_seconds")),
                "load_seconds": _num(obj.get("load_seconds")), "pid": obj["pid"],
                "fresh_process": obj["fresh_process"], "iterations": obj.get("iterations"),
                "incident_kind": inc.get("kind"), "incident_message": inc.get("message"),
            })
        if not ok:
            self.bad("timeline", f"{TIMELINE} has malformed lines")
            return None
        schema = {"line": pl.Int64, "order_index": pl.Int64, "variant_id": pl.String,
                  "phase": pl.String, "run_index": pl.Int64, "status": pl.String,
                  "started_at": pl.String, "ended_at": pl.String, "elapsed_seconds": pl.Float64,
                  "load_seconds": pl.Float64, "pid": pl.Int64, "fresh_process": pl.Boolean,
                  "iterations": pl.Int64, "incident_kind": pl.String,
                  "incident_message": pl.String}
        df = pl.DataFrame(rows, schema=schema, orient="row")
        times = df.select(
            pl.col("started_at").str.to_datetime(time_zone="UTC", strict=False).alias("s"),
            pl.col("ended_at").str.to_datetime(time_zone="UTC", strict=False).alias("e"))
        bad = df.filter(times["s"].is_null() | times["e"].is_null())
        for line in bad["line"]:
            self.fault("A0002", "A6.4", "started_at/ended_at is not an ISO 8601 date-time",
                       TIMELINE, f"line {line}")
        if bad.height:
            self.bad("timeline", f"{TIMELINE} has unreadable times")
            return None
        self.available.add("timeline")
        return df.with_columns(times["s"].alias("started"), times["e"].alias("ended"))

    def load_pass_docs(self, prefix: str, kind: str, schema_kind: str
                       ) -> tuple[dict[PassKey, dict], dict[PassKey, str]]:
        docs: dict[PassKey, dict] = {}
        files: dict[PassKey, str] = {}
        rels = sorted(r for r in self.data if r.startswith(prefix))
        if not rels:
            self.absent.add(kind)
            return docs, files
        ok = True
        for rel in rels:
            m = PASS_FILE.match(rel[len(prefix):])
            if not m or m["ext"] != "json":
                self.fault("A0002", "A1.4", f"file name is not {prefix}<variant_id>/"
                           "<cold|warm>-<run_index>.json", rel, None)
                continue
            key = (m["variant"], m["phase"], int(m["run"]))
            doc = self.json_doc(rel, kind, schema_kind)
            if doc is None:
                ok = False
                continue
            said = (doc.get("variant_id"), doc.get("phase"), doc.get("run_index"))
            if said != key:
                self.fault("A0002", "A1.4", "the document names another pass than its path",
                           rel, "/variant_id", observed=list(said), expected=list(key))
                ok = False
                continue
            docs[key] = doc
            files[key] = rel
        if ok:
            self.available.add(kind)
        return docs, files

    def load_results(self) -> tuple[pl.DataFrame | None, pl.DataFrame | None, pl.DataFrame]:
        if RESULTS not in self.data:
            self.absent.add("results")
            return None, None, _faults_frame([])
        raw, typed, faults = parse_results_csv(self.data[RESULTS])
        if typed is None or any(f["severity"] == "error" for f in faults):
            self.bad("results", f"{RESULTS} has format errors (see the A08xx findings)")
            return raw, None, _faults_frame(faults)
        self.available.add("results")
        return raw, typed, _faults_frame(faults)


def _read_and_hash(item: tuple[str, Path]) -> tuple[bytes | None, str, str | None]:
    """(bytes kept for parsing or None, SHA-256 hex, None) or (None, "", the OS error)."""
    rel, p = item
    try:
        if rel.startswith(_PARSED_PREFIXES) or p.stat().st_size <= _KEEP_BYTES:
            b = p.read_bytes()
            return b, hashlib.sha256(b).hexdigest(), None
        return None, sha256_file(p), None  # large, not parsed: hashed in chunks
    except OSError as exc:
        return None, "", exc.strerror or str(exc)


# -- JSONL (id, label) lines, vectorized -------------------------------------------------

def decode_id_label_lines(data: bytes, schema_kind: str) -> pl.DataFrame:
    """Decode JSONL bytes whose lines must be objects with string `id` and `label`.

    Returns `line`, `id`, `label`, `valid`, `error`, one row per physical line (a final
    newline ends the last line; it does not start an empty one). The fast path decodes all
    lines in one polars call; lines that fail a cheap vectorized guard (required fields as
    JSON strings, non-empty, nothing else to check) are the only ones given to jsonschema,
    which writes the message. When the file has a line that is not JSON at all, or bytes that
    are not UTF-8, a per-line fallback finds exactly those lines."""
    fast = _decode_fast(data)
    if fast is not None:
        return fast
    try:
        text = data.decode("utf-8")
        bad_utf8: set[int] = set()
    except UnicodeDecodeError:
        chunks = data.split(b"\n")
        bad_utf8 = set()
        for i, c in enumerate(chunks, start=1):
            try:
                c.decode("utf-8")
            except UnicodeDecodeError:
                bad_utf8.add(i)
        text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    raw = pl.Series("raw", lines, dtype=pl.String)
    n = len(lines)
    parse_err: list[str | None] | None = None
    try:
        if bad_utf8:
            raise pl.exceptions.ComputeError("bad utf-8")
        dec = raw.str.json_decode(dtype=_ID_LABEL)
        if dec.len() != n:  # polars drops the lines when all are blank: go line by line
            raise pl.exceptions.ComputeError("json_decode changed the line count")
    except pl.exceptions.PolarsError:
        ids: list[str | None] = [None] * n
        labels: list[str | None] = [None] * n
        parse_err = [None] * n
        for i, line in enumerate(lines):  # error path only: pinpoint the bad lines
            if i + 1 in bad_utf8:
                parse_err[i] = "not valid UTF-8"
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                parse_err[i] = f"not valid JSON ({exc.msg}, column {exc.colno})"
                continue
            if not isinstance(obj, dict):
                parse_err[i] = f"not a JSON object but {type(obj).__name__}"
                continue
            idv, lab = obj.get("id"), obj.get("label")
            ids[i] = idv if isinstance(idv, str) else None
            labels[i] = lab if isinstance(lab, str) else None
        dec = pl.DataFrame({"id": pl.Series(ids, dtype=pl.String),
                            "label": pl.Series(labels, dtype=pl.String)}).to_struct("s")
    df = pl.DataFrame({"raw": raw}).with_columns(
        dec.struct.field("id").alias("id"), dec.struct.field("label").alias("label"),
        pl.Series("perr", parse_err if parse_err is not None else [None] * n, dtype=pl.String),
    ).with_row_index("line", offset=1).with_columns(pl.col("line").cast(pl.Int64))
    guard = (
        pl.col("perr").is_null()
        & pl.col("raw").str.contains(r'"id"\s*:\s*"')
        & pl.col("raw").str.contains(r'"label"\s*:\s*"')
        # one key token each: a nested or repeated key could hide a non-string value
        & (pl.col("raw").str.count_matches('"id"', literal=True) == 1)
        & (pl.col("raw").str.count_matches('"label"', literal=True) == 1)
        & (pl.col("id").str.len_chars() > 0).fill_null(False)
        & (pl.col("label").str.len_chars() > 0).fill_null(False)
        & ~pl.col("raw").str.contains('"score"', literal=True)
    )
    df = df.with_columns(guard.alias("valid"))
    suspects = df.filter(~pl.col("valid") & pl.col("perr").is_null())
    msgs: dict[int, str | None] = {}
    if suspects.height:
        v = schemas.validator(schema_kind)
        for line, s in zip(suspects["line"], suspects["raw"], strict=True):
            obj = json.loads(s)
            err = next(iter(sorted(v.iter_errors(obj), key=lambda e: e.path)), None)
            msgs[line] = None if err is None else (
                f"{err.message} at {_pointer(err.absolute_path) or '/'}")
    if msgs:
        fix = pl.DataFrame({"line": list(msgs), "serr": list(msgs.values())},
                           schema={"line": pl.Int64, "serr": pl.String})
        df = df.join(fix, on="line", how="left")
        df = df.with_columns(
            (pl.col("valid") | (pl.col("perr").is_null()
                                & pl.col("line").is_in(fix["line"].implode())
                                & pl.col("serr").is_null())).alias("valid"),
        )
    else:
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias("serr"))
    return df.select(
        "line",
        pl.when(pl.col("valid") | pl.col("perr").is_null()).then(pl.col("id")).alias("id"),
        pl.when(pl.col("valid") | pl.col("perr").is_null()).then(pl.col("label")).alias("label"),
        "valid",
        pl.when(pl.col("valid")).then(None).otherwise(
            pl.coalesce("perr", "serr", pl.lit("invalid line"))).alias("error"),
    )


def _gate(data: bytes) -> tuple[int, bool] | None:
    """(line count, has a `score` key) when DATA may take the fast path, else None. Byte
    counts gate it: one string-valued `"id"` and `"label"` key per line (written `"id": "` or
    compact `"id":"`), so a blank line, a number or a null fails the gate; a `score` must not
    be null (the parse then checks it is a number). The parse and a null/empty check follow;
    anything else goes line by line, which names the lines."""
    if not data:
        return None
    n = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    ids = data.count(b'"id": "')
    if ids != n:
        ids += data.count(b'"id":"')
    labels = data.count(b'"label": "')
    if labels != n:
        labels += data.count(b'"label":"')
    # Exactly one `"id"` and `"label"` token per line: a nested or repeated key would let a
    # non-string top-level value (which the typed parse casts to a string) slip through.
    if ids != n or labels != n or data.count(b'"id"') != n or data.count(b'"label"') != n:
        return None
    scored = b'"score"' in data
    if scored and (b'"score": null' in data or b'"score":null' in data):
        return None
    return n, scored


def _gates(blobs: list[bytes]) -> list[tuple[int, bool] | None]:
    """`_gate` of many files at once, the same counts as polars literal searches: SIMD, the
    patterns searched in parallel and off the GIL, instead of one Python scan per pattern
    and file. A file that is not UTF-8 fails the gate (the line-by-line path names the
    line)."""
    if not blobs:
        return []
    t = pl.col("t")

    def count(pattern: str) -> pl.Expr:
        return t.str.count_matches(pattern, literal=True).cast(pl.Int64)

    try:
        text = pl.Series("t", blobs, dtype=pl.Binary).cast(pl.String).to_frame()
    except pl.exceptions.ComputeError:  # some file is not UTF-8: gate it out, keep the rest
        text = pl.Series("t", [b if _is_utf8(b) else b"" for b in blobs],
                         dtype=pl.Binary).cast(pl.String).to_frame()
    df = text.with_row_index("k").with_columns(
        (count("\n") + pl.when(t.str.ends_with("\n")).then(0).otherwise(1)).alias("n"),
        count('"id": "').alias("ids"), count('"label": "').alias("labels"),
        t.str.contains('"score"', literal=True).alias("scored"))
    df = df.filter(t.str.len_bytes() > 0)
    redo = (pl.col("ids") != pl.col("n")) | (pl.col("labels") != pl.col("n"))
    if df.select(redo.any()).item():  # compact keys: counted only where the spaced ones miss
        df = df.with_columns(
            pl.when(pl.col("ids") != pl.col("n")).then(pl.col("ids") + count('"id":"'))
            .otherwise(pl.col("ids")).alias("ids"),
            pl.when(pl.col("labels") != pl.col("n")).then(pl.col("labels") + count('"label":"'))
            .otherwise(pl.col("labels")).alias("labels"))
    df = df.filter((pl.col("ids") == pl.col("n")) & (pl.col("labels") == pl.col("n")))
    # See `_gate`: one `"id"` and one `"label"` token per line, nested or repeated keys out.
    df = df.filter((count('"id"') == pl.col("n")) & (count('"label"') == pl.col("n")))
    if df.select(pl.col("scored").any()).item():
        null_score = (t.str.contains('"score": null', literal=True)
                      | t.str.contains('"score":null', literal=True))
        df = df.filter(~(pl.col("scored") & null_score))
    out: list[tuple[int, bool] | None] = [None] * len(blobs)
    for k, n, scored in df.select("k", "n", "scored").iter_rows():
        out[k] = (n, scored)
    return out


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _read_fast(data: bytes | list[bytes], n: int, scored: bool | None = None
               ) -> pl.DataFrame | None:
    """`id`, `label` of the N lines of DATA (one JSONL document, or several read in order in
    one multi-threaded `pl.read_ndjson` call, without copying them into one), or None."""
    schema = {"id": pl.String, "label": pl.String}
    if scored is None:
        scored = b'"score"' in data if isinstance(data, bytes) else True
    if scored:
        schema["score"] = pl.Float64  # a string or boolean score fails the parse
    try:  # read_ndjson rejects bad UTF-8 itself: the slow path then names the line
        # One chunk: every later join and group-by would otherwise pay for the many.
        df = pl.read_ndjson(data, schema=schema).select("id", "label").rechunk()
    except pl.exceptions.PolarsError:
        return None
    # One pass per column: a null (absent or JSON null) or empty value has length 0.
    shortest = pl.min_horizontal(pl.col("id", "label").str.len_bytes().fill_null(0).min())
    if df.height != n or not df.height or df.select(shortest).item() == 0:
        return None
    return df


def _decode_fast(data: bytes) -> pl.DataFrame | None:
    gate = _gate(data)
    df = None if gate is None else _read_fast(data, *gate)
    if df is None or gate is None:
        return None
    return df.select(
        pl.int_range(1, gate[0] + 1, dtype=pl.Int64).alias("line"), "id", "label",
        pl.lit(True).alias("valid"), pl.lit(None, dtype=pl.String).alias("error"))


def _decode_many(blobs: list[bytes], schema_kind: str) -> pl.DataFrame:
    """Decode many JSONL files at once: `file_no` (position in BLOBS), `line`, `id`, `label`,
    `valid`, `error`. Files that pass the fast gate are parsed together in one `read_ndjson`
    call (no copy into one buffer); if that call fails (a file that passed the gate does not parse),
    each of them alone, so only the faulty ones take the line-by-line path."""
    gated = list(zip(range(len(blobs)), blobs, _gates(blobs), strict=True))
    fast = [(k, b, g[0]) for k, b, g in gated if g is not None]
    slow = [k for k, _, g in gated if g is None]
    parts: list[pl.DataFrame] = []
    if fast:
        total = sum(n for _, _, n in fast)
        scored = any(g[1] for _, _, g in gated if g is not None)
        df = _read_fast([b for _, b, _ in fast], total, scored)
        if df is None:
            for k, b, _ in fast:
                one = _decode_fast(b)
                if one is None:
                    slow.append(k)
                else:
                    parts.append(one.select(pl.lit(k, dtype=pl.Int64).alias("file_no"),
                                            pl.all()))
        else:
            counts = pl.DataFrame({"file_no": [k for k, _, _ in fast],
                                   "n": [n for _, _, n in fast]},
                                  schema={"file_no": pl.Int64, "n": pl.Int64})
            where = counts.select(pl.col("file_no").repeat_by("n").explode(),
                                  pl.int_ranges(1, pl.col("n") + 1).explode().alias("line"))
            parts.append(pl.concat([where, df], how="horizontal").with_columns(
                pl.lit(True).alias("valid"), pl.lit(None, dtype=pl.String).alias("error")))
    for k in sorted(slow):
        parts.append(decode_id_label_lines(blobs[k], schema_kind).select(
            pl.lit(k, dtype=pl.Int64).alias("file_no"), pl.all()))
    if not parts:
        return pl.DataFrame(schema={"file_no": pl.Int64, "line": pl.Int64, "id": pl.String,
                                    "label": pl.String, "valid": pl.Boolean,
                                    "error": pl.String})
    return pl.concat(parts).sort("file_no", "line") if len(parts) > 1 else parts[0]


# -- resultats-bruts.csv ------------------------------------------------------------------

_INT = r"^-?[0-9]+$"
_NUM = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"
_DECIMAL_COMMA = r"^-?[0-9]+,[0-9]+$"


def read_csv_records(text: str) -> tuple[list[tuple[int, list[str]]], dict | None]:
    """RFC 4180 records of a CSV text: (start line, cells). Quoted fields may hold commas,
    doubled quotes and line breaks. Returns the records parsed before any quoting fault, and
    that fault (`line`, `message`) or None."""
    records: list[tuple[int, list[str]]] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    try:
        for cells in reader:
            records.append((start, cells))
            start = reader.line_num + 1
    except csv.Error as exc:
        return records, {"line": reader.line_num, "message": f"CSV quoting error: {exc}"}
    return records, None


def parse_results_csv(data: bytes
                      ) -> tuple[pl.DataFrame | None, pl.DataFrame | None, list[dict]]:
    """Parse resultats-bruts.csv: (raw string frame, typed frame, format faults). Faults are
    dicts with `kind` (encoding, quoting, header, cells, type, decimal_comma, empty,
    duplicate_row, line_ending), `severity`, `row`, `line`, `column`, `value`, `message`."""
    faults: list[dict] = []
    cols = list(schemas.results_columns())

    def fault(kind: str, message: str, line: int | None = None, row: int | None = None,
              column: str | None = None, value: str | None = None, severity: str = "error"
              ) -> None:
        faults.append({"kind": kind, "severity": severity, "row": row, "line": line,
                       "column": column, "value": value, "message": message})

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        fault("encoding", f"not valid UTF-8 (byte {exc.start})",
              line=data.count(b"\n", 0, exc.start) + 1, value=repr(data[exc.start:exc.start + 4]))
        return None, None, faults
    if text.startswith("\ufeff"):
        fault("encoding", "starts with a byte-order mark", line=1)
        text = text[1:]
    records, qerr = read_csv_records(text)
    if qerr:
        fault("quoting", qerr["message"], line=qerr["line"])
    # RFC 4180 ends records with CRLF; bare LF outside quoted fields is a (lenient) warning.
    # Quoted fields may hold bare line breaks: mask them, keeping offsets, before looking.
    unquoted = re.sub(r'"(?:[^"]|"")*"',
                      lambda m: m.group().replace("\r", "\x01").replace("\n", "\x02"), text)
    bare = re.search(r"(?<!\r)\n", unquoted)
    if bare:
        pos = bare.start()
        fault("line_ending", "records end with LF, not CRLF (RFC 4180)", severity="warning",
              line=unquoted.count("\n", 0, pos) + unquoted.count("\x02", 0, pos) + 1)
    if not records:
        fault("header", "the file is empty: no header row", line=1)
        return None, None, faults
    hline, header = records[0]
    if header != cols:
        first = next((i for i, (a, b) in enumerate(zip(header, cols, strict=False)) if a != b),
                     min(len(header), len(cols)))
        fault("header", f"header differs from RUN_DIR.md at column {first + 1}", line=hline,
              column=cols[first] if first < len(cols) else None,
              value=header[first] if first < len(header) else None)
        return None, None, faults
    good: list[tuple[int, int, list[str]]] = []
    for row, (line, cells) in enumerate(records[1:], start=1):
        if len(cells) != len(cols):
            what = "a cell too many" if len(cells) > len(cols) else "cells missing"
            if not cells:
                what = "an empty line"
            fault("cells", f"{len(cells)} cells instead of {len(cols)} ({what})", line=line,
                  row=row, value=str(len(cells)))
        else:
            good.append((row, line, cells))
    if qerr or any(f["kind"] == "cells" for f in faults):
        return None, None, faults
    raw = pl.DataFrame([c for _, _, c in good], schema=dict.fromkeys(cols, pl.String),
                       orient="row").with_columns(
        pl.Series("row", [r for r, _, _ in good], dtype=pl.Int64),
        pl.Series("line", [ln for _, ln, _ in good], dtype=pl.Int64))
    # Every column typed and checked in one select; rows are looked at one by one only in
    # the columns that have a fault (the error path). Per column, per row: `_e` empty where a
    # value is required, `_t` not of the type, `_r` typed but out of the allowed values.
    fields = schemas.results_table()["fields"]
    exprs: list[pl.Expr] = []
    for i, f in enumerate(fields):
        name, ftype = f["name"], f["type"]
        c = pl.col(name)
        empty = c == ""
        if ftype == "integer":
            ok, typed = c.str.contains(_INT), c.cast(pl.Int64, strict=False)
        elif ftype == "number":
            ok, typed = c.str.contains(_NUM), c.cast(pl.Float64, strict=False)
        elif ftype == "boolean":
            ok = c.is_in(["true", "false"])
            typed = pl.when(c == "true").then(True).when(c == "false").then(False)
        else:
            ok, typed = pl.lit(True), c
        if ftype != "string":
            typed = pl.when(ok).then(typed).otherwise(None)
        bad_value = pl.lit(False)
        if "enum" in f:
            bad_value = typed.is_not_null() & ~typed.is_in(f["enum"])
        if "minimum" in f:
            bad_value = bad_value | (typed.is_not_null() & (typed < f["minimum"]))
        exprs += [typed.alias(name),
                  (empty & pl.lit(not f.get("empty_allowed", False))).alias(f"_e{i}"),
                  (~empty & ~ok).alias(f"_t{i}"), bad_value.fill_null(False).alias(f"_r{i}")]
    checked = raw.select("row", "line", *exprs)
    flags = [c for c in checked.columns if c[:2] in ("_e", "_t", "_r")]
    flagged = checked.select(flags).select(pl.all().any()).row(0, named=True)
    for i, f in enumerate(fields):
        name, ftype = f["name"], f["type"]
        if not (flagged[f"_e{i}"] or flagged[f"_t{i}"] or flagged[f"_r{i}"]):
            continue
        rows = checked.select("row", "line", f"_e{i}", f"_t{i}", f"_r{i}").with_columns(
            raw[name].alias("value"), raw[name].str.contains(_DECIMAL_COMMA).alias("comma"))
        for r in rows.filter(pl.col(f"_e{i}")).iter_rows(named=True):
            fault("empty", f"{name} is empty where a value is required (empty means "
                  "not recorded)", line=r["line"], row=r["row"], column=name, value="")
        for r in rows.filter(pl.col(f"_t{i}")).iter_rows(named=True):
            if r["comma"] and ftype == "number":
                fault("decimal_comma", f"{name} uses a decimal comma; the protocol requires a "
                      "decimal point", line=r["line"], row=r["row"], column=name,
                      value=r["value"])
            else:
                fault("type", f"{name} is not a valid {ftype}", line=r["line"], row=r["row"],
                      column=name, value=r["value"])
        for r in rows.filter(pl.col(f"_r{i}")).iter_rows(named=True):
            fault("type", f"{name} value is out of the allowed range/values", line=r["line"],
                  row=r["row"], column=name, value=r["value"])
    typed = checked.drop(flags)
    dup = raw.filter(pl.struct("variant_id", "phase", "run_index").is_duplicated())
    for r in dup.iter_rows(named=True):
        fault("duplicate_row", f"pass {r['variant_id']}/{r['phase']}-{r['run_index']} has "
              "more than one row", line=r["line"], row=r["row"], column="run_index",
              value=r["run_index"])
    return raw, typed.select([*cols, "row", "line"]), faults


def _faults_frame(faults: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(faults, schema={
        "kind": pl.String, "severity": pl.String, "row": pl.Int64, "line": pl.Int64,
        "column": pl.String, "value": pl.String, "message": pl.String}, orient="row")


def _pointer(path: Any) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else ""


def _short(value: Any) -> Any:
    s = json.dumps(value, default=str)
    return value if len(s) <= 200 else s[:200] + "..."


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
