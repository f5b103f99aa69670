"""The output formats of `audit check`: every one renders the same result; SARIF validates
against the official 2.1.0 schema and points at the artifact and line; a GitHub annotation
names the file and line of a duplicated ID; JUnit is well-formed XML with one test case per
rule, even when the run's text holds characters XML cannot."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import runfactory as rf
from jsonschema import Draft4Validator

from auditor.engine import run_check
from auditor.output import CHECK

SARIF_SCHEMA = Path(__file__).parent / "fixtures" / "sarif-schema-2.1.0.json"
DUP_FILE = "outputs/batch-1/warm-2.jsonl"


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rf.make_clean_run(tmp_path_factory.mktemp("clean") / "run")


@pytest.fixture(scope="module")
def broken(clean: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A duplicated ID on line 6 of one output (its row still claims ids_match), and a
    package total summed over the passes on row 3 of the CSV."""
    root = tmp_path_factory.mktemp("broken") / "run"
    shutil.copytree(clean, root)
    lines = rf.read_jsonl(root, DUP_FILE)
    lines[5]["id"] = lines[4]["id"]
    lines[5]["label"] = "control \x00\x07 chars </failure> & <b>"
    rf.write_jsonl(root, DUP_FILE, lines)
    rows = rf.read_rows(root)
    rows[2]["package_total_usd_minor"] = str(5 * int(rows[2]["package_total_usd_minor"]))
    rf.write_rows(root, rows)
    rf.rehash(root)
    return root


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from auditor.cli import main; main()", *args],
        capture_output=True,
        text=True,
    )


def test_every_format_renders_clean_and_broken_runs(clean: Path, broken: Path) -> None:
    for run, code in ((clean, 0), (broken, 1)):
        for fmt in CHECK.names():
            proc = _cli("check", str(run), "--format", fmt)
            assert proc.returncode == code, (fmt, proc.stderr)
            assert proc.stdout.endswith("\n") and "Traceback" not in proc.stderr


def test_sarif_validates_against_the_official_schema(clean: Path, broken: Path) -> None:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    for run in (clean, broken):
        log = json.loads(CHECK["sarif"].render(run_check(run)))
        errors = sorted(Draft4Validator(schema).iter_errors(log), key=lambda e: e.path)
        assert errors == [], [e.message for e in errors[:5]]


def test_sarif_rules_and_locations(broken: Path) -> None:
    result = run_check(broken)
    run = json.loads(CHECK["sarif"].render(result))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(result.rules_run)
    a0201 = next(r for r in rules if r["id"] == "A0201")
    assert a0201["shortDescription"]["text"] == "each expected ID exactly once"
    assert "Why it matters" in a0201["help"]["text"]
    assert a0201["properties"]["protocol_ref"] == "A2.1"
    by_rule = {r["ruleId"]: r for r in run["results"]}
    dup = next(
        r
        for r in run["results"]
        if r["ruleId"] == "A0201" and "more than once" in r["message"]["text"]
    )
    assert dup["level"] == "error" and rules[dup["ruleIndex"]]["id"] == "A0201"
    loc = dup["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": DUP_FILE, "uriBaseId": "RUNDIR"}
    assert loc["region"] == {"startLine": 6}
    # a CSV row points at the physical line where the row starts (header is line 1)
    row = by_rule["A0902"]["locations"][0]["physicalLocation"]
    assert row["artifactLocation"]["uri"] == "resultats-bruts.csv"
    assert row["region"]["startLine"] == 4 and by_rule["A0902"]["properties"]["row"] == 3
    assert run["properties"]["verdict"] == "rejected"
    assert run["originalUriBaseIds"]["RUNDIR"]["uri"].endswith("/")


def test_github_annotation_points_at_the_duplicated_id(broken: Path) -> None:
    out = CHECK["github"].render(run_check(broken))
    dup = next(
        line for line in out.splitlines() if "title=A0201" in line and "more than once" in line
    )
    assert dup.startswith(f"::error file={broken}/{DUP_FILE},line=6,title=A0201 ")
    csv = next(line for line in out.splitlines() if "title=A0902" in line)
    assert f"file={broken}/resultats-bruts.csv,line=4," in csv
    assert out.splitlines()[-1].startswith("::notice title=audit verdict::")
    assert all("\n" not in line and "\r" not in line for line in out.splitlines())


