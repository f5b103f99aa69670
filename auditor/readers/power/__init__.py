"""Power evidence readers: one module per format (powermetrics text and plist, HWiNFO,
nvidia-smi query CSV, -q, -q -x, dmon, capture bundles, our runner's NVML/RAPL JSONL; the
nvidia-smi default table and c2c output are recognized and refused), each returning the frame
of `schemas/power-samples.frame.json` (`_frame`). docs/evidence-formats.md describes each."""
