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
3. Issue 23's scale aims: hard-linked copies of the default run audited by `audit archive
   --jobs 2` at each of `--sizes` (default 100, 1,000 and 10,000 runs, each into a fresh
   `--out`), against a shell loop of `audit check` over the same runs (`for r in ...; do
   audit check "$r"; done`), timed on `--loop-sample` of them in two halves around the
   archives and extrapolated linearly (each iteration is a fresh process; said so in the
   output). Aims, each printed as a ratio with PASS or MISS:
   - the archive of 1,000 runs at least 20x faster than the loop (archive / loop <= 0.05),
     and of 100 runs at least 10x (<= 0.10): the workers' start-up is amortised early;
   - 10,000 runs in at most 5 minutes (wall / 300 s <= 1), with the peak RSS of the whole
     process tree (parent and workers, sampled every 50 ms from /proc) flat from 1,000 to
     10,000 runs (<= 1.2x);
   - `audit archive` again on the unchanged 10,000 runs (incremental: nothing to audit) in
     under 10 s (wall / 10 s < 1).
   The copies are hard links (the same bytes for the loop and the archive, so both read
   them from the page cache); nothing in the archive audits a run once for several copies.
   The load average is printed at the start, between the archives and at the end: other
   work on a shared machine slows both contenders, the ratios less than the times.

    python bench/archive_bench.py [RUN_DIR] [--lines N] [--passes N] [--sizes 100,1000,10000]
                                  [--loop-sample N] [--repeat N] [--skip 1,2,3]
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
from collections.abc import Mapping
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


def child(
    code: str, *args: str, tmp: Path, env: Mapping[str, str] | None = None
) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in bytes, exit status) of CODE in a fresh interpreter, in
    ENV (this process's by default); TMP holds its peak-RSS file."""
    hwm = tmp / f"hwm-{time.monotonic_ns()}"
    env = {**(os.environ if env is None else env), "HWM_OUT": str(hwm)}
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", HWM + code, *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
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
                total += (
                    next((int(line.split()[1]) for line in fh if line.startswith("VmRSS")), 0)
                    * 1024
                )
        except OSError:
            continue
    return total


def run_tree(cmd: list[str]) -> tuple[float, int, int]:
    """(wall seconds, peak RSS of the process tree in bytes, exit status) of CMD."""
    t = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
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
    run = runfactory.make_clean_run(
        tmp / "big",
        eval_size=eval_size,
        variants=[f"batch-{i + 1}" for i in range(variants)],
        warm_passes=per_variant - 1,
    )
    files = sorted((run / "outputs").glob("*/*.jsonl"))
    mb = sum(p.stat().st_size for p in files) / 1e6
    print(
        f"synthetic run: {len(files)} passes x {eval_size:,} lines = "
        f"{len(files) * eval_size:,} output lines ({mb:,.0f} MB), built in "
        f"{time.perf_counter() - t:.0f} s"
    )
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
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from runner.cli import main; main()",
            "execute",
            "--out",
            str(out),
            "--quiet",
        ],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print(f"default run: runner execute, {time.perf_counter() - t:.0f} s")
    return out


def part2(run: Path, tmp: Path, args: argparse.Namespace) -> None:
    print("\n2. audit check on the default run, one fresh process, imports included")
    walls: dict[str, list[float]] = {"import polars": [], "audit check": []}
    for _ in range(max(args.repeat, 5)):
        walls["import polars"].append(child("import polars", tmp=tmp)[0])
        walls["audit check"].append(child(AUDIT, "check", str(run), tmp=tmp)[0])
    floor, audit = (statistics.median(walls[k]) for k in ("import polars", "audit check"))
    print(
        f"  python -c 'import polars': {floor:.3f} s; audit check: {audit:.3f} s "
        f"(medians of {len(walls['audit check'])}, taken in turn)"
    )
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


def loadavg() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def shell_loop(runs: list[Path]) -> float:
    """Wall seconds of a bash loop of `audit check` over RUNS (one process per run)."""
    audit = Path(sys.executable).with_name("audit")
    script = f'for r in "$@"; do "{audit}" check "$r" > /dev/null; done'
    t = time.perf_counter()
    subprocess.run(["bash", "-c", script, "loop", *map(str, runs)], cwd=ROOT, check=False)
    return time.perf_counter() - t


def part3(run: Path, tmp: Path, args: argparse.Namespace) -> None:
    sizes = sorted(int(x) for x in args.sizes.split(","))
    sample = args.loop_sample
    biggest = sizes[-1]
    print(
        f"\n3. audit archive --jobs 2 of {', '.join(f'{n:,}' for n in sizes)} copies of the "
        "default run, against a shell loop of audit check"
    )
    t = time.perf_counter()
    dirs = {n: copies(run, tmp / f"copies-{n}", n) for n in sizes}
    print(f"  {sum(sizes):,} hard-linked copies made in {time.perf_counter() - t:.0f} s")
    audit = [sys.executable, "-c", AUDIT]
    runs = sorted(dirs[biggest].iterdir())
    half = sample // 2
    loop = shell_loop(runs[:half])
    results: dict[int, tuple[float, int]] = {}
    for n in sizes:
        wall, rss, _ = run_tree(
            [
                *audit,
                "archive",
                str(dirs[n]),
                "--out",
                str(tmp / f"out-{n}"),
                "--jobs",
                "2",
                "--quiet",
            ]
        )
        results[n] = (wall, rss)
        print(
            f"  audit archive, {n:,} runs: {wall:.1f} s ({wall / n * 1000:.1f} ms per run), "
            f"peak RSS of the tree {gib(rss)}; load average now {loadavg()}"
        )
    again, again_rss, _ = run_tree(
        [
            *audit,
            "archive",
            str(dirs[biggest]),
            "--out",
            str(tmp / f"out-{biggest}"),
            "--jobs",
            "2",
            "--quiet",
        ]
    )
    print(
        f"  audit archive again, {biggest:,} unchanged runs: {again:.1f} s, peak RSS "
        f"{gib(again_rss)}"
    )
    loop += shell_loop(runs[half:sample])
    per_check = loop / sample
    print(
        f"  shell loop of audit check: {per_check:.3f} s per run, timed on {sample} runs "
        f"(half before the archives, half after) and extrapolated linearly"
    )
    for n, target in ((1000, 20), (100, 10)):
        if n in results:
            aim(
                f"time: archive of {n:,} / loop over {n:,} (>= {target}x faster)",
                results[n][0] / (per_check * n),
                1 / target,
                "{:.3f}",
            )
    if biggest >= 10_000:
        wall = results[biggest][0]
        aim(f"time: {biggest:,} runs / 300 s (at most 5 minutes)", wall / 300, 1.0)
        aim(
            f"time: archive of {biggest:,} / loop over {biggest:,}",
            wall / (per_check * biggest),
            1 / 20,
            "{:.3f}",
        )
    if 1000 in results and biggest > 1000:
        aim(
            f"peak RSS of the tree: {biggest:,} runs / 1,000 runs",
            results[biggest][1] / results[1000][1],
            1.2,
        )
    aim(f"time: again on {biggest:,} unchanged runs / 10 s (incremental)", again / 10, 1.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "run_dir", nargs="?", type=Path, help="the default run (else: runner execute makes one)"
    )
    ap.add_argument("--lines", type=int, default=10_000_000)
    ap.add_argument("--passes", type=int, default=100)
    ap.add_argument("--sizes", default="100,1000,10000", help="archive sizes of part 3, in runs")
    ap.add_argument(
        "--loop-sample", type=int, default=40, help="runs the shell loop of audit check is timed on"
    )
    ap.add_argument("--repeat", type=int, default=1, help="repeats of part 1 (in turn)")
    ap.add_argument("--skip", default="", help="parts to skip, e.g. 1 or 2,3")
    args = ap.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    print(f"load average (1, 5, 15 min) at start: {loadavg()} on {os.cpu_count()} CPUs")
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
    print(f"\nload average at the end: {loadavg()}")


if __name__ == "__main__":
    main()
