"""The conventions every `audit` command follows, through the real entry point
(`python -m auditor`): the messages for bad input and for the wrong kind of directory as
golden text (tests/cli/golden/messages.txt; `UPDATE_GOLDEN=1` rewrites it), colour under
`--color`, NO_COLOR and FORCE_COLOR, `--output FILE`, no traceback ever, and an internal
error that says it is a bug."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import runfactory as rf

import schemas
from auditor.report.build import build_report
from auditor.report.keygen import keygen

GOLDEN = Path(__file__).parent / "golden" / "messages.txt"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run, its signed report, an archive file of the run, the CA and another CA."""
    root = tmp_path_factory.mktemp("cli")
    run = rf.make_clean_run(root / "run", eval_size=10, warm_passes=2)
    keygen(root / "keys")
    keygen(root / "other")
    build_report(
        run,
        root / "report",
        key=root / "keys" / "signer.key",
        cert=root / "keys" / "signer.pem",
        chain=root / "keys" / "ca.pem",
    )
    with tarfile.open(root / "runs.tar.gz", "w:gz") as tar:
        tar.add(run, arcname="run")
    (root / "empty").mkdir()
    (root / "offers.json").write_text(
        (Path(__file__).resolve().parents[2] / "examples" / "offers.example.json").read_text()
    )
    return root


def audit(
    place: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    base = {
        k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "AUDIT_DEBUG")
    }
    return subprocess.run(
        [sys.executable, "-m", "auditor", *args],
        capture_output=True,
        text=True,
        cwd=place,
        env={**base, **(env or {})},
        timeout=300,
    )


CASES: dict[str, tuple[str, ...]] = {
    "verify a run directory": ("verify", "run", "--ca", "keys/ca.pem"),
    "verify a run directory, json": ("verify", "run", "--ca", "keys/ca.pem", "--format", "json"),
    "verify with the wrong CA": ("verify", "report", "--ca", "other/ca.pem"),
    "replay a report directory": ("replay", "report"),
    "check a report directory": ("check", "report"),
    "check an archive file": ("check", "runs.tar.gz"),
    "check a path that is not there": ("check", "nowhere"),
    "explain an unknown code": ("explain", "Z9"),
    "cost with a fractional lot": ("cost", "--offers", "offers.json", "--lots", "1.5"),
    "cost with a negative count": ("cost", "--offers", "offers.json", "--accepted-results", "-3"),
    "verify an empty directory": ("verify", "empty", "--ca", "keys/ca.pem"),
    "verify with a key given as the CA": ("verify", "report", "--ca", "keys/signer.key"),
    "verify with a key given as the CA, json": (
        "verify",
        "report",
        "--ca",
        "keys/signer.key",
        "--format",
        "json",
    ),
    "evidence of a file that is not there": ("evidence", "nowhere.csv"),
    "evidence of a directory": ("evidence", "keys"),
    "verify with a CA that is not there": ("verify", "report", "--ca", "nowhere.pem"),
    "compare a run directory": ("compare", "run"),
    "compare a path that is not there": ("compare", "nowhere"),
    "output into a directory": ("rules", "--output", "keys"),
    "output into a folder that is not there": ("rules", "--output", "nowhere/rules.txt"),
}


def _golden_text(place: Path) -> str:
    out = []
    for name, args in CASES.items():
        proc = audit(place, *args)
        assert "Traceback" not in proc.stderr + proc.stdout, (name, proc.stderr)
        out.append(f"## {name}: audit {' '.join(args)}\nexit {proc.returncode}\n{proc.stderr}")
    return "\n".join(out).replace(str(place), "PLACE")


def test_messages_for_bad_input_are_the_golden_ones(place: Path) -> None:
    text = _golden_text(place)
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_the_wrong_ca_is_two_failed_lines_and_no_library_traceback(place: Path) -> None:
    for fmt in ("text", "json"):
        proc = audit(place, "verify", "report", "--ca", "other/ca.pem", "--format", fmt)
        assert proc.returncode == 1
        assert "Traceback" not in proc.stderr and "Validation error" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert not doc["ok"] and doc["failure"]["file"] == "report.pdf"
    assert list(schemas.validator("verify_result").iter_errors(doc)) == []


