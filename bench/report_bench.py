"""Time each step of `audit report` + `audit verify` on one run: audit, view model, plots,
HTML, PDF, sign, DSSE, verify. The run is the factory's clean run (tests/runfactory.py) unless
a run dir is given. Aim: under 5 s in total on the 2-core dev machine, most of it WeasyPrint.

    .venv/bin/python bench/report_bench.py [RUN_DIR] [--repeat N]

Prints one line per step (median over the repeats) and the share of the total; the baseline
column is the first repeat, so a regression inside one session shows as a ratio."""

from __future__ import annotations

import argparse
import statistics
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

AIM_S = 5.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", nargs="?", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        run = args.run_dir
        if run is None:
            from runfactory import make_clean_run

            run = make_clean_run(base / "run")
        keygen(base / "keys")
        k = base / "keys"
        rounds: list[dict[str, float]] = []
        for i in range(args.repeat):
            timer = StepTimer()
            t0 = time.perf_counter()
            build_report(run, base / f"report-{i}", key=k / "signer.key",
                         cert=k / "signer.pem", chain=k / "ca.pem", timer=timer)
            timer.steps["build total"] = time.perf_counter() - t0
            with timer.step("verify"):
                verify_report(base / f"report-{i}", k / "ca.pem")
            rounds.append(timer.steps)
    steps = list(rounds[0])
    med = {s: statistics.median(r[s] for r in rounds) for s in steps}
    total = med["build total"]
    print(f"report bench: {run if args.run_dir else 'factory clean run'}, "
          f"{args.repeat} repeat(s), median seconds")
    print(f"{'step':<14}{'median s':>10}{'first s':>10}{'ratio':>8}{'share':>8}")
    for s in steps:
        share = "" if s in ("build total", "verify") else f"{100 * med[s] / total:6.1f}%"
        print(f"{s:<14}{med[s]:>10.3f}{rounds[0][s]:>10.3f}{med[s] / rounds[0][s]:>8.2f}"
              f"{share:>8}")
    verdict = "OK" if total < AIM_S else "OVER"
    print(f"build total {total:.2f} s vs aim {AIM_S:.1f} s: {verdict} "
          f"(ratio {total / AIM_S:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
