"""How the HWiNFO reader (`hwinfo`) names the domain of a power column: the table of English
(and Simplified Chinese) names, the power limits left out, the English names of parts, and the
classification by what does not depend on HWiNFO's language (the unit, the `PPT` and `DRAM`
acronyms, the footer's sensor groups) of the names the table does not know. The reader's
docstring (docs/evidence-formats.md) tells the rules; this module holds them."""

from __future__ import annotations

import re
from typing import Any

#: (sensor group pattern or None for any, column name without unit, domain)
DOMAINS: tuple[tuple[str | None, str, str], ...] = (
    (None, r"CPU Package Power", "package"),
    (None, r"CPU PPT", "ppt"),
    (None, r"IA Cores Power|CPU Core Power( \(.*\))?", "core"),
    (None, r"GT Cores Power", "uncore"),
    (None, r"CPU SoC Power( \(.*\))?", "soc"),
    (None, r"System Agent Power", "system_agent"),
    (None, r"Total System Power", "psys"),
    (None, r"PCH Power", "pch"),
    (None, r"Total DRAM Power|DRAM Power", "dram"),
    (None, r"GPU Power|GPU ASIC Power", "gpu"),
    # HWiNFO in Simplified Chinese (功率 is power, 封装 the package): the package and board
    # totals a log without its footer would otherwise read as `other`
    (None, r"CPU ?封装功率", "package"),
    (None, r"GPU ?功率|GPU ASIC ?功率", "gpu"),
    (r"^DDR\d* DIMM|^DIMM", r"Total Power", "dram"),
    (r"^Battery", r"Charge Rate", "battery"),
)

LIMIT = re.compile(r"Limit|\bPL\d\b|\bTDP\b", re.IGNORECASE)
"""Power limits are settings, not readings: English `Limit`, and Intel's `PL1`/`PL2`
acronyms, which HWiNFO keeps in every language."""
KNOWN_PARTS = re.compile(
    r"^(Core \d+ Power|Core Powers \(avg\)|GPU Rail Powers \(avg\)|Rest-of-Chip Power|"
    r"GPU .*(Input|Output) Power.*|GPU Input PP Source Power.*|GPU 12VHPWR Power|GPU SRAM .*|"
    r"GPU (Core|SoC) Power \(.*\)|Core\+SoC\+MISC Power.*|Total Power)$"
)
"""English names of parts (per-core powers, rails, connectors, a DIMM's total outside its
group) that rightly read as `other` or by group: they are known, not untranslated."""


def is_known(base: str) -> bool:
    """Whether `base` is a name the English table or `KNOWN_PARTS` knows."""
    return KNOWN_PARTS.match(base) is not None or any(
        re.fullmatch(pattern, base) for _, pattern, _ in DOMAINS
    )


PART_TOKENS = re.compile(
    r"VDDCR|NVVDD|FBVDD|MSVDD|PEXVDD|VDD|SRAM|PCIe|12VHPWR|\d-pin|Misc|SVI\d|TFN|\bIA\b|"
    r"\bGT\b|\bSoC\b|\d",
    re.IGNORECASE,
)
"""Tokens HWiNFO keeps untranslated that mark a part of a device (a rail, a connector, a
core, a numbered unit), never its whole: a column holding one is no device total."""
GROUP_KIND = (
    ("package", re.compile(r"^CPU \[#\d+\]")),
    ("gpu", re.compile(r"^GPU \[#\d+\]")),
    ("dram", re.compile(r"DIMM")),
)
HOLDERS = {"package", "ppt", "psys", "gpu"}


def by_semantics(columns: list[dict[str, Any]]) -> dict[str, str]:
    """Domains for the power columns whose names the English table does not know (HWiNFO in
    German, French, Russian, Chinese...), from what does not depend on the language: the
    unit (every column here is in W), AMD's `PPT` and `DRAM` acronyms, and the sensor group
    (the footer's group names, `CPU [#0]: ...`, `GPU [#1]: ...`, `DDR5 DIMM [#2]: ...`,
    are device names, not words). In each CPU group the first power column without a part
    token is the package, in each GPU group the board power, in each DIMM group the
    module's total; HWiNFO lists them first (CPU Package Power, GPU Power or GPU ASIC Power
    after AMD's VDDCR rails, the DIMM's Total Power). A group some column of which the
    English table already classified as its total is left alone. Returns {source: domain}
    of the columns so classified."""
    found: dict[str, str] = {}
    for c in columns:
        if c["known"]:
            continue
        if re.search(r"\bPPT\b", c["base"]):
            c["domain"] = found[c["source"]] = "ppt"
        elif re.search(r"\bDRAM\b", c["base"]):
            c["domain"] = found[c["source"]] = "dram"
    by_group: dict[str, list[dict[str, Any]]] = {}
    for c in columns:
        if c["group"]:
            by_group.setdefault(c["group"], []).append(c)
    for group, cols in by_group.items():
        kind = next((k for k, pattern in GROUP_KIND if pattern.search(group)), None)
        if kind is None or any(c["domain"] == kind and c["known"] for c in cols):
            continue
        pick = next(
            (
                c
                for c in cols
                if not c["known"] and c["domain"] == "other" and not PART_TOKENS.search(c["base"])
            ),
            None,
        )
        if pick is not None:
            pick["domain"] = found[pick["source"]] = kind
    return found


def domain_of(base: str, group: str | None) -> str:
    """The domain `DOMAINS` gives a column named BASE (unit left out) in sensor GROUP, else
    `other`."""
    for group_pattern, name_pattern, domain in DOMAINS:
        if re.fullmatch(name_pattern, base) and (
            group_pattern is None or (group is not None and re.search(group_pattern, group))
        ):
            return domain
    return "other"
