"""`--format json`: the archive outcome, or the comparison (schemas/comparison.schema.json),
as one JSON object."""

from __future__ import annotations

import json
from typing import Any


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n"


def archive(outcome: Any) -> str:
    return _dump(outcome.to_json())


def comparison(cmp: Any) -> str:
    return _dump(cmp.to_json())
