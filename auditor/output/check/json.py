"""`--format json`: the AuditResult as one JSON object (schemas/audit-result.schema.json),
keys in a stable order."""

from __future__ import annotations

import json

from auditor.model import AuditResult
from auditor.output import Format


def render(result: AuditResult, *, color: bool = False) -> str:
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False, default=str) + "\n"


FORMAT = Format("json", "the AuditResult (schemas/audit-result.schema.json)", render)
