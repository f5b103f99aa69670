"""`audit check --waivers FILE`: why rules left out of an audit may be left out.

The file (JSON, or TOML when its name ends in `.toml`) maps rule codes or prefixes to a
written justification (`schemas/waivers.schema.json`). A waiver never hides a finding: it
only lets an audit run with `--select`/`--ignore` reach a verdict other than `incomplete`,
and every output format and the report show it beside the verdict. A file that cannot be
read, breaks its schema or names a code no rule has is bad usage (`AuditorError`)."""

from __future__ import annotations

import json
from pathlib import Path

import schemas
from auditor.errors import AuditorError
from auditor.model import NotRun, Waiver
from auditor.rule import Rule


def load_waivers(path: Path) -> tuple[Waiver, ...]:
    """The waivers of PATH, in the file's order."""
    import tomllib  # only with a waivers file: `audit check` without one never needs it

    path = Path(path)
    try:
        raw = path.read_bytes()
        doc = tomllib.loads(raw.decode("utf-8")) if path.suffix == ".toml" else json.loads(raw)
    except OSError as exc:
        raise AuditorError(f"{path}: cannot be read ({exc.strerror})") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise AuditorError(f"{path}: not a valid waivers file ({exc})") from None
    errors = sorted(schemas.validator("waivers").iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = "/" + "/".join(str(p) for p in e.absolute_path)
        raise AuditorError(f"{path}: does not match waivers.schema.json at {where}: {e.message}")
    return tuple(Waiver(code, text.strip()) for code, text in doc.items())


def not_run(left_out: list[Rule], waivers: tuple[Waiver, ...]) -> tuple[NotRun, ...]:
    """Each rule LEFT_OUT, with the justification of the first waiver whose code it starts
    with."""
    out = []
    for r in left_out:
        w = next((w for w in waivers if r.code.startswith(w.code)), None)
        out.append(NotRun(r.code, r.severity, None if w is None else w.justification, r.title))
    return tuple(out)
