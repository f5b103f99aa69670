"""Benchmark `audit check` against its floor and a naive peer, side by side in one run.

Builds a large synthetic run (default: 10 variants x 10 passes = 100 passes of 10,000 outputs,
1,000,000 output lines) with tests/runfactory.py in a temp dir, then times:

- the audit: `run_check` in-process, all rules (read and hash every file, parse and validate
  every artifact, every rule; `load_run` alone is shown too);
- the floor, two bare polars reads of the files the audit parses in bulk (every output file,
  the references, the CSV), no checking at all: (A) one `pl.read_ndjson` call per file,
  (B) one `pl.read_ndjson` call over the list of all output files. The aim is shown
  against each (B is the faster, so the stricter);
- the naive peer, two straightforward row-by-row Python implementations of the ID checks
  (A2.1-A2.3), so a reader sees exactly what is compared:
  (1) `json.loads` per line, a dict of counts per file, sets for duplicates, missing and
      extra IDs: no check of the line's fields or types;
  (2) the same plus what A2.3 asks of each line: `json.loads` (a bad line is counted, not a
      crash), the project's compiled jsonschema validator for the output line
      (`schemas.validator("output_line").is_valid`), and the label among the manifest's
      declared classes. Being slow (about 20 us a line), it is timed on the first
      `--naive-schema-files` files and scaled linearly to all of them (the work is per line).
  Both peers do far less than the audit (no hashing, no metric, no other rule).

Prints a table, the aims and PASS/MISS per aim (audit within 2x of the floor, at least 10x
faster than the naive peer). Then issue 26's two aims, each contender a fresh interpreter
(`bench/archive_bench.py`'s children: wall time, and peak RSS read from the child's own
VmHWM at exit), the two contenders of an aim alternated:

1. `audit check` on the synthetic run against a bare parse of the same files in a fresh
   process (`pl.read_ndjson` of every output file in one call, the references, the CSV):
   wall time <= 1.5x and peak RSS <= 1.0x (10^7 lines: `--eval-size 100000`);
2. `audit check` on RUN_DIR if given, else on the factory's default run
   (tests/runfactory.py), imports included, against `python -c "import polars"`: <= 1.5x.
   Both children run with a warm bytecode cache (a private PYTHONPYCACHEPREFIX, filled by
   an untimed run of each), as an installed package has: pip compiles it at install, while
   an environment with PYTHONDONTWRITEBYTECODE would recompile the auditor's modules on
   every run but find polars compiled. The ratio without that cache is printed too.

Timings are medians of repeats taken in turn (round robin), so a burst of load on a shared
machine hits every contender alike.

    python bench/audit_bench.py [RUN_DIR] [--eval-size N] [--variants N] [--passes N]
                                [--repeat N] [--naive-schema-files N] [--aims-repeat N]
                                [--skip-table]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import runfactory  # noqa: E402
from archive_bench import AUDIT, BARE, child, gib, loadavg  # noqa: E402

import schemas  # noqa: E402
from auditor.engine import load_run, run_check  # noqa: E402
from auditor.protocols import all_rules  # noqa: E402


def output_files(run: Path) -> list[Path]:
    return sorted((run / "outputs").rglob("*.jsonl"))


def floor_per_file(run: Path) -> int:
    """Floor A: read every file the audit parses in bulk, one polars call per file."""
    n = 0
    for p in output_files(run):
        n += pl.read_ndjson(p).height
    n += pl.read_ndjson(run / "corpus/references.jsonl").height
    n += pl.read_csv(run / "resultats-bruts.csv", infer_schema=False).height
    return n


def floor_one_call(run: Path) -> int:
    """Floor B: the same files, all output files in one (multi-threaded) polars call."""
    n = pl.read_ndjson(output_files(run)).height
    n += pl.read_ndjson(run / "corpus/references.jsonl").height
    n += pl.read_csv(run / "resultats-bruts.csv", infer_schema=False).height
    return n


def id_set_problems(counts: dict[str, int], expected: set[str]) -> int:
    """Duplicated, missing and extra IDs of one file, from its per-ID counts."""
    dups = sum(1 for c in counts.values() if c > 1)
    return dups + len(expected - counts.keys()) + len(counts.keys() - expected)


def naive_sets(run: Path, files: list[Path]) -> int:
    """Naive peer 1: per file, json.loads each line; a dict of counts, sets for the rest.
    No check of the line's fields or types. Returns the number of problems found."""
    expected = set((run / "corpus/expected_ids.txt").read_text(encoding="utf-8").split())
    problems = 0
    for p in files:
        counts: dict[str, int] = {}
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                counts[obj["id"]] = counts.get(obj["id"], 0) + 1
        problems += id_set_problems(counts, expected)
    return problems


