"""`--format csv`: the comparison table (ranked configurations first, then those not
accepted), RFC 4180, one row per configuration and offer; the columns are
`compare.CSV_COLUMNS`."""

from __future__ import annotations

import csv
import io
from typing import Any

from auditor.output import Format


def render(cmp: Any, *, color: bool = False) -> str:
    from auditor.archive.compare import CSV_COLUMNS

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(CSV_COLUMNS)
    for row in cmp.table_rows():
        w.writerow(
            [
                ""
                if row[c] is None
                else str(row[c]).lower()
                if isinstance(row[c], bool)
                else row[c]
                for c in CSV_COLUMNS
            ]
        )
    return buf.getvalue()


FORMAT = Format("csv", "the comparison table as RFC 4180 CSV", render)
