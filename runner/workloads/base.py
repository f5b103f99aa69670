"""The workload interface. A factory prepares the model once per run (trains it and stages its
files under the run dir's `model/`), then `load`s it in every process that runs passes; the
loaded `Workload` classifies batches of texts, tokenization included.

Placement evidence (A4.2) comes from the workload: `parameters()` and the devices of the
input tensors it built (`note_input`), counted per pass by the runner.

Protocol B also runs the model outside torch: a workload that can, offers its `tensor_form()`
(the torch module and the tokenizer that feeds it), which the runner exports to ONNX and
feeds to ONNX Runtime. Lower-precision candidates (B8) are loaded with `precision` set to one
of `QUANTIZED`, applied by `quantize` (CPU only, as torch's quantized kernels are).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn


def torch_seed(seed: int) -> int:
    """SEED as torch takes it: an announced seed is any integer (A1.2), torch's generator
    64 bits; the residue modulo 2^64 is what torch itself makes of a negative seed."""
    return seed % 2**64


@dataclass(frozen=True)
class TrainingData:
    """What `prepare` may learn from: the train split only (tune and eval stay unseen)."""

    texts: Sequence[str]
    labels: Sequence[str]
    classes: tuple[str, ...]


@dataclass(frozen=True)
class PreparedModel:
    """The staged files whose hashes are the model and tokenizer revisions (A1.2): each named
    as its kind in `schemas/revision-kinds.json` names it (`model.safetensors`, or
    `weights.pt` / `head.pt` for weights trained at run time; `tokenizer.json`), since the
    runner and the auditor find them under `model/` by those names."""

    weights_file: Path
    tokenizer_file: Path
    description: str = ""


@dataclass(frozen=True)
class TensorForm:
    """The workload as a torch module fed by its own tokenizer: `encode` turns texts into the
    module's input tensors (tokenization, on the CPU), the module returns one row of class
    scores per text, `classes[argmax]` is the label."""

    module: nn.Module | None
    """None only when `onnx_file` is the model (a user's own ONNX file, no torch module)."""
    encode: Callable[[list[str]], tuple[torch.Tensor, ...]]
    input_names: tuple[str, ...]
    classes: list[str]
    tokenizer_kind: str | None = None
    """The documented kind of the staged tokenizer file when it is data an auditor can apply
    without code (docs/replay.md), its tensors named as `input_names`; None otherwise."""
    dynamic_axes: tuple[dict[int, str], ...] | None = None
    """Per input, its dynamic axes (axis -> a name; inputs naming the same axis share its
    size, e.g. `{0: "texts", 1: "tokens"}` for a transformer's 2-D inputs); None: each
    input's first axis, on its own."""
    onnx_file: Path | None = None
    """A single-file ONNX model the workload brings (the user's own export), archived and run
    instead of exporting `module`; its graph inputs are `input_names`."""


class Workload(ABC):
    """A loaded model that classifies texts. One instance per process."""

    def __init__(self) -> None:
        self.input_devices: Counter[str] = Counter()

    @abstractmethod
    def classify(self, texts: list[str], batch: int) -> list[str]:
        """Labels of `texts` (at most `batch` of them), tokenization included."""

    @abstractmethod
    def parameters(self) -> Iterable[torch.Tensor]:
        """Every parameter and buffer tensor of the model, for placement evidence."""

    @abstractmethod
    def token_lengths(self, texts: list[str]) -> list[int]:
        """Token count of each text before the context limit, to count truncation (A3.3)."""

    def begin_pass(self, variant_id: str, phase: str, run_index: int) -> None:  # noqa: B027
        """Called before each pass or warm-up block; a no-op unless a workload needs it."""

    def note_input(self, tensor: torch.Tensor) -> None:
        """Record where one input batch was placed (call once per batch sent to the model)."""
        self.input_devices[str(tensor.device)] += 1

    def tensor_form(self) -> TensorForm | None:
        """The module and tokenizer, for ONNX export; None when the workload has none."""
        return None


class WorkloadFactory(ABC):
    """Selected by `workload.callable`; names itself and builds `Workload`s."""

    name: str = "workload"
    description: str = ""
    trains_at_run_time: bool = True
    """Whether `prepare` trains the weights during the run (then the run pins its recipe:
    code, seed, training inputs, `runner.revisions.write_recipe`); False for a workload that
    stages a checkpoint as it is."""
    path_options: tuple[str, ...] = ()
    trains: bool = True
    """Whether `prepare` trains the model (on the train split); False for a checkpoint used
    as it is, which `prepare` only stages (what the runner says it is doing)."""
    """Options that name files: a relative one is resolved against the config file's folder
    before the workload sees it (`runner.config.resolve_options`)."""

    def runs_in_torch(self, options: dict[str, Any]) -> bool:
        """Whether `load` gives a torch model (protocol A, protocol B's torch policies);
        False for a workload that is an ONNX file alone."""
        return True

    def check(self, options: dict[str, Any]) -> None:  # noqa: B027 (optional hook)
        """Raise RunnerError before anything is measured if the workload cannot run here
        (a missing optional package, say); a no-op unless a workload needs it."""

    def check_corpus(  # noqa: B027
        self,
        options: dict[str, Any],
        classes: tuple[str, ...],
        context: int,
    ) -> None:
        """Raise RunnerError before anything is written if the workload cannot classify
        this corpus (a model whose classes are not the corpus labels, say); a no-op unless
        a workload needs it."""

    def threads(self, available: int) -> int:
        """torch intra-op threads for this workload's processes; default all available.
        A tiny model is faster on one thread: splitting small ops only adds overhead."""
        return available

    def preparing(self) -> str:
        """What `prepare` does, in the runner's progress line."""
        return (
            "training the model on the train split"
            if self.trains
            else "staging the model as it is (no training)"
        )

    @abstractmethod
    def prepare(
        self, data: TrainingData, model_dir: Path, seed: int, context: int, options: dict[str, Any]
    ) -> PreparedModel:
        """Train or stage the model into `model_dir`; runs once, before any measurement."""

    @abstractmethod
    def load(
        self, model_dir: Path, device: str, precision: str, context: int, options: dict[str, Any]
    ) -> Workload:
        """Load the staged model from `model_dir` onto `device` in `precision`."""


DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}

#: Precisions that quantize a float32 model after loading (B8 candidates): `int8-dynamic`
#: (Linear int8 dynamic, EmbeddingBag 8-bit weight-only) and `int4-weight` (the same with a
#: 4-bit weight-only EmbeddingBag: a deliberately coarse candidate).
QUANTIZED = ("int8-dynamic", "int4-weight")


def quantize(module: nn.Module, precision: str) -> nn.Module:
    """The module with torch's eager dynamic quantization applied (CPU kernels only)."""
    from torch.ao import quantization as q

    embedding = (
        q.float_qparams_weight_only_qconfig
        if precision == "int8-dynamic"
        else q.float_qparams_weight_only_qconfig_4bit
    )
    with warnings.catch_warnings():  # torch.ao.quantization announces its move to torchao
        warnings.simplefilter("ignore")
        return q.quantize_dynamic(
            module, {nn.Linear: q.default_dynamic_qconfig, nn.EmbeddingBag: embedding}
        )