def naive_schema(run: Path, files: list[Path]) -> int:
    """Naive peer 2: what A2.1-A2.3 check, line by line: each line parsed with json.loads
    (a line that does not parse is a problem, not a crash), validated against the output
    line schema with the project's compiled validator, its label among the declared
    classes; then per file duplicates, missing and extra IDs against the expected list.
    Returns the number of problems found."""
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    classes = set(manifest["task"]["classes"])
    expected = set((run / "corpus/expected_ids.txt").read_text(encoding="utf-8").split())
    validator = schemas.validator("output_line")
    problems = 0
    for p in files:
        counts: dict[str, int] = {}
        with open(p, "rb") as fh:
            for line in fh:
                try:
                    obj = json.loads(line)
                except ValueError:  # not JSON, or not UTF-8
                    problems += 1
                    continue
                if not validator.is_valid(obj):
                    problems += 1
                    continue
                if obj["label"] not in classes:
                    problems += 1
                counts[obj["id"]] = counts.get(obj["id"], 0) + 1
        problems += id_set_problems(counts, expected)
    return problems


def round_robin(contenders: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds of each contender, the repeats taken in turn."""
    times: dict[str, list[float]] = {k: [] for k in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def alternated(
    contenders: dict[str, tuple[str, ...]], repeat: int, env: dict[str, str]
) -> dict[str, list[tuple[float, int, int]]]:
    """Each contender (code, args...) run REPEAT times in fresh interpreters, in turn."""
    got: dict[str, list[tuple[float, int, int]]] = {k: [] for k in contenders}
    with tempfile.TemporaryDirectory(prefix="hwm-") as where:
        for _ in range(repeat):
            for name, (code, *args) in contenders.items():
                got[name].append(child(code, *args, tmp=Path(where), env=env))
    return got


def cached_env(tmp: Path) -> dict[str, str]:
    """The environment of a child with a bytecode cache of its own (see the docstring)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(tmp / "pycache")}


def aim_line(name: str, ratio: float, limit: float) -> bool:
    ok = ratio <= limit
    print(f"{name:<52}{ratio:>8.2f}x{'<= ' + f'{limit:g}x':>9}{'':>3}{verdict(ok)}")
    return ok


def aim1(big: Path, n_lines: int, repeat: int, env: dict[str, str]) -> None:
    """Issue 26 aim 1: the audit of the big run against a bare parse, fresh processes."""
    contenders = {"bare parse": (BARE, str(big)), "audit check": (AUDIT, "check", str(big))}
    alternated(contenders, 1, env)  # untimed: fills the bytecode cache
    got = alternated(contenders, repeat, env)
    if any(code != 0 for _, _, code in got["audit check"]):
        raise SystemExit("audit check did not accept the clean run")
    wall = {k: statistics.median(w for w, _, _ in v) for k, v in got.items()}
    rss = {k: max(r for _, r, _ in v) for k, v in got.items()}
    print(
        f"\naim 1: {n_lines:,} output lines, fresh processes, medians of {repeat} in turn "
        f"(load {loadavg()})"
    )
    print(f"{'contender':<52}{'wall s':>9}{'peak RSS':>12}")
    for k in contenders:
        print(f"{k:<52}{wall[k]:>9.2f}{gib(rss[k]):>12}")
    aim_line("time: audit check / bare parse", wall["audit check"] / wall["bare parse"], 1.5)
    aim_line("peak RSS: audit check / bare parse", rss["audit check"] / rss["bare parse"], 1.0)


