"""Benchmark `audit check` against its floor and a naive peer, side by side in one run.

Builds a large synthetic run (default: 10 variants x 10 passes = 100 passes of 10,000 outputs,
1,000,000 output lines) with tests/runfactory.py in a temp dir, then times:

- `run_check` in-process: the whole audit (hashing, loading, every rule);
- the floor: a bare polars read of the same files (`pl.read_ndjson` of every output file and
  the references, `pl.read_csv` of the CSV), no checking at all;
- the naive peer: a straightforward row-by-row Python implementation of the ID checks only
  (json.loads per line, a dict and a set per file: duplicates, missing, extra).

Prints both ratios (aim: audit within 2x of the floor, at least 10x faster than the naive
peer), then the wall time of the `audit check` command (a subprocess, imports included) on
RUN_DIR if given, else on the factory's default small run.

    python bench/audit_bench.py [RUN_DIR] [--eval-size N] [--variants N] [--passes N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import runfactory  # noqa: E402

from auditor.check import run_check  # noqa: E402
from auditor.load import load_run  # noqa: E402


def bare_read(run: Path) -> int:
    """The floor: read every file the audit reads, with polars, and nothing else."""
    n = 0
    for p in sorted((run / "outputs").rglob("*.jsonl")):
        n += pl.read_ndjson(p).height
    n += pl.read_ndjson(run / "corpus/references.jsonl").height
    n += pl.read_csv(run / "resultats-bruts.csv", infer_schema=False).height
    return n


def naive_id_checks(run: Path) -> int:
    """The naive peer: per file, json.loads each line; dict of counts, sets for the rest."""
    expected = set((run / "corpus/expected_ids.txt").read_text(encoding="utf-8").split())
    problems = 0
    for p in sorted((run / "outputs").rglob("*.jsonl")):
        counts: dict[str, int] = {}
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                counts[obj["id"]] = counts.get(obj["id"], 0) + 1
        dups = [i for i, c in counts.items() if c > 1]
        missing = expected - counts.keys()
        extra = counts.keys() - expected
        problems += len(dups) + len(missing) + len(extra)
    return problems


def timed(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cli_wall(run: Path) -> tuple[float, int]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", "from auditor.cli import main; main()",
                           "check", str(run)], capture_output=True, text=True, cwd=ROOT)
    return time.perf_counter() - t, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="?", type=Path)
    ap.add_argument("--eval-size", type=int, default=10_000)
    ap.add_argument("--variants", type=int, default=10)
    ap.add_argument("--passes", type=int, default=10, help="passes per variant (1 cold + warm)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as tmp:
        big = Path(tmp) / "big"
        t = time.perf_counter()
        runfactory.make_clean_run(big, eval_size=args.eval_size,
                                  variants=[f"batch-{i + 1}" for i in range(args.variants)],
                                  warm_passes=args.passes - 1)
        n_lines = args.variants * args.passes * args.eval_size
        print(f"synthetic run: {args.variants * args.passes} passes x {args.eval_size} outputs "
              f"= {n_lines:,} lines, built in {time.perf_counter() - t:.1f} s")
        result = run_check(big)
        assert result.verdict == "accepted", [f.to_json() for f in result.findings[:3]]
        assert naive_id_checks(big) == 0
        t_check = timed(lambda: run_check(big), args.repeat)
        t_load = timed(lambda: load_run(big), args.repeat)
        t_bare = timed(lambda: bare_read(big), args.repeat)
        t_naive = timed(lambda: naive_id_checks(big), max(1, args.repeat - 2))
        print(f"{'':<34}{'median s':>10}{'lines/s':>14}")
        for name, secs in (("audit run_check (all rules)", t_check),
                           ("  of which load_run (hash, parse)", t_load),
                           ("bare polars read (floor)", t_bare),
                           ("naive Python ID checks (peer)", t_naive)):
            print(f"{name:<34}{secs:>10.3f}{n_lines / secs:>14,.0f}")
        print(f"audit / floor:  {t_check / t_bare:5.2f}x   (aim <= 2x)")
        print(f"naive / audit:  {t_naive / t_check:5.2f}x   (aim >= 10x)")
        target = args.run_dir
        if target is None:
            target = runfactory.make_clean_run(Path(tmp) / "default")
        wall, code = cli_wall(target)
        print(f"`audit check {'RUN_DIR' if args.run_dir else '<factory default run>'}` wall "
              f"time, imports included: {wall:.2f} s (exit {code})")


if __name__ == "__main__":
    main()
