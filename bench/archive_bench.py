"""Benchmark issue 14's three aims, each as a ratio of two contenders measured in this one
script, taken in turn, so load on a shared machine hits both alike:

1. `audit check` on one run of `--lines` output lines (default 10^7: 100 passes of 100,000
   lines, tests/runfactory.py) in a fresh process, against a bare `pl.read_ndjson` of the
   same files (all output files in one call, plus the references and the CSV, holding the
   frames as the audit must) in a fresh process: wall time and peak RSS (the child's own
   VmHWM, read at its exit). Aim: both ratios <= 1.5.
2. The default run (`runner execute`'s, or RUN_DIR): `audit check` wall time imports
   included, against `python -c "import polars"`. Aim: <= 0.4 s (the import floor is about
   0.3 s on an idle machine); the ratio is printed too.
3. `--copies` hard-linked copies of the default run audited by `audit archive --jobs 2`,
   against a shell loop of `audit check` over the same runs, measured on `--loop-sample` of
   them and extrapolated linearly (said so in the output). Aim: archive <= 1/10 of the loop.
   Per-run cost printed; peak RSS of the archive's whole process tree (parent and workers,
   sampled every 50 ms from /proc) at `--small` and at `--copies` runs: aim flat (<= 1.2x).

    python bench/archive_bench.py [RUN_DIR] [--lines N] [--passes N] [--copies N]
                                  [--small N] [--loop-sample N] [--repeat N] [--skip 1,2,3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import runfactory  # noqa: E402

#: A child that runs CODE and writes its own peak RSS (VmHWM, kB) to $HWM_OUT at exit, even
#: through sys.exit: the parent's ru_maxrss would count pages it inherited at fork.
HWM = """import atexit, os
def _hwm():
    with open('/proc/self/status') as fh:
        kb = next(line.split()[1] for line in fh if line.startswith('VmHWM'))
    with open(os.environ['HWM_OUT'], 'w') as out:
        out.write(kb)
atexit.register(_hwm)
"""
AUDIT = "from auditor.cli import main; main()"
BARE = """import sys, glob
import polars as pl
run = sys.argv[1]
outputs = pl.read_ndjson(sorted(glob.glob(run + '/outputs/*/*.jsonl')))
refs = pl.read_ndjson(run + '/corpus/references.jsonl')
csv = pl.read_csv(run + '/resultats-bruts.csv', infer_schema=False)
print(outputs.height + refs.height + csv.height)
"""


def child(code: str, *args: str, tmp: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in bytes, exit status) of CODE in a fresh interpreter."""
    hwm = tmp / f"hwm-{time.monotonic_ns()}"
    env = {**os.environ, "HWM_OUT": str(hwm)}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", HWM + code, *args], env=env, cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, int(hwm.read_text()) * 1024, proc.returncode


def tree_rss(pid: int) -> int:
    """Resident bytes of PID and all its descendants, now."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, todo = set(), [pid]
    while todo:
        p = todo.pop()
        tree.add(p)
        todo += [c for c, pp in parents.items() if pp == p and c not in tree]
    total = 0
    for p in tree:
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next((int(line.split()[1]) for line in fh
                               if line.startswith("VmRSS")), 0) * 1024
        except OSError:
            continue
    return total


def run_tree(cmd: list[str]) -> tuple[float, int, int]:
    """(wall seconds, peak RSS of the process tree in bytes, exit status) of CMD."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.05):
            peak = max(peak, tree_rss(proc.pid))

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    _, err = proc.communicate()
    done.set()
    th.join()
    wall = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd[:4]} failed ({proc.returncode}): {err[-2000:]}")
    return wall, peak, proc.returncode


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def aim(name: str, ratio: float, limit: float, fmt: str = "{:.2f}x") -> None:
    ok = "PASS" if ratio <= limit else "MISS"
    print(f"  {name:<58}{fmt.format(ratio):>10}   aim <= {fmt.format(limit):<7} {ok}")


