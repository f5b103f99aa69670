"""Load a protocol B run dir once into one immutable view (`RunView`) that every rule reads.

The run-dir walk (`auditor.rundir`) has read and hashed each file once; this module hands each
artifact of `artifacts.py` to its reader and keeps what they return: the CSVs typed by their
table schemas, JSON documents checked against the B schemas, the prompt sequence and the
reference answers, every trial's answers with their latencies (one vectorized read of every
outputs file), each power trace as a power-samples frame and each placement file as a
placement-nodes frame, read by whichever evidence reader recognizes the file's content, and
the traces and records the power-state checks cite (power_state/*, either kind).

It judges nothing. A reader's fault becomes a finding (B0001 for the manifest, B0002 for any
other artifact) with the file and its line, column or JSON pointer; a JSON artifact at fault
is left out of `available`, so the rules that need it are skipped with the reason. What a
file says about the measurement itself is left to the rules: a power trace that holds only
the reasons its instruments gave nothing, a placement file with no placed operation, a
trace that samples once per device. The CSVs' format faults are kept as data
(`csv_faults`) for B0008.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import polars as pl

from auditor.model import Finding
from auditor.protocols.b.artifacts import (
    ARTIFACTS,
    BY_KIND,
    ENERGY,
    ENERGY_FILE,
    GATE_OUTPUT_FILE,
    GATE_OUTPUTS,
    GATES,
    OUTPUT_FILE,
    OUTPUTS,
    PLACEMENT,
    PLACEMENT_FILE,
    POWER,
    POWER_FILE,
    POWER_SOURCE,
    POWER_SOURCE_FILE,
    POWER_STATE,
    manifest_ref,
    placement_owner,
)
from auditor.protocols.loader import Loader
from auditor.readers import (
    evidence_kinds,
    jsonl_id_label,
    jsonl_latency,
    power_source,
)
from auditor.readers.base import Fault
from auditor.rundir import RunFiles

TrialKey = tuple[str, int]

CONTENT_FAULTS = frozenset({"empty", "coverage", "missing"})
"""Evidence reader fault kinds that are about the measurement, not the file's format: no
reading (an instrument that gave nothing, with its reason), no placed operation, one sample
per device, a tool's no-value cells. The B4 and B6 rules judge them; they are no B0002."""


@dataclass(frozen=True)
class Evidence:
    """One raw power or placement file as its reader read it."""

    path: str
    reader: str | None
    """The evidence reader that took it (`evidence_kinds`), None when none recognizes it."""
    tool: str | None
    """The tool that wrote it, as the reader names it (`powermetrics`, `HWiNFO`, ...)."""
    frame: pl.DataFrame | None
    """The power-samples or placement-nodes frame; None when nothing usable was read."""
    meta: Mapping[str, Any]
    """The reader's facts about the file (markers, unavailable instruments, ...)."""
    content: tuple[str, ...] = ()
    """What the reader said about the content (no reading, no placed operation)."""
    usable: bool = True
    """False when the file's format is at fault (its B0002 findings say where)."""
    time_back: tuple[int, ...] = ()
    """Lines where the file's time goes back against the previous reading of its series
    (the reader's `order` warnings): intervals there are not the tool's."""
    truncated: tuple[int, ...] = ()
    """Lines where the reader found the file cut short (its `truncated` faults, warnings
    included; 0 where the reader names no line): what it holds is only part of the tool's
    report."""
    family: str | None = None
    """The frame it holds: `power` (power samples) or `placement` (placement nodes)."""
    rank: int = 1 << 30
    """Its reader's place in the order readers are tried (`EvidenceReader.rank`: the most
    specific first); last when no reader took it."""


