"""Protocol A's artifact table: every file of its run dir, the reader that parses it, the
schema it must match, and whether the protocol requires it. The loader, A0006 (required
artifacts) and the documentation read this one table."""

from __future__ import annotations

import re

from auditor.protocols.loader import Artifact

MANIFEST = "manifest.json"
EXPECTED = "corpus/expected_ids.txt"
REFERENCES = "corpus/references.jsonl"
SPLITS = {"train": "corpus/splits/train_ids.txt", "tune": "corpus/splits/tune_ids.txt"}
RESULTS = "resultats-bruts.csv"
TIMELINE = "timeline.jsonl"
ENVIRONMENT = "environment.json"
OFFERS = "economics/offers.json"
SET_CHECK = "checks/set-check.json"
CLAIMS = "claims.json"
INPUTS = "corpus/eval-inputs.jsonl"
"""Where the runner writes the evaluation inputs; the manifest's `corpus.inputs_file` names it."""
MODEL = "model/"
RECIPE = "model/recipe.json"
"""How a workload trained at run time was trained (schemas/revision-kinds.json, `recipe`)."""
TOKENIZER = "model/tokenizer.json"
"""The tokenizer file the revision kinds name; kept in memory to count truncation (A3.3)."""
OUTPUTS = "outputs/"
MEMORY_TRACES = "traces/memory/"
PLACEMENT = "evidence/placement/"

PASS_FILE = re.compile(
    r"^(?P<variant>[A-Za-z0-9._-]+)/(?P<phase>cold|warm)-(?P<run>[1-9][0-9]*)\.(?P<ext>jsonl|json)\Z"
)
"""`<variant_id>/<phase>-<run_index>.<ext>` under outputs/, traces/memory/, evidence/placement/
(`\\Z`, not `$`: a name ending in a line break is another file, not this pass's)."""


ARTIFACTS: tuple[Artifact, ...] = (
    Artifact(
        "manifest",
        MANIFEST,
        "json_doc",
        "manifest",
        True,
        "the declaration fixed before measuring, and every file's SHA-256",
    ),
    Artifact(
        "results",
        RESULTS,
        "csv_table",
        "resultats-bruts",
        True,
        "one row per pass, failed passes included (A8)",
    ),
    Artifact("expected_ids", EXPECTED, "id_list", None, True, "the evaluation IDs in input order"),
    Artifact(
        "references",
        REFERENCES,
        "jsonl_id_label",
        "reference_line",
        True,
        "the verified label of each evaluation ID",
        ref="A2.4",
    ),
    Artifact("splits", "corpus/splits/", "id_list", None, True, "train and tune ID lists (A1.3)"),
    Artifact(
        "outputs", OUTPUTS, "jsonl_id_label", "output_line", True, "every answer of every pass"
    ),
    Artifact(
        "timeline",
        TIMELINE,
        "jsonl_records",
        "timeline_entry",
        True,
        "one entry per pass and warm-up block, in the order run",
        ref="A6.4",
    ),
    Artifact(
        "memory_traces",
        MEMORY_TRACES,
        "json_doc",
        "memory_trace",
        True,
        "A7 baselines, peaks and memory_stats per pass",
    ),
    Artifact(
        "placement",
        PLACEMENT,
        "json_doc",
        "placement",
        True,
        "where parameters and inputs lived, per pass (A4.2)",
    ),
    Artifact(
        "environment",
        ENVIRONMENT,
        "json_doc",
        "environment",
        True,
        "the environment as observed (A4.1)",
    ),
    Artifact(
        "offers",
        OFFERS,
        "json_doc",
        "offers",
        False,
        "the offers the economics use (required when the manifest names an offer)",
        special=True,
    ),
    Artifact(
        "set_check",
        SET_CHECK,
        "json_doc",
        "set_check",
        True,
        "the archived set and duplicate verification (A2.6)",
    ),
    Artifact(
        "inputs",
        INPUTS,
        "jsonl_records",
        "input_line",
        False,
        "the evaluation texts in input order (required when the manifest names "
        "`corpus.inputs_file`)",
        special=True,
    ),
    Artifact(
        "claims",
        CLAIMS,
        "json_doc",
        "claims",
        False,
        "typed summaries, rankings, projections and memory figures the run states",
    ),
    Artifact(
        "recipe",
        RECIPE,
        "json_doc",
        "recipe",
        False,
        "how a workload trained at run time was trained (required when it was)",
        ref="A1.2",
        special=True,
    ),
)

