"""Protocol B's artifact table: every file of its run dir, the reader that parses it, the
schema it must match, whether the protocol requires it, and the protocol rule a fault in it
is about. The loader, B0006 (required artifacts) and the documentation read this one table.

The fixed names are `../shared/RUN_DIR.md`'s (protocol B section); the rest are the runner's
documented extras (`docs/run-dir-residency.md`). Power and placement evidence may be in any
format a reader of `auditor.readers.evidence_kinds` takes: the reader is chosen from the
file's extension and content, never from what the manifest says about it.
"""

from __future__ import annotations

import re
from typing import Any

from auditor.protocols.loader import Artifact

MANIFEST = "manifest.json"
PROMPTS = "prompts/sequence.jsonl"
REFERENCES = "corpus/references.jsonl"
REFERENCE_OUTPUTS = "reference/outputs.jsonl"
TRIALS = "trials.csv"
POLICIES = "policies.csv"
ENVIRONMENT = "environment.json"
GATES = "gates/gates.json"
OUTPUTS = "outputs/"
POWER = "power/"
PLACEMENT = "placement/"
ENERGY = "energy/"
GATE_OUTPUTS = "gates/"
IDLE = "idle/"
POWER_STATE = "power_state/"
CHECKPOINT_CONFIG = "model/config.json"
POWER_SOURCE = "power_source/"

_ID = r"[A-Za-z0-9._-]+"
OUTPUT_FILE = re.compile(rf"^outputs/(?P<policy>{_ID})/trial-(?P<n>[1-9][0-9]*)\.jsonl\Z")
"""`outputs/<policy_id>/trial-<n>.jsonl` (`\\Z`, not `$`: a name ending in a line break is
another file)."""
POWER_FILE = re.compile(rf"^power/(?P<policy>{_ID})/trial-(?P<n>[1-9][0-9]*)\.(?P<ext>\w+)\Z")
"""`power/<policy_id>/trial-<n>.<ext>`, the extension being the tool's own."""
POWER_SOURCE_FILE = re.compile(
    rf"^power_source/(?P<policy>{_ID})/trial-(?P<n>[1-9][0-9]*)\.[\w.]+\Z"
)
"""`power_source/<policy_id>/trial-<n>.<ext>`: the OS's power source at the trial's start."""
PLACEMENT_FILE = re.compile(rf"^placement/(?P<name>{_ID})\Z")
"""`placement/<policy_id>.<ext>`; a policy id may hold dots, so the file is the policy's whose
id followed by a dot is the longest start of the name."""
ENERGY_FILE = re.compile(rf"^energy/(?P<policy>{_ID})/(?:trial-(?P<n>[1-9][0-9]*)|idle)\.json\Z")
GATE_OUTPUT_FILE = re.compile(rf"^gates/(?P<policy>{_ID})\.jsonl\Z")


