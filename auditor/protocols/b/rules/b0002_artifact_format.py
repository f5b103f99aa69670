"""B0002: every artifact of the run parses and matches its format.

What it checks: the JSON documents (environment, gates, energy summaries) against their
schemas, the JSONL files (prompt sequence, references, reference answers, gate answers) line
by line, and every power and placement file with the evidence reader its content and
extension pick (powermetrics, HWiNFO, nvidia-smi, our NVML/RAPL JSONL; Core ML, ONNX Runtime,
Windows ML, our torch and ORT records): a file no reader recognizes, a power file that is
placement evidence (or the reverse), and what a reader could not read (a cut line, a wrong
encoding, a time going back) are reported with the file and line; file names follow
RUN_DIR.md. What a file says about the measurement (an instrument that gave nothing, a
trace of one sample) is for the B4 and B6 rules, not this one; trial answers are judged by
B0203.
Reads: every artifact's bytes as its reader parses them.
Why it matters: a malformed artifact cannot back any claim (B10): the rules that need it are
skipped or find nothing to recompute, and the verdict cannot be `accepted`.
Example: `power/npu/trial-3.csv` cut in the middle of a row: `line 41: the row has 12
fields, the header 30`.
"""

from __future__ import annotations

from collections.abc import Iterator

from auditor.model import Finding
from auditor.protocols.b.view import RunView
from auditor.rule import rule


@rule(
    code="B0002",
    title="artifact malformed",
    protocol_ref="B10",
    severity="error",
    fix=(
        "Re-create the artifact with the tool that wrote it, unedited; a hand-repaired "
        "file is not evidence."
    ),
)
def check(view: RunView) -> Iterator[Finding]:
    yield from (f for f in view.load_findings if f.code == RULE.code)


RULE = check
