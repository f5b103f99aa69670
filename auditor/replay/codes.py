"""The codes of replay's findings, with the documentation `audit explain` and `audit rules` show.

Replay findings come from `audit replay`, never from `audit check` (which never executes a
model), so they are not rules of a protocol package: they do not run over a view, and the
protocols' registries (`auditor.protocols.all_rules`) do not hold them. Each is still a
`Rule` (code, title, protocol rule, severity, documentation, what to do) so that explaining,
listing and quoting them in a report work as for any rule; their `check` refuses to run.

Codes: `RA<nn>` for protocol A runs, `RB<nn>` for protocol B runs, the same number meaning
the same fault. Protocol A's cite A1.4 (the run keeps what it takes to audit it) for the
archived artifacts and A2.5 (claims equal what the auditor recomputes) for the agreement;
protocol B's cite B8 (the parity gate against the accepted reference artifact).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from auditor.model import Severity
from auditor.protocols.names import PROTOCOL_A, PROTOCOL_B
from auditor.rule import Rule

PROTOCOL_PREFIX = {PROTOCOL_A: "RA", PROTOCOL_B: "RB"}
"""The code prefix of replay findings on a run of each protocol."""


def _not_a_check(view: Any) -> Iterable[Any]:
    raise TypeError(
        "replay findings come from `audit replay`, never from a rule run over a "
        "view (`audit check` executes no model)"
    )


@dataclass(frozen=True)
class _Kind:
    number: str
    title: str
    severity: Severity
    refs: tuple[str, str]
    """(protocol A's rule, protocol B's rule)."""
    doc: str
    """What it checks / Reads: / Why it matters / Example; `{what}` names the answers files."""
    fix: str


_ANSWERS = {
    "A": "every pass's output file (`outputs/<variant>/<phase>-<n>.jsonl`)",
    "B": "every trial's, gate's and the reference's answers "
    "(`outputs/<policy>/trial-<n>.jsonl`, `gates/<policy>.jsonl`, "
    "`reference/outputs.jsonl`)",
}

_CONFIG = {
    "A": "manifest.json `variants` (each variant's precision and device)",
    "B": "manifest.json `policies` (precision, runtime, device, status), "
    "`gates.agreement_floor`, `reference`",
}

_KINDS: tuple[_Kind, ...] = (
    _Kind(
        "01",
        "run not replayable",
        "error",
        ("A1.4", "B8"),
        """
What it checks: the manifest has a `replay` section (schemas/replay-contract.schema.json)
that names the archived ONNX model, the tokenizer data, the context limit, the label order
and the inputs file. A run without one is reported as not replayable: incomplete, never as
agreeing (when the manifest says why in `replay_unavailable`, the reason is quoted); a
section that breaks its schema is an error.
Reads: manifest.json `replay`, `replay_unavailable`, `protocol`.
Why it matters: without the archived model nobody can show that the answers came from it;
every other rule compares files the submitter wrote with each other.
Example: a run of the optional MiniLM workload, which offers no ONNX export, says
`"replay_unavailable": "the workload offers no tensor form ..."`.""",
        "Archive the measured model as a single-file ONNX artifact with its tokenizer as "
        "data, name them in the manifest's `replay` section (docs/replay.md), and re-run.",
    ),
    _Kind(
        "02",
        "archived artifact differs from its declared hash",
        "error",
        ("A1.4", "B8"),
        """
What it checks: before anything runs, the SHA-256 of the archived ONNX file and of the
tokenizer file equal the hashes the manifest declares for them: the `replay` section's, the
`artifacts` table's and, for the tokenizer, `revisions.tokenizer`. A file the section names
and the run lacks is missing evidence.
Reads: manifest.json `replay.model`, `replay.tokenizer`, `artifacts`, `revisions.tokenizer`;
the bytes of both files.
Why it matters: replay proves the answers came from the declared model only if the file
replayed is that model; a swapped file would prove nothing about the run.
Example: `model/model.onnx` hashes to 3f2a... while `replay.model.sha256` says 607f....""",
        "Restore the archived file the run declared, or re-run: never re-hash a manifest by hand.",
    ),
    _Kind(
        "03",
        "tokenizer data unusable",
        "error",
        ("A1.4", "B8"),
        """
What it checks: the tokenizer file is data of a kind the auditor implements (the registry in
auditor/replay/tokenizers.py, e.g. `bow-words-pairs/1`), matches that kind's schema, stays
within the limits (file size, vocabulary entries, entry length) and agrees with the
manifest (context limit). A file that is too large, malformed or of an unknown kind is this
finding, never a crash; nothing in it is executed (a kind's word pattern is fixed by the
kind, not read from the file).
Reads: manifest.json `replay.tokenizer`, `replay.context`; the tokenizer file.
Why it matters: the auditor tokenizes the texts itself, from the data alone, so that no
submitter code runs on the reviewer's machine.
Example: `model/tokenizer.json` declares `"kind": "sentencepiece/2"`, which the auditor does
not implement.""",
        "Archive the tokenizer as data of a documented kind (docs/replay.md), or add the kind "
        "to the auditor's registry with its tests.",
    ),
    _Kind(
        "04",
        "archived model refused",
        "error",
        ("A1.4", "B8"),
        """
