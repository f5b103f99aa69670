"""The ONNX artifact both protocols' runs archive for `audit replay` (`runner.replay`) and
protocol B's ONNX Runtime policies run: the workload's torch module exported once with
`torch.onnx.export(..., external_data=False)`, so the weights live in the one file whose
SHA-256 is recorded (torch 2.13 defaults to dynamo=True and external data). Both input axes
are dynamic (a prompt's token count, the batch), so one export serves batch one. ORT's
agreement with torch is protocol B's parity gate.

The exporter names intermediate values in an order that follows Python's string hashing, so
two processes export the same model to different bytes unless the hash seed is fixed: the
run exports in a fresh process with `PYTHONHASHSEED=0` (`export_in_fresh_process`, the
module's `main`), which makes the file and its SHA-256 the same from run to run.

The exporter also writes debugging metadata on every node (`pkg.torch.onnx.stack_trace`: the
absolute path of the module's source file and of torch's, the FX node, the module names):
the same model exported from two checkouts or machines would differ in bytes. `strip_debug`
removes every node's metadata (nothing runs from it) before the file is written, so the
SHA-256 depends on the model alone.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import subprocess
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from runner.errors import RunnerError
from runner.model import child_env
from runner.revisions import file_sha256
from runner.workloads import resolve
from runner.workloads.base import TensorForm

#: Where both protocols' run dirs keep the export (docs/run-dir.md, docs/run-dir-residency.md).
ONNX_FILE = "model/model.onnx"

# sample texts for tracing: several words, so no dynamic axis is specialised to 0 or 1
_SAMPLE = ["alpha beta gamma delta epsilon zeta", "eta theta iota kappa lambda mu nu"]

EXPORTER = (
    "torch.onnx.export(dynamo=True, external_data=False) in a fresh process with "
    "PYTHONHASHSEED=0, node metadata (stack traces) stripped (byte-reproducible)"
)


@dataclass(frozen=True)
class OnnxExport:
    file: Path
    sha256: str
    seconds: float
    input_names: tuple[str, ...]
    opset: int | None
    output_name: str = "scores"
    exporter: str = EXPORTER
    dynamic_axes: str = "every input's first axis"

    def to_json(self, rel: str) -> dict[str, Any]:
        return {
            "file": rel,
            "sha256": self.sha256,
            "torch_version": torch.__version__,
            "exporter": self.exporter,
            "input_names": list(self.input_names),
            "output_names": [self.output_name],
            "dynamic_axes": self.dynamic_axes,
            "opset": self.opset,
            "export_seconds": self.seconds,
        }


def export(form: TensorForm, path: Path) -> OnnxExport:
    """Export the module to `path` (one file); a failure is a RunnerError with the cause."""
    from torch.export import Dim

    if form.module is None:
        raise RunnerError("the workload's tensor form has no torch module to export")
    path.parent.mkdir(parents=True, exist_ok=True)
    example = form.encode(list(_SAMPLE))
    axes = form.dynamic_axes or tuple({0: f"{name}_len"} for name in form.input_names)
    named: dict[str, Any] = {}  # one Dim per name: inputs that share an axis share its size
    dims = tuple(
        {axis: named.setdefault(dim, Dim(dim)) for axis, dim in spec.items()} for spec in axes
    )
    noise = io.StringIO()
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    t = time.perf_counter()
    try:
        # the exporter narrates every step on stdout and logs missing torchvision ops
        quiet.setLevel(logging.ERROR)
        with (
            contextlib.redirect_stdout(noise),
            contextlib.redirect_stderr(noise),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            program = torch.onnx.export(
                form.module.eval(),
                example,
                None,
                input_names=list(form.input_names),
                output_names=["scores"],
                dynamic_shapes=dims,
                external_data=False,
                verbose=False,
            )
            assert program is not None  # None only when the export writes to a file
            proto = strip_debug(program.model_proto)
    except Exception as exc:
        tail = " | ".join(noise.getvalue().strip().splitlines()[-3:])
        raise RunnerError(
            f"ONNX export of the workload failed ({type(exc).__name__}: {exc})"
            + (f"; exporter said: {tail}" if tail else "")
        ) from None
    finally:
        quiet.setLevel(level)
    write_model(proto, path)
    opset = None
    with contextlib.suppress(Exception):
        opset = int(next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")))
    described = "; ".join(
        f"{name}: " + ", ".join(f"axis {a} {d}" for a, d in spec.items())
        for name, spec in zip(form.input_names, axes, strict=True)
    )
    return OnnxExport(
        path,
        file_sha256(path),
        time.perf_counter() - t,
        tuple(form.input_names),
        opset,
        dynamic_axes=described,
    )


def strip_debug(proto: Any) -> Any:
    """PROTO (an onnx ModelProto) without the metadata torch's exporter puts on each node
    (stack traces with absolute source paths, FX nodes, module names), in every graph and
    subgraph and in the model's local functions; nothing that runs depends on it."""

    def graphs(graph: Any) -> Any:
        yield graph
        for node in graph.node:
            for attr in node.attribute:
                if attr.HasField("g"):
                    yield from graphs(attr.g)
                for sub in attr.graphs:
                    yield from graphs(sub)

    nodes = [n for g in graphs(proto.graph) for n in g.node]
    nodes += [n for f in proto.functions for n in f.node]
    for node in nodes:
        del node.metadata_props[:]
        node.doc_string = ""
    return proto


def write_model(proto: Any, path: Path) -> None:
    """The ModelProto as one file (weights inside), written whole or not at all."""
    tmp = path.with_name(path.name + ".partial")
    tmp.write_bytes(proto.SerializeToString(deterministic=True))
    tmp.replace(path)


def export_in_fresh_process(
    workload: str, options: dict[str, Any], model_dir: Path, context: int, path: Path
) -> OnnxExport:
    """Load the staged model (CPU, float32) in `python -m runner.onnx_export` with
    a fixed hash seed and export it there: the same model gives the same bytes every run."""
    job = json.dumps(
        {
            "workload": workload,
            "options": options,
            "model_dir": str(model_dir),
            "context": context,
            "path": str(path),
        }
    )
    proc = subprocess.run(
        [sys.executable, "-m", "runner.onnx_export", job],
        env=child_env(PYTHONHASHSEED="0"),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise RunnerError(f"ONNX export of the workload failed (exit {proc.returncode}): {tail}")
    done = json.loads(proc.stdout.strip().splitlines()[-1])
    return OnnxExport(
        Path(done["file"]),
        done["sha256"],
        done["seconds"],
        tuple(done["input_names"]),
        done["opset"],
        done["output_name"],
        done["exporter"],
        done["dynamic_axes"],
    )


def main(job_text: str) -> int:
    job = json.loads(job_text)
    factory = resolve(job["workload"])
    form = factory.load(
        Path(job["model_dir"]), "cpu", "float32", int(job["context"]), job["options"]
    ).tensor_form()
    if form is None:
        print(f"workload {job['workload']} offers no tensor form to export", file=sys.stderr)
        return 3
    try:
        done = export(form, Path(job["path"]))
    except RunnerError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    print(json.dumps({**asdict(done), "file": str(done.file)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
