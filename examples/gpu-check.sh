#!/usr/bin/env bash
# On a CUDA machine: the memory probe, then the default run on cuda:0, then the A7/A4.2 checks
# (allocated <= reserved, baseline <= peak, gpu_count 1, every parameter on the GPU).
# Usage: bash examples/gpu-check.sh [OUT_DIR]   (default: runs/gpu-check)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-runs/gpu-check}"
BIN="${BIN:-.venv/bin}"
mkdir -p "$OUT"
"$BIN/runner" memory-probe --device cuda | tee "$OUT/memory-probe.txt"
rm -rf "$OUT/run"
"$BIN/runner" execute --config examples/gpu.toml --out "$OUT/run"
"$BIN/python" - "$OUT/run" <<'PY'
import csv, json, pathlib, sys
run = pathlib.Path(sys.argv[1])
rows = list(csv.DictReader(open(run / "resultats-bruts.csv", newline="", encoding="utf-8")))
bad = []
for r in rows:
    key = f"{r['variant_id']}/{r['phase']}-{r['run_index']}"
    ba, br = int(r["baseline_allocated_bytes"]), int(r["baseline_reserved_bytes"])
    pa, pr = int(r["peak_allocated_bytes"]), int(r["peak_reserved_bytes"])
    if not (ba <= br and pa <= pr and ba <= pa and br <= pr):
        bad.append(f"{key}: memory invariants fail {ba} {br} {pa} {pr}")
    if r["gpu_count"] != "1" or not r["gpu_model"] or r["device"] != "cuda:0":
        bad.append(f"{key}: gpu_count {r['gpu_count']} model {r['gpu_model']!r} {r['device']}")
    place = json.loads((run / f"evidence/placement/{key}.json").read_text())
    if set(place["parameter_devices"]) != {"cuda:0"} or set(place["input_devices"]) != {"cuda:0"}:
        bad.append(f"{key}: placement {place['parameter_devices']} {place['input_devices']}")
    print(key, r["elapsed_seconds"], ba, br, pa, pr, r["gpu_model"], r["driver_version"],
          r["runtime_version"], r["corpus_accepted"])
print("\n".join(bad) or f"all {len(rows)} rows: invariants hold, gpu_count 1, all on cuda:0")
sys.exit(1 if bad else 0)
PY
