"""The ONNX artifact the ONNX Runtime policies run: the workload's torch module exported once
with `torch.onnx.export(..., external_data=False)`, so the weights live in the one file whose
SHA-256 is recorded (torch 2.13 defaults to dynamo=True and external data). Both input axes
are dynamic (a prompt's token count, the batch), so one export serves batch one. Exports are
byte-deterministic for a given torch version; ORT's agreement with torch is the parity gate.
"""

from __future__ import annotations

import contextlib
import io
import logging
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from runner.errors import RunnerError
from runner.revisions import file_sha256
from runner.workloads.base import TensorForm

# sample texts for tracing: several words, so no dynamic axis is specialised to 0 or 1
_SAMPLE = ["alpha beta gamma delta epsilon zeta", "eta theta iota kappa lambda mu nu"]


@dataclass(frozen=True)
class OnnxExport:
    file: Path
    sha256: str
    seconds: float
    input_names: tuple[str, ...]
    opset: int | None

    def to_json(self, rel: str) -> dict[str, Any]:
        return {"file": rel, "sha256": self.sha256, "torch_version": torch.__version__,
                "exporter": "torch.onnx.export(dynamo=True, external_data=False)",
                "input_names": list(self.input_names), "output_names": ["scores"],
                "dynamic_axes": "every input's first axis", "opset": self.opset,
                "export_seconds": self.seconds}


def export(form: TensorForm, path: Path) -> OnnxExport:
    """Export the module to `path` (one file); a failure is a RunnerError with the cause."""
    from torch.export import Dim

    path.parent.mkdir(parents=True, exist_ok=True)
    example = form.encode(list(_SAMPLE))
    dims = tuple({0: Dim(f"{name}_len")} for name in form.input_names)
    noise = io.StringIO()
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    t = time.perf_counter()
    try:
        # the exporter narrates every step on stdout and logs missing torchvision ops
        quiet.setLevel(logging.ERROR)
        with (contextlib.redirect_stdout(noise), contextlib.redirect_stderr(noise),
              warnings.catch_warnings()):
            warnings.simplefilter("ignore")
            program = torch.onnx.export(form.module.eval(), example, str(path),
                                        input_names=list(form.input_names),
                                        output_names=["scores"], dynamic_shapes=dims,
                                        external_data=False, verbose=False)
    except Exception as exc:
        tail = " | ".join(noise.getvalue().strip().splitlines()[-3:])
        raise RunnerError(f"ONNX export of the workload failed ({type(exc).__name__}: {exc})"
                          + (f"; exporter said: {tail}" if tail else "")) from None
    finally:
        quiet.setLevel(level)
    opset = None
    with contextlib.suppress(Exception):
        opset = int(next(o.version for o in program.model_proto.opset_import
                         if o.domain in ("", "ai.onnx")))
    return OnnxExport(path, file_sha256(path), time.perf_counter() - t,
                      tuple(form.input_names), opset)
