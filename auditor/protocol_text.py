"""The protocol text the auditor enforces, rule by rule, read from `docs/protocol.md`.

`audit explain A2.1` prints a rule's text and the report's appendix quotes the rules the
report cites, so both read the one page a reviewer also reads on the web. The page keeps a
simple shape on purpose (see its preamble): `##` per protocol, `###` per group, one list item
per rule starting `<a id="REF"></a>**REF**`, continuation lines indented. This module turns it
into plain data (no Markdown reaches a report: a `code` span is a separate segment).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DOC_NAME = "protocol.md"
_ITEM = re.compile(r'^- <a id="(?P<ref>[^"]+)"></a>\*\*(?P=ref)\*\*\s*(?P<text>.*)$')


@dataclass(frozen=True)
class ProtocolRule:
    """One rule of the protocol text."""

    ref: str
    """Its name and anchor: `A2.1`, `B7`, `RUN_DIR`."""
    protocol: str
    """The heading of its protocol (`Protocol A: ...`)."""
    group: str
    """The heading of its group (`A2 When a corpus counts as accepted`)."""
    text: str
    """The rule in plain words; `code` spans keep their backticks (see `segments`)."""

    def segments(self) -> list[tuple[str, bool]]:
        """The text as (segment, is_code) pairs, for a renderer that shows code apart."""
        parts = re.split(r"`([^`]*)`", self.text)
        return [(p, i % 2 == 1) for i, p in enumerate(parts) if p]

    def plain(self) -> str:
        """The text without Markdown marks."""
        return self.text.replace("`", "")


def source() -> Path | None:
    """Where the page is: the checkout's docs/ (an editable install), else the copy a wheel
    installs under `<prefix>/share/gpubench-audit/`."""
    for candidate in (
        Path(__file__).resolve().parents[1] / "docs" / DOC_NAME,
        Path(sys.prefix) / "share" / "gpubench-audit" / DOC_NAME,
    ):
        if candidate.is_file():
            return candidate
    return None


def parse(text: str) -> dict[str, ProtocolRule]:
    """Every rule of a page of that shape, by ref, in page order."""
    rules: dict[str, ProtocolRule] = {}
    protocol = group = ""
    current: list[str] | None = None
    ref = ""

    def flush() -> None:
        if current is not None:
            rules[ref] = ProtocolRule(ref, protocol, group, " ".join(current))

    for line in text.splitlines():
        m = _ITEM.match(line)
        if m:
            flush()
            ref, current = m["ref"], [m["text"].strip()]
        elif current is not None and line.startswith("  ") and line.strip():
            current.append(line.strip())
        else:
            flush()
            current = None
            if line.startswith("## "):
                protocol, group = line[3:].strip(), ""
            elif line.startswith("### "):
                group = line[4:].strip()
    flush()
    return rules


@cache
def rules() -> dict[str, ProtocolRule]:
    """The rules of docs/protocol.md by ref; empty when the page is not installed."""
    path = source()
    return parse(path.read_text(encoding="utf-8")) if path else {}


def get(ref: str) -> ProtocolRule | None:
    return rules().get(ref)


@dataclass(frozen=True)
class Section:
    """A group of the protocol text (`### A9 Economics without invented production`)."""

    ref: str
    """Its name: `A9`."""
    protocol: str
    group: str
    """Its heading, name included: `A9 Economics without invented production`."""
    rules: tuple[ProtocolRule, ...]


def section(ref: str) -> Section | None:
    """The section named REF (`A9`) with its rules in page order; None when there is none.
    A section is a group whose heading starts with its name; a protocol written without
    groups (protocol B: `B7` is a rule) has none."""
    members = [
        r
        for r in rules().values()
        if r.group.split(" ", 1)[0] == ref and r.ref.startswith(f"{ref}.")
    ]
    if not members:
        return None
    return Section(ref, members[0].protocol, members[0].group, tuple(members))
