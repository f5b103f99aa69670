"""`audit compare --format json`: the comparison as one JSON object
(schemas/comparison.schema.json)."""

from __future__ import annotations

import json
from typing import Any

from auditor.output import Format


def render(cmp: Any, *, color: bool = False) -> str:
    return json.dumps(cmp.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"


FORMAT = Format("json", "one JSON object (schemas/comparison.schema.json)", render)
