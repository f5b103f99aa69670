"""`audit evidence --format json`: an `EvidenceSummary` as one JSON object
(schemas/evidence-summary.schema.json), keys in a stable order."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from auditor.evidence import EvidenceSummary, jsonable
from auditor.output import Format


def to_json(s: EvidenceSummary) -> dict[str, Any]:
    return {
        "file": s.file,
        "size_bytes": s.size_bytes,
        "reader": s.reader,
        "family": s.family,
        "tool": s.tool,
        "description": s.description,
        "usable": s.usable,
        "reason": s.reason,
        "exit_code": s.exit_code,
        "power": jsonable(dataclasses.asdict(s.power)) if s.power else None,
        "placement": jsonable(s.placement) if s.placement is not None else None,
        "meta": jsonable(s.meta),
        "faults": [jsonable(dataclasses.asdict(f)) for f in s.faults],
    }


def render(s: EvidenceSummary, *, color: bool = False) -> str:
    return json.dumps(to_json(s), indent=2, ensure_ascii=False)


FORMAT = Format("json", "one JSON object (schemas/evidence-summary.schema.json)", render)
