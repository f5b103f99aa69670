"""`audit replay`: re-run a sample of the archived model to prove the run's answers came from it
(docs/replay.md).

Every rule of `audit check` compares files the submitter wrote with each other, so outputs,
references and summaries forged consistently pass them all. Replay draws a seeded sample of
the run's input IDs, tokenizes their texts with the archived tokenizer *data* (a tokenizer
kind implemented here, never code from the run), runs the archived single-file ONNX model
with ONNX Runtime on the CPU, and compares the labels with every pass's (protocol A) or
trial's, gate's and reference's (protocol B) answers for those IDs.

Modules: `codes` (the findings' codes and their documentation; light, for `audit rules` and
`audit explain`), `contract` (the manifest's `replay` section and the run files replay reads,
with size limits), `tokenizers` (the registry of tokenizer kinds; `tokenizer_bow`,
`tokenizer_hf` and `tokenizer_base`, the kinds and what they share), `sample` (the seeded draw),
`run` (checking the ONNX file, then running it), `compare` (agreement per answers file, with a
Wilson interval), `core` (the whole replay, a `ReplayResult`), `result` and `render` (the
result and its text form). Only `run`, the tokenizer kinds and `core` import onnxruntime,
onnx or numpy, and only `audit replay` and `audit report --replay` import them.
"""

from __future__ import annotations

DEFAULT_SAMPLE = 200
"""IDs replayed when `--sample` is not given."""
