"""The contract itself: every schema is a valid 2020-12 schema, the CSV table schema gives
RUN_DIR.md's header byte for byte, and a built wheel carries schemas/ and templates/."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import schemas

ROOT = Path(__file__).resolve().parents[1]

RUN_DIR_HEADER = (
    "experiment_id,variant_id,corpus_revision,model_revision,tokenizer_revision,seed,gpu_model,"
    "gpu_count,device,driver_version,python_version,torch_version,runtime_version,precision,"
    "batch,context,phase,run_index,warmup_iterations,expected_ids,observed_ids,ids_match,"
    "format_valid,quality_metric,quality_threshold,quality_tolerance,quality_value,"
    "corpus_accepted,elapsed_seconds,baseline_allocated_bytes,baseline_reserved_bytes,"
    "peak_allocated_bytes,peak_reserved_bytes,duration_days,lots,package_total_usd_minor,"
    "accepted_unique_corpora,notes"
)

# protocol B (RUN_DIR.md, "Protocol B"): trials.csv and policies.csv
TRIALS_HEADER = (
    "experiment_id,policy_id,role,trial_index,order_position,prompt_sequence_sha256,"
    "warmup_iterations,inferences,started_at,ended_at,wall_seconds,p95_latency_ms,"
    "average_power_w,energy_j,joules_per_inference,power_source,power_mode,energy_source,"
    "status,notes"
)
POLICIES_HEADER = (
    "experiment_id,policy_id,role,runtime,compute_units,model_tier,trials,median_wall_seconds,"
    "p95_latency_ms,average_power_w,joules_per_inference,accuracy,agreement,operation_share,"
    "operation_share_floor,estimated_cost_share,verdict,notes"
)
TABLE_HEADERS = {
    schemas.RESULTS_TABLE: RUN_DIR_HEADER,
    "trials": TRIALS_HEADER,
    "policies": POLICIES_HEADER,
}


@pytest.mark.parametrize("kind", sorted(schemas.SCHEMA_FILES))
def test_every_schema_is_valid_2020_12(kind: str) -> None:
    schema = schemas.load(kind)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_every_schema_file_is_registered() -> None:
    on_disk = {p.name for p in (ROOT / "schemas").glob("*.schema.json")}
    assert on_disk == set(schemas.SCHEMA_FILES.values())


def test_results_header_is_run_dir_md_byte_for_byte() -> None:
    assert ",".join(schemas.results_columns()) == RUN_DIR_HEADER


def test_results_header_matches_shared_run_dir_md_when_present() -> None:
    run_dir_md = ROOT.parent / "shared" / "RUN_DIR.md"
    if not run_dir_md.exists():
        pytest.skip("../shared/RUN_DIR.md is not beside this checkout")
    assert RUN_DIR_HEADER in run_dir_md.read_text(encoding="utf-8")


@pytest.mark.parametrize("table", sorted(TABLE_HEADERS))
def test_every_table_header_is_run_dir_md_byte_for_byte(table: str) -> None:
    assert ",".join(schemas.table_columns(table)) == TABLE_HEADERS[table]
    run_dir_md = ROOT.parent / "shared" / "RUN_DIR.md"
    if not run_dir_md.exists():
        pytest.skip("../shared/RUN_DIR.md is not beside this checkout")
    # a whole line of the page's code blocks, not a prefix of a longer header
    assert TABLE_HEADERS[table] in run_dir_md.read_text(encoding="utf-8").splitlines()


def test_protocol_b_column_loaders() -> None:
    assert ",".join(schemas.trials_columns()) == TRIALS_HEADER
    assert ",".join(schemas.policies_columns()) == POLICIES_HEADER


@pytest.mark.parametrize("table", sorted(schemas.TABLE_FILES))
def test_table_schema_types_are_known(table: str) -> None:
    fields = schemas.table(table)["fields"]
    assert {f["type"] for f in fields} <= {"string", "integer", "number", "boolean"}
    assert all(f.get("description") for f in fields)


def test_every_table_file_is_registered() -> None:
    on_disk = {p.name for p in (ROOT / "schemas").glob("*.table.json")}
    assert on_disk == set(schemas.TABLE_FILES.values())


def test_manifest_schema_rejects_bad_hash() -> None:
    errors = list(schemas.validator("manifest").iter_errors({"artifacts": {"a.txt": "XYZ"}}))
    assert any("artifacts" in list(e.absolute_path) for e in errors)


def test_wheel_carries_schemas_and_templates(tmp_path: Path) -> None:
    """A non-editable install must work from any directory: the data files travel inside."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema_file in [*schemas.SCHEMA_FILES.values(), *schemas.TABLE_FILES.values()]:
        assert f"schemas/{schema_file}" in names
    assert any(n.startswith("templates/") and n.endswith(".j2") for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "audit = auditor.cli:main" in text and "runner = runner.cli:main" in text
    json.loads(zipfile.ZipFile(wheel).read("schemas/manifest.schema.json"))
