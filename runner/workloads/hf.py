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

Tokenization is `tokenizer.json` applied by the tokenizers library, the same data and the same
rules `audit replay` applies (tokenizer kind `hf-tokenizers/1`, docs/replay.md): the file's
own truncation and padding settings are replaced by truncation to the run's context limit (in
tokens, special tokens included, the first tokens kept) and right padding to the longest text
of the batch (attention mask 0), the pad id being the file's padding id, else that of
`[PAD]` or `<pad>`, else 0. A text longer than the context counts as truncated (A3.3).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from torch import nn

import schemas
from runner.errors import RunnerError
from runner.workloads.base import (
    DTYPES,
    QUANTIZED,
    PreparedModel,
    TensorForm,
    TrainingData,
    Workload,
    WorkloadFactory,
    quantize,
)

TOKENIZER_KIND = "hf-tokenizers/1"
CONFIG = "config.json"
WEIGHTS = "model.safetensors"
TOKENIZER = "tokenizer.json"
ONNX = "model.onnx"
"""The user's ONNX file, staged under the name protocol B's export has (runner.onnx_export)."""
LABELS = "labels.json"
"""The classes of an ONNX-only workload, staged beside it."""
PICKLED = ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "model.ckpt.index")
PAD_TOKENS = schemas.convention("replay", "pad_tokens")
TENSORS = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}
"""Graph input / model argument -> the `tokenizers.Encoding` field that feeds it."""
_AXES = {0: "texts", 1: "tokens"}
NAME = "runner.workloads.hf:SequenceClassifier"


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


def _tokenizers() -> Any:
    try:
        import tokenizers
    except ImportError:
        raise RunnerError(
            f'workload {NAME} needs the optional package tokenizers (pip install -e ".[hf]")'
        ) from None
    return tokenizers


def pad_id(tok: Any) -> tuple[int, str]:
    """The pad id and token of a tokenizers.Tokenizer, by the rule replay applies too."""
    doc = json.loads(tok.to_str())
    padding = doc.get("padding")
    if isinstance(padding, dict) and isinstance(padding.get("pad_id"), int):
        return padding["pad_id"], str(padding.get("pad_token", ""))
    for token in PAD_TOKENS:
        found = tok.token_to_id(token)
        if found is not None:
            return found, token
    return 0, tok.id_to_token(0) or ""


class Tokenizer:
    """`tokenizer.json` through the tokenizers library, with the run's context limit."""

    def __init__(self, file: Path, context: int, names: tuple[str, ...]) -> None:
        lib = _tokenizers()
        try:
            self.full = lib.Tokenizer.from_file(str(file))
        except Exception as exc:  # the library's own error on a file it cannot read
            raise RunnerError(
                f"workload {NAME}: {file} is not a tokenizer.json the tokenizers "
                f"library reads ({exc})"
            ) from None
        self.full.no_truncation()
        self.full.no_padding()
        self.tok = lib.Tokenizer.from_str(self.full.to_str())
        self.tok.enable_truncation(
            max_length=context, stride=0, strategy="longest_first", direction="right"
        )
        pid, ptoken = pad_id(self.full)
        self.tok.enable_padding(direction="right", pad_id=pid, pad_token=ptoken)
        self.names = names

    def encode(self, texts: list[str]) -> tuple[torch.Tensor, ...]:
        return self.encode_as(self.names, texts)

    def encode_as(self, names: tuple[str, ...], texts: list[str]) -> tuple[torch.Tensor, ...]:
        """The tensors NAMES (graph inputs or model arguments, `TENSORS`) of TEXTS."""
        enc = self.tok.encode_batch(list(texts), add_special_tokens=True)
        return tuple(
            torch.tensor([getattr(e, TENSORS[n]) for e in enc], dtype=torch.long) for n in names
        )

    def lengths(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.full.encode_batch(list(texts), add_special_tokens=True)]


