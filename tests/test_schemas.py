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


def test_table_schema_types_are_known() -> None:
    types = {f["type"] for f in schemas.results_table()["fields"]}
    assert types <= {"string", "integer", "number", "boolean"}


def test_manifest_schema_rejects_bad_hash() -> None:
    errors = list(schemas.validator("manifest").iter_errors({"artifacts": {"a.txt": "XYZ"}}))
    assert any("artifacts" in list(e.absolute_path) for e in errors)


def test_wheel_carries_schemas_and_templates(tmp_path: Path) -> None:
    """A non-editable install must work from any directory: the data files travel inside."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )
    wheel = next(tmp_path.glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for schema_file in [*schemas.SCHEMA_FILES.values(), schemas.RESULTS_TABLE_FILE]:
        assert f"schemas/{schema_file}" in names
    assert any(n.startswith("templates/") and n.endswith(".j2") for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "audit = auditor.cli:main" in text and "runner = runner.cli:main" in text
    json.loads(zipfile.ZipFile(wheel).read("schemas/manifest.schema.json"))
