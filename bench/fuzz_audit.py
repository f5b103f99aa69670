"""Fuzz `audit check` (and, on a sample, `audit report`'s rendering) with damaged runs.

Builds small clean protocol A runs (CPU and CUDA flavours, with typed claims) with
tests/runfactory.py, then audits RUNS copies of them, each with one random single-file
damage from tests/damage.py (bytes flipped, truncations, deeply nested or enormous values,
repeated keys, non-UTF-8 names, sparse files, files added or removed, the manifest
re-hashed most of the time) and, for one run in FACT_EVERY, a change to a fact file instead,
which must be rejected. A crash is an exception out of the audit or an internal-error
finding (`A0000`); a missed fact change is an accepted run whose fact file changed. Every
REPORT_EVERY-th run is also rendered (view model, figures, HTML; no PDF).

Prints the crash count, the misses, the time, and a table of verdicts per kind of damage;
exits 1 when anything crashed or a fact change was accepted.

    python bench/fuzz_audit.py [--runs 2000] [--seed 0] [--report-every 50] [--fact-every 4]
                               [--verbose]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import damage  # noqa: E402
import runfactory  # noqa: E402

from auditor.engine import audit  # noqa: E402


def fuzz(
    runs: int,
    seed: int = 0,
    report_every: int = 50,
    fact_every: int = 4,
    out=sys.stdout,
    verbose: bool = False,
) -> dict:
    """Audit RUNS damaged runs; return the counts (`crashes`, `missed`, `verdicts`...)."""
    rng = random.Random(seed)
    verdicts: Counter = Counter()
    crashes: list[str] = []
    missed: list[str] = []
    reports = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-audit-") as tmp:
        base = Path(tmp)
        templates = {
            "cpu": runfactory.make_clean_run(base / "cpu", eval_size=12, claims=True),
            "cuda": runfactory.make_clean_run(
                base / "cuda", eval_size=12, device="cuda:0", claims=True
            ),
        }
        for n in range(runs):
            flavour = rng.choice(sorted(templates))
            root = base / "run"
            if root.exists():
                shutil.rmtree(root)
            shutil.copytree(templates[flavour], root)
            fact = fact_every and n % fact_every == 0
            run_rng = random.Random(rng.getrandbits(64))
            kind = "fact change" if fact else "damage"
            try:
                what = damage.fact_change(root, run_rng) if fact else damage.damage(root, run_rng)
                kind = "fact change" if fact else what
                view, result = audit(root)
                internal = [f.message for f in result.findings if f.code == "A0000"]
                if internal:
                    crashes.append(f"run {n} ({flavour}) {what}: {internal[0]}")
                if fact and result.verdict == "accepted":
                    missed.append(f"run {n} ({flavour}) {what}")
                verdicts[(_family(kind), result.verdict)] += 1
                if verbose and result.verdict == "accepted" and not fact:
                    print(f"accepted: run {n} ({flavour}) {what}", file=out)
                if report_every and n % report_every == 0:
                    from auditor.report.build import StepTimer, render_report

                    render_report(
                        view, result, generated_at="2026-01-01T00:00:00Z", timer=StepTimer()
                    )  # the run's own offers
                    reports += 1
            except Exception as exc:
                where = traceback.extract_tb(exc.__traceback__)[-1]
                crashes.append(
                    f"run {n} ({flavour}) {kind}: {type(exc).__name__}: {exc} "
                    f"at {Path(where.filename).name}:{where.lineno}"
                )
    elapsed = time.perf_counter() - t0
    facts = sum(v for (k, _), v in verdicts.items() if k == "fact change")
    print(f"damaged runs: {runs}  (fact changes: {facts}, reports rendered: {reports})", file=out)
    print(f"crashes: {len(crashes)}", file=out)
    print(f"fact changes accepted: {len(missed)}", file=out)
    print(f"time: {elapsed:.1f} s ({1000 * elapsed / max(runs, 1):.0f} ms a run)", file=out)
    print(f"\n{'damage':<28} {'accepted':>9} {'rejected':>9} {'incomplete':>11}", file=out)
    for family in sorted({k for k, _ in verdicts}):
        row = [verdicts[(family, v)] for v in ("accepted", "rejected", "incomplete")]
        print(f"{family:<28} {row[0]:>9} {row[1]:>9} {row[2]:>11}", file=out)
    for line in (crashes + missed)[:20]:
        print(line, file=out)
    return {
        "runs": runs,
        "crashes": crashes,
        "missed": missed,
        "seconds": elapsed,
        "verdicts": dict(verdicts),
    }


def _family(kind: str) -> str:
    """The damage's kind without the file it hit (`insert something nasty`, `removed`)."""
    if kind.startswith(("removed", "added", "sparse", "a file named")):
        return kind.split(" ")[0] if not kind.startswith("a file") else "odd file name"
    for op in (
        "flip a bit",
        "insert something nasty",
        "replace a number",
        "a line op",
        "truncate",
        "empty",
        "replace by nasty",
        "CRLF<->LF",
    ):
        if op in kind:
            return op
    return kind


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--report-every", type=int, default=50)
    ap.add_argument("--fact-every", type=int, default=4)
    ap.add_argument("--verbose", action="store_true", help="name each damaged run accepted")
    args = ap.parse_args()
    stats = fuzz(args.runs, args.seed, args.report_every, args.fact_every, verbose=args.verbose)
    sys.exit(1 if stats["crashes"] or stats["missed"] else 0)


if __name__ == "__main__":
    main()
