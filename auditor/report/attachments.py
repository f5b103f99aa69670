"""What the signed PDF carries besides its pages (and the report directory beside
report.html): the evidence it summarises and the reference material a reader looks up rather
than reads, so no page of the report is one a reader skips whole.

- `artifact-hashes.sha256`: the SHA-256 of every file of the run as audited, in `sha256sum`
  format relative to the report directory (`sha256sum -c artifact-hashes.sha256` checks the
  copy under run/);
- `rules.txt`: every rule the auditor applies, with what it checks, why, an example, what to
  do, and the text of the protocol rule it enforces;
- the run's manifest and the audit result (every finding), and what the run's protocol
  attaches: its raw results tables and raw evidence (protocol A: resultats-bruts.csv;
  protocol B: trials.csv, policies.csv and every power trace and placement file);
- with `audit report --replay N`, the replay result (`replay.json`).

All of them are rendered from the view model (or are the run's own bytes), and all are inside
the PDF's signature and listed in the DSSE bundle.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from auditor import protocol_text

HASHES = "artifact-hashes.sha256"
RULES = "rules.txt"
RUN_SUBDIR = "run"

HEAD: tuple[tuple[str, str, str], ...] = (
    # (name in the PDF, path in the report directory, description)
    (
        HASHES,
        HASHES,
        "SHA-256 of every file of the run as audited (sha256sum -c from the report directory)",
    ),
    (
        RULES,
        RULES,
        "Every rule the auditor applies: what it checks, why, an example, what to "
        "do, and the protocol rule it enforces",
    ),
)
TAIL: tuple[tuple[str, str, str], ...] = (
    (
        "manifest.json",
        f"{RUN_SUBDIR}/manifest.json",
        "The run's declaration and the hash of every file",
    ),
    ("audit.json", "audit.json", "The audit result: every finding with its evidence"),
)
"""Every report's attachments; the run's protocol adds its own between them (its raw results
tables and raw evidence: the report module's `attachments(view)`)."""
REPLAY = (
    "replay.json",
    "replay.json",
    "The replay of the archived model (audit replay): the "
    "sample and its seed, every answers file's agreement, the disagreeing IDs",
)
"""Attached when the report was built with `--replay`."""

MAX_ATTACHED_BYTES = 16 << 20
"""A run file larger than this is not attached to the PDF (it stays in the report directory's
run/ copy, listed in the signed bundle): a PDF of gigabytes helps no reader."""


def listed(
    run_files: set[str] | dict[str, int],
    extra: Iterable[tuple[str, str]] = (),
    *,
    replay: bool = False,
) -> list[dict[str, str]]:
    """The attachments of a report of a run holding RUN_FILES (the run's own files are
    attached only when it has them); EXTRA: (run-relative path, description) of the files
    the protocol attaches, in order; the replay result's with REPLAY."""
    own = tuple((rel, f"{RUN_SUBDIR}/{rel}", desc) for rel, desc in extra)
    return [
        {"name": name, "path": path, "description": desc}
        for name, path, desc in (*HEAD, *own, *TAIL, *((REPLAY,) if replay else ()))
        if not path.startswith(f"{RUN_SUBDIR}/") or name in run_files
    ]


def hashes_text(vm: dict[str, Any]) -> str:
    return "".join(f"{a['sha256']}  {RUN_SUBDIR}/{a['path']}\n" for a in vm["artifacts"])


def rules_text(vm: dict[str, Any]) -> str:
    def wrap(label: str, text: str) -> str:
        return textwrap.fill(text, 96, initial_indent=f"  {label}: ", subsequent_indent="    ")

    out = [
        f"The rules of {vm['tool']['name']} {vm['tool']['version']} "
        f"(protocol {vm['protocol']}), and the protocol rules they enforce "
        "(docs/protocol.md).\n"
    ]
    for r in vm["rules"]:
        ref = protocol_text.get(r["protocol_ref"])
        out.append(f"{r['code']}  {r['severity']}  protocol {r['protocol_ref']}  {r['title']}")
        out.append(textwrap.indent(r["doc"], "  "))
        out.append(wrap("What to do", r["fix"]))
        if ref is not None:
            out.append(wrap(f"Protocol {ref.ref}", ref.plain()))
        out.append("")
    return "\n".join(out)


def files(
    vm: dict[str, Any], audit_json: bytes, run_dir: Path, replay_json: bytes | None = None
) -> list[tuple[str, bytes, str]]:
    """(name, bytes, description) of every attachment, in the order of `ATTACHMENTS`."""
    made = {
        HASHES: hashes_text(vm).encode(),
        RULES: rules_text(vm).encode(),
        "audit.json": audit_json,
    }
    if replay_json is not None:
        made[REPLAY[0]] = replay_json
    out = []
    for a in vm["attachments"]:
        if a["name"] in made:
            out.append((a["name"], made[a["name"]], a["description"]))
        else:
            src = run_dir / a["name"]
            if src.is_file() and not src.is_symlink() and src.stat().st_size <= MAX_ATTACHED_BYTES:
                out.append((a["name"], src.read_bytes(), a["description"]))
    return out
