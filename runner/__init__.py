"""`runner`: runs protocol A (an accepted corpus before cost, `runner execute`) and protocol B
(energy and accelerator residency, `runner residency`) and writes a run directory that
`audit check` can re-validate. The layouts are `docs/run-dir.md` and
`docs/run-dir-residency.md`; every file it writes is validated against `schemas/` before the
run is declared complete.

The folders mirror `auditor/protocols/{a,b}`: `runner/a/` is protocol A (and
`runner memory-probe`), `runner/b/` protocol B (its energy instruments in `runner/b/energy/`),
and the modules beside them are what both use: `cli` (the commands, the one module that
reaches both protocols), `config` (TOML helpers), `conformance` (a configuration that
breaks its protocol, refused unless `--off-protocol`), `corpus`, `workloads/`, `model` (device,
threads, training), `onnx_export` and `replay` (the archived model), `artifacts` (writing and
validating files; protocol A's layout too, the validator's default), `rundir` (atomic run
dirs), `manifest` (the shared header and revisions), `revisions`, `environment` (each
protocol's `environment.json` from shared pieces), `order` (seeded alternating rounds),
`records` (timestamps and incidents), `errors`; `defaults/` holds the embedded
configurations (package data). Neither
protocol's package imports the other, and the shared modules import neither
(tests/test_runner_layout.py).

`runner` never imports `auditor`; the two meet only in the files and in `schemas/`.
"""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("gpubench-audit")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"
