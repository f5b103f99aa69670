"""The Core ML packages of a run with `coreml` policies, converted and calibrated on any OS
with coremltools (seed B, macOS: "Generate the float ML Program ..., calibrate the W8A8
candidate"); predictions need macOS (runner.b.coreml).

- `float16`: the workload's torch module (its tensor form, the module the ONNX export comes
  from) traced on one prompt of the tune split and converted to an ML Program
  (`coremltools.convert`, float16 compute precision, macOS 14 target, the token axis
  flexible).
- `w8a8`: the same module with int8 weights and int8 activations:
  `coremltools.optimize.torch`'s `LinearQuantizer` observes the activations of every prompt
  of the tune split only (never the eval sequence the gates and trials classify), is
  finalized, then converted the same way.
The bag-of-words model's `EmbeddingBag` has no Core ML conversion; a batch-one prompt is one
bag (offsets [0]), whose mean is the gather of its rows and their mean, so the module is
converted in that form (`OneBag`, the same weights and arithmetic).

Each package is written under `model/coreml/<name>.mlpackage`; its revision is the SHA-256
over its files (`package_sha256`: each relative path and file SHA-256, sorted), and a
conversion manifest `model/coreml/<name>.conversion.json` beside it records the source (the
ONNX export's and the weights' SHA-256), coremltools and torch versions, precision,
calibration split and prompt count, inputs and target. coremltools is imported here only.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from runner.errors import RunnerError
from runner.revisions import file_sha256
from runner.workloads.base import TensorForm

PACKAGES = ("float16", "w8a8")
COREML_DIR = "model/coreml"


class OneBag(nn.Module):
    """A bag-of-words model on one prompt's token ids: gather, mean, linear head."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        bag, head = model.get_submodule("bag"), model.get_submodule("head")
        assert isinstance(bag, nn.EmbeddingBag)
        self.emb = nn.Embedding.from_pretrained(bag.weight.detach().clone(), freeze=True)
        self.head = head

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.emb(ids).mean(0, keepdim=True))


def _convertible(form: TensorForm) -> tuple[nn.Module, list[str], Any]:
    """(module, input names, encode one text to its inputs) in a form Core ML converts."""
    module = form.module
    if module is None:
        raise RunnerError("the workload brings an ONNX file only: no torch module to convert")
    if isinstance(getattr(module, "bag", None), nn.EmbeddingBag):
        return OneBag(module).eval(), ["ids"], lambda t: (form.encode([t])[0],)
    return module.eval(), list(form.input_names), lambda t: tuple(form.encode([t]))


def input_encoder(form: TensorForm) -> Any:
    """One text -> the package's inputs by name (numpy), as the package was converted."""
    _, names, encode = _convertible(form)
    return lambda text: {
        n: t.numpy().astype(np.int32 if not t.is_floating_point() else np.float32)
        for n, t in zip(names, encode(text), strict=True)
    }


def package_sha256(path: Path) -> str:
    """The revision of a package directory: SHA-256 over (relative path, file SHA-256)."""
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f"{f.relative_to(path).as_posix()}\0{file_sha256(f)}\n".encode())
    return h.hexdigest()


def _convert(
    ct: Any, module: nn.Module, names: list[str], example: tuple[torch.Tensor, ...]
) -> Any:
    traced = torch.jit.trace(module, example)
    inputs = [
        ct.TensorType(
            name=n,
            shape=tuple(ct.RangeDim(1, 4096) if i == 0 else s for i, s in enumerate(x.shape)),
            dtype=int if not x.is_floating_point() else float,
        )
        for n, x in zip(names, example, strict=True)
    ]
    return ct.convert(
        traced,
        inputs=inputs,
        convert_to="mlprogram",
        compute_precision=ct.precision.FLOAT16,
        minimum_deployment_target=ct.target.macOS14,
    )


def _w8a8(
    module: nn.Module,
    example: tuple[torch.Tensor, ...],
    calibration: list[tuple[torch.Tensor, ...]],
) -> nn.Module:
    from coremltools.optimize.torch.quantization import (
        LinearQuantizer,
        LinearQuantizerConfig,
        ModuleLinearQuantizerConfig,
    )

    # observers on from the first step, weights frozen: calibration only, no training
    cfg = LinearQuantizerConfig(
        global_config=ModuleLinearQuantizerConfig(
            weight_dtype=torch.qint8, activation_dtype=torch.quint8, milestones=[0, 10**9, 10**9, 0]
        )
    )
    quantizer = LinearQuantizer(module, cfg)
    prepared = quantizer.prepare(example_inputs=example, inplace=False)
    quantizer.step()
    with torch.no_grad():
        for inputs in calibration:
            prepared(*inputs)
    return quantizer.finalize(inplace=False).eval()


def convert_packages(
    form: TensorForm, tune_texts: list[str], root: Path, sources: dict[str, str], say: Any
) -> list[dict[str, Any]]:
    """Convert and calibrate every package; one entry per package (or why it failed)."""
    try:
        import coremltools as ct
    except ImportError as exc:
        return [
            {
                "name": n,
                "status": "failed",
                "reason": f"coremltools cannot be imported "
                f"({exc}): pip install coremltools (the extra `macos`)",
            }
            for n in PACKAGES
        ]
    module, names, encode = _convertible(form)
    calibration = [encode(t) for t in tune_texts]
    example = calibration[0]
    out: list[dict[str, Any]] = []
    for name in PACKAGES:
        t = time.perf_counter()
        rel = f"{COREML_DIR}/{name}.mlpackage"
        entry: dict[str, Any] = {"name": name, "package": rel}
        try:
            source = module if name == "float16" else _w8a8(module, example, calibration)
            mlmodel = _convert(ct, source, names, example)
            (root / COREML_DIR).mkdir(parents=True, exist_ok=True)
            mlmodel.save(str(root / rel))
            entry.update(status="converted", package_sha256=package_sha256(root / rel))
        except Exception as exc:  # recorded; the run goes on without the package
            entry.update(status="failed", reason=f"{type(exc).__name__}: {exc}"[:500])
        entry["seconds"] = time.perf_counter() - t
        manifest = {
            "format": "coreml-conversion/1",
            **entry,
            **sources,
            "coremltools_version": ct.__version__,
            "torch_version": torch.__version__,
            "convert_to": "mlprogram",
            "minimum_deployment_target": "macOS14",
            "compute_precision": "float16",
            "inputs": names,
            "module_form": type(module).__name__,
            "quantization": None
            if name == "float16"
            else {
                "method": "coremltools.optimize.torch LinearQuantizer, calibration only",
                "weights": "int8 symmetric per channel",
                "activations": "uint8 affine",
                "calibration_split": "tune",
                "calibration_prompts": len(calibration),
            },
        }
        conv = root / f"{COREML_DIR}/{name}.conversion.json"
        conv.parent.mkdir(parents=True, exist_ok=True)
        import json

        conv.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        entry["conversion_manifest"] = f"{COREML_DIR}/{name}.conversion.json"
        out.append(entry)
        say(
            f"coreml: {name} {entry['status']}"
            + (
                f", sha256 {entry['package_sha256'][:16]}..."
                if "package_sha256" in entry
                else f" ({entry.get('reason')})"
            )
        )
    return out