def big_run(tmp: Path, lines: int, passes: int) -> Path:
    variants = max(1, passes // 10)
    per_variant = passes // variants
    eval_size = lines // (variants * per_variant)
    t = time.perf_counter()
    run = runfactory.make_clean_run(tmp / "big", eval_size=eval_size,
                                    variants=[f"batch-{i + 1}" for i in range(variants)],
                                    warm_passes=per_variant - 1)
    files = sorted((run / "outputs").glob("*/*.jsonl"))
    mb = sum(p.stat().st_size for p in files) / 1e6
    print(f"synthetic run: {len(files)} passes x {eval_size:,} lines = "
          f"{len(files) * eval_size:,} output lines ({mb:,.0f} MB), built in "
          f"{time.perf_counter() - t:.0f} s")
    return run


def part1(tmp: Path, args: argparse.Namespace) -> None:
    print(f"\n1. audit check on one run of {args.lines:,} output lines, fresh processes")
    run = big_run(tmp, args.lines, args.passes)
    audit, bare = [], []
    for _ in range(args.repeat):
        bare.append(child(BARE, str(run), tmp=tmp))
        audit.append(child(AUDIT, "check", str(run), tmp=tmp))
    a_wall = statistics.median(w for w, _, _ in audit)
    b_wall = statistics.median(w for w, _, _ in bare)
    a_rss = max(r for _, r, _ in audit)
    b_rss = max(r for _, r, _ in bare)
    print(f"  {'':<28}{'wall s':>9}{'peak RSS':>12}")
    print(f"  {'bare pl.read_ndjson':<28}{b_wall:>9.2f}{gib(b_rss):>12}")
    print(f"  {'audit check':<28}{a_wall:>9.2f}{gib(a_rss):>12}  (exit {audit[0][2]})")
    aim("time: audit check / bare parse", a_wall / b_wall, 1.5)
    aim("peak RSS: audit check / bare parse", a_rss / b_rss, 1.5)
    shutil.rmtree(run)


def default_run(tmp: Path, given: Path | None) -> Path:
    if given is not None:
        return given
    out = tmp / "default"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from runner.cli import main; main()", "execute",
                    "--out", str(out), "--quiet"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    print(f"default run: runner execute, {time.perf_counter() - t:.0f} s")
    return out


def part2(run: Path, tmp: Path, args: argparse.Namespace) -> None:
    print("\n2. audit check on the default run, one fresh process, imports included")
    walls: dict[str, list[float]] = {"import polars": [], "audit check": []}
    for _ in range(max(args.repeat, 5)):
        walls["import polars"].append(child("import polars", tmp=tmp)[0])
        walls["audit check"].append(child(AUDIT, "check", str(run), tmp=tmp)[0])
    floor, audit = (statistics.median(walls[k]) for k in ("import polars", "audit check"))
    print(f"  python -c 'import polars': {floor:.3f} s; audit check: {audit:.3f} s "
          f"(medians of {len(walls['audit check'])}, taken in turn)")
    aim("audit check wall, imports included (s)", audit, 0.4, "{:.3f}")
    aim("audit check / import polars", audit / floor, 0.4 / 0.3)


def copies(run: Path, where: Path, n: int) -> Path:
    """N hard-linked copies of RUN under WHERE (each its own run dir)."""
    where.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        dest = where / f"run-{k:05d}"
        if not dest.exists():
            shutil.copytree(run, dest, copy_function=os.link)
    return where


def part3(run: Path, tmp: Path, args: argparse.Namespace) -> None:
    n, small, sample = args.copies, args.small, args.loop_sample
    print(f"\n3. {n:,} copies of the default run: audit archive --jobs 2 against a loop of "
          "audit check")
    big = copies(run, tmp / f"copies-{n}", n)
    few = copies(run, tmp / f"copies-{small}", small)
    audit = [sys.executable, "-c", AUDIT]
    runs = sorted(big.iterdir())
    loop: list[float] = []

    def loop_part(items: list[Path]) -> None:
        for r in items:  # what a shell loop does: one process per run
            t = time.perf_counter()
            subprocess.run([*audit, "check", str(r)], stdout=subprocess.DEVNULL, cwd=ROOT)
            loop.append(time.perf_counter() - t)

    half = sample // 2
    loop_part(runs[:half])
    s_wall, s_rss, _ = run_tree([*audit, "archive", str(few), "--out", str(tmp / "out-small"),
                                 "--jobs", "2", "--quiet"])
    loop_part(runs[half:sample])
    b_wall, b_rss, _ = run_tree([*audit, "archive", str(big), "--out", str(tmp / "out-big"),
                                 "--jobs", "2", "--quiet"])
    per_check = statistics.mean(loop)
    loop_total = per_check * n
    print(f"  loop of audit check: {per_check:.3f} s per run, measured on {len(loop)} runs "
          f"and extrapolated to {n:,}: {loop_total:.0f} s")
    print(f"  audit archive --jobs 2: {small:,} runs in {s_wall:.1f} s "
          f"({s_wall / small * 1000:.0f} ms per run, peak RSS of the tree {gib(s_rss)}); "
          f"{n:,} runs in {b_wall:.1f} s ({b_wall / n * 1000:.0f} ms per run, peak RSS of the "
          f"tree {gib(b_rss)})")
    aim(f"time: archive of {n:,} / loop over {n:,} (extrapolated)", b_wall / loop_total, 0.1)
    aim(f"peak RSS of the tree: {n:,} runs / {small:,} runs", b_rss / s_rss, 1.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="?", type=Path, help="the default run (else: runner "
                    "execute makes one)")
    ap.add_argument("--lines", type=int, default=10_000_000)
    ap.add_argument("--passes", type=int, default=100)
    ap.add_argument("--copies", type=int, default=1000)
    ap.add_argument("--small", type=int, default=100)
    ap.add_argument("--loop-sample", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=1, help="repeats of part 1 (in turn)")
    ap.add_argument("--skip", default="", help="parts to skip, e.g. 1 or 2,3")
    args = ap.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    with open("/proc/loadavg") as fh:
        print(f"load average (1, 5, 15 min) at start: {' '.join(fh.read().split()[:3])} on "
              f"{os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="archive-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if "1" not in skip:
            part1(tmp, args)
        if not {"2", "3"} <= skip:
            run = default_run(tmp, args.run_dir)
            if "2" not in skip:
                part2(run, tmp, args)
            if "3" not in skip:
                part3(run, tmp, args)
    with open("/proc/loadavg") as fh:
        print(f"\nload average at the end: {' '.join(fh.read().split()[:3])}")


if __name__ == "__main__":
    main()