What it checks: the archived model is a single-file ONNX graph within the size limit, with
no external data, every node and opset in the standard ONNX domains (no custom operator
domain, no model-local functions), inputs and outputs as the `replay` section declares
them; ONNX Runtime (CPU execution provider only, no custom operator library) loads it and
runs it on the sampled texts, one row of scores per text, as many columns as labels.
Reads: manifest.json `replay.model`, `replay.labels`; the ONNX file.
Why it matters: the graph is the only thing from the run that replay executes; anything
beyond standard operators would be code from the run.
Example: a node of domain `com.example.custom` in `model/model.onnx`.""",
        "Export the model with standard ONNX operators only, as one file with its weights "
        "inside (torch.onnx.export(..., external_data=False)), and re-run.",
    ),
    _Kind(
        "05",
        "run files replay reads unusable",
        "error",
        ("A1.4", "B8"),
        """
What it checks: the files replay reads besides the model are usable: the inputs file the
`replay` section names (one `{{"id", "text"}}` a line, within its size limit) holds a text
for every ID it lists, and each answers file can be read (one `{{"id", "label"}}` a line).
A missing file is missing evidence; a malformed one is an error.
Reads: the inputs file (`corpus/eval-inputs.jsonl` or `prompts/sequence.jsonl`), {what}.
Why it matters: replay re-classifies the very texts the run classified; without them, or
without readable answers, nothing can be compared.
Example: `corpus/eval-inputs.jsonl` ends in the middle of a line.""",
        "Keep the inputs and every answers file as the runner wrote them (A1.4), and re-run "
        "if one was lost.",
    ),
    _Kind(
        "06",
        "answers disagree with the archived model",
        "error",
        ("A2.5", "B8"),
        """
What it checks: for each answers file, the labels it gives the sampled IDs equal the labels
the archived model gives them when the auditor replays it (argmax of the scores, in the
declared label order). The floor is exact agreement for a float32 pass, trial or reference
on the CPU (a disagreement whose replayed margin is within float32 rounding counts as a
tie, listed); otherwise the protocol's declared parity floor (protocol B's
`gates.agreement_floor`), else the documented default 0.99, and a file fails only when the
upper end of its 95% Wilson interval is below the floor. Every disagreeing ID is listed with
the replayed margin between the two labels' scores. A protocol B candidate the run itself
rejected at the parity gate is reported, not judged.
Reads: the sample's IDs in {what}; {config}.
Why it matters: a submitter who forges outputs, references and every summary consistently
(or copies one pass's answers into another) passes every rule that compares files; only
re-running the archived model shows the answers are not its answers.
Example: `outputs/batch-8/warm-3.jsonl` answers `network` for `http.client:HTTPResponse`,
where the archived model's scores give `formats` by a margin of 2.31.""",
        "Find out which answers were not produced by the archived model (a forged or copied "
        "file, or a model other than the one archived) and re-run; do not decide on this run.",
    ),
    _Kind(
        "07",
        "agreement below the floor, not conclusively",
        "warning",
        ("A2.5", "B8"),
        """
What it checks: an answers file judged against a floor below 1 (reduced precision, a GPU)
whose agreement in the sample is below the floor while the upper end of its 95% Wilson
interval is not: the sample cannot tell whether the file meets the floor.
Reads: the sample's IDs in {what}; {config}.
Why it matters: a sample too small to decide must not pass silently, nor reject an honest
run on chance alone.
Example: 197 of 200 sampled IDs agree (98.5%, interval 95.7% to 99.5%) against a 99% floor.""",
        "Replay a larger sample (`audit replay RUN_DIR --sample N`); nondeterministic GPU "
        "kernels can flip near-ties, listed with their margins.",
    ),
)


def _rule(prefix: str, kind: _Kind) -> Rule:
    protocol = prefix[1]
    code = f"{prefix}{kind.number}"
    ref = kind.refs[0] if protocol == "A" else kind.refs[1]
    doc = f"{code}: {kind.title} (audit replay).\n" + kind.doc.strip().format(
        what=_ANSWERS[protocol], config=_CONFIG[protocol]
    )
    return Rule(code, kind.title, ref, kind.severity, (), _not_a_check, doc, kind.fix)


REPLAY_RULES: tuple[Rule, ...] = tuple(
    _rule(prefix, kind) for prefix in ("RA", "RB") for kind in _KINDS
)
"""Every replay code, protocol A's then protocol B's."""

_BY_CODE = {r.code: r for r in REPLAY_RULES}

NOT_REPLAYABLE, HASH, TOKENIZER, MODEL, FILES, DISAGREE, INCONCLUSIVE = (k.number for k in _KINDS)
"""The numbers of the codes, named for the code that raises them."""


def get(code: str) -> Rule | None:
    return _BY_CODE.get(code)


def for_protocol(protocol: str) -> tuple[Rule, ...]:
    prefix = PROTOCOL_PREFIX.get(protocol)
    return tuple(r for r in REPLAY_RULES if prefix and r.code.startswith(prefix))


def rule_of(protocol: str, number: str) -> Rule:
    """The replay code NUMBER (`DISAGREE`) for a run of PROTOCOL."""
    return _BY_CODE[f"{PROTOCOL_PREFIX[protocol]}{number}"]


def for_ref(ref: str) -> list[Rule]:
    return [r for r in REPLAY_RULES if r.protocol_ref == ref]
