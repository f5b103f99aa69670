"""No third-party warning reaches a user (issue 30): every command of the README, run as a
user runs it (a fresh process through the real entry point), with `PYTHONWARNINGS=error` in
its environment so that a library's warning would crash it, prints only the tool's own words
on standard error: nothing at all when it succeeds. The lock pins cryptography 51, whose DSA
deprecation pyHanko's import triggers, so `audit verify`, `audit report` and `audit compare
--out` exercise a real library warning here. `AUDIT_DEBUG=1` / `RUNNER_DEBUG=1` show them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from runner_workloads import tiny_rows, write_jsonl

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
OFFERS = REPO / "examples" / "offers.example.json"
STRICT = {"PYTHONWARNINGS": "error"}


def _env(extra: dict[str, str]) -> dict[str, str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("AUDIT_DEBUG", "RUNNER_DEBUG", "NO_COLOR", "FORCE_COLOR")
    }
    # the tests' workloads (runner_workloads) are importable in the runner's processes
    path = os.pathsep.join(p for p in (str(TESTS), base.get("PYTHONPATH", "")) if p)
    return {**base, "PYTHONPATH": path, **extra}


def run(
    place: Path, tool: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", tool, *args],
        cwd=place,
        text=True,
        capture_output=True,
        env=_env(env or STRICT),
        timeout=600,
    )


OWN = re.compile(
    r"\d+/\d+ runs\b.*|comparison report: \S+ \(signed\)|warning: machine BUSY while \w+: .*"
)
"""The tool's own lines on standard error: `audit archive`'s progress, where `audit compare
--out` wrote its report, and the runner's warning (even under --quiet) that other processes
shared the machine while it measured."""


def assert_silent(proc: subprocess.CompletedProcess[str], *, status: int = 0) -> None:
    """Exit STATUS and nothing on standard error but the tool's own lines: no warning,
    no library's log line."""
    assert proc.returncode == status, (proc.args, proc.returncode, proc.stderr[-2000:])
    foreign = [line for line in proc.stderr.splitlines() if not OWN.fullmatch(line)]
    assert foreign == [], (proc.args, proc.stderr[-2000:])


A_CONFIG = """
experiment_id = "quiet-test"
seed = 3
device = "cpu"
[corpus]
path = "{corpus}"
eval_size = 30
[workload]
callable = "runner_workloads:Faulty"
options = {{ epochs = 4 }}
[variants]
batches = [1, 8]
context = 5
[passes]
warmup_iterations = 1
warm_passes = 5
[quality]
metric = "macro_f1"
threshold = "from_tune"
tolerance = 0.2
[economics]
offers_file = "{offers}"
offer_id = "example-b200-7d"
lots = 1
"""

B_CONFIG = """
experiment_id = "quiet-residency"
seed = 5
model_tier = "lite"
baseline_policy = "torch-cpu"
[corpus]
path = "{corpus}"
eval_size = 60
[workload]
callable = "runner_workloads:Degraded"
options = {{ epochs = 4 }}
context = 16
[trials]
per_policy = 2
warmup = 2
[energy]
repetitions = 1
sampling_interval_s = 0.02
idle_seconds = 0.1
powercap_root = "{powercap}"
[placement]
diagnostic_prompts = 5
operation_share_floor = 0.5
[gates]
accuracy_floor = 0.5
agreement_floor = 0.5

[[policies]]
id = "torch-cpu"
runtime = "torch"
compute_units = "cpu"
role = "cpu-only"

[[policies]]
id = "ort-cpu"
runtime = "onnxruntime"
compute_units = "CPUExecutionProvider"
role = "cpu-only"
"""


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both runners' runs, made by the real commands under PYTHONWARNINGS=error."""
    root = tmp_path_factory.mktemp("quiet")
    corpus = write_jsonl(root / "corpus.jsonl", tiny_rows(n_eval=60))
    (root / "a.toml").write_text(A_CONFIG.format(corpus=corpus, offers=OFFERS))
    (root / "b.toml").write_text(B_CONFIG.format(corpus=corpus, powercap=root / "none"))
    return root


def test_the_runners_print_no_library_warning(place: Path) -> None:
    assert_silent(
        run(
            place,
            "runner",
            "execute",
            "--config",
            "a.toml",
            "--out",
            "run-a",
            "--quiet",
            "--off-protocol",
        )
    )
    assert_silent(
        run(
            place,
            "runner",
            "residency",
            "--config",
            "b.toml",
            "--out",
            "run-b",
            "--quiet",
            "--off-protocol",
        )
    )
    assert (place / "run-a" / "manifest.json").is_file()
    assert (place / "run-b" / "manifest.json").is_file()


def test_every_audit_command_prints_only_its_own_words(place: Path) -> None:
    if not (place / "run-a").is_dir():
        pytest.skip("the runners' test did not build the runs")
    assert_silent(run(place, "auditor", "keygen", "--out", "keys"))
    signer = ("--key", "keys/signer.key", "--cert", "keys/signer.pem", "--chain", "keys/ca.pem")
    for args in (
        ("check", "run-a", "--output", "check.txt"),
        ("check", "run-b", "--output", "check-b.txt"),
        ("rules",),
        ("explain", "A2.1"),
        ("replay", "run-a", "--sample", "10"),
        ("evidence", "run-b/placement/ort-cpu.ort-profile.json"),
        ("cost", "--offers", str(OFFERS)),
        ("report", "run-a", "--out", "report", "--replay", "10", *signer),
        ("verify", "report", "--ca", "keys/ca.pem"),
        ("archive", "run-a", "run-b", "--out", "archive", "--jobs", "1"),
        ("compare", "archive"),
        ("compare", "archive", "--out", "comparison", *signer),
        ("verify", "comparison", "--ca", "keys/ca.pem"),
    ):
        proc = run(place, "auditor", *args)
        # a check's verdict is its exit status (1: rejected); the words go to --output
        status = proc.returncode if args[0] in ("check", "replay") else 0
        assert status in (0, 1), (args, proc.stderr[-2000:])
        assert_silent(proc, status=status)


def test_debug_shows_what_the_commands_silence(tmp_path: Path) -> None:
    """The silencing is the commands' own (not the environment's): with AUDIT_DEBUG set, a
    library's warning is shown; without, neither shown nor raised under -W error."""
    code = (
        "import warnings, auditor.quiet as q; q.quiet_libraries(); "
        "warnings.warn('from a library', DeprecationWarning); print('done')"
    )
    quiet = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], text=True, capture_output=True, env=_env({})
    )
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "done\n", "")
    shown = subprocess.run(
        [sys.executable, "-c", code], text=True, capture_output=True, env=_env({"AUDIT_DEBUG": "1"})
    )
    assert "DeprecationWarning: from a library" in shown.stderr
    runner_code = code.replace("auditor.quiet", "runner.quiet")
    shown = subprocess.run(
        [sys.executable, "-c", runner_code],
        text=True,
        capture_output=True,
        env=_env({"RUNNER_DEBUG": "1"}),
    )
    assert "DeprecationWarning: from a library" in shown.stderr
