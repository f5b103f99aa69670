"""Protocol A's artifact table: every file of its run dir, the reader that parses it, the
schema it must match, and whether the protocol requires it. The loader, A0006 (required
artifacts) and the documentation read this one table."""

from __future__ import annotations

import re
from dataclasses import dataclass

MANIFEST = "manifest.json"
EXPECTED = "corpus/expected_ids.txt"
REFERENCES = "corpus/references.jsonl"
SPLITS = {"train": "corpus/splits/train_ids.txt", "tune": "corpus/splits/tune_ids.txt"}
RESULTS = "resultats-bruts.csv"
TIMELINE = "timeline.jsonl"
ENVIRONMENT = "environment.json"
OFFERS = "economics/offers.json"
SET_CHECK = "checks/set-check.json"
OUTPUTS = "outputs/"
MEMORY_TRACES = "traces/memory/"
PLACEMENT = "evidence/placement/"

PASS_FILE = re.compile(
    r"^(?P<variant>[A-Za-z0-9._-]+)/(?P<phase>cold|warm)-(?P<run>[1-9][0-9]*)\.(?P<ext>jsonl|json)$")
"""`<variant_id>/<phase>-<run_index>.<ext>` under outputs/, traces/memory/, evidence/placement/."""


@dataclass(frozen=True)
class Artifact:
    kind: str
    """The key rules name in `requires` and the view lists in `available`."""
    path: str
    """The file, or the folder (ending in `/`) holding one file per pass."""
    reader: str
    """The module of `auditor.readers` that parses it."""
    schema: str | None
    """Its schema kind in `schemas/` (a JSON Schema, or the CSV's table schema)."""
    required: bool
    """Required by the protocol; the offers file only when the manifest names an offer."""
    what: str


ARTIFACTS: tuple[Artifact, ...] = (
    Artifact("manifest", MANIFEST, "json_doc", "manifest", True,
             "the declaration fixed before measuring, and every file's SHA-256"),
    Artifact("results", RESULTS, "csv_table", "resultats-bruts.table.json", True,
             "one row per pass, failed passes included (A8)"),
    Artifact("expected_ids", EXPECTED, "id_list", None, True,
             "the evaluation IDs in input order"),
    Artifact("references", REFERENCES, "jsonl_id_label", "reference_line", True,
             "the verified label of each evaluation ID"),
    Artifact("splits", "corpus/splits/", "id_list", None, True,
             "train and tune ID lists (A1.3)"),
    Artifact("outputs", OUTPUTS, "jsonl_id_label", "output_line", True,
             "every answer of every pass"),
    Artifact("timeline", TIMELINE, "jsonl_records", "timeline_entry", True,
             "one entry per pass and warm-up block, in the order run"),
    Artifact("memory_traces", MEMORY_TRACES, "json_doc", "memory_trace", True,
             "A7 baselines, peaks and memory_stats per pass"),
    Artifact("placement", PLACEMENT, "json_doc", "placement", True,
             "where parameters and inputs lived, per pass (A4.2)"),
    Artifact("environment", ENVIRONMENT, "json_doc", "environment", True,
             "the environment as observed (A4.1)"),
    Artifact("offers", OFFERS, "json_doc", "offers", False,
             "the offers the economics use (required when the manifest names an offer)"),
    Artifact("set_check", SET_CHECK, "json_doc", "set_check", True,
             "the archived set and duplicate verification (A2.6)"),
)

BY_KIND = {a.kind: a for a in ARTIFACTS}
REQUIRED_KINDS = tuple(a.kind for a in ARTIFACTS if a.required)
PARSED_PREFIXES = ("outputs/", "corpus/", "traces/", "evidence/", "checks/", "economics/")
"""Files under these are parsed, so the run-dir walk keeps their bytes after hashing."""
STREAMED_PREFIXES = (OUTPUTS,)
"""Of those, the files read one at a time as they are parsed (their lines can be tens of
millions): only per-file statistics, and the lines of the files with a fault, are kept."""
