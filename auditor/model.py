"""The result types every part of the auditor shares: findings, skipped rules, the audit
result, and the per-run summary an archive keeps. Small frozen dataclasses, so a renderer can
only format them, never change them; they are all that crosses module borders (and process
borders, in an archive's workers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from typing import Protocol as TypingProtocol

Severity = Literal["error", "warning", "info"]
Verdict = Literal["accepted", "rejected", "incomplete"]

SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class SubjectWords:
    """What a protocol calls the parts of a run a finding can be about, in its findings'
    words and JSON keys (each protocol defines its own: protocol A's `variant` and `pass`,
    protocol B's `policy` and `trial`)."""

    config: str
    """A configuration: `variant`, `policy` (also its JSON key)."""
    run: str
    """One measured run of a configuration, in words: `pass`, `trial`."""
    run_key: str
    """Its JSON key: `run`, `trial`."""


@dataclass(frozen=True)
class Subject:
    """The part of a run a finding is about, when it is about one part: a configuration (a
    protocol A variant, a protocol B policy), or one of its runs (a pass and its phase, a
    trial), named in its protocol's words (`words`). The report scopes findings and gives
    each configuration its verdict from this, never from an evidence key."""

    words: SubjectWords
    config: str | None = None
    phase: str | None = None
    """The phase of the run where the protocol has phases (`cold`, `warm`)."""
    run: int | None = None
    """The run's number within its configuration (and phase), from 1."""

    def describe(self) -> str | None:
        """`batch-4 warm pass 2`, `variant batch-4`, `ort-cuda trial 3`, `policy ort-cuda`."""
        if self.config is None:
            return None
        if self.run is not None:
            phase = f"{self.phase} " if self.phase is not None else ""
            return f"{self.config} {phase}{self.words.run} {self.run}"
        return f"{self.words.config} {self.config}"

    def to_json(self) -> dict[str, Any]:
        parts = {self.words.config: self.config, "phase": self.phase, self.words.run_key: self.run}
        return {k: v for k, v in parts.items() if v is not None}


@dataclass(frozen=True)
class Finding:
    """One fault or observation, tied to the rule that found it and the place it is.

    The place is structured (row, line, column, JSON pointer), so SARIF, GitHub annotations
    and sorting never parse it back out of text; `location` is only its text form."""

    code: str
    """Stable code of the rule, e.g. `A0201`."""
    severity: Severity
    protocol_ref: str
    """The protocol rule enforced, e.g. `A2.1` (an anchor of docs/protocol.md)."""
    message: str
    """One sentence a reviewer understands."""
    artifact: str | None = None
    """Path of the file at fault, relative to the run dir (`/`-separated)."""
    row: int | None = None
    """CSV data row, 1-based, header excluded."""
    line: int | None = None
    """1-based physical line of the artifact (for a CSV row: the line where it starts)."""
    column: int | None = None
    """1-based column in that line, where known."""
    pointer: str | None = None
    """RFC 6901 JSON pointer inside the artifact (a JSON document or a JSON line)."""
    evidence: dict[str, Any] = field(default_factory=dict)
    """Observed and expected values (`observed`, `expected`) and any other facts."""
    title: str = ""
    missing_evidence: bool = False
    """True when the finding is that required evidence is absent (drives `incomplete`)."""
    subject: Subject | None = None
    """The variant, pass, policy or trial the finding is about; None for the whole run."""

    @property
    def location(self) -> str | None:
        """`row N`, `line N`, a JSON pointer, or `line N` followed by a pointer; None when
        the finding is about the whole file."""
        if self.row is not None:
            return f"row {self.row}"
        if self.line is not None:
            return f"line {self.line}{self.pointer or ''}"
        return self.pointer

    def region(self) -> dict[str, Any]:
        """The structured place, only the parts that are known."""
        parts = {"row": self.row, "line": self.line, "column": self.column, "pointer": self.pointer}
        return {k: v for k, v in parts.items() if v is not None}

    def sort_key(self) -> tuple:
        return (
            SEVERITY_ORDER[self.severity],
            self.code,
            self.artifact or "",
            self.row if self.row is not None else -1,
            self.line if self.line is not None else -1,
            self.pointer or "",
            self.column if self.column is not None else -1,
            self.message,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "protocol_ref": self.protocol_ref,
            "title": self.title,
            "message": self.message,
            "artifact": self.artifact,
            "location": self.location,
            "region": self.region(),
            "subject": self.subject.to_json() if self.subject is not None else None,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class Skipped:
    """A rule that could not run, and why (a missing or malformed artifact)."""

    code: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "reason": self.reason}


@dataclass(frozen=True)
class NotRun:
    """A rule of the run's protocol left out on purpose (`--select`/`--ignore`): the audit
    did not check what it checks, so the verdict cannot be a plain `accepted` unless a
    waiver with a written justification covers it (an error rule) or it only warns."""

    code: str
    severity: Severity
    waiver: str | None = None
    """The written justification of the waiver that covers it, None when unwaived."""
    title: str = ""

    def describe(self) -> str:
        """One line: the rule, and whether and why it may be left out."""
        head = f"{self.code} ({self.severity}{', ' + self.title if self.title else ''})"
        if self.waiver is not None:
            return f"{head}: waived: {self.waiver}"
        return f"{head}: not waived" + (
            ": the verdict cannot be accepted" if self.severity == "error" else ""
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "title": self.title,
            "waived": self.waiver is not None,
            "justification": self.waiver,
        }


@dataclass(frozen=True)
class Waiver:
    """One entry of a `--waivers` file: a rule code (or prefix) and why leaving it out is
    acceptable for this audit."""

    code: str
    justification: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "justification": self.justification}


