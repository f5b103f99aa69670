"""Which answers files `audit replay` compares in a protocol A run, and the floor each is
judged against (`Protocol.replay_sources`; docs/replay.md): every pass's output file, exact
on a float32 CPU variant, else the default floor (protocol A declares no parity floor)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.replay.compare import DEFAULT_FLOOR, Threshold
from auditor.replay.contract import PASS_FILE, Source, by_id, on_cpu


def sources(manifest: Mapping[str, Any], files: list[str]) -> list[Source]:
    """Every pass's output file; exact on a float32 CPU variant, else the default floor
    (protocol A declares no parity floor)."""
    variants = by_id(manifest.get("variants"), "variant_id")
    out = []
    for rel in files:
        m = PASS_FILE.match(rel)
        if m is None:
            continue
        v = variants.get(m["config"])
        if v is None:
            threshold = Threshold(DEFAULT_FLOOR, "the variant is not in the manifest's variants")
        elif v.get("precision") == "float32" and on_cpu(v.get("device")):
            threshold = Threshold(1.0, f"float32 on {v['device']}")
        else:
            threshold = Threshold(
                DEFAULT_FLOOR,
                f"{v.get('precision')} on {v.get('device')} (protocol A declares no parity floor)",
            )
        out.append(Source(rel, "pass", m["config"], threshold))
    return out