def test_colour_follows_the_flag_and_the_environment(place: Path) -> None:
    coloured = audit(place, "check", "run", "--color", "always")
    plain = audit(place, "check", "run")  # a pipe: no colour by default
    assert ANSI.search(coloured.stdout) and not ANSI.search(plain.stdout)
    assert ANSI.sub("", coloured.stdout) == plain.stdout
    assert ANSI.search(audit(place, "check", "run", env={"FORCE_COLOR": "1"}).stdout)
    # NO_COLOR wins over FORCE_COLOR; a flag wins over both
    assert not ANSI.search(
        audit(place, "check", "run", env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    )
    assert not ANSI.search(
        audit(place, "check", "run", "--color", "never", env={"FORCE_COLOR": "1"}).stdout
    )
    assert ANSI.search(
        audit(place, "check", "run", "--color", "always", env={"NO_COLOR": "1"}).stdout
    )
    assert not ANSI.search(audit(place, "check", "run", env={"NO_COLOR": ""}).stdout)
    verified = audit(place, "verify", "report", "--ca", "keys/ca.pem", "--color", "always")
    assert verified.returncode == 0 and ANSI.search(verified.stdout)


def test_no_color_on_a_terminal(place: Path) -> None:
    """On a terminal (as click detects one) `auto` colours, and NO_COLOR stops it."""
    from auditor.output.style import use_color

    class Tty:
        def isatty(self) -> bool:
            return True

    os.environ.pop("NO_COLOR", None)
    os.environ.pop("FORCE_COLOR", None)
    assert use_color("auto", Tty())
    os.environ["NO_COLOR"] = "1"
    try:
        assert not use_color("auto", Tty()) and use_color("always", Tty())
    finally:
        del os.environ["NO_COLOR"]


def test_output_writes_what_stdout_would_hold(place: Path, tmp_path: Path) -> None:
    for args in (
        ("check", "run", "--format", "sarif"),
        ("rules",),
        ("explain", "A9"),
        ("cost", "--offers", "offers.json"),
        ("verify", "report", "--ca", "keys/ca.pem", "--format", "json"),
    ):
        target = tmp_path / f"{args[0]}.out"
        colour = ("--color", "always") if args[0] in ("check", "verify") else ()
        to_file = audit(place, *args, "--output", str(target), *colour)
        to_stdout = audit(place, *args)
        assert to_file.returncode == to_stdout.returncode, args
        assert to_file.stdout == ""
        assert target.read_text(encoding="utf-8") == to_stdout.stdout, args
        assert not ANSI.search(target.read_text(encoding="utf-8"))
    assert not list(tmp_path.glob(".*tmp"))


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_output_file_mode_follows_the_umask(place: Path, tmp_path: Path, umask: int) -> None:
    """A file written with --output is readable as a plain write would be: a CI uploader
    running as another user reads the SARIF under umask 022 (the temp file's 0600 is not
    kept)."""
    import stat

    target = tmp_path / "check.sarif"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor",
            "check",
            "run",
            "--format",
            "sarif",
            "--output",
            str(target),
        ],
        cwd=place,
        capture_output=True,
        text=True,
        timeout=300,
        umask=umask,
    )
    assert proc.returncode in (0, 1) and json.loads(target.read_text())["runs"], proc.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_python_m_runs_both_clis(place: Path) -> None:
    proc = audit(place, "--help")
    assert proc.returncode == 0 and "Usage: python -m auditor" in proc.stdout
    runner = subprocess.run(
        [sys.executable, "-m", "runner", "--help"], capture_output=True, text=True, timeout=120
    )
    assert runner.returncode == 0 and "execute" in runner.stdout


def test_cost_help_shows_typed_options(place: Path) -> None:
    help_text = audit(place, "cost", "--help").stdout
    assert "--lots INTEGER" in help_text and "--accepted-results INTEGER" in help_text


def test_explain_a_section_shows_its_rules_and_codes(place: Path) -> None:
    proc = audit(place, "explain", "a9")
    assert proc.returncode == 0
    out = proc.stdout
    assert out.startswith("protocol section A9 Economics without invented production")
    for ref in ("A9.1:", "A9.2:", "A9.3:", "A9.4:", "A9.5:"):
        assert f"\n{ref}\n" in out
    codes = re.findall(r"^  (A\d{4}) ", out.split("enforced by:")[1], re.M)
    assert {"A0901", "A0902", "A0903", "A0904", "A0905"} <= set(codes)


def test_select_summarises_the_rules_not_run(place: Path) -> None:
    proc = audit(place, "check", "run", "--select", "A02")
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1 and len(lines) < 8, proc.stdout
    assert not any("not waived" in line and line.startswith("A0") for line in lines)
    head = next(i for i, line in enumerate(lines) if line.startswith("not run"))
    from auditor.protocols import get

    # the counts come from the registry (a rule added changes them), not written by hand
    left = [r for r in get("accepted-corpus-cost").rules if not r.code.startswith("A02")]
    errors = [r for r in left if r.severity == "error"]
    assert lines[head].startswith(f"not run (--select/--ignore): {len(left)} rule(s), 0 waived")
    assert lines[head + 1].startswith(
        f"  {len(errors)} error rule(s) not waived: the verdict "
        "cannot be accepted: A0001-A0108, A0301-A0402"
    )
    assert lines[-1].startswith("incomplete:")


def test_an_internal_error_says_it_is_a_bug_and_where_its_traceback_is(
    place: Path, tmp_path: Path
) -> None:
    """A crash of the tool (a bug planted with sitecustomize) is one message, no traceback."""
    plant = tmp_path / "plant"
    plant.mkdir()
    (plant / "sitecustomize.py").write_text(
        "import auditor.engine\n"
        "def boom(*a, **k):\n    raise RuntimeError('planted')\n"
        "auditor.engine.run_check = boom\n"
    )
    env = {
        "PYTHONPATH": os.pathsep.join([str(plant), os.environ.get("PYTHONPATH", "")]),
        "TMPDIR": str(tmp_path),
    }
    for fmt in ("text", "json"):
        proc = audit(place, "check", "run", "--format", fmt, env=env)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        message = json.loads(proc.stderr)["error"]["message"] if fmt == "json" else proc.stderr
        assert "internal error (RuntimeError: planted)" in message
        assert "This is a bug of gpubench-audit" in message and "report it" in message
    crash = sorted(tmp_path.glob("gpubench-audit-crash-*.txt"))
    assert crash and "Traceback" in crash[0].read_text() and "planted" in crash[0].read_text()
    debug = audit(place, "check", "run", env={**env, "AUDIT_DEBUG": "1"})
    assert "Traceback" in debug.stderr


def test_a_damaged_run_prints_findings_not_a_traceback(place: Path, tmp_path: Path) -> None:
    run = Path(shutil.copytree(place / "run", tmp_path / "run"))
    (run / "manifest.json").write_bytes(b"\xff\xfe not json")
    (run / "resultats-bruts.csv").write_bytes(b"\x00" * 64)
    for fmt in ("text", "json", "sarif", "junit", "github"):
        proc = audit(place, "check", str(run), "--format", fmt)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, (fmt, proc.stderr)
