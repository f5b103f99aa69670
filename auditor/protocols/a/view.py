"""Load a protocol A run dir once into one immutable view (`RunView`) that every rule reads.

The run-dir walk (`auditor.rundir`) has read and hashed each file once; this module hands
each artifact of the table in `artifacts.py` to its reader and keeps what they return:
tabular artifacts as polars frames, JSON documents as dicts. It judges nothing: a reader's
fault becomes a finding (A0001 for the manifest, A0002 for any other artifact) with the file
and its line, column or JSON pointer, and the artifact kind is left out of `available`, so the
rules that need it are skipped with the reason. The CSV's format faults are kept as data
(`results_faults`) for the A08xx rules. A timeline entry's typed row and the inputs lines'
fast path are `records.py`'s.

Output files (tens of millions of lines in a big run) are streamed: read and hashed one at
a time, parsed and counted in batches of `BATCH_BYTES` (`output_file_stats`), and only
the lines of the files with a fault are kept, so memory is a batch's whatever the run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import polars as pl

from auditor.model import Finding, Subject
from auditor.protocols.a.artifacts import (
    ARTIFACTS,
    INPUTS,
    MEMORY_TRACES,
    MODEL,
    OFFERS,
    OUTPUTS,
    PASS_FILE,
    PLACEMENT,
    RECIPE,
    RESULTS,
    SPLITS,
    TIMELINE,
    doc_ref,
    manifest_ref,
)
from auditor.protocols.a.facts.passes import index_expected, output_file_stats
from auditor.protocols.a.records import INPUT_LINE, TIMELINE_SCHEMA, plain_input, timeline_row
from auditor.protocols.a.subject import variant_subject
from auditor.protocols.loader import Loader, declaration_pointer
from auditor.readers import (
    jsonl_id_label,
    jsonl_records,
    timestamps,
)
from auditor.readers.base import Fault
from auditor.rundir import RunFiles

PassKey = tuple[str, str, int]

BATCH_BYTES = 32 << 20
"""Output files are parsed together up to this many bytes (one multi-threaded read, as for
a small run's every file), then counted and let go: memory is a batch's, never the run's."""


@dataclass(frozen=True, eq=False)
class RunView:
    """The one immutable view of a protocol A run dir. Frames are never mutated by rules
    (polars frames are values: every operation returns a new frame). Identity-hashed, so
    derived tables can be cached per view."""

    root: Path
    manifest: dict | None
    """manifest.json parsed; None when absent or not JSON (schema faults: see load_findings)."""
    results: pl.DataFrame | None
    """resultats-bruts.csv typed per its table schema, plus `row` (1-based data row) and
    `line` (physical line where the record starts). None when the CSV is structurally broken."""
    results_raw: pl.DataFrame | None
    """The same rows as strings, exactly as in the file (for A8 format rules)."""
    results_faults: pl.DataFrame
    """CSV format faults: `kind`, `severity`, `row`, `line`, `column`, `value`, `message`."""
    expected_ids: pl.DataFrame | None
    """`line`, `id` from corpus/expected_ids.txt (duplicates kept)."""
    references: pl.DataFrame | None
    """`line`, `id`, `label`."""
    outputs: pl.DataFrame | None
    """Output lines: `variant_id`, `phase`, `run_index`, `file`, `file_no` (the file's row in
    `output_index`; lines are in file, then line order), `line`, `id`, `label`, `valid`
    (parses and matches the line schema), `error` (why not). When `output_stats` is set,
    only the lines of the files that are not clean (see `output_file_stats`): a
    clean file is one valid line with a declared label per expected ID in list order, all
    its counts are in `output_stats`. Otherwise (no expected IDs to compare with) every
    line. None when the run has no output file."""
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
    inputs: pl.DataFrame | None
    """`line`, `id`, `text` of the evaluation inputs file the manifest names (`inputs_path`)."""
    inputs_path: str | None
    claims: dict | None
    """claims.json: the typed summaries, rankings, projections and memory figures."""
    files_on_disk: Mapping[str, str]
    """Relative path -> sha256 of every file under the run dir."""
    load_findings: tuple[Finding, ...]
    available: frozenset[str]
    """Artifact kinds that loaded well (what `Rule.requires` names)."""
    absent: frozenset[str] = field(default_factory=frozenset)
    """Required artifact kinds with no file at all."""
    unavailable_reason: Mapping[str, str] = field(default_factory=dict)
    """Why a kind is not available (absent or malformed, naming the file)."""
    output_stats: pl.DataFrame | None = None
    """Per output file (`file_no`), its `facts.passes._file_aggregates`, computed as each
    file was read (the files are streamed, never all in memory); None without expected IDs."""
    recipe: dict | None = None
    """model/recipe.json (a workload trained at run time), when present and on its schema."""
    model_data: Mapping[str, bytes] = field(default_factory=dict)
    """The bytes of the JSON files under model/ the walk kept (the tokenizer, the config, the
    recipe): what `facts.revisions` applies or reads."""

    @property
    def classes(self) -> tuple[str, ...]:
        return classes_of(self.manifest)


def pass_subject(view: RunView, finding: Finding) -> Subject | None:
    """The pass a finding is about, from the per-pass file it names (at fault, or as the
    output file a CSV row claims about) or the CSV row it sits on; None for the whole run."""
    target = finding.evidence.get("output") if isinstance(finding.evidence, Mapping) else None
    for path in (target, finding.artifact):
        if not isinstance(path, str):
            continue
        for prefix in (OUTPUTS, MEMORY_TRACES, PLACEMENT):
            m = PASS_FILE.match(path.removeprefix(prefix)) if path.startswith(prefix) else None
            if m:
                return variant_subject(m["variant"], m["phase"], int(m["run"]))
    if (
        finding.artifact == RESULTS
        and finding.row is not None
        and view.results is not None
        and "row" in view.results.columns
    ):
        hit = view.results.filter(pl.col("row") == finding.row)
        if (
            hit.height
            and hit["variant_id"][0] is not None
            and hit["phase"][0] is not None
            and hit["run_index"][0] is not None
        ):
            return variant_subject(hit["variant_id"][0], hit["phase"][0], int(hit["run_index"][0]))
    return None


def classes_of(manifest: dict | None) -> tuple[str, ...]:
    """The declared classes (`task.classes`) of a manifest, even one off its schema."""
    task = (manifest or {}).get("task") if isinstance(manifest, dict) else None
    return tuple((task.get("classes") or ()) if isinstance(task, dict) else ())


def load(files: RunFiles) -> RunView:
    """The view of the run dir FILES was walked from; every fault inside it is a finding."""
    return _Loader(files).load()


class _Loader(Loader):
    malformed_code = "A0002"

    def ref_for(self, fault: Fault) -> str:
        return doc_ref(fault.file, declaration_pointer(fault), "A1.4")

    # -- the artifacts -------------------------------------------------------------------
    def load(self) -> RunView:
        manifest = self.load_manifest()
        plain = self.load_artifacts(ARTIFACTS)
        expected, references = plain["expected_ids"], plain["references"]
        results = plain["results"]
        splits: dict[str, pl.DataFrame] = {}
        for name, rel in SPLITS.items():
            df = self.load_id_list(rel, "splits")
            if df is not None:
                splits[name] = df
        if len(splits) < 2:  # both lists are needed; one absent or malformed: neither counts
            self.available.discard("splits")
        outputs, out_files, out_index, out_stats = self.load_outputs(
            None if expected is None else index_expected(expected, references), classes_of(manifest)
        )
        timeline = self.timeline_frame(plain["timeline"])
        traces, trace_files = self.load_pass_docs(MEMORY_TRACES, "memory_traces", "memory_trace")
        placement, placement_files = self.load_pass_docs(PLACEMENT, "placement", "placement")
        offers_path = OFFERS
        econ = (manifest or {}).get("economics")
        if isinstance(econ, dict) and isinstance(econ.get("offers_file"), str):
            offers_path = econ["offers_file"]
        offers = self.load_doc(offers_path, "offers", "offers", required=bool(econ))
        inputs_path, inputs = self.load_inputs(manifest)
        recipe = self.doc(RECIPE, "recipe", "recipe", ref="A1.2") if RECIPE in self.data else None
        if recipe is not None:
            self.available.add("recipe")
        model_data = {
            rel: b
            for rel, b in self.data.items()
            if rel.startswith(MODEL) and rel.endswith(".json")
        }
        unavailable = self.unavailable()
        return RunView(
            root=self.files.root,
            manifest=manifest,
            results=results.typed,
            results_raw=results.raw,
            results_faults=results.faults,
            expected_ids=expected,
            references=references,
            outputs=outputs,
            output_files=out_files,
            output_index=out_index,
            timeline=timeline,
            memory_traces=MappingProxyType(traces),
            memory_trace_files=MappingProxyType(trace_files),
            placement=MappingProxyType(placement),
            placement_files=MappingProxyType(placement_files),
            environment=plain["environment"],
            offers=offers,
            offers_path=offers_path,
            set_check=plain["set_check"],
            splits=MappingProxyType(splits),
            inputs=inputs,
            inputs_path=inputs_path,
            claims=plain["claims"],
            files_on_disk=self.files.hashes,
            load_findings=tuple(self.findings),
            available=frozenset(self.available),
            absent=frozenset(self.absent),
            unavailable_reason=unavailable,
            output_stats=out_stats,
            recipe=recipe,
            model_data=MappingProxyType(model_data),
        )

    def load_manifest(self) -> dict | None:
        return self.read_manifest(
            "manifest", "A0001", lambda p: manifest_ref(p, "A10.1"), "the manifest"
        )

    def load_outputs(
        self, exp: pl.DataFrame | None, classes: tuple[str, ...]
    ) -> tuple[pl.DataFrame | None, tuple[str, ...], pl.DataFrame, pl.DataFrame | None]:
        """(lines, files, index, per-file stats) of the output files, read one at a time and
        parsed in batches of `BATCH_BYTES`. With the expected IDs (EXP,
        `index_expected`), each batch is counted per file (`output_file_stats`)
        and only the lines of the files that are not clean are kept; without them, every
        line."""
        index: list[tuple[int, str, str, int, str]] = []
        for rel in self.files.paths(OUTPUTS):
            m = PASS_FILE.match(rel[len(OUTPUTS) :])
            if not m or m["ext"] != "jsonl":
                self.report(
                    Fault(
                        rel,
                        "output file name is not "
                        "outputs/<variant_id>/<cold|warm>-<run_index>.jsonl",
                    )
                )
                continue
            index.append((len(index), m["variant"], m["phase"], int(m["run"]), rel))
        idx = pl.DataFrame(
            index,
            schema={
                "file_no": pl.Int64,
                "variant_id": pl.String,
                "phase": pl.String,
                "run_index": pl.Int64,
                "file": pl.String,
            },
            orient="row",
        )
        if not index:
            self.absent.add("outputs")
            return None, (), idx.drop("file_no"), None
        self.available.add("outputs")
        rels = [r[4] for r in index]
        stats: list[pl.DataFrame] = []
        kept: list[pl.DataFrame] = []
        batch: list[tuple[int, bytes]] = []

        def parse() -> None:
            """Parse the files of BATCH together (one multi-threaded read); keep their
            stats, and the lines of those that are not clean."""
            lines = jsonl_id_label.decode_many([b for _, b in batch], "output_line")
            numbers = pl.Series("file_no", [k for k, _ in batch], dtype=pl.Int64)
            lines = lines.with_columns(numbers.gather(lines["file_no"]))
            batch.clear()
            if exp is None:
                kept.append(lines)
                return
            rows, clean = output_file_stats(lines, exp, classes)
            stats.append(rows)
            kept.append(lines.filter(~pl.col("file_no").is_in(clean.implode())))

        size = 0
        for k, (_rel, data, fault) in enumerate(self.read_all(rels)):
            if fault is not None:  # unreadable, or over a size limit: no line of it
                self.report(fault)
            batch.append((k, data or b""))
            size += len(data or b"")
            del data
            if size >= BATCH_BYTES or k == len(rels) - 1:
                parse()
                size = 0
        frames = pl.concat(kept) if kept else jsonl_id_label.decode_many([], "output_line")
        # file_no is the row of `idx`: a gather (no hash join over a million lines) labels
        # each line with its pass and file.
        fno = frames["file_no"]
        outputs = frames.select(
            *[idx[c].gather(fno) for c in ("variant_id", "phase", "run_index", "file")],
            pl.col("file_no").set_sorted(),
            "line",
            "id",
            "label",
            "valid",
            "error",
        )
        out_stats = None
        if exp is not None:
            out_stats = pl.concat(stats) if stats else output_file_stats(frames, exp, classes)[0]
        return outputs, tuple(rels), idx.drop("file_no"), out_stats

    def read_all(self, rels: list[str]) -> Iterator[tuple[str, bytes | None, Fault | None]]:
        """Each file's bytes in order: streamed one at a time when the walk left them to
        the loader, else from what it kept."""
        streamed = [r for r in rels if self.files.is_streamed(r)]
        stream = self.files.stream(streamed)
        for rel in rels:
            if self.files.is_streamed(rel):
                yield next(stream)
            else:
                yield rel, self.data[rel], None

    def load_inputs(self, manifest: dict | None) -> tuple[str | None, pl.DataFrame | None]:
        """The inputs file the manifest names (`corpus.inputs_file`), else the runner's
        usual one when present: `line`, `id`, `text` per text."""
        corpus = (manifest or {}).get("corpus")
        declared = corpus.get("inputs_file") if isinstance(corpus, dict) else None
        rel = declared if isinstance(declared, str) else INPUTS
        if rel not in self.data:
            if isinstance(declared, str):
                self.absent.add("inputs")
            return (rel if isinstance(declared, str) else None), None
        read = jsonl_records.read_ids(
            self.data[rel],
            name=rel,
            line_pattern=INPUT_LINE,
            schema="input_line",
            label="input-line",
            surely_valid=plain_input,
            text_key="text",
        )
        for f in read.faults:
            self.report(f, ref="A3.1")
        if read.value is None or read.errors:
            self.bad("inputs", f"{rel} has malformed lines")
            return rel, None
        self.available.add("inputs")
        return rel, read.value

    def timeline_frame(self, records: list[tuple[int, Any]] | None) -> pl.DataFrame | None:
        """The timeline's entries as a frame, their times parsed (a time that is not RFC
        3339 is a finding and leaves the timeline unavailable)."""
        if records is None:
            return None
        rows = [timeline_row(n, obj) for n, obj in records]
        df = pl.DataFrame(rows, schema=TIMELINE_SCHEMA, orient="row")
        started = timestamps.column(df["started_at"], "started")
        ended = timestamps.column(df["ended_at"], "ended")
        bad = df.filter(started.is_null() | ended.is_null())
        for line in bad["line"]:
            self.report(
                Fault(TIMELINE, "started_at/ended_at is not an RFC 3339 date-time", line=line),
                ref="A6.4",
            )
        if bad.height:
            self.bad("timeline", f"{TIMELINE} has unreadable times")
            self.available.discard("timeline")
            return None
        return df.with_columns(started, ended)

    def load_pass_docs(
        self, prefix: str, kind: str, schema: str
    ) -> tuple[dict[PassKey, dict], dict[PassKey, str]]:
        docs: dict[PassKey, dict] = {}
        files: dict[PassKey, str] = {}
        rels = self.files.paths(prefix)
        if not rels:
            self.absent.add(kind)
            return docs, files
        ok = True
        for rel in rels:
            m = PASS_FILE.match(rel[len(prefix) :])
            if not m or m["ext"] != "json":
                self.report(
                    Fault(
                        rel, f"file name is not {prefix}<variant_id>/<cold|warm>-<run_index>.json"
                    )
                )
                continue
            key: PassKey = (str(m["variant"]), str(m["phase"]), int(m["run"]))
            doc = self.doc(rel, kind, schema)
            if doc is None:
                ok = False
                continue
            said = (doc.get("variant_id"), doc.get("phase"), doc.get("run_index"))
            if said != key:
                self.findings.append(
                    Finding(
                        code="A0002",
                        severity="error",
                        protocol_ref="A1.4",
                        message="the document names another pass than its path",
                        artifact=rel,
                        pointer="/variant_id",
                        evidence={"observed": list(said), "expected": list(key)},
                    )
                )
                ok = False
                continue
            docs[key] = doc
            files[key] = rel
        if ok:
            self.available.add(kind)
        return docs, files