class _Logits(nn.Module):
    """The classifier as a module of its input tensors that returns the logits."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits


class _LogitsWithTypes(_Logits):
    def forward(  # type: ignore[override]
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor,
    ) -> torch.Tensor:
        return self.model(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).logits


class HFWorkload(Workload):
    def __init__(
        self,
        model: nn.Module,
        tokenizer: Tokenizer,
        classes: list[str],
        device: torch.device,
        onnx_file: Path | None,
    ) -> None:
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.classes = classes
        self.device = device
        self.onnx_file = onnx_file

    def classify(self, texts: list[str], batch: int) -> list[str]:
        tensors = [t.to(self.device) for t in self.tokenizer.encode(texts)]
        self.note_input(tensors[0])
        with torch.inference_mode():
            logits = self.model(**dict(zip(self.tokenizer.names, tensors, strict=True))).logits
            best = logits.argmax(dim=1).tolist()
        return [self.classes[i] for i in best]

    def parameters(self) -> Iterable[torch.Tensor]:
        yield from self.model.parameters()
        yield from self.model.buffers()

    def token_lengths(self, texts: list[str]) -> list[int]:
        return self.tokenizer.lengths(texts)

    def tensor_form(self) -> TensorForm:
        names = self.tokenizer.names
        if self.onnx_file is not None:  # the user's ONNX file, fed by its own graph inputs
            names = _onnx_inputs(self.onnx_file)
            return TensorForm(
                None,
                lambda texts: self.tokenizer.encode_as(names, texts),
                names,
                self.classes,
                TOKENIZER_KIND,
                dynamic_axes=tuple(dict(_AXES) for _ in names),
                onnx_file=self.onnx_file,
            )
        wrapper = (_LogitsWithTypes if "token_type_ids" in names else _Logits)(self.model)
        return TensorForm(
            wrapper,
            self.tokenizer.encode,
            names,
            self.classes,
            TOKENIZER_KIND,
            dynamic_axes=tuple(dict(_AXES) for _ in names),
        )


class OnnxOnlyWorkload(Workload):
    """The user's ONNX file alone, on ONNX Runtime's CPU provider: what protocol B computes
    its reference answers with when there is no checkpoint (no torch policy can run)."""

    def __init__(self, onnx_file: Path, tokenizer: Tokenizer, classes: list[str]) -> None:
        super().__init__()
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(onnx_file), options, providers=["CPUExecutionProvider"]
        )
        self.output = self.session.get_outputs()[0].name
        self.onnx_file = onnx_file
        self.tokenizer = tokenizer
        self.classes = classes

    def classify(self, texts: list[str], batch: int) -> list[str]:
        feed = {
            n: t.numpy()
            for n, t in zip(self.tokenizer.names, self.tokenizer.encode(texts), strict=True)
        }
        scores = self.session.run([self.output], feed)[0]
        return [self.classes[int(row.argmax())] for row in scores]

    def parameters(self) -> Iterable[torch.Tensor]:
        return ()

    def token_lengths(self, texts: list[str]) -> list[int]:
        return self.tokenizer.lengths(texts)

    def tensor_form(self) -> TensorForm:
        return TensorForm(
            None,
            self.tokenizer.encode,
            self.tokenizer.names,
            self.classes,
            TOKENIZER_KIND,
            dynamic_axes=tuple(dict(_AXES) for _ in self.tokenizer.names),
            onnx_file=self.onnx_file,
        )


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
        _tokenizers()
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
                onnx, Tokenizer(model_dir / TOKENIZER, context, _onnx_inputs(onnx)), labels
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


def _onnx_inputs(onnx_file: Path) -> tuple[str, ...]:
    """The graph inputs of the user's ONNX file, each one a tokenizer tensor."""
    import onnx

    proto = onnx.load_model(str(onnx_file), load_external_data=False)
    inits = {t.name for t in proto.graph.initializer}
    names = tuple(i.name for i in proto.graph.input if i.name not in inits)
    unknown = [n for n in names if n not in TENSORS]
    if unknown or "input_ids" not in names:
        raise RunnerError(
            f"workload {NAME}: the inputs of {onnx_file} are {list(names)}; the "
            f"tokenizer feeds {', '.join(TENSORS)} (input_ids required)"
        )
    return names
