"""The names and schemas of a protocol B run directory (docs/run-dir-residency.md): the
fixed names of RUN_DIR.md and ours, and which schema covers which file (strict: a file no
schema covers and that is not a documented raw file stops the run)."""

from __future__ import annotations

from pathlib import Path

from runner import artifacts

PROTOCOL = "residency-energy"
SEQUENCE_FILE = "prompts/sequence.jsonl"
REFERENCE_FILE = "reference/outputs.jsonl"
CONFIG_COPY = "config/residency.toml"

#: Which schema covers which file of a protocol B run dir (docs/run-dir-residency.md).
LAYOUT = artifacts.Layout(
    rules=(
        ("manifest.json", "json", "manifest_residency"),
        ("trials.csv", "table", "trials"),
        ("policies.csv", "table", "policies"),
        (SEQUENCE_FILE, "jsonl", "prompt_line"),
        ("corpus/references.jsonl", "jsonl", "reference_line"),
        (REFERENCE_FILE, "jsonl", "reference_line"),
        ("outputs/*/trial-*.jsonl", "jsonl", "trial_output_line"),
        ("power/*/trial-*.jsonl", "jsonl", "runner_power_record"),
        ("idle/*/*.jsonl", "jsonl", "runner_power_record"),
        ("placement/*.torch.json", "json", "torch_placement"),
        ("placement/*.ort.json", "json", "ort_placement"),
        ("placement/*.ort-profile.json", "json-raw", "onnxruntime profile"),
        ("placement/*.winml.json", "json", "windows_ml_placement"),
        ("energy/*/trial-*.json", "json", "energy_window"),
        ("energy/*/idle.json", "json", "idle_power"),
        ("gates/gates.json", "json", "gates"),
        ("gates/*.jsonl", "jsonl", "output_line"),
        ("environment.json", "json", "environment_residency"),
    ),
    raw=(
        "model/*",
        CONFIG_COPY,
        # external power logs, kept in their tool's own format (HWiNFO CSV, powermetrics
        # text) and read by the auditor's evidence readers; B9's evidence
        "power/*/trial-*.csv",
        "power/*/trial-*.txt",
        "idle/*/*.csv",
        "idle/*/*.txt",
        "power_state/*",
        "power_source/*",
        "placement/*.computeplan.log",
    ),
    strict=True,
)


def rel_path(root: Path, path: Path) -> str:
    """`path` relative to the run dir `root`, `/`-separated."""
    return path.resolve().relative_to(root.resolve()).as_posix()
