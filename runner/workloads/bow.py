"""The default workload: a bag-of-words text classifier in torch (an `EmbeddingBag` of word
and word-pair ids, mean-pooled, then a linear layer), trained at run time on the train split
with the run's seed in a few seconds on a CPU.

Tokenizer rules (stored with the vocabulary in `model/tokenizer.json`, whose hash is the
tokenizer revision): lowercase, words are `[a-z_][a-z0-9_]*`, the first `context` words are
kept (the context limit), each word and each pair of neighbouring words (joined by one space)
is looked up in the vocabulary built from the train split (kept when seen at least twice);
unknown ones are dropped. The file is data of the documented kind `bow-words-pairs/1`
(schemas/tokenizer-bow.schema.json, docs/replay.md): everything an auditor needs to tokenize
without this code. The weights and the class list go to `model/weights.pt` (the model
revision).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import torch
from torch import nn

from runner.workloads.base import (
    DTYPES,
    QUANTIZED,
    PreparedModel,
    TensorForm,
    TrainingData,
    Workload,
    WorkloadFactory,
    quantize,
    torch_seed,
)

WORD = r"[a-z_][a-z0-9_]*"
_WORD_RE = re.compile(WORD)
WEIGHTS = "weights.pt"
TOKENIZER = "tokenizer.json"


class BagOfWordsModel(nn.Module):
    def __init__(self, vocab_size: int, dim: int, n_classes: int) -> None:
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.head = nn.Linear(dim, n_classes)

    def forward(self, ids: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.head(self.bag(ids, offsets))


class Tokenizer:
    """Words and word pairs -> vocabulary ids, with the context limit applied to words."""

    KIND = "bow-words-pairs/1"
    """The tokenizer kind of `to_json`'s data (schemas/tokenizer-bow.schema.json)."""

    def __init__(self, vocab: list[str], context: int) -> None:
        self.vocab = vocab
        self.index = {tok: i for i, tok in enumerate(vocab)}
        self.context = context

    @staticmethod
    def words(text: str) -> list[str]:
        return _WORD_RE.findall(text.lower())

    @staticmethod
    def features(words: list[str]) -> list[str]:
        return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]

    def encode(self, text: str) -> list[int]:
        index = self.index
        feats = self.features(self.words(text)[: self.context])
        return [index[f] for f in feats if f in index]

    def batch(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        ids: list[int] = []
        offsets: list[int] = []
        for text in texts:
            offsets.append(len(ids))
            ids.extend(self.encode(text))
        return torch.tensor(ids, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.KIND,
            "lowercase": True,
            "word_pattern": WORD,
            "features": "words and neighbouring word pairs",
            "pair_separator": " ",
            "context": self.context,
            "unknown": "dropped",
            "vocab": self.vocab,
        }


class BagOfWordsWorkload(Workload):
    def __init__(
        self, model: BagOfWordsModel, tokenizer: Tokenizer, classes: list[str], device: torch.device
    ) -> None:
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.classes = classes
        self.device = device

    def classify(self, texts: list[str], batch: int) -> list[str]:
        ids, offsets = self.tokenizer.batch(texts)
        ids = ids.to(self.device)
        offsets = offsets.to(self.device)
        self.note_input(ids)
        with torch.inference_mode():
            best = self.model(ids, offsets).argmax(dim=1).tolist()
        return [self.classes[i] for i in best]

    def parameters(self) -> Iterable[torch.Tensor]:
        yield from self.model.parameters()
        yield from self.model.buffers()

    def token_lengths(self, texts: list[str]) -> list[int]:
        return [len(Tokenizer.words(t)) for t in texts]

    def tensor_form(self) -> TensorForm:
        return TensorForm(
            self.model, self.tokenizer.batch, ("ids", "offsets"), self.classes, Tokenizer.KIND
        )


class BagOfWords(WorkloadFactory):
    """Options: `dim` (embedding size, 64), `epochs` (30), `min_count` (2), `lr` (0.02)."""

    name = "bow"
    description = (
        "bag-of-words EmbeddingBag (words and word pairs, mean) + linear layer, "
        "trained at run time on the train split with the run's seed"
    )

    def threads(self, available: int) -> int:
        return 1  # ops on a few hundred numbers: more threads only add synchronization

    def prepare(
        self, data: TrainingData, model_dir: Path, seed: int, context: int, options: dict[str, Any]
    ) -> PreparedModel:
        dim = int(options.get("dim", 64))
        epochs = int(options.get("epochs", 30))
        min_count = int(options.get("min_count", 2))
        lr = float(options.get("lr", 0.02))
        torch.manual_seed(torch_seed(seed))
        counts: Counter[str] = Counter()
        for text in data.texts:
            counts.update(set(Tokenizer.features(Tokenizer.words(text)[:context])))
        vocab = sorted(tok for tok, n in counts.items() if n >= min_count)
        tok = Tokenizer(vocab, context)
        classes = list(data.classes)
        class_index = {c: i for i, c in enumerate(classes)}
        targets = torch.tensor([class_index[label] for label in data.labels])
        encoded = [tok.encode(t) for t in data.texts]
        model = BagOfWordsModel(max(1, len(vocab)), dim, len(classes))
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        gen = torch.Generator().manual_seed(torch_seed(seed))
        # weight classes by inverse frequency so small families are not drowned (macro-F1)
        freq = torch.bincount(targets, minlength=len(classes)).clamp(min=1).float()
        loss_fn = nn.CrossEntropyLoss(weight=freq.sum() / (len(classes) * freq))
        for _ in range(epochs):
            order = torch.randperm(len(encoded), generator=gen).tolist()
            for start in range(0, len(order), 64):
                chunk = order[start : start + 64]
                ids: list[int] = []
                offsets: list[int] = []
                for i in chunk:
                    offsets.append(len(ids))
                    ids.extend(encoded[i])
                opt.zero_grad()
                logits = model(torch.tensor(ids, dtype=torch.long), torch.tensor(offsets))
                loss_fn(logits, targets[chunk]).backward()
                opt.step()
        model_dir.mkdir(parents=True, exist_ok=True)
        weights = model_dir / WEIGHTS
        torch.save(
            {
                "state_dict": model.state_dict(),
                "classes": classes,
                "dim": dim,
                "vocab_size": max(1, len(vocab)),
            },
            weights,
        )
        tokenizer = model_dir / TOKENIZER
        tokenizer.write_text(
            json.dumps(tok.to_json(), ensure_ascii=False, sort_keys=True), encoding="utf-8"
        )
        return PreparedModel(
            weights,
            tokenizer,
            f"{self.description}; vocab {len(vocab)}, dim {dim}, {epochs} epochs",
        )

    def load(
        self, model_dir: Path, device: str, precision: str, context: int, options: dict[str, Any]
    ) -> Workload:
        saved = torch.load(model_dir / WEIGHTS, map_location="cpu", weights_only=True)
        rules = json.loads((model_dir / TOKENIZER).read_text(encoding="utf-8"))
        model = BagOfWordsModel(saved["vocab_size"], saved["dim"], len(saved["classes"]))
        model.load_state_dict(saved["state_dict"])
        dev = torch.device(device)
        if precision in QUANTIZED:
            if dev.type != "cpu":
                raise ValueError(
                    f"precision {precision} runs on the CPU only (torch's "
                    f"quantized kernels), not on {device}"
                )
            # quantize_dynamic returns a copy of the same class, its Linear layers swapped
            model = cast(BagOfWordsModel, quantize(model.eval(), precision))
        else:
            model = model.to(device=dev, dtype=DTYPES[precision]).eval()
        return BagOfWordsWorkload(
            model, Tokenizer(rules["vocab"], context), list(saved["classes"]), dev
        )