@dataclass(frozen=True, eq=False)
class RunView:
    """The one immutable view of a protocol B run dir. Frames are never mutated by rules.
    Identity-hashed, so derived tables can be cached per view."""

    root: Path
    manifest: dict | None
    """manifest.json parsed; None when absent or not JSON (schema faults: load_findings)."""
    trials: pl.DataFrame | None
    """trials.csv typed per its table schema, plus `row` and `line`; None when broken."""
    trials_raw: pl.DataFrame | None
    """The same rows as strings, exactly as written (claims are compared at their rounding)."""
    policies: pl.DataFrame | None
    policies_raw: pl.DataFrame | None
    csv_faults: pl.DataFrame
    """Format faults of both CSVs: `file`, `kind`, `severity`, `row`, `line`, `column`,
    `value`, `message`."""
    prompts: pl.DataFrame | None
    """`line`, `id` of prompts/sequence.jsonl, in order."""
    references: pl.DataFrame | None
    """`line`, `id`, `label` of corpus/references.jsonl."""
    reference_outputs: pl.DataFrame | None
    """`line`, `id`, `label` of reference/outputs.jsonl."""
    outputs: pl.DataFrame | None
    """Every trial's answers: `file_no`, `policy_id`, `trial_index`, `line`, `id`, `label`,
    `latency_ms`, `valid`, `error`, in file then line order."""
    output_index: pl.DataFrame
    """One row per outputs file: `file_no`, `policy_id`, `trial_index`, `file`."""
    gate_outputs: pl.DataFrame | None
    """The runner's gate-pass answers: `policy_id`, `line`, `id`, `label`, `valid`."""
    power: Mapping[TrialKey, Evidence]
    """(policy_id, trial_index) -> its power trace."""
    placement: Mapping[str, tuple[Evidence, ...]]
    """policy_id -> its placement files (a runner's ORT policy has its record and profile)."""
    energy_docs: Mapping[TrialKey, dict]
    """(policy_id, trial_index) -> energy/<p>/trial-<n>.json (the runner's summaries)."""
    power_state: Mapping[str, Evidence]
    """power_state/* -> the trace or record a power-state check (B9) cites as evidence."""
    gates: dict | None
    environment: dict | None
    checkpoint_config: dict | None
    files_on_disk: Mapping[str, str]
    load_findings: tuple[Finding, ...]
    available: frozenset[str]
    absent: frozenset[str] = field(default_factory=frozenset)
    unavailable_reason: Mapping[str, str] = field(default_factory=dict)
    power_source: Mapping[TrialKey, tuple[str, str | None]] = field(default_factory=dict)
    """(policy_id, trial_index) -> (power_source/<p>/trial-<n>.<ext>, the source the OS
    reported at the trial's start: `ac`, `battery` or None)."""

    @property
    def m(self) -> dict:
        """The manifest, or an empty dict."""
        return self.manifest if isinstance(self.manifest, dict) else {}

    @property
    def local_utc_offset(self) -> str | None:
        value = self.m.get("local_utc_offset")
        return value if isinstance(value, str) else None


def load(files: RunFiles) -> RunView:
    """The view of the run dir FILES was walked from; every fault inside it is a finding."""
    return _Loader(files).load()


