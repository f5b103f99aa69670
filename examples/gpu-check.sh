#!/usr/bin/env bash
# On a CUDA machine, one script for both protocols; everything it writes is under OUT_DIR.
# Protocol A: the memory probe, the default run on cuda:0, then the A7/A4.2 checks
#   (allocated <= reserved, baseline <= peak, gpu_count 1, every parameter on the GPU).
# Protocol B: `runner residency` with examples/residency-gpu.toml (torch cuda, ONNX Runtime
#   CUDA/TensorRT, the torch CPU baseline; NVML and RAPL energy), then a summary of what it
#   wrote: policies, trial figures, placement and energy, and checks that a GPU policy either
#   ran on the GPU or is recorded as a fault.
# Needs CUDA torch, onnxruntime-gpu (`make ort-gpu`) and nvidia-ml-py (`pip install -e ".[gpu]"`).
# Usage: bash examples/gpu-check.sh [OUT_DIR]   (default: runs/gpu-check)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-runs/gpu-check}"
BIN="${BIN:-.venv/bin}"
mkdir -p "$OUT"
status=0

echo "== protocol A"
"$BIN/runner" memory-probe --device cuda | tee "$OUT/memory-probe.txt" || status=1
rm -rf "$OUT/run"
if "$BIN/runner" execute --config examples/gpu.toml --out "$OUT/run"; then
"$BIN/python" - "$OUT/run" <<'PY' | tee "$OUT/execute-check.txt" || status=1
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
else
  status=1
fi

echo "== protocol B"
rm -rf "$OUT/residency"
if "$BIN/runner" residency --config examples/residency-gpu.toml --out "$OUT/residency"; then
"$BIN/python" - "$OUT/residency" <<'PY' | tee "$OUT/residency-check.txt" || status=1
import csv, json, pathlib, sys
run = pathlib.Path(sys.argv[1])
m = json.loads((run / "manifest.json").read_text())
env = json.loads((run / "environment.json").read_text())
print("machine", env["machine"], "| power", env["power_source"], env["power_mode"])
print("gpus", env["gpus"], "driver", env["driver_version"], "ort", env["onnxruntime"])
print("instruments", json.dumps(m["energy"]["instruments"]))
for p in m["policies"]:
    print("policy", p["policy_id"], p["status"], p.get("device"), p.get("active_providers"),
          p.get("reason") or "")
for p in m.get("policies_left_out", []):
    print("left out", p["policy_id"], p["reason"])
bad = []
policies = list(csv.DictReader(open(run / "policies.csv", newline="", encoding="utf-8")))
for p in policies:
    print(" ", {k: p[k] for k in ("policy_id", "trials", "median_wall_seconds",
                                   "p95_latency_ms", "average_power_w", "joules_per_inference",
                                   "accuracy", "agreement", "operation_share", "verdict")})
    print("    notes:", p["notes"][:400])
for r in csv.DictReader(open(run / "trials.csv", newline="", encoding="utf-8")):
    print("  trial", r["policy_id"], r["trial_index"], r["status"], r["wall_seconds"],
          r["p95_latency_ms"], r["energy_j"], r["average_power_w"], r["energy_source"])
    if r["status"] == "ok" and r["energy_j"] == "":
        print("    ", r["notes"][:300])
for entry in m["policies"]:
    pid, f = entry["policy_id"], entry.get("placement_file")
    if not f:
        continue
    summary = json.loads((run / f).read_text())["summary"]
    print("placement", pid, json.dumps({k: v for k, v in summary.items()
                                        if k not in ("profile",)})[:600])
    if entry["role"] == "accelerator" and entry["status"] == "ran":
        share = summary.get("operation_share")
        if entry["runtime"] == "torch" and not summary.get("kernels_by_device", {}).get("cuda"):
            bad.append(f"{pid}: no CUDA kernel in the profile")
        if share is None:
            bad.append(f"{pid}: no operation share")
    if entry["status"] == "fault":
        print(f"  {pid}: FAULT recorded: {entry['reason']}")
print("\n".join(bad) or "protocol B: every accelerator policy ran on the GPU or is a recorded fault")
sys.exit(1 if bad else 0)
PY
else
  status=1
fi
exit $status
