"""Benchmark `audit report` (issue 26, aim 3): the real command on one run, as a fresh
process, at most 3 s wall time on the 2-core dev machine.

1. The command `audit report RUN --out OUT --key K --cert C --chain CA` (the test CA of
   `audit keygen`), taken in turn with a baseline process, `python -c "import weasyprint,
   matplotlib"` (the import floor of any report), so load on a shared machine hits both
   alike: median wall time of each, their ratio, the peak RSS of each child (from
   `wait4`), and PASS/MISS of the command's median against `AIM_S`.
2. In process, each step of `build_report` + `audit verify` (audit, view model, plots, HTML,
   copy, PDF, sign, DSSE, verify): the median over the repeats and its share of the total;
   the first repeat pays the imports.

The run is the factory's clean run (tests/runfactory.py) unless a run dir is given.

    .venv/bin/python bench/report_bench.py [RUN_DIR] [--repeat N] [--steps N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from auditor.report.build import StepTimer, build_report  # noqa: E402
from auditor.report.keygen import keygen  # noqa: E402
from auditor.report.verify import verify_report  # noqa: E402

AIM_S = 3.0
BASELINE = "import weasyprint, matplotlib"


def audit_command() -> list[str]:
    """The installed `audit` script beside this interpreter, else `python -m auditor.cli`."""
    script = Path(sys.executable).parent / "audit"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "auditor.cli"]


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of CMD as a child process; its failure stops the
    bench with its output."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}\n{out.decode(errors='replace')}")
    return wall, usage.ru_maxrss / 1024  # Linux: KiB


def command_bench(run: Path, keys: Path, out: Path, repeat: int) -> None:
    cmd = [
        *audit_command(),
        "report",
        str(run),
        "--out",
        str(out),
        "--key",
        str(keys / "signer.key"),
        "--cert",
        str(keys / "signer.pem"),
        "--chain",
        str(keys / "ca.pem"),
    ]
    base = [sys.executable, "-c", BASELINE]
    timed(base)  # warm the page cache for both
    rows: dict[str, list[tuple[float, float]]] = {"report": [], "baseline": []}
    for _ in range(repeat):
        rows["report"].append(timed(cmd))
        rows["baseline"].append(timed(base))
    print(f"command: {' '.join(['audit', *cmd[-10:]])}")
    print(
        f"baseline: python -c {BASELINE!r}; {repeat} alternated runs each, "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"{'contender':<10}{'median s':>10}{'min s':>8}{'max s':>8}{'peak RSS MiB':>14}")
    med = {}
    for name, got in rows.items():
        walls = [w for w, _ in got]
        med[name] = statistics.median(walls)
        print(
            f"{name:<10}{med[name]:>10.2f}{min(walls):>8.2f}{max(walls):>8.2f}"
            f"{max(r for _, r in got):>14.0f}"
        )
    verdict = "PASS" if med["report"] <= AIM_S else "MISS"
    print(
        f"audit report {med['report']:.2f} s = {med['report'] / med['baseline']:.2f}x the "
        f"baseline; aim <= {AIM_S:.1f} s: {verdict} ({med['report'] / AIM_S:.2f} of it)"
    )


def steps_bench(run: Path, keys: Path, base: Path, repeat: int) -> None:
    rounds: list[dict[str, float]] = []
    for i in range(repeat):
        timer = StepTimer()
        t0 = time.perf_counter()
        build_report(
            run,
            base / f"report-{i}",
            key=keys / "signer.key",
            cert=keys / "signer.pem",
            chain=keys / "ca.pem",
            timer=timer,
        )
        timer.steps["build total"] = time.perf_counter() - t0
        with timer.step("verify"):
            verify_report(base / f"report-{i}", keys / "ca.pem")
        rounds.append(timer.steps)
        shutil.rmtree(base / f"report-{i}")
    steps = list(rounds[0])
    med = {s: statistics.median(r[s] for r in rounds) for s in steps}
    total = med["build total"]
    print(f"\nin process, {repeat} repeat(s) (the first pays the imports)")
    print(f"{'step':<14}{'median s':>10}{'first s':>10}{'share':>8}")
    for s in steps:
        share = "" if s in ("build total", "verify") else f"{100 * med[s] / total:6.1f}%"
        print(f"{s:<14}{med[s]:>10.3f}{rounds[0][s]:>10.3f}{share:>8}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", nargs="?", type=Path)
    ap.add_argument("--repeat", type=int, default=7, help="runs of each contender")
    ap.add_argument("--steps", type=int, default=3, help="in-process repeats (0: none)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        run = args.run_dir
        if run is None:
            from runfactory import make_clean_run

            run = make_clean_run(base / "run")
        keygen(base / "keys")
        print(f"report bench: {run if args.run_dir else 'factory clean run'}")
        command_bench(run, base / "keys", base / "out", args.repeat)
        if args.steps:
            steps_bench(run, base / "keys", base, args.steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
