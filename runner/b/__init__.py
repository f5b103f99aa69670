"""Protocol B (`runner residency`): is the classifier really running on the accelerator, and
what does each inference cost in energy? Runs the declared compute policies (torch on a
device, the ONNX export in ONNX Runtime with an execution provider) through gates, placement
diagnostics and alternating timed trials with energy windows, and writes a run directory
whose layout is docs/run-dir-residency.md.

Modules: `config` (the TOML run configuration), `policies` (starting a policy, detecting a
silent fallback), `onnx_export`, `gates` (B8), `placement` (B4, B5), `trials` (the timed
windows and idle measurements), `claims` (figures recomputed from the files), `run` (the
stages, from configuration to the published run dir).
"""
