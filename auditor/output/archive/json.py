"""`audit archive --format json`: the archive outcome as one JSON object."""

from __future__ import annotations

import json
from typing import Any

from auditor.output import Format


def render(outcome: Any, *, color: bool = False) -> str:
    return json.dumps(outcome.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"


FORMAT = Format("json", "one JSON object", render)