def test_github_escapes_what_would_break_a_command() -> None:
    from auditor.model import AuditResult, Finding

    f = Finding(
        "A0201", "error", "A2.1", "50% done\nnext: line", artifact="a,b:c.jsonl", line=2, title="t"
    )
    out = CHECK["github"].render(AuditResult("run", "accepted-corpus-cost", None, (f,), (), ()))
    first = out.splitlines()[0]
    assert "file=run/a%2Cb%3Ac.jsonl,line=2," in first
    assert first.endswith("::50%25 done%0Anext: line [A2.1]")


def test_junit_is_well_formed_one_case_per_rule(broken: Path) -> None:
    result = run_check(broken)
    root = ET.fromstring(CHECK["junit"].render(result))
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert len(cases) == len(result.rules_run) + len(result.skipped)
    failing = {f.code for f in result.findings if f.severity == "error"}
    assert all(len(c.findall("failure")) <= 1 for c in cases)
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == len(failing) == int(root.get("failures", "-1"))
    assert int(suite.get("failures", "-1")) == len(failed)
    names = {c.get("name", "").split()[0]: c for c in cases}
    # every error finding of a rule is in its one failure's text, a line each
    a0201 = [f for f in result.findings if f.code == "A0201" and f.severity == "error"]
    text = names["A0201"].find("failure").text or ""
    assert len(text.splitlines()) == len(a0201) and all(f.message in text for f in a0201)
    assert names["A0101"].find("failure") is None
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "rejected"


def _junit_file(result, tmp_path: Path) -> Path:
    path = tmp_path / "junit.xml"
    path.write_text(CHECK["junit"].render(result), encoding="utf-8")
    return path


def test_junitparser_counts_what_the_header_says(broken: Path, tmp_path: Path) -> None:
    from junitparser import Failure, JUnitXml, Skipped

    result = run_check(broken, select=("A02", "A09"))
    xml = JUnitXml.fromfile(str(_junit_file(result, tmp_path)))
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    cases = list(suite)
    failed = [c for c in cases if any(isinstance(r, Failure) for r in c.result)]
    skipped = [c for c in cases if any(isinstance(r, Skipped) for r in c.result)]
    assert (suite.tests, suite.failures, suite.skipped) == (len(cases), len(failed), len(skipped))
    assert (xml.tests, xml.failures, xml.skipped) == (suite.tests, suite.failures, suite.skipped)
    suite.update_statistics()  # junitparser's own count from the cases agrees
    assert (suite.tests, suite.failures, suite.skipped) == (len(cases), len(failed), len(skipped))
    assert {c.name.split()[0] for c in failed} == {
        f.code for f in result.findings if f.severity == "error"
    }
    assert len(skipped) == len(result.rules_not_run) + len(result.skipped) > 0
    assert all(len(c.result) == 1 for c in failed)


def test_xunitparser_reads_it_and_its_totals_assertions_hold(
    broken: Path, clean: Path, tmp_path: Path
) -> None:
    import xunitparser

    for run, select in ((broken, ()), (broken, ("A02",)), (clean, ())):
        result = run_check(run, select=select)
        # xunitparser asserts that the header's totals equal the cases it read
        suite, outcome = xunitparser.parse(str(_junit_file(result, tmp_path)))
        errors = {f.code for f in result.findings if f.severity == "error"}
        assert {str(tc.methodname).split()[0] for tc, _ in outcome.failures} == errors
        assert len(outcome.skipped) == len(result.rules_not_run) + len(result.skipped)
        assert (
            outcome.testsRun
            == len(list(suite))
            == len(result.rules_run) + len(result.skipped) + len(result.rules_not_run)
        )
        assert outcome.wasSuccessful() == (not errors)


def test_json_and_text_stay_what_they_were(broken: Path) -> None:
    result = run_check(broken)
    doc = json.loads(CHECK["json"].render(result))
    dup = next(
        f for f in doc["findings"] if f["code"] == "A0201" and "more than once" in f["message"]
    )
    assert dup["location"] == "line 6" and dup["region"] == {"line": 6}
    row = next(f for f in doc["findings"] if f["code"] == "A0902")
    assert row["location"] == "row 3" and row["region"] == {"row": 3, "line": 4}
    text = CHECK["text"].render(result)
    assert f"{DUP_FILE}:line 6 A0201 " in text and text.rstrip().splitlines()[-1].startswith(
        "rejected:"
    )


