"""The auditor: re-validates a run directory against `schemas/` and every rule of the
protocol, recomputing each claim from the raw files (`audit check`), and renders and verifies
signed reports (`audit report`, `audit verify`). It never imports `runner`: the two meet only
in the run directory's files and in `schemas/`."""

__version__ = "0.1.0"