BY_KIND = {a.kind: a for a in ARTIFACTS}
REQUIRED_KINDS = tuple(a.kind for a in ARTIFACTS if a.required)
PARSED_PREFIXES = (
    "outputs/",
    "corpus/",
    "traces/",
    "evidence/",
    "checks/",
    "economics/",
    MANIFEST,
    RESULTS,
    TIMELINE,
    ENVIRONMENT,
    CLAIMS,
    RECIPE,
    TOKENIZER,
)
"""Files under these (or these files) are parsed, so the run-dir walk keeps their bytes after
hashing, whatever their size up to its limit (`rundir.MAX_PARSED_BYTES`)."""
STREAMED_PREFIXES = (OUTPUTS,)
"""Of those, the files read one at a time as they are parsed (their lines can be tens of
millions): only per-file statistics, and the lines of the files with a fault, are kept."""


# -- the most specific protocol rule a malformed field is about -----------------------------

COLUMN_REFS: dict[str, str] = {
    **dict.fromkeys(("experiment_id", "variant_id"), "A3.1"),
    **dict.fromkeys(("corpus_revision", "model_revision", "tokenizer_revision", "seed"), "A1.2"),
    **dict.fromkeys(
        (
            "gpu_model",
            "device",
            "driver_version",
            "python_version",
            "torch_version",
            "runtime_version",
        ),
        "A4.1",
    ),
    "gpu_count": "A4.2",
    **dict.fromkeys(("precision", "batch", "context"), "A3.1"),
    "phase": "A5.2",
    "run_index": "A6.1",
    "warmup_iterations": "A6.1",
    **dict.fromkeys(
        (
            "expected_ids",
            "observed_ids",
            "ids_match",
            "format_valid",
            "quality_value",
            "corpus_accepted",
        ),
        "A2.5",
    ),
    **dict.fromkeys(("quality_metric", "quality_threshold", "quality_tolerance"), "A1.1"),
    "elapsed_seconds": "A6.3",
    **dict.fromkeys(
        (
            "baseline_allocated_bytes",
            "baseline_reserved_bytes",
            "peak_allocated_bytes",
            "peak_reserved_bytes",
        ),
        "A7.2",
    ),
    **dict.fromkeys(("duration_days", "lots", "package_total_usd_minor"), "A9.1"),
    "accepted_unique_corpora": "A9.3",
}
"""CSV column -> the protocol rule its value serves: a cell that is empty or mistyped is
reported under it (an empty `model_revision` breaks A1.2, not only A8.3)."""

MANIFEST_REFS: tuple[tuple[str, str], ...] = (
    ("/revisions", "A1.2"),
    ("/seed", "A1.2"),
    ("/quality_rule", "A1.1"),
    ("/declared_at", "A1.1"),
    ("/task/unit_of_work", "A9.4"),
    ("/task", "A1.1"),
    ("/corpus/truncation", "A3.3"),
    ("/replay/model", "A1.2"),
    ("/workload", "A1.2"),
    ("/corpus/revision", "A1.2"),
    ("/corpus", "A1.4"),
    ("/timer_scope", "A5.1"),
    ("/announced_variable", "A3.1"),
    ("/variants", "A3.1"),
    ("/warmup_iterations", "A6.1"),
    ("/warm_passes_per_variant", "A6.1"),
    ("/pass_order", "A6.2"),
    ("/economics", "A9.1"),
    ("/artifacts", "A10.1"),
)
"""Manifest JSON pointer prefix -> the protocol rule the declaration there serves (first
match wins): a schema fault at `/revisions/model` is an A1.2 fault."""


DOC_REFS: tuple[tuple[str, str, str], ...] = (
    (PLACEMENT, "/pid", "A6.5"),
    (PLACEMENT, "/parameter_devices", "A4.2"),
    (PLACEMENT, "/input_devices", "A4.2"),
    (MEMORY_TRACES, "/other_sources", "A7.5"),
)
"""(folder, JSON pointer prefix, protocol rule) of per-pass documents whose fields a verdict
reads: a schema fault there (a placement without its `pid`, a device key that is no device,
a memory unit that is no unit) is about that rule, not only about the file's format."""


def doc_ref(file: str, pointer: str | None, default: str) -> str:
    """The protocol rule a fault at POINTER of the per-pass document FILE is about."""
    for folder, prefix, ref in DOC_REFS:
        if (
            file.startswith(folder)
            and pointer is not None
            and (pointer == prefix or pointer.startswith(prefix + "/"))
        ):
            return ref
    return default


def manifest_ref(pointer: str | None, default: str) -> str:
    """The protocol rule a manifest fault at POINTER is about (DEFAULT when none is
    more specific)."""
    for prefix, ref in MANIFEST_REFS:
        if pointer is not None and (pointer == prefix or pointer.startswith(prefix + "/")):
            return ref
    return default