@pytest.fixture(scope="module")
def whole_file(clean: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Findings about whole files: one changed after the manifest (A0003), one unlisted
    (A0004), one listed but absent (A0005), and a binary file changed."""
    root = tmp_path_factory.mktemp("whole") / "run"
    shutil.copytree(clean, root)
    (root / "extra.txt").write_text("one\ntwo", encoding="utf-8")
    (root / "environment.json").unlink()
    (root / "blob.bin").write_bytes(b"\x00\x01binary\n")
    return root


def test_sarif_whole_file_findings_get_the_whole_file_region(whole_file: Path) -> None:
    log = json.loads(CHECK["sarif"].render(run_check(whole_file)))
    regions = {}
    for r in log["runs"][0]["results"]:
        for loc in r.get("locations", []):
            phys = loc["physicalLocation"]
            assert "region" in phys, r  # never a region-less physicalLocation
            regions[(r["ruleId"], phys["artifactLocation"]["uri"])] = (
                phys["region"],
                loc.get("properties"),
            )
    # a text file: its lines (the last has no newline) and its bytes
    assert regions[("A0004", "extra.txt")] == (
        {"startLine": 1, "endLine": 2, "byteOffset": 0, "byteLength": 7},
        None,
    )
    # a binary file: its bytes only
    assert regions[("A0004", "blob.bin")] == ({"byteOffset": 0, "byteLength": 9}, None)
    # an absent file: the empty region at its start, said to be absent
    region, props = regions[("A0005", "environment.json")]
    assert region["byteLength"] == 0 and props == {"artifactAbsent": True}
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert list(Draft4Validator(schema).iter_errors(log)) == []


def test_sarif_tools_reads_every_result(broken: Path, whole_file: Path, tmp_path: Path) -> None:
    from sarif import loader

    for run in (broken, whole_file):
        result = run_check(run)
        path = tmp_path / "audit.sarif"
        path.write_text(CHECK["sarif"].render(result), encoding="utf-8")
        sarif = loader.load_sarif_file(str(path))
        assert sarif.get_result_count() == len(result.findings)
        records = sarif.get_records()
        assert sorted((r["Code"], r["Location"], r["Severity"]) for r in records) == sorted(
            (f.code, f.artifact or "", {"info": "note"}.get(f.severity, f.severity))
            for f in result.findings
        )
        dup = {r["Line"] for r in records if r["Code"] == "A0201" and r["Location"] == DUP_FILE}
        assert run != broken or 6 in dup


def _multitool() -> str | None:
    import os

    return os.environ.get("SARIF_MULTITOOL") or shutil.which("sarif-multitool")


@pytest.mark.skipif(
    _multitool() is None,
    reason="sarif-multitool not installed "
    "(npm install -g @microsoft/sarif-multitool; .ci/run does)",
)
def test_sarif_multitool_validates_without_a_warning(
    broken: Path, whole_file: Path, tmp_path: Path
) -> None:
    import os

    for run in (broken, whole_file):
        path = tmp_path / "audit.sarif"
        path.write_text(CHECK["sarif"].render(run_check(run)), encoding="utf-8")
        out = tmp_path / "validation.sarif"
        proc = subprocess.run(
            [
                str(_multitool()),
                "validate",
                str(path),
                "--output",
                str(out),
                "--log",
                "ForceOverwrite",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"},
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        found = json.loads(out.read_text(encoding="utf-8-sig"))["runs"][0]["results"]
        assert found == [], [r["message"] for r in found]


def test_junit_and_github_carry_the_evidence_the_text_shows(broken: Path, tmp_path: Path) -> None:
    """What a CI reader sees is what `audit check` prints: the failure body (read by
    junitparser) and the annotation hold each finding's key evidence, not only its
    message ("... missing from the output: ID" stays whole)."""
    from junitparser import Failure, JUnitXml

    from auditor.output.wording import with_evidence

    result = run_check(broken)
    errors = [f for f in result.findings if f.severity == "error"]
    shown = [with_evidence(f) for f in errors]
    assert any(s != f.message for s, f in zip(shown, errors, strict=True))
    text = CHECK["text"].render(result)
    assert all(s in text for s in shown)
    xml = JUnitXml.fromfile(str(_junit_file(result, tmp_path)))
    bodies = "\n".join(
        r.text or ""
        for suite in xml
        for case in suite
        for r in case.result
        if isinstance(r, Failure)
    )
    messages = "\n".join(
        r.message or ""
        for suite in xml
        for case in suite
        for r in case.result
        if isinstance(r, Failure)
    )
    assert all(s in bodies for s in shown)
    first = {f.code: with_evidence(f) for f in reversed(errors)}
    assert all(s in messages for s in first.values())
    annotations = (
        CHECK["github"].render(result).replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")
    )
    assert all(s in annotations for s in shown)
