"""A local Hugging Face sequence classifier, as `save_pretrained` writes it, selected with no
Python written by the user (needs the optional extra: `pip install -e ".[hf]"`):

    [workload]
    callable = "runner.workloads.hf:SequenceClassifier"
    options = { path = "my-checkpoint" }   # relative to the config file

Options:
- `path`: the checkpoint directory: `config.json` (its `id2label` names the classes),
  `model.safetensors` (the weights; a directory with only pickled weights such as
  `pytorch_model.bin` is refused, nothing pickled is ever loaded) and `tokenizer.json`.
- `onnx` (protocol B): a single-file ONNX model of the same classifier, run by the ONNX
  Runtime policies and archived for replay instead of an export. With `path` too, the torch
  policies run the checkpoint; alone, only ONNX Runtime policies can run, and the classes
  come from `labels` or from a `config.json` beside the ONNX file.
- `tokenizer`: the `tokenizer.json` to use instead of the one in `path` (required with
  `onnx` alone).
- `labels`: the classes in score order, for an ONNX file without a `config.json`.

Nothing is ever downloaded: transformers loads with `local_files_only=True` and the hub is
switched off (`HF_HUB_OFFLINE`). The files are staged under the run dir's `model/` before any
measurement and loaded from there: the model revision is the SHA-256 of `model.safetensors`
(of the ONNX file when there is no checkpoint), the tokenizer revision that of
`tokenizer.json`; `config.json` is hashed in the manifest's artifacts with every other file.
The checkpoint is used as it is: the train split is not used.

This module is the factory (`SequenceClassifier`: the options checked, the files staged, the
model loaded); what it loads, the tokenizer (`hf-tokenizers/1`, the same data and rules
`audit replay` applies) and the classifier it feeds, is `runner.workloads.hf_inference`.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch

from runner.errors import RunnerError
from runner.workloads.base import (
    DTYPES,
    QUANTIZED,
    PreparedModel,
    TrainingData,
    Workload,
    WorkloadFactory,
    quantize,
)
from runner.workloads.hf_inference import (
    NAME,
    TENSORS,
    HFWorkload,
    OnnxOnlyWorkload,
    Tokenizer,
    onnx_inputs,
    tokenizers_library,
)

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
TOKENIZER = "tokenizer.json"
ONNX = "model.onnx"
"""The user's ONNX file, staged under the name protocol B's export has (runner.onnx_export)."""
LABELS = "labels.json"
"""The classes of an ONNX-only workload, staged beside it."""
PICKLED = ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "model.ckpt.index")


def _offline() -> None:
    # before transformers or huggingface_hub is imported: never reach the hub
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def _transformers() -> Any:
    _offline()
    try:
        import transformers
    except ImportError:
        raise RunnerError(
            f"workload {NAME} needs the optional packages transformers, "
            'tokenizers and safetensors (pip install -e ".[hf]")'
        ) from None
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return transformers


def _dir(options: dict[str, Any], key: str) -> Path | None:
    value = options.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise RunnerError(f"workload {NAME}: options.{key} must be a path (a string)")
    return Path(value)


def _labels_of_config(file: Path) -> list[str]:
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunnerError(f"workload {NAME}: {file} cannot be read as JSON ({exc})") from None
    id2label = config.get("id2label") if isinstance(config, dict) else None
    if not isinstance(id2label, dict) or not id2label:
        raise RunnerError(
            f"workload {NAME}: {file} has no id2label: the classifier's classes "
            'must be named (model.config.id2label = {0: "...", ...} before '
            "save_pretrained)"
        )
    try:
        by_index = {int(k): v for k, v in id2label.items()}
    except ValueError:
        raise RunnerError(f"workload {NAME}: {file}: id2label keys must be integers") from None
    if sorted(by_index) != list(range(len(by_index))):
        raise RunnerError(
            f"workload {NAME}: {file}: id2label must number the classes 0.."
            f"{len(by_index) - 1}, not {sorted(by_index)}"
        )
    labels = [str(by_index[i]) for i in range(len(by_index))]
    if len(set(labels)) != len(labels):
        raise RunnerError(f"workload {NAME}: {file}: id2label names a class twice ({labels})")
    return labels


class SequenceClassifier(WorkloadFactory):
    """A `save_pretrained` checkpoint (or a user's ONNX file) classifying the corpus as is."""

    trains_at_run_time = False

    name = "hf"
    description = "local Hugging Face sequence classifier (transformers, safetensors)"
    path_options = ("path", "onnx", "tokenizer")
    trains = False

    def runs_in_torch(self, options: dict[str, Any]) -> bool:
        return options.get("path") is not None

    def check(self, options: dict[str, Any]) -> None:
        self._sources(options)
        tokenizers_library()
        if self.runs_in_torch(options):
            _transformers()

    def _sources(self, options: dict[str, Any]) -> dict[str, Path]:
        """The files to stage, each checked to exist; RunnerError naming what is wrong."""
        unknown = sorted(set(options) - {"path", "onnx", "tokenizer", "labels"})
        if unknown:
            raise RunnerError(
                f"workload {NAME}: unknown option(s) {unknown} (known: path, "
                "onnx, tokenizer, labels)"
            )
        path, onnx, tok = _dir(options, "path"), _dir(options, "onnx"), _dir(options, "tokenizer")
        if path is None and onnx is None:
            raise RunnerError(
                f"workload {NAME}: options.path (a save_pretrained checkpoint "
                "directory) or options.onnx (an ONNX file) is required"
            )
        if path is not None and "labels" in options:
            raise RunnerError(
                f"workload {NAME}: options.labels is for an ONNX file alone; a "
                f"checkpoint names its classes in {CONFIG} (id2label)"
            )
        out: dict[str, Path] = {}
        if path is not None:
            if not path.is_dir():
                raise RunnerError(f"workload {NAME}: checkpoint directory {path} not found")
            if not (path / CONFIG).is_file():
                raise RunnerError(
                    f"workload {NAME}: {path} has no {CONFIG}: not a "
                    "save_pretrained checkpoint directory"
                )
            if not (path / WEIGHTS).is_file():
                pickled = [p for p in PICKLED if (path / p).exists()]
                sharded = sorted(p.name for p in path.glob("model-*.safetensors"))
                why = (
                    f"it holds {', '.join(pickled)}, weights in a pickle-based format, "
                    "which is never loaded (code can hide in a pickle); save with "
                    "save_pretrained(..., safe_serialization=True) or convert to "
                    "safetensors"
                    if pickled
                    else f"its weights are sharded ({', '.join(sharded[:3])}); a single "
                    "model.safetensors is supported"
                    if sharded
                    else "no weights file found"
                )
                raise RunnerError(f"workload {NAME}: {path} has no {WEIGHTS}: {why}")
            out[CONFIG], out[WEIGHTS] = path / CONFIG, path / WEIGHTS
        tokenizer = tok or (path / TOKENIZER if path is not None else None)
        if tokenizer is None:
            raise RunnerError(
                f"workload {NAME}: options.tokenizer (a tokenizer.json) is "
                "required with options.onnx and no checkpoint path"
            )
        if not tokenizer.is_file():
            raise RunnerError(
                f"workload {NAME}: {tokenizer} not found (a tokenizer.json, as "
                "a fast tokenizer's save_pretrained writes it)"
            )
        out[TOKENIZER] = tokenizer
        if onnx is not None:
            if not onnx.is_file():
                raise RunnerError(f"workload {NAME}: ONNX file {onnx} not found")
            out[ONNX] = onnx
            if path is None and "labels" not in options:
                if not (onnx.parent / CONFIG).is_file():
                    raise RunnerError(
                        f"workload {NAME}: the classes of {onnx} are unknown: "
                        f"give options.labels, or keep the {CONFIG} of its "
                        "checkpoint beside it"
                    )
                out[CONFIG] = onnx.parent / CONFIG
        return out

    def _labels(self, options: dict[str, Any], config: Path | None) -> list[str]:
        labels = options.get("labels")
        if labels is not None:
            if (
                not isinstance(labels, list)
                or not labels
                or not all(isinstance(x, str) and x for x in labels)
                or len(set(labels)) != len(labels)
            ):
                raise RunnerError(
                    f"workload {NAME}: options.labels must list distinct class names in score order"
                )
            return list(labels)
        assert config is not None
        return _labels_of_config(config)

    def check_corpus(self, options: dict[str, Any], classes: tuple[str, ...], context: int) -> None:
        self._checked(options, classes, context)

    def _checked(
        self, options: dict[str, Any], classes: tuple[str, ...], context: int
    ) -> tuple[dict[str, Path], list[str]]:
        """The files to stage and the model's classes, once the classes are the corpus
        labels and the context fits the model."""
        sources = self._sources(options)
        labels = self._labels(options, sources.get(CONFIG))
        corpus = set(classes)
        if set(labels) != corpus:
            raise RunnerError(
                f"workload {NAME}: the model's classes are not the corpus labels: only in the "
                f"model {sorted(set(labels) - corpus)}, only in the corpus "
                f"{sorted(corpus - set(labels))} (the model's id2label, in "
                f"{sources.get(CONFIG, 'options.labels')}, must name the corpus labels)"
            )
        if CONFIG in sources:
            positions = json.loads(sources[CONFIG].read_text(encoding="utf-8")).get(
                "max_position_embeddings"
            )
            if isinstance(positions, int) and context > positions:
                raise RunnerError(
                    f"workload {NAME}: context {context} tokens exceeds the "
                    f"model's {positions} positions (max_position_embeddings)"
                )
        return sources, labels

    def prepare(
        self, data: TrainingData, model_dir: Path, seed: int, context: int, options: dict[str, Any]
    ) -> PreparedModel:
        sources, labels = self._checked(options, data.classes, context)
        model_dir.mkdir(parents=True, exist_ok=True)
        for name, src in sources.items():
            shutil.copyfile(src, model_dir / name)
        if options.get("labels") is not None:
            (model_dir / LABELS).write_text(json.dumps(labels), encoding="utf-8")
        weights = model_dir / (WEIGHTS if WEIGHTS in sources else ONNX)
        what = (
            "the checkpoint's weights (model.safetensors)"
            if WEIGHTS in sources
            else "the user's ONNX file"
        )
        return PreparedModel(
            weights,
            model_dir / TOKENIZER,
            f"{self.description}: {len(labels)} classes, {what}"
            + (
                ", the user's ONNX file for ONNX Runtime"
                if ONNX in sources and WEIGHTS in sources
                else ""
            )
            + f"; used as is (the train split is not used); context "
            f"{context} tokens",
        )

    def load(
        self, model_dir: Path, device: str, precision: str, context: int, options: dict[str, Any]
    ) -> Workload:
        # the user's own ONNX file (options.onnx) is staged under the name protocol B's export
        # takes, so only the options tell the one from the other
        onnx = model_dir / ONNX if options.get("onnx") is not None else None
        if not (model_dir / WEIGHTS).is_file():
            if onnx is None:
                raise RunnerError(
                    f"workload {NAME}: {model_dir} holds neither {WEIGHTS} nor {ONNX}"
                )
            labels_file = model_dir / LABELS
            labels = (
                json.loads(labels_file.read_text(encoding="utf-8"))
                if labels_file.is_file()
                else _labels_of_config(model_dir / CONFIG)
            )
            return OnnxOnlyWorkload(
                onnx, Tokenizer(model_dir / TOKENIZER, context, onnx_inputs(onnx)), labels
            )
        transformers = _transformers()
        labels = _labels_of_config(model_dir / CONFIG)
        quantized = precision in QUANTIZED
        dtype = torch.float32 if quantized else DTYPES[precision]
        noise = io.StringIO()
        try:
            with contextlib.redirect_stderr(noise):
                model = transformers.AutoModelForSequenceClassification.from_pretrained(
                    str(model_dir),
                    local_files_only=True,
                    use_safetensors=True,
                    trust_remote_code=False,
                    dtype=dtype,
                )
        except Exception as exc:  # transformers' own errors: an unknown architecture, say
            raise RunnerError(
                f"workload {NAME}: transformers could not load the checkpoint "
                f"({type(exc).__name__}: {str(exc)[:300]})"
            ) from None
        model.eval()
        dev = torch.device(device)
        if quantized:
            if dev.type != "cpu":
                raise ValueError(
                    f"precision {precision} runs on the CPU only (torch's "
                    f"quantized kernels), not on {device}"
                )
            model = quantize(model, precision)
        else:
            model = model.to(dev)
        accepted = inspect.signature(model.forward).parameters
        names = tuple(n for n in TENSORS if n in accepted)
        if "input_ids" not in names or "attention_mask" not in names:
            raise RunnerError(
                f"workload {NAME}: the model's forward takes no input_ids and "
                "attention_mask: not a text sequence classifier"
            )
        return HFWorkload(
            model, Tokenizer(model_dir / TOKENIZER, context, names), labels, dev, onnx
        )
