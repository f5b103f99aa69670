"""`runner`: runs protocol A (an accepted corpus before cost, `runner execute`) and protocol B
(energy and accelerator residency, `runner residency`) and writes a run directory that
`audit check` can re-validate. The layouts are `docs/run-dir.md` and
`docs/run-dir-residency.md`; every file it writes is validated against `schemas/` before the
run is declared complete.

`runner` never imports `auditor`; the two meet only in the files and in `schemas/`.
"""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("gpubench-audit")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
