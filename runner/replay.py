"""The archived model both protocols' runs carry for `audit replay` (docs/replay.md): the
measured model exported once to a single-file ONNX artifact (`model/model.onnx`, by the same
fresh-process exporter protocol B's ONNX Runtime policies run, so its SHA-256 is reproducible),
and the manifest's `replay` section (schemas/replay-contract.schema.json) that names it, the
tokenizer data and its kind, the context limit, the label order of the scores and the inputs
file. A workload that cannot be archived so (no tensor form, no data-only tokenizer kind, an
export that fails) gets `replay_unavailable` with the reason instead: the run is still
written, and replay reports it as not replayable.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from runner.errors import RunnerError
from runner.onnx_export import ONNX_FILE, OnnxExport, export_in_fresh_process
from runner.revisions import file_sha256
from runner.workloads.base import TensorForm

POSTPROCESS = "argmax over scores"
_DTYPES = {torch.int64: "int64", torch.int32: "int32", torch.float32: "float32"}
_SAMPLE = ["alpha beta"]


@dataclass(frozen=True)
class Archive:
    """The export (None when there is none) and the manifest piece that says so."""

    onnx: OnnxExport | None
    manifest: dict[str, Any]
    """`{"replay": {...}}` or `{"replay_unavailable": "<reason>"}`."""


def archive(
    form: TensorForm | None,
    *,
    workload: str,
    options: dict[str, Any],
    root: Path,
    model_dir: Path,
    tokenizer_file: Path,
    context: int,
    inputs_file: str,
    model_revision: str,
    required: bool = False,
) -> Archive:
    """Export the staged model of MODEL_DIR to `ONNX_FILE` under ROOT and describe it. With
    REQUIRED (a protocol B run with ONNX Runtime policies) a failed export stops the run; else
    it only makes the run not replayable."""
    if form is None:
        return _unavailable(
            "the workload offers no tensor form, so the model cannot be "
            "exported to ONNX (runner.workloads.base.Workload.tensor_form)"
        )
    no_kind = _unavailable(
        "the workload's tokenizer is not data of a kind an auditor "
        "implements (TensorForm.tokenizer_kind)"
    )
    if form.tokenizer_kind is None and not required:
        return no_kind
    try:
        onnx = (
            own_onnx(form.onnx_file, root / ONNX_FILE, len(form.classes))
            if form.onnx_file is not None
            else export_in_fresh_process(workload, options, model_dir, context, root / ONNX_FILE)
        )
    except RunnerError as exc:
        if required:
            raise
        if form.onnx_file is None:
            (root / ONNX_FILE).unlink(missing_ok=True)
        return _unavailable(str(exc))
    if form.tokenizer_kind is None:
        return Archive(onnx, no_kind.manifest)
    dtypes = [_DTYPES.get(t.dtype) for t in form.encode(list(_SAMPLE))]
    if None in dtypes:
        return Archive(
            onnx,
            _unavailable(
                f"an input tensor of the model has a dtype replay does not feed ({dtypes})"
            ).manifest,
        )
    section = {
        "model": {
            "file": ONNX_FILE,
            "sha256": onnx.sha256,
            "format": "onnx",
            "opset": onnx.opset,
            "exported_from": model_revision,
            "exporter": onnx.exporter,
            "inputs": [
                {"name": name, "tensor": name, "dtype": dtype}
                for name, dtype in zip(onnx.input_names, dtypes, strict=True)
            ],
            "outputs": [
                {
                    "name": onnx.output_name,
                    "dtype": "float32",
                    "shape": ["texts", len(form.classes)],
                }
            ],
        },
        "tokenizer": {
            "file": tokenizer_file.resolve().relative_to(root.resolve()).as_posix(),
            "sha256": file_sha256(tokenizer_file),
            "kind": form.tokenizer_kind,
        },
        "context": context,
        "labels": list(form.classes),
        "inputs": inputs_file,
        "postprocess": POSTPROCESS,
    }
    return Archive(onnx, {"replay": section})


def own_onnx(source: Path, dest: Path, n_labels: int) -> OnnxExport:
    """The workload's own ONNX file (a user's export) as the archived model at DEST: one
    self-contained file (no external data), whose first output is float32 scores, one per
    label; a RunnerError says what is wrong."""
    import onnx

    t = time.perf_counter()
    try:
        proto = onnx.load_model(str(source), load_external_data=False)
    except Exception as exc:  # protobuf's or onnx's own errors: not a model
        raise RunnerError(
            f"{source}: not an ONNX model ({type(exc).__name__}: {str(exc)[:200]})"
        ) from None
    external = [
        t.name for t in proto.graph.initializer if t.data_location == 1 or len(t.external_data)
    ]
    if external:
        raise RunnerError(
            f"{source} keeps tensor {external[0]!r} (and {len(external) - 1} "
            "more) in an external data file: archive one self-contained file "
            "(onnx.save_model(model, path, save_as_external_data=False))"
        )
    outputs = list(proto.graph.output)
    if not outputs or outputs[0].type.tensor_type.elem_type != 1:
        raise RunnerError(f"{source}: the first graph output must be float32 scores")
    dims = outputs[0].type.tensor_type.shape.dim
    if len(dims) != 2 or (dims[1].HasField("dim_value") and dims[1].dim_value != n_labels):
        shape = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in dims]
        raise RunnerError(
            f"{source}: the first output {outputs[0].name!r} has shape {shape}; "
            f"expected [texts, {n_labels}] (one score per label)"
        )
    inits = {i.name for i in proto.graph.initializer}
    not_int64 = [
        i.name
        for i in proto.graph.input
        if i.name not in inits and i.type.tensor_type.elem_type != 7
    ]
    if not_int64:
        raise RunnerError(
            f"{source}: graph input(s) {not_int64} are not int64; the tokenizer "
            "feeds int64 token ids and masks"
        )
    if source.resolve() != dest.resolve():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), None)
    return OnnxExport(
        dest,
        file_sha256(dest),
        time.perf_counter() - t,
        tuple(i.name for i in proto.graph.input if i.name not in inits),
        opset,
        output_name=outputs[0].name,
        exporter="the workload's own ONNX file (a user's export), archived as given",
        dynamic_axes="as the file declares",
    )


def _unavailable(reason: str) -> Archive:
    return Archive(None, {"replay_unavailable": reason})
