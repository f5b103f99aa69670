"""The report of a protocol B run: the view model of the clean synthetic run against a golden
file, the page's sections in order (the verdict per policy on page 1 first), the figures,
the raw evidence attached to a signed PDF that `audit verify` accepts, the run summary an
archive keeps, and `audit check --format sarif|json` validating against their schemas.

`UPDATE_GOLDEN=1 pytest tests/protocols/b/test_b_report.py` rewrites the golden file."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

import schemas
from auditor.engine import audit
from auditor.errors import AuditorError
from auditor.protocols import get
from auditor.protocols.b.report import summarize
from auditor.report import viewmodel
from auditor.report.build import StepTimer, build_report, render_report
from auditor.report.keygen import keygen
from auditor.report.verify import verify_report

GOLDEN = Path(__file__).parent / "golden" / "report_viewmodel.json"
SARIF_SCHEMA = Path(__file__).parents[2] / "output" / "fixtures" / "sarif-schema-2.1.0.json"
B_RULES = get("residency-energy").rules
SECTIONS = ["summary", "findings", "policies", "power", "placement", "measured", "appendix"]


def _vm(run: Path) -> dict:
    view, result = audit(run)
    return viewmodel.build_viewmodel(
        view, result, B_RULES, tool_version="0.0.0", generated_at="2026-01-01T00:00:00Z"
    )


def _portable(vm: dict) -> dict:
    """The view model without what changes with the machine (the run dir's path)."""
    return json.loads(json.dumps(vm).replace(json.dumps(str(Path.cwd()))[1:-1], "<cwd>"))


def test_golden_viewmodel_of_the_synthetic_run(runs) -> None:
    got = _portable(_vm(runs["synthetic"]))
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert GOLDEN.is_file(), "no golden file: run with UPDATE_GOLDEN=1 once"
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert got == want, (
        "the view model changed; if deliberate, UPDATE_GOLDEN=1 rewrites the golden file"
    )


def test_page_one_gives_every_policys_verdict_first(runs) -> None:
    vm = _vm(runs["seed_float16"])
    s = vm["summary"]
    assert [c["key"] for c in s["columns"]][:2] == ["policy", "verdict"]
    cells = {r["cells"]["policy"].split()[0]: r["cells"] for r in s["rows"]}
    assert cells["cpu"]["verdict"] == "baseline"
    assert cells["f16-ane"]["verdict"].startswith("rejected: B0801")
    assert cells["f16-ane"]["p95"] == "1.51 ms" and cells["f16-ane"]["share"].startswith("90.91 %")
    assert any("rejected at a gate" in c["text"] for c in s["cautions"])
    assert s["headline"] == "0 of 1 accelerator policy(ies) accepted"


def test_sections_in_order_and_figures(runs) -> None:
    view, result = audit(runs["windows"])
    vm, page, figs = render_report(
        view, result, generated_at="2026-01-01T00:00:00Z", timer=StepTimer()
    )
    ids = re.findall(r'<section id="([a-z]+)"', page)
    assert ids == SECTIONS
    assert figs["power"] and figs["power"].startswith("<svg")
    assert figs["placement"] and "declared floor" in figs["placement"]
    assert page.count("data:image/svg+xml;base64,") == 2
    power = {p["policy_id"]: p for p in vm["power"]}
    trial = power["gpu"]["trials"][0]
    xs = [x for x, _ in trial["points"]]
    assert min(xs) < 0 < trial["wall_s"] < max(xs)  # the trace around the window is shown
    again = render_report(view, result, generated_at="2026-01-01T00:00:00Z", timer=StepTimer())[2]
    assert again == figs  # deterministic


def test_a_run_without_power_readings_says_so(runs) -> None:
    view, result = audit(runs["runner"])
    _, page, figs = render_report(
        view, result, generated_at="2026-01-01T00:00:00Z", timer=StepTimer()
    )
    assert figs["power"] is None and "No trace holds a power reading" in page
    assert "energy not measured" in page or "not measured" in page


def test_why_energy_was_not_measured_is_said_once_and_referred_to(runs) -> None:
    """A run without power readings has one reason for every trial and policy: the page
    says each reason once, numbered, and the tables (page 1, the policies, the trials)
    refer to its number."""
    vm = _vm(runs["runner"])
    notes = vm["energy_notes"]
    assert notes and [n["n"] for n in notes] == list(range(1, len(notes) + 1))
    trials = [t for t in vm["trials"] if t["status_energy"] != "measured"]
    assert len(trials) > len(notes)
    assert all(re.search(r"\(energy note \d+\)$", t["status_energy"]) for t in trials)
    view, result = audit(runs["runner"])
    _, page, _ = render_report(view, result, generated_at="2026-01-01T00:00:00Z", timer=StepTimer())
    # the findings section quotes each finding's message whole: the audit's own record
    tables = re.sub(r'<section id="findings".*?</section>', "", page, flags=re.S)
    assert 'id="findings"' in page and 'id="findings"' not in tables
    text = re.sub(r"<[^>]+>", "", tables)
    for n in notes:
        assert text.count(n["text"]) == 1, (n["text"], text.count(n["text"]))
    assert text.count("(energy note 1)") + text.count("energy note 1)") >= len(trials)


def test_summary_per_policy(runs) -> None:
    view, result = audit(runs["synthetic"])
    s = summarize(view, result)
    assert s.protocol == "residency-energy" and s.verdict == "accepted"
    by = {c.config_id: c for c in s.configurations}
    assert [c.accepted for c in s.configurations] == [False, True, True]
    cpu = by["cpu"].figures_json()
    assert cpu["verdict"] == "baseline" and cpu["avg_power_w"] == pytest.approx(70.0)
    gpu = by["torch-cuda"].figures_json()
    assert gpu["energy_source"] == "nvml+rapl" and gpu["operation_share_floor"] == 0.5
    assert by["torch-cuda"].throughput_per_s == pytest.approx(1000 / 1.2)
    assert by["torch-cuda"].median_s == pytest.approx(1.2)
    assert get("residency-energy").summarize(view, result) == s


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("keys")
    keygen(d)
    return d


@pytest.mark.parametrize("name", ["synthetic", "linux_nvidia_smi"])
def test_signed_report_carries_the_raw_evidence_and_verifies(
    runs, keys, tmp_path, name: str
) -> None:
    out = tmp_path / "report"
    result = build_report(
        runs[name], out, key=keys / "signer.key", cert=keys / "signer.pem", chain=keys / "ca.pem"
    )
    assert result.protocol == "residency-energy"
    verify_report(out, keys / "ca.pem")
    vm_names = json.loads((out / "audit.json").read_text())["protocol"]
    assert vm_names == "residency-energy"
    page = (out / "report.html").read_text(encoding="utf-8")
    for rel in ("trials.csv", "policies.csv"):
        assert f'href="run/{rel}"' in page
    if shutil.which("pdfdetach"):
        listed = subprocess.run(
            ["pdfdetach", "-list", str(out / "report.pdf")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        power = sorted(
            p.relative_to(runs[name]).as_posix()
            for p in (runs[name] / "power").rglob("*")
            if p.is_file()
        )
        placement = sorted(
            p.relative_to(runs[name]).as_posix()
            for p in (runs[name] / "placement").rglob("*")
            if p.is_file()
        )
        for rel in (
            "trials.csv",
            "policies.csv",
            "manifest.json",
            "audit.json",
            *power,
            *placement,
        ):
            assert rel in listed, rel


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from auditor.cli import main; main()", *args],
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(
    ("name", "code"), [("synthetic", 0), ("linux_nvidia_smi", 1), ("runner", 1)]
)
def test_check_json_and_sarif_validate(runs, name: str, code: int) -> None:
    proc = _cli("check", str(runs[name]), "--format", "json")
    assert proc.returncode == code, proc.stderr
    doc = json.loads(proc.stdout)
    assert list(schemas.validator("audit_result").iter_errors(doc)) == []
    assert doc["protocol"] == "residency-energy"
    assert all(f["protocol_ref"].startswith("B") for f in doc["findings"])
    proc = _cli("check", str(runs[name]), "--format", "sarif")
    log = json.loads(proc.stdout)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    errors = sorted(Draft4Validator(schema).iter_errors(log), key=lambda e: e.path)
    assert errors == [], [e.message for e in errors[:5]]
    run = log["runs"][0]
    assert run["properties"]["verdict"] == doc["verdict"]
    for r in run["results"]:
        if r["ruleId"] in ("B0601", "B0303") and "row" in r.get("properties", {}):
            region = r["locations"][0]["physicalLocation"]["region"]
            assert region["startLine"] == r["properties"]["row"] + 1  # CRLF rows, header 1


def test_offers_are_an_input_only_a_costed_protocol_takes(runs, tmp_path: Path) -> None:
    """`--offers` is protocol A's report input (`ReportPart.inputs`); a protocol B report
    says it takes none, before auditing anything, instead of ignoring it."""
    offers = tmp_path / "offers.json"
    offers.write_text("{}", encoding="utf-8")
    with pytest.raises(AuditorError, match="takes no offers file"):
        build_report(runs["synthetic"], tmp_path / "out", offers=offers)
    assert not (tmp_path / "out").exists()