class _Loader(Loader):
    malformed_code = "B0002"

    def ref_for(self, fault: Fault) -> str:
        """The protocol rule of the artifact FAULT's file is (B1 for anything else)."""
        kind = next(
            (
                a
                for a in BY_KIND.values()
                if fault.file == a.path or (a.path.endswith("/") and fault.file.startswith(a.path))
            ),
            None,
        )
        return kind.ref if kind else "B1"

    def load(self) -> RunView:
        manifest = self.load_manifest()
        m = manifest or {}
        policy_ids = [
            p["policy_id"]
            for p in m.get("policies") or []
            if isinstance(p, dict) and isinstance(p.get("policy_id"), str)
        ]
        offset = m.get("local_utc_offset") if isinstance(m.get("local_utc_offset"), str) else None
        plain = self.load_artifacts(ARTIFACTS)
        trials, policies = plain["trials"], plain["policies"]
        prompts = plain["prompts"]
        outputs, index = self.load_outputs()
        power = self.load_power(offset)
        placement = self.load_placement(policy_ids, offset)
        energy = self.load_energy()
        power_state = self.load_power_state(offset)
        gate_outputs = self.load_gate_outputs()
        unavailable = self.unavailable()
        return RunView(
            root=self.files.root,
            manifest=manifest,
            trials=trials.typed,
            trials_raw=trials.raw,
            policies=policies.typed,
            policies_raw=policies.raw,
            csv_faults=pl.concat([trials.faults, policies.faults]),
            prompts=None
            if prompts is None
            else pl.DataFrame(
                [(n, obj["id"]) for n, obj in prompts],
                schema={"line": pl.Int64, "id": pl.String},
                orient="row",
            ),
            references=plain["references"],
            reference_outputs=plain["reference_outputs"],
            outputs=outputs,
            output_index=index,
            gate_outputs=gate_outputs,
            power=MappingProxyType(power),
            placement=MappingProxyType(placement),
            energy_docs=MappingProxyType(energy),
            power_state=MappingProxyType(power_state),
            gates=plain["gates"],
            environment=plain["environment"],
            checkpoint_config=plain["checkpoint_config"],
            files_on_disk=self.files.hashes,
            load_findings=tuple(self.findings),
            available=frozenset(self.available),
            absent=frozenset(self.absent),
            unavailable_reason=unavailable,
            power_source=MappingProxyType(self.load_power_source()),
        )

    def load_manifest(self) -> dict | None:
        return self.read_manifest(
            "manifest_residency", "B0001", manifest_ref, "the protocol B manifest"
        )

    # -- per trial and per policy files ---------------------------------------------------
    def load_outputs(self) -> tuple[pl.DataFrame | None, pl.DataFrame]:
        index: list[tuple[int, str, int, str]] = []
        for rel in self.files.paths(OUTPUTS):
            m = OUTPUT_FILE.match(rel)
            if not m:
                self.report(
                    Fault(rel, "output file name is not outputs/<policy_id>/trial-<n>.jsonl")
                )
                continue
            index.append((len(index), m["policy"], int(m["n"]), rel))
        idx = pl.DataFrame(
            index,
            schema={
                "file_no": pl.Int64,
                "policy_id": pl.String,
                "trial_index": pl.Int64,
                "file": pl.String,
            },
            orient="row",
        )
        if not index:
            self.absent.add("outputs")
            return None, idx
        self.available.add("outputs")
        frames = jsonl_latency.decode_many([self.data[r[3]] for r in index])
        fno = frames["file_no"]
        outputs = frames.select(
            "file_no",
            *[idx[c].gather(fno) for c in ("policy_id", "trial_index")],
            "line",
            "id",
            "label",
            "latency_ms",
            "valid",
            "error",
        )
        return outputs, idx

    def read_evidence(self, rel: str, wanted: str | None, offset: str | None) -> Evidence:
        """RELATIVE path read by the evidence reader its content and extension pick (of the
        family WANTED, or of either when None)."""
        module, read = evidence_kinds.read(self.data[rel], rel, local_utc_offset=offset)
        if module is None:
            for f in read.faults:
                self.report(f)
            return Evidence(rel, None, None, None, {}, usable=False)
        if wanted is not None and module.family != wanted:
            self.report(
                Fault(rel, f"this is {module.description}, not {wanted} evidence", kind="format")
            )
            return Evidence(
                rel, module.name, module.tool, None, read.meta, usable=False, rank=module.rank
            )
        content = tuple(
            f.message for f in read.faults if f.kind in CONTENT_FAULTS and f.severity == "error"
        )
        wrong = [f for f in read.faults if f.kind not in CONTENT_FAULTS]
        for f in wrong:
            self.report(f)
        return Evidence(
            rel,
            module.name,
            module.tool,
            read.value,
            read.meta,
            content,
            usable=not any(f.severity == "error" for f in wrong),
            time_back=tuple(sorted({f.line or 0 for f in read.faults if f.kind == "order"})),
            truncated=tuple(sorted({f.line or 0 for f in read.faults if f.kind == "truncated"})),
            family=module.family,
            rank=module.rank,
        )

    def load_power(self, offset: str | None) -> dict[TrialKey, Evidence]:
        out: dict[TrialKey, Evidence] = {}
        rels = self.files.paths(POWER)
        if not rels:
            self.absent.add("power")
            return out
        for rel in rels:
            m = POWER_FILE.match(rel)
            if not m:
                self.report(Fault(rel, "power trace name is not power/<policy_id>/trial-<n>.<ext>"))
                continue
            key = (m["policy"], int(m["n"]))
            if key in out:
                self.report(
                    Fault(
                        rel,
                        f"a second power trace for {key[0]} trial {key[1]} "
                        f"(beside {out[key].path}): which one was measured?",
                    )
                )
                continue
            out[key] = self.read_evidence(rel, "power", offset)
        self.available.add("power")
        return out

    def load_placement(
        self, policy_ids: list[str], offset: str | None
    ) -> dict[str, tuple[Evidence, ...]]:
        out: dict[str, list[Evidence]] = {}
        rels = self.files.paths(PLACEMENT)
        if not rels:
            self.absent.add("placement")
            return {}
        for rel in rels:
            m = PLACEMENT_FILE.match(rel)
            owner = placement_owner(m["name"], policy_ids) if m else None
            if owner is None:
                self.report(
                    Fault(
                        rel,
                        "placement file name is not placement/<policy_id>.<ext> "
                        "of a declared policy",
                    )
                )
                continue
            out.setdefault(owner, []).append(self.read_evidence(rel, "placement", offset))
        self.available.add("placement")
        return {k: tuple(v) for k, v in out.items()}

    def load_power_source(self) -> dict[TrialKey, tuple[str, str | None]]:
        """Each trial's power source as the OS reported it (auditor.readers.power_source)."""
        out: dict[TrialKey, tuple[str, str | None]] = {}
        for rel in self.files.paths(POWER_SOURCE):
            m = POWER_SOURCE_FILE.match(rel)
            if not m or rel not in self.data:
                self.report(
                    Fault(
                        rel,
                        "power source file name is not power_source/<policy_id>/trial-<n>.<ext>",
                    )
                )
                continue
            read = power_source.read(self.data[rel], name=rel)
            for f in read.faults:
                self.report(f)
            out[(m["policy"], int(m["n"]))] = (rel, read.value)
        return out

    def load_power_state(self, offset: str | None) -> dict[str, Evidence]:
        """Every power_state/* file, a trace or a record, by whichever reader takes it."""
        return {rel: self.read_evidence(rel, None, offset) for rel in self.files.paths(POWER_STATE)}

    def load_energy(self) -> dict[TrialKey, dict]:
        out: dict[TrialKey, dict] = {}
        rels = self.files.paths(ENERGY)
        ok = True
        for rel in rels:
            m = ENERGY_FILE.match(rel)
            if not m:
                self.report(
                    Fault(
                        rel,
                        "energy file name is not energy/<policy_id>/"
                        "trial-<n>.json or energy/<policy_id>/idle.json",
                    )
                )
                continue
            doc = self.doc(rel, "energy", "energy_window" if m["n"] else "idle_power")
            ok = ok and doc is not None
            if doc is not None and m["n"]:
                out[(m["policy"], int(m["n"]))] = doc
        if rels and ok:
            self.available.add("energy")
        return out

    def load_gate_outputs(self) -> pl.DataFrame | None:
        parts = []
        for rel in self.files.paths(GATE_OUTPUTS):
            if rel == GATES:
                continue
            m = GATE_OUTPUT_FILE.match(rel)
            if not m:
                self.report(Fault(rel, "gate pass file name is not gates/<policy_id>.jsonl"))
                continue
            df = jsonl_id_label.decode_id_label_lines(self.data[rel], "output_line")
            for line, err in (
                df.filter(~pl.col("valid")).head(20).select("line", "error").iter_rows()
            ):
                self.report(Fault(rel, f"bad line: {err}", line=line, kind="schema"))
            parts.append(
                df.select(pl.lit(m["policy"]).alias("policy_id"), "line", "id", "label", "valid")
            )
        if not parts:
            return None
        self.available.add("gate_outputs")
        return pl.concat(parts)
