"""The Hugging Face workload as `runner.workloads.hf` loads it: `tokenizer.json` applied by
the tokenizers library (`Tokenizer`, kind `hf-tokenizers/1`, which MiniLM applies too) and the
classifier it feeds, a checkpoint in torch (`HFWorkload`) or the user's ONNX file alone in ONNX
Runtime's CPU provider (`OnnxOnlyWorkload`), whose graph inputs name the tensors fed
(`onnx_inputs`).

Tokenization is `tokenizer.json` applied by the tokenizers library, the same data and the same
rules `audit replay` applies (tokenizer kind `hf-tokenizers/1`, docs/replay.md): the file's
own truncation and padding settings are replaced by truncation to the run's context limit (in
tokens, special tokens included, the first tokens kept) and right padding to the longest text
of the batch (attention mask 0), the pad id being the file's padding id, else that of
`[PAD]` or `<pad>`, else 0. A text longer than the context counts as truncated (A3.3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from torch import nn

import schemas
from runner.errors import RunnerError
from runner.workloads.base import TensorForm, Workload

NAME = "runner.workloads.hf:SequenceClassifier"
"""The workload named in every error."""
TOKENIZER_KIND = "hf-tokenizers/1"
PAD_TOKENS = schemas.convention("replay", "pad_tokens")
TENSORS = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}
"""Graph input / model argument -> the `tokenizers.Encoding` field that feeds it."""
_AXES = {0: "texts", 1: "tokens"}


def tokenizers_library() -> Any:
    """The tokenizers library, or RunnerError naming the extra that installs it."""
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
        lib = tokenizers_library()
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
            names = onnx_inputs(self.onnx_file)
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


def onnx_inputs(onnx_file: Path) -> tuple[str, ...]:
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