@dataclass(frozen=True)
class RuleInfo:
    """What an output format needs to know of a rule that ran (SARIF's rule table, JUnit's
    test cases): metadata only, never the check itself."""

    code: str
    title: str
    protocol_ref: str
    severity: Severity
    doc: str
    fix: str = ""
    """What to do about a finding of the rule."""

    def parts(self) -> dict[str, str]:
        """The docstring's parts, `what` (it checks), `why` (it matters), `example` and
        `reads` (the fields it reads), each on one line; a part the docstring lacks is an
        empty string."""
        marks = (
            ("what", "What it checks:"),
            ("why", "Why it matters:"),
            ("example", "Example:"),
            ("reads", "Reads:"),
        )
        found = sorted((self.doc.find(m), key, m) for key, m in marks if m in self.doc)
        out = {k: "" for k, _ in marks}
        for i, (start, key, mark) in enumerate(found):
            end = found[i + 1][0] if i + 1 < len(found) else len(self.doc)
            out[key] = " ".join(self.doc[start + len(mark) : end].split())
        return out


@dataclass(frozen=True)
class AuditResult:
    """Everything `audit check` concluded about one run dir; what every renderer draws."""

    run_dir: str
    protocol: str | None
    experiment_id: str | None
    findings: tuple[Finding, ...]
    skipped: tuple[Skipped, ...]
    rules_run: tuple[str, ...]
    rules: tuple[RuleInfo, ...] = ()
    """Metadata of the rules that ran or were skipped (for SARIF and JUnit)."""
    rules_not_run: tuple[NotRun, ...] = ()
    """The protocol's rules left out by `--select`/`--ignore`, each with its waiver, if any."""
    waivers: tuple[Waiver, ...] = ()
    """Every waiver given (`--waivers`), whether it covered a rule not run or not."""

    @property
    def unwaived(self) -> tuple[NotRun, ...]:
        """Error rules not run and not waived: what keeps a clean result `incomplete`."""
        return tuple(n for n in self.rules_not_run if n.severity == "error" and n.waiver is None)

    @property
    def verdict(self) -> Verdict:
        if any(f.severity == "error" and not f.missing_evidence for f in self.findings):
            return "rejected"
        if self.skipped or self.unwaived or any(f.missing_evidence for f in self.findings):
            return "incomplete"
        return "accepted"

    @property
    def exit_code(self) -> int:
        """1 when there is an error finding, or an error rule left out without a waiver
        (a pipeline must not pass an audit that skipped a check on purpose); else 0."""
        return 1 if any(f.severity == "error" for f in self.findings) or self.unwaived else 0

    def counts(self) -> dict[str, int]:
        out = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": "1",
            "run_dir": self.run_dir,
            "protocol": self.protocol,
            "experiment_id": self.experiment_id,
            "verdict": self.verdict,
            "counts": self.counts(),
            "rules_run": list(self.rules_run),
            "rules_not_run": [n.to_json() for n in self.rules_not_run],
            "waivers": [w.to_json() for w in self.waivers],
            "findings": [f.to_json() for f in self.findings],
            "skipped": [s.to_json() for s in self.skipped],
        }


@dataclass(frozen=True)
class OfferCost:
    """One offer costed against one configuration of a run, by a protocol that costs offers
    (protocol A's A9): what the archive keeps of it, in minor units of US dollars."""

    offer_id: str
    gpu_model: str
    lots: int
    package_total_usd_minor: int | None
    """None when the offer cannot be costed (priced per GPU, a B200 lot not of two)."""
    cost_per_accepted_corpus_usd_minor: float | None
    """None when no accepted corpus was measured on this offer's GPU (see `why_not`)."""
    why_not: str | None = None
    measured_here: bool = False
    """True when the offer's GPU is one the run measured (its accepted count applies)."""


ConfigVerdict = Literal["accepted", "rejected", "incomplete", "baseline"]
"""A configuration's verdict: `baseline` is protocol B's CPU-only reference policy, what the
others are compared with, never accepted or rejected itself."""


