"""The protocols' names as `manifest.json`'s `protocol` states them, and how their rules are
cited: one definition that the registry, the protocol packages, replay, the report, the
command line and archive comparisons read (importing this module imports only `re`)."""

import re

PROTOCOL_A = "accepted-corpus-cost"
"""Protocol A: an accepted corpus before cost."""
PROTOCOL_B = "residency-energy"
"""Protocol B: energy and accelerator residency."""

CITED_AS = {PROTOCOL_A: r"A\d{1,2}\.\d{1,2}", PROTOCOL_B: r"B\d{1,2}"}
"""How each protocol's rules are cited (`A2.1`, `B7`), as opposed to a rule code (`A0201`)."""
RUN_DIR = "RUN_DIR"
"""The rule every protocol shares: a run dir names a protocol the auditor knows."""
REF = re.compile("|".join([*CITED_AS.values(), RUN_DIR]))
"""A protocol rule's name, whole (`REF.fullmatch("A2.1")`)."""
_EDGES = r"(?<![\w.])({})(?!\w|\.\w)"
"""A citation in text: `A2.1` but not `A2.10`, `XA2.1` or `RUN_DIR.md`."""
CITATION = re.compile(_EDGES.format(REF.pattern))
"""Every protocol rule a text cites (`CITATION.findall(text)`)."""


def citing(ref: str) -> re.Pattern[str]:
    """The citations of the one rule REF in a text, with `CITATION`'s edges."""
    return re.compile(_EDGES.format(re.escape(ref)))
