#!/usr/bin/env bash
# On a Mac (Apple silicon), protocol B the way seed B's macOS section runs it, step by step,
# each step checked; everything it writes goes under OUT_DIR, bundled as OUT_DIR.tar.gz to
# send back. Steps: 1. the tools (macOS, powermetrics, pmset, coremltools, onnxruntime);
# 2. a one-minute powermetrics capture (needs sudo: you are asked once); 3. `runner
# residency` with examples/residency-macos.toml switched to powermetrics (Core ML packages
# converted and calibrated, gated against the ONNX model, MLComputePlan, powermetrics per
# trial, pmset at every trial); 4. `audit check` of the run; 5. the bundle.
# Needs: pip install -e ".[macos]" (coremltools) in .venv. Run it plugged in, then again on
# battery (UNPLUGGED=1) for the battery figures.
# Usage: bash examples/macos-check.sh [OUT_DIR]   (default: runs/macos-check)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-runs/macos-check}"
BIN="${BIN:-.venv/bin}"
mkdir -p "$OUT"
status=0
step() { echo "== $*" | tee -a "$OUT/steps.txt"; }

step "1. tools"
{ sw_vers; sysctl -n machdep.cpu.brand_string hw.model; pmset -g batt; pmset -g;
  command -v powermetrics; "$BIN/python" -c "import coremltools, onnxruntime, torch;
print('coremltools', coremltools.__version__, 'onnxruntime', onnxruntime.__version__,
      'torch', torch.__version__)"; } 2>&1 | tee "$OUT/tools.txt" || status=1
[ "$(uname)" = Darwin ] || { echo "not macOS: the Core ML and powermetrics steps need a Mac"; status=1; }

if [ "${UNPLUGGED:-0}" = 1 ] && ! pmset -g batt | grep -q "'Battery Power'"; then
  echo "UNPLUGGED=1 but pmset says the Mac is not on battery: unplug it first"; exit 1
fi

step "2. powermetrics (sudo)"
sudo -v || status=1
sudo powermetrics --samplers cpu_power,gpu_power,ane_power -i 1000 -n 5 \
  > "$OUT/powermetrics-5s.txt" 2>&1 || status=1
grep -E "CPU Power|GPU Power|ANE Power|Combined Power" "$OUT/powermetrics-5s.txt" | head -8
"$BIN/audit" evidence "$OUT/powermetrics-5s.txt" > "$OUT/powermetrics-5s.evidence.txt" || status=1

step "3. runner residency (Core ML, powermetrics)"
CFG="$OUT/residency-macos.toml"
sed -e 's/^instruments = \["nvml", "rapl"\]/instruments = ["powermetrics"]/' \
    -e 's/^sampling_interval_s = 0.05/sampling_interval_s = 1.0/' \
    -e 's/^repetitions = 20/repetitions = 40/' \
    -e 's/^baseline_policy = "ort-cpu"/baseline_policy = "coreml-cpu"/' \
    -e '/^id = "coreml-cpu"/,/^when/ s/^when = "available"/when = "always"/' \
    examples/residency-macos.toml > "$CFG"
rm -rf "$OUT/residency"
# powermetrics needs root: the capture is started here and handed to the runner
sudo powermetrics --samplers cpu_power,gpu_power,ane_power -i 1000 -o "$OUT/powermetrics.txt" &
PM=$!
sleep 3
"$BIN/runner" residency --config "$CFG" --out "$OUT/residency" \
  --powermetrics-log "$OUT/powermetrics.txt" 2>&1 | tee "$OUT/residency.log" || status=1
sudo kill "$PM" 2>/dev/null

step "4. audit check"
if [ -f "$OUT/residency/manifest.json" ]; then
  "$BIN/audit" check "$OUT/residency" --format text | tee "$OUT/audit-check.txt"
  for f in "$OUT"/residency/placement/*.computeplan.log; do
    [ -f "$f" ] && "$BIN/audit" evidence "$f" > "$f.evidence.txt"
  done
else
  echo "no run directory: see $OUT/residency.log"; status=1
fi

step "5. bundle"
tar -czf "$OUT.tar.gz" -C "$(dirname "$OUT")" "$(basename "$OUT")" && echo "send back: $OUT.tar.gz"
exit $status