def aim2(target: Path, label: str, repeat: int, env: dict[str, str]) -> None:
    """Issue 26 aim 2: `audit check` of a small run against `import polars`, imports in."""
    contenders = {
        "python -c 'import polars'": ("import polars",),
        f"audit check {label}": (AUDIT, "check", str(target)),
    }
    alternated(contenders, 1, env)  # untimed: fills the bytecode cache
    got = alternated(contenders, repeat, env)
    bare = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    bare["PYTHONDONTWRITEBYTECODE"] = "1"
    nocache = alternated(contenders, repeat, bare)
    print(f"\naim 2: {label}, imports included, medians of {repeat} in turn (load {loadavg()})")
    print(f"{'contender':<52}{'cached s':>9}{'no cache':>12}")
    wall = {k: statistics.median(w for w, _, _ in v) for k, v in got.items()}
    cold = {k: statistics.median(w for w, _, _ in v) for k, v in nocache.items()}
    for k in contenders:
        print(f"{k:<52}{wall[k]:>9.3f}{cold[k]:>12.3f}")
    floor, audit = (wall[k] for k in contenders)
    aim_line("audit check / import polars (bytecode cached)", audit / floor, 1.5)
    floor, audit = (cold[k] for k in contenders)
    print(f"{'  the same without a bytecode cache (information)':<52}{audit / floor:>8.2f}x")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table(big: Path, files: list[Path], n_lines: int, args: argparse.Namespace) -> None:
    """The in-process table: the audit against the floors and the naive peers."""
    # Every contender agrees the clean run is clean before any is timed.
    result = run_check(big)
    assert result.verdict == "accepted", [f.to_json() for f in result.findings[:3]]
    sample = files[: args.naive_schema_files] if args.naive_schema_files > 0 else files
    assert naive_sets(big, files) == 0 and naive_schema(big, sample) == 0
    scale = len(files) / len(sample)

    fast = round_robin(
        {
            "audit": lambda: run_check(big),
            "load": lambda: load_run(big),
            "floor_a": lambda: floor_per_file(big),
            "floor_b": lambda: floor_one_call(big),
        },
        args.repeat,
    )
    slow = round_robin(
        {"naive1": lambda: naive_sets(big, files), "naive2": lambda: naive_schema(big, sample)},
        max(1, args.repeat - 2),
    )
    audit, floor = fast["audit"], min(fast["floor_a"], fast["floor_b"])
    floor_name = "floor A" if floor == fast["floor_a"] else "floor B"
    naive1, naive2 = slow["naive1"], slow["naive2"] * scale
    n_rules = len(all_rules())
    part = f" (timed on {len(sample)} of {len(files)} files, x{scale:g})" if scale != 1 else ""
    rows = [
        (f"audit: run_check, all {n_rules} rules", audit),
        ("  of which load_run (read, hash, parse, validate)", fast["load"]),
        ("floor A: pl.read_ndjson, one call per file", fast["floor_a"]),
        ("floor B: pl.read_ndjson, one call for all files", fast["floor_b"]),
        ("naive 1: json.loads per line + ID sets", naive1),
        ("naive 2: json.loads + jsonschema per line + labels + ID sets", naive2),
    ]
    print(f"\n{'contender':<62}{'median s':>9}{'lines/s':>13}{'x audit':>9}")
    for name, secs in rows:
        print(f"{name:<62}{secs:>9.3f}{n_lines / secs:>13,.0f}{secs / audit:>8.2f}x")
    if part:
        print(f"(naive 2{part})")
    print(f"\n{'aim':<44}{'measured':>9}{'aim':>9}{'':>3}result")
    aims = [
        (
            "audit / floor A (a call per file)",
            audit / fast["floor_a"],
            "<= 2x",
            audit / fast["floor_a"] <= 2,
        ),
        (
            "audit / floor B (one call, the faster)",
            audit / fast["floor_b"],
            "<= 2x",
            audit / fast["floor_b"] <= 2,
        ),
        ("naive 1 (json.loads + sets) / audit", naive1 / audit, ">= 10x", naive1 / audit >= 10),
        ("naive 2 (+ jsonschema, labels) / audit", naive2 / audit, ">= 10x", naive2 / audit >= 10),
    ]
    for name, ratio, aim, ok in aims:
        print(f"{name:<44}{ratio:>8.2f}x{aim:>9}{'':>3}{verdict(ok)}")
    print(
        f"for scale: naive 1 / {floor_name} = {naive1 / floor:.2f}x (a check that "
        "parses every line with polars cannot beat the floor)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="?", type=Path)
    ap.add_argument("--eval-size", type=int, default=10_000)
    ap.add_argument("--variants", type=int, default=10)
    ap.add_argument("--passes", type=int, default=10, help="passes per variant (1 cold + warm)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument(
        "--naive-schema-files",
        type=int,
        default=10,
        help="files naive peer 2 is timed on, scaled to all (0: all files)",
    )
    ap.add_argument(
        "--aims-repeat",
        type=int,
        default=5,
        help="fresh-process repeats of each contender of issue 26's aims",
    )
    ap.add_argument(
        "--skip-table",
        action="store_true",
        help="only issue 26's aims (no in-process table, no naive peers)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as tmp:
        big = Path(tmp) / "big"
        t = time.perf_counter()
        runfactory.make_clean_run(
            big,
            eval_size=args.eval_size,
            variants=[f"batch-{i + 1}" for i in range(args.variants)],
            warm_passes=args.passes - 1,
        )
        files = output_files(big)
        n_lines = args.variants * args.passes * args.eval_size
        mb = sum(p.stat().st_size for p in files) / 1e6
        print(
            f"synthetic run: {len(files)} passes x {args.eval_size:,} outputs = "
            f"{n_lines:,} lines ({mb:.1f} MB of outputs), built in "
            f"{time.perf_counter() - t:.1f} s"
        )
        if not args.skip_table:
            table(big, files, n_lines, args)
        env = cached_env(Path(tmp))
        aim1(big, n_lines, args.aims_repeat, env)
        target = args.run_dir
        if target is None:
            target = runfactory.make_clean_run(Path(tmp) / "default")
        aim2(
            target,
            "RUN_DIR" if args.run_dir else "<factory default run>",
            max(args.aims_repeat, 7),
            env,
        )


if __name__ == "__main__":
    main()