def _plain_prompt(obj: Any) -> bool:
    """A prompt line that surely matches prompt-line.schema.json (the schema is asked only
    about the others)."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("id"), str)
        and obj["id"] != ""
        and isinstance(obj.get("text"), str)
    )


ARTIFACTS: tuple[Artifact, ...] = (
    Artifact(
        "manifest",
        MANIFEST,
        "json_doc",
        "manifest_residency",
        True,
        "the declaration fixed before measuring, and every file's SHA-256",
        ref="B1",
    ),
    Artifact(
        "prompts",
        PROMPTS,
        "jsonl_records",
        "prompt_line",
        True,
        "the fixed prompt sequence, in the order every trial classifies it",
        ref="B2",
        options={"surely_valid": lambda obj: _plain_prompt(obj)},
    ),
    Artifact(
        "references",
        REFERENCES,
        "jsonl_id_label",
        "reference_line",
        True,
        "the verified label of each prompt (the accuracy gate)",
        ref="B8",
    ),
    Artifact(
        "reference_outputs",
        REFERENCE_OUTPUTS,
        "jsonl_id_label",
        "reference_line",
        True,
        "the accepted reference artifact's answers (the parity gate)",
        ref="B8",
    ),
    Artifact(
        "outputs",
        OUTPUTS,
        "jsonl_latency",
        "trial_output_line",
        True,
        "every answer of every trial, with its latency",
        ref="B3",
    ),
    Artifact(
        "power",
        POWER,
        "evidence_kinds",
        None,
        True,
        "the raw power trace of every trial, as its tool wrote it",
        ref="B6",
    ),
    Artifact(
        "placement",
        PLACEMENT,
        "evidence_kinds",
        None,
        True,
        "the raw placement evidence of each policy, as its tool wrote it",
        ref="B4",
    ),
    Artifact(
        "trials",
        TRIALS,
        "csv_table",
        "trials",
        True,
        "one row per trial, failed and skipped ones included",
        ref="B3",
    ),
    Artifact(
        "policies",
        POLICIES,
        "csv_table",
        "policies",
        True,
        "one row per policy: what the run claims for it",
        ref="B3",
    ),
    Artifact(
        "environment",
        ENVIRONMENT,
        "json_doc",
        "environment_residency",
        True,
        "machine model, OS build, power source and mode as observed (B1)",
        ref="B1",
    ),
    Artifact(
        "gates",
        GATES,
        "json_doc",
        "gates",
        False,
        "the runner's gate pass per policy (accuracy, agreement, floors)",
        ref="B8",
    ),
    Artifact(
        "gate_outputs",
        GATE_OUTPUTS,
        "jsonl_id_label",
        "output_line",
        False,
        "the answers of each policy's gate pass",
        ref="B8",
    ),
    Artifact(
        "energy",
        ENERGY,
        "json_doc",
        "energy_window",
        False,
        "the runner's reading of each trial's power trace (its summary table)",
        ref="B6",
    ),
    Artifact(
        "checkpoint_config",
        CHECKPOINT_CONFIG,
        "json_doc",
        "hf_config",
        False,
        "the Hugging Face checkpoint's config.json, kept beside its weights (its label map)",
        ref="B1",
    ),
    Artifact(
        "power_state",
        POWER_STATE,
        "evidence_kinds",
        None,
        False,
        "the traces and records the power-state checks cite (B9), as their tool wrote them",
        ref="B9",
    ),
)

BY_KIND = {a.kind: a for a in ARTIFACTS}
REQUIRED_KINDS = tuple(a.kind for a in ARTIFACTS if a.required)
PARSED_PREFIXES = (
    MANIFEST,
    PROMPTS,
    REFERENCES,
    REFERENCE_OUTPUTS,
    OUTPUTS,
    POWER,
    PLACEMENT,
    TRIALS,
    POLICIES,
    ENVIRONMENT,
    GATE_OUTPUTS,
    ENERGY,
    POWER_STATE,
    CHECKPOINT_CONFIG,
)
"""Files under these (or these files) are parsed, so the run-dir walk keeps their bytes."""

PARSE_LIMITS: tuple[tuple[str, int], ...] = (
    (POWER, 128 << 20),
    (PLACEMENT, 128 << 20),
    (OUTPUTS, 256 << 20),
    ("", 64 << 20),
)
"""The largest file of each kind the loader parses, checked before reading: a power trace
or placement report of a 1,000-inference window is kilobytes to megabytes (a day of HWiNFO
at 1 Hz with 300 columns: 70 MB); an outputs file of 1,000 answers times a few hundred
repetitions, megabytes; every other document, kilobytes. A larger one, or one a run lists to
exhaust memory, is hashed and reported, never read whole."""

MANIFEST_REFS: tuple[tuple[str, str], ...] = (
    ("/prompt_sequence", "B2"),
    ("/warmup_iterations", "B2"),
    ("/timer_scope", "B2"),
    ("/trials_per_policy", "B3"),
    ("/trial_order", "B3"),
    ("/placement", "B4"),
    ("/energy", "B6"),
    ("/gates", "B8"),
    ("/reference", "B8"),
    ("/power_state_checks", "B9"),
)
"""Manifest JSON pointer prefix -> the protocol rule the declaration there serves (first
match wins; anything else is a B1 record)."""

COLUMN_REFS: dict[str, str] = {
    **dict.fromkeys(("prompt_sequence_sha256", "warmup_iterations"), "B2"),
    **dict.fromkeys(("power_source", "power_mode", "runtime", "compute_units", "model_tier"), "B1"),
    **dict.fromkeys(("average_power_w", "energy_j", "joules_per_inference", "energy_source"), "B3"),
    **dict.fromkeys(("operation_share", "operation_share_floor", "estimated_cost_share"), "B4"),
    **dict.fromkeys(("accuracy", "agreement"), "B8"),
}
"""CSV column -> the protocol rule its value serves (anything else: B3)."""


def manifest_ref(pointer: str | None, default: str = "B1") -> str:
    """The protocol rule a manifest fault at POINTER is about."""
    for prefix, ref in MANIFEST_REFS:
        if pointer is not None and (pointer == prefix or pointer.startswith(prefix + "/")):
            return ref
    return default


def placement_owner(name: str, policy_ids: list[str]) -> str | None:
    """The policy a `placement/NAME` file belongs to: the longest declared id that, followed
    by a dot, starts the name (`ort-cpu.ort-profile.json` is `ort-cpu`'s); without declared
    policies, what comes before the first dot."""
    if not policy_ids:
        return name.split(".", 1)[0] if "." in name else None
    hits = [p for p in policy_ids if name.startswith(p + ".")]
    return max(hits, key=len) if hits else None
