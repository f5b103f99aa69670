"""Benchmark the quick "certainly valid" check of `schemas.validator` on the default run:
which library recognises the run's valid documents fastest, imports and compilation
included, as `audit check` pays for them.

Contenders, side by side, each in fresh processes taken in turn (round robin, so a burst
of load on a shared machine hits every one alike), medians of `--repeat` rounds:

- jsonschema-rs (what `schemas` uses): its compiled Rust validator per kind, with the
  package's strict-integer keyword and date-time check;
- fastjsonschema: each kind's schema compiled to Python code (`fastjsonschema.compile`,
  `$ref`s resolved by `$id`, the same date-time check; no strict-integer keyword, which it
  cannot take: a lower bound of its cost);
- jsonschema alone (the baseline): no quick check, every document through jsonschema.

Two figures each: the wall time of `audit check RUN_DIR` (a subprocess: interpreter start,
imports, the whole audit), and the time of the validations alone (compiling the kinds used
and validating, in process, every document the audit validates, collected from one audit
run). Ratios are against the baseline. Measured on this project's 2-core machine, shared
with other work at the time (so the absolute figures are high; the ratios are the point),
on the default run (`runner execute`'s embedded config: 62 documents validated), 7 rounds,
with the hand-written compiled checker it replaced (schemas/_fast.py, since removed) as a
fourth contender:

    contender        audit check   ratio   validations   ratio
    jsonschema-rs         816 ms    0.86       91.8 ms    0.41
    fastjsonschema       1022 ms    1.07      291.6 ms    1.31
    jsonschema            953 ms    1.00      222.3 ms    1.00
    hand-written          953 ms    1.00       80.9 ms    0.36

fastjsonschema's compilation to Python code costs more than it saves on a run's few dozen
documents; jsonschema-rs is the faster library, within about 10 ms of the hand-written
checker on the validations, and is what `schemas` uses.

    python bench/schema_bench.py [RUN_DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PATCH = {
    "jsonschema-rs": "",
    "fastjsonschema": r"""
import fastjsonschema

def _quick(kind):
    resolve = lambda uri: schemas._by_id(uri)
    check = fastjsonschema.compile(schemas.load(kind), handlers={"https": resolve},
                                   formats={"date-time": schemas._date_time})
    def is_valid(doc):
        try:
            check(doc)
            return True
        except fastjsonschema.JsonSchemaException:
            return False
    return is_valid

schemas._quick = _quick
""",
    "jsonschema": "schemas._quick = lambda kind: None\n",
}

AUDIT = r"""
import sys, time
t0 = time.perf_counter()
import schemas
{patch}
from auditor.engine import run_check
run_check(sys.argv[1])
print(time.perf_counter() - t0)
"""

VALIDATIONS = r"""
import json, sys, time
docs = json.load(open(sys.argv[2]))
t0 = time.perf_counter()
import schemas
{patch}
for kind, doc in docs:
    assert schemas.validator(kind).is_valid(doc)
print(time.perf_counter() - t0)
"""

RECORD = r"""
import json, sys
import schemas
seen = []
original = schemas.Validator.is_valid, schemas.Validator.iter_errors

def is_valid(self, doc):
    seen.append((self.kind, doc))
    return original[0](self, doc)

def iter_errors(self, doc):
    seen.append((self.kind, doc))
    return original[1](self, doc)

schemas.Validator.is_valid, schemas.Validator.iter_errors = is_valid, iter_errors
from auditor.engine import run_check
assert run_check(sys.argv[1]).verdict == "accepted"
json.dump(seen, open(sys.argv[2], "w"))
print(len(seen))
"""


def _run(code: str, *args: str) -> float:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT
    )
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    return float(proc.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir", nargs="?", type=Path)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run_dir
        if run is None:
            run = Path(tmp) / "run"
            print("making the default run (runner execute, about 30 s)...", flush=True)
            subprocess.run(
                [sys.executable, "-m", "runner", "execute", "--out", str(run), "--quiet"],
                check=True,
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
            )
        docs = Path(tmp) / "docs.json"
        n = int(_run(RECORD, str(run), str(docs)))
        print(f"{n} documents validated by one `audit check` of {run}")
        audit = {name: [] for name in PATCH}
        valid = {name: [] for name in PATCH}
        for _ in range(args.repeat):
            for name, patch in PATCH.items():
                audit[name].append(_run(AUDIT.format(patch=patch), str(run)))
                valid[name].append(_run(VALIDATIONS.format(patch=patch), "", str(docs)))
    base_a = statistics.median(audit["jsonschema"])
    base_v = statistics.median(valid["jsonschema"])
    print(f"{'contender':15s}  {'audit check':>11s}   ratio   {'validations':>11s}   ratio")
    for name in PATCH:
        a, v = statistics.median(audit[name]), statistics.median(valid[name])
        print(
            f"{name:15s}  {a * 1000:8.0f} ms   {a / base_a:5.2f}   {v * 1000:8.1f} ms   "
            f"{v / base_v:5.2f}"
        )
    print(
        json.dumps(
            {
                name: {
                    "audit_check_s": statistics.median(audit[name]),
                    "validations_s": statistics.median(valid[name]),
                }
                for name in PATCH
            }
        )
    )


if __name__ == "__main__":
    main()
