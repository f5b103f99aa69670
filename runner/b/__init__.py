"""Protocol B (`runner residency`; docs/run-dir-residency.md): is the classifier really running
on the accelerator, and what does each inference cost in energy? Runs the declared compute
policies (torch on a device, the ONNX export in ONNX Runtime with an execution provider)
through gates, placement diagnostics and alternating timed trials with energy windows, and
writes the run directory.

Modules: `config` (the TOML run configuration), `policies` (starting a policy, detecting a
silent fallback), `gates` (B8), `placement` (B4, B5), `trials` (the timed windows and idle
measurements), `energy/` (the NVML and RAPL instruments, the raw power records and the
energy of a window), `claims` (figures recomputed from the files), `readback` (the files
read back into `trials.csv`, `policies.csv`, the energy summaries and the environment),
`manifest`, `layout` (file names and schemas), `state` (what the stages hand each other),
`pretrial` (the stages between the declaration and the trials: policies started, gates,
placement), `run` (the stages, from configuration to the published run dir). It imports only its own
modules and the shared ones of `runner/`, never `runner.a`.
"""