class ConfigFigures(TypingProtocol):
    """A protocol's own figures of one configuration (protocol A's `VariantFigures`,
    protocol B's `PolicyFigures`, each in its protocol's package): what the archive keeps as
    `figures_json`."""

    def to_json(self, verdict: str) -> dict[str, Any]:
        """The figures as one JSON object, given the configuration's VERDICT."""
        ...


@dataclass(frozen=True)
class ConfigSummary:
    """One configuration of a run (a protocol A variant, a protocol B policy), as derived
    from the run's raw evidence, never from its claims: what page 1 of the report, the
    archive index and `audit compare` all read."""

    config_id: str
    verdict: ConfigVerdict
    """`accepted` only when the audit accepts it (and the run)."""
    gpu_model: str | None
    """The GPU model(s) the placement evidence shows it used (protocol A), None for none."""
    gpu_count: int
    precision: str | None
    median_s: float | None
    """Warm median (A) or median trial wall time (B), seconds."""
    min_s: float | None
    max_s: float | None
    throughput_per_s: float | None
    """Texts (A) or inferences (B) per second at the median."""
    reason: str | None = None
    """Why it is not accepted, in a few words (None when accepted)."""
    detail: str | None = None
    """Why, in full: the finding that decides it (its code and message)."""
    costs: tuple[OfferCost, ...] = ()
    figures: ConfigFigures | None = None
    context: int | None = None
    """The context (tokens) the configuration ran with, where the run declares one."""

    @property
    def accepted(self) -> bool:
        return self.verdict == "accepted"

    def figures_json(self) -> dict[str, Any]:
        """The protocol's own figures as one JSON object (the archive index keeps it)."""
        return self.figures.to_json(self.verdict) if self.figures is not None else {}


@dataclass(frozen=True)
class RunIdentity:
    """What a run is, re-derived by its protocol from the run's own files
    (`auditor/protocols/<p>/facts/identity.py`), never from the revisions its manifest
    declares: the workload it measured (its revisions, each `sha256:<hex>` of the file(s)
    its kind names, as `rundir.scan` hashed them), the machine it ran on and when.

    Two runs measured the same workload when their corpus, model, tokenizer and config
    revisions are the same (PROTOCOL.md, "the same workload"); with the same precision and
    context, their configurations may share a comparison row (`workload_key`)."""

    corpus: str | None
    model: str | None
    tokenizer: str | None
    config: str | None
    """None: the run keeps no file of that kind (a model without a config file)."""
    recipe: str | None = None
    """A model trained at run time: the SHA-256 of its recipe file (the code, seed and
    training inputs that made the weights); None otherwise, or when the run keeps none."""
    trained: bool = False
    """The model was trained at run time (the run says so, or its weights are a file only
    such a workload writes): with a recipe, two runs of the same recipe are the same
    workload whatever weights each training produced."""
    name: str | None = None
    """The workload's name as the manifest gives it: a label, never part of the identity."""
    host: str | None = None
    """The host model (protocol B's machine model) or the host's hashed name."""
    cpu: str | None = None
    gpus: tuple[str, ...] = ()
    """Each GPU the evidence names, `name` or `name (uuid or serial)`, sorted."""
    started_at: str | None = None
    ended_at: str | None = None
    """The session's span, ISO 8601 in UTC: the first measurement's start, the last's end."""

    def revisions(self) -> dict[str, str | None]:
        return {
            "corpus": self.corpus,
            "model": self.model,
            "tokenizer": self.tokenizer,
            "config": self.config,
        }


def workload_key(
    identity: RunIdentity | None, precision: str | None, context: int | None
) -> str | None:
    """`sha256:<16 hex>` of the workload (corpus, model, tokenizer and config revisions,
    precision, context; for a model trained at run time with a recipe, the recipe in place
    of the weights and tokenizer it produced): equal keys, the same workload; None when the
    run has no identity or names no model or corpus (nothing says what it measured)."""
    if identity is None or identity.model is None or identity.corpus is None:
        return None
    import hashlib
    import json

    revs: dict[str, str | None] = identity.revisions()
    if identity.trained and identity.recipe is not None:
        revs = {"corpus": identity.corpus, "config": identity.config, "recipe": identity.recipe}
    doc = {**revs, "precision": precision, "context": context}
    digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
    return f"sha256:{digest[:16]}"


@dataclass(frozen=True)
class RunSummary:
    """What an archive keeps of one audited run: small, frozen, picklable."""

    run_dir: str
    manifest_sha256: str | None
    protocol: str | None
    experiment_id: str | None
    verdict: Verdict
    counts: tuple[tuple[str, int], ...]
    configurations: tuple[ConfigSummary, ...] = ()
    main_reason: str | None = None
    """Why the run is not accepted: the deciding finding's code and message
    (`auditor.protocols.summary.main_reason`); None when accepted."""
    identity: RunIdentity | None = None
    """What the run is (its workload, machine and span), from its files."""
