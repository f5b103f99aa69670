"""`audit replay --format json`: the replay result as one JSON object
(schemas/replay-result.schema.json)."""

from __future__ import annotations

import json
from typing import Any

from auditor.output import Format


def render(result: Any, *, color: bool = False) -> str:
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False)


FORMAT = Format(
    "json",
    "the sample, every answers file's agreement and the findings "
    "(schemas/replay-result.schema.json)",
    render,
)
