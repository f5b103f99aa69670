"""The macOS run's cpu trial 2 trace: one sample's Combined Power raised by 2 W above its
CPU + GPU + ANE parts (re-sealed, the claims left as the harness wrote them): a total no
instrument gives, which only B0608 judges (the energy claimed from that trace is its
finding too)."""

from __future__ import annotations

import re
from pathlib import Path

import b_runs as br

TEMPLATE = "macos"


def mutate(root: Path) -> None:
    path = root / "power/cpu/trial-2.txt"
    text = path.read_text(encoding="utf-8")
    combined = re.compile(r"(Combined Power \(CPU \+ GPU \+ ANE\): )(\d+)( mW)")
    hits = list(combined.finditer(text))
    m = hits[len(hits) // 2]
    text = text[: m.start(2)] + str(int(m[2]) + 2000) + text[m.end(2) :]
    path.write_text(text, encoding="utf-8")
    br.rehash(root)


MUTATION = mutate
