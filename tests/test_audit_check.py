"""`audit check`, `audit rules`, `audit explain` through the CLI: exit codes, text and JSON
output (validated against schemas/audit-result.schema.json), and light imports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import runfactory as rf
from click.testing import CliRunner

import schemas
from auditor.cli import cli
from auditor.engine import run_check
from auditor.errors import AuditorError
from auditor.output.check import json as json_out
from auditor.output.check import text
from auditor.protocols import all_rules, get


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rf.make_clean_run(tmp_path_factory.mktemp("clean") / "run")


@pytest.fixture
def broken(clean: Path, tmp_path: Path) -> Path:
    """A run with one error (a p95 claimed from five passes) and one warning (LF line
    ends)."""
    root = tmp_path / "run"
    shutil.copytree(clean, root)
    claims = rf.write_claims(root)
    claims["summaries"][0]["statistic"] = "p95"
    rf.write_json(root, "claims.json", claims)
    p = root / "resultats-bruts.csv"
    p.write_bytes(p.read_bytes().replace(b"\r\n", b"\n"))
    rf.rehash(root)
    return root


def invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.output


def test_check_clean_run_text(clean: Path) -> None:
    code, out = invoke("check", str(clean))
    assert code == 0
    lines = out.splitlines()
    assert lines[-1].startswith("accepted: 0 error(s), 0 warning(s)")
    assert "\x1b[" not in out  # not a terminal: no colour


def test_check_json_validates_against_the_schema(clean: Path, broken: Path) -> None:
    validator = schemas.validator("audit_result")
    for root, want in ((clean, "accepted"), (broken, "rejected")):
        code, out = invoke("check", str(root), "--format", "json")
        doc = json.loads(out)
        assert list(validator.iter_errors(doc)) == []
        assert doc["verdict"] == want and code == (0 if want == "accepted" else 1)
        assert doc["rules_run"] == [r.code for r in get("accepted-corpus-cost").rules]
    codes = [(f["code"], f["severity"]) for f in doc["findings"]]
    assert codes == [("A0604", "error"), ("A0807", "warning")]
    assert doc["findings"][0]["location"] == "/summaries/0/statistic"
    assert doc["counts"] == {"error": 1, "warning": 1, "info": 0}


def test_text_groups_by_severity_one_line_each(broken: Path) -> None:
    result = run_check(broken)
    plain = text.render(result, color=False)
    lines = plain.splitlines()
    assert lines[0] == "errors (1):"
    assert lines[1].startswith("claims.json:/summaries/0/statistic A0604 ")
    assert lines[2] == "warnings (1):"
    assert lines[3].startswith("resultats-bruts.csv:line 1 A0807 ")
    assert lines[-1].startswith("rejected: 1 error(s), 1 warning(s)")
    coloured = text.render(result, color=True)
    assert "\x1b[31m" in coloured and coloured.count("\n") == plain.count("\n")
    assert json.loads(json_out.render(result))["verdict"] == "rejected"


def test_select_ignore_options(broken: Path, tmp_path: Path) -> None:
    """Leaving a rule out never yields a plain `accepted`: the result names it, and the
    verdict is `incomplete` (exit 1) until a waiver with a written justification covers it."""
    code, out = invoke("check", str(broken), "--ignore", "a0604", "--format", "json")
    doc = json.loads(out)
    assert [f["code"] for f in doc["findings"]] == ["A0807"]
    assert "A0604" not in doc["rules_run"]
    assert doc["verdict"] == "incomplete" and code == 1
    assert doc["rules_not_run"] == [
        {
            "code": "A0604",
            "severity": "error",
            "title": "no p95 from five passes",
            "waived": False,
            "justification": None,
        }
    ]
    waivers = tmp_path / "waivers.toml"
    waivers.write_text('A0604 = "summaries are reviewed by hand for this procurement"\n')
    code, out = invoke(
        "check", str(broken), "--ignore", "a0604", "--waivers", str(waivers), "--format", "json"
    )
    doc = json.loads(out)
    assert doc["verdict"] == "accepted" and code == 0
    assert doc["rules_not_run"][0]["justification"] == (
        "summaries are reviewed by hand for this procurement"
    )
    assert doc["waivers"] == [
        {"code": "A0604", "justification": doc["rules_not_run"][0]["justification"]}
    ]
    code, out = invoke("check", str(broken), "--select", "A06", "--format", "json")
    doc = json.loads(out)
    assert code == 1 and {c[:3] for c in doc["rules_run"]} == {"A06"}
    assert len(doc["rules_run"]) + len(doc["rules_not_run"]) == len(
        get("accepted-corpus-cost").rules
    )


def test_waivers_show_in_every_format(broken: Path, tmp_path: Path) -> None:
    from auditor.output import CHECK
    from auditor.waivers import load_waivers

    waivers = tmp_path / "waivers.json"
    waivers.write_text(
        json.dumps(
            {
                "A0604": "p95 claims are out of scope of this audit",
                "A07": "memory is not compared in this procurement",
            }
        )
    )
    result = run_check(broken, ignore=("A0604", "A0701", "A0807"), waivers=load_waivers(waivers))
    assert result.verdict == "accepted" and result.exit_code == 0
    assert [n.code for n in result.rules_not_run] == ["A0604", "A0701", "A0807"]
    assert [n.waiver is not None for n in result.rules_not_run] == [True, True, False]
    for name in CHECK.names():
        out = CHECK[name].render(result)
        assert "A0701" in out and "memory is not compared in this procurement" in out, name
    from jsonschema import Draft4Validator
    from paths import TESTS

    sarif_schema = json.loads((TESTS / "output/fixtures/sarif-schema-2.1.0.json").read_text())
    log = json.loads(CHECK["sarif"].render(result))
    assert list(Draft4Validator(sarif_schema).iter_errors(log)) == []
    assert (
        list(
            schemas.validator("audit_result").iter_errors(json.loads(CHECK["json"].render(result)))
        )
        == []
    )
    from auditor.report.viewmodel import verdict_section

    section = verdict_section(result, [], None)
    assert [n["code"] for n in section["rules_not_run"]] == ["A0604", "A0701", "A0807"]
    assert section["waivers"][1]["justification"].startswith("memory is not compared")


@pytest.mark.parametrize(
    "content, why",
    [
        ('{"A0604": ""}', "waivers.schema.json"),
        ('{"A0604": "ok"}', "waivers.schema.json"),  # not a written justification
        ('{"Z9": "a justification that is long enough"}', "no rule code starts with Z9"),
        ("[1, 2", "not a valid waivers file"),
    ],
)
def test_bad_waivers_file_is_usage_error(
    clean: Path, tmp_path: Path, content: str, why: str
) -> None:
    waivers = tmp_path / "w.json"
    waivers.write_text(content)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from auditor.cli import main; main()",
            "check",
            str(clean),
            "--ignore",
            "A0604",
            "--waivers",
            str(waivers),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and why in proc.stderr and "Traceback" not in proc.stderr


def test_unknown_select_code_is_usage_error(clean: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from auditor.cli import main; main()",
            "check",
            str(clean),
            "--select",
            "A0199",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "no rule code starts with A0199" in proc.stderr


def test_check_missing_dir_is_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from auditor.cli import main; main()",
            "check",
            str(tmp_path / "nope"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "no such file or directory" in proc.stderr and "Traceback" not in proc.stderr


def test_a_directory_that_is_not_a_run_gets_one_clear_message(tmp_path: Path) -> None:
    with pytest.raises(AuditorError, match="not a run directory"):
        run_check(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", "from auditor.cli import main; main()", "check", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "not a run directory" in proc.stderr
    report = tmp_path / "report"
    (report / "run").mkdir(parents=True)
    (report / "report.html").write_text("<html></html>")
    (report / "run" / "manifest.json").write_text("{}")
    with pytest.raises(AuditorError, match=r"report directory.*audit check .*run"):
        run_check(report)


def test_a_run_whose_manifest_is_missing_is_still_audited(tmp_path: Path) -> None:
    (tmp_path / "resultats-bruts.csv").write_text("experiment_id\r\n")
    result = run_check(tmp_path)
    assert result.protocol == "accepted-corpus-cost" and result.verdict != "accepted"
    assert "A0001" in {f.code for f in result.findings}


def test_rules_and_explain() -> None:
    code, out = invoke("rules")
    assert code == 0
    lines, _, replayed = out.partition("raised by `audit replay` only:\n")
    lines = lines.splitlines()
    assert len(lines) == len(all_rules()) and replayed.startswith("RA01")
    assert lines[0].split()[:3] == ["A0001", "error", "A10.1"]
    code, out = invoke("explain", "a0201")
    assert code == 0
    assert out.startswith("A0201: each expected ID exactly once\nprotocol rule A2.1")
    assert "Why it matters" in out and "Example" in out
    proc = subprocess.run(
        [sys.executable, "-c", "from auditor.cli import main; main()", "explain", "Z9"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "unknown rule code" in proc.stderr


def test_check_does_not_import_heavy_modules(clean: Path) -> None:
    script = (
        "import sys\n"
        "from auditor.cli import main\n"
        f"sys.argv = ['audit', 'check', {str(clean)!r}, '--format', 'json']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "heavy = [m for m in ('torch', 'weasyprint', 'pyhanko', 'matplotlib', 'runner',"
        " 'onnxruntime', 'onnx', 'numpy', 'auditor.replay.core', 'jsonschema', 'referencing',"
        " 'jinja2', 'pyarrow', 'hypothesis', 'auditor.protocols.b')"
        " if m in sys.modules]\n"
        "assert heavy == [], heavy\n"
        "assert code == 0, code\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "accepted"


def _main(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from auditor.cli import main; main()", *args],
        capture_output=True,
        text=True,
    )


def test_text_output_shows_the_key_evidence(clean: Path, tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(clean, root)
    lines = rf.read_jsonl(root, "outputs/batch-4/warm-2.jsonl")
    lost, lines[5]["id"] = lines[5]["id"], lines[4]["id"]  # one ID twice, one missing
    rf.write_jsonl(root, "outputs/batch-4/warm-2.jsonl", lines)
    rows = rf.read_rows(root)
    rows[0]["quality_value"] = "0.5"
    rf.write_rows(root, rows)
    rf.rehash(root)
    out = text.render(run_check(root))
    assert f"A0201 1 expected ID(s) missing from the output: {lost}" in out
    assert f"A0201 1 ID(s) answered more than once: {lines[4]['id']}" in out
    line = next(x for x in out.splitlines() if "row 1 A0205" in x)
    assert ": 0.5 (expected " in line  # the claimed value, then the recomputed one


def test_rules_json_validates_against_its_schema() -> None:
    code, out = invoke("rules", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert list(schemas.validator("audit_rules").iter_errors(doc)) == []
    checked = [r["code"] for r in doc["rules"] if r["command"] == "check"]
    assert checked == [r.code for r in all_rules()]
    a0201 = next(r for r in doc["rules"] if r["code"] == "A0201")
    assert a0201["protocol_ref"] == "A2.1" and a0201["fix"] and a0201["why"]


def test_explain_a_protocol_rule_prints_its_text_and_the_codes_that_enforce_it() -> None:
    code, out = invoke("explain", "a2.1")
    assert code == 0
    assert out.startswith("protocol rule A2.1 (A2 When a corpus counts as accepted):")
    assert "exactly once" in out
    enforcing = [line.split()[0] for line in out.split("enforced by:")[1].splitlines() if line]
    assert enforcing == ["A0201", "A0207"]
    code, out = invoke("explain", "A0201")
    assert "What to do: " in out
    code, out = invoke("explain", "run_dir")
    assert code == 0 and "R0001" in out.split("enforced by:")[1]
    code, out = invoke("explain", "B7")
    enforcing = [line.split()[0] for line in out.split("enforced by:")[1].splitlines() if line]
    assert code == 0 and {"B0701", "B0702"} <= set(enforcing)
    proc = _main("explain", "A9.9")
    assert proc.returncode == 2 and "no protocol rule 'A9.9'" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("check", "/nonexistent/run", "--format", "json"),
        ("check", "--format=json"),
        ("rules", "--format", "json", "--bogus"),
        ("check", ".", "--format", "json", "--select", "A0199"),
    ],
)
def test_json_errors_go_to_stderr_as_one_json_object(args: tuple[str, ...]) -> None:
    proc = _main(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    doc = json.loads(proc.stderr)
    assert list(schemas.validator("error").iter_errors(doc)) == []
    assert doc["error"]["exit_status"] == 2 and doc["error"]["message"]


def test_check_pointed_at_a_report_names_the_run_inside(tmp_path: Path) -> None:
    report = tmp_path / "report"
    (report / "run").mkdir(parents=True)
    (report / "report.html").write_text("<html></html>")
    (report / "run" / "manifest.json").write_text("{}")
    proc = _main("check", str(report))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert f"audit check {report / 'run'}" in proc.stderr


def test_every_option_has_help_text_and_is_in_the_readme() -> None:
    import click

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for name, command in cli.commands.items():
        assert f"`audit {name}" in readme, name
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, (name, param.name)
                for opt in param.opts:
                    assert f"`{opt}" in readme, (name, opt)
