"""A tiny Hugging Face checkpoint made here, never downloaded: a `BertConfig` of two small
layers, a WordPiece `tokenizer.json` trained on a generated corpus (tokenizers'
`WordPieceTrainer`), a few steps of training so that its answers depend on the text, and
`save_pretrained` of both: the directory a user hands `runner.workloads.hf`. Needs the `hf`
extra (transformers, tokenizers, safetensors)."""

from __future__ import annotations

import contextlib
import io
import os
import random
from pathlib import Path

from runner_workloads import FILLER, VOCAB

LABELS = sorted(VOCAB)


def generated_texts(n: int, seed: int) -> list[tuple[str, str]]:
    """N (text, label) pairs in the words of `runner_workloads.VOCAB`."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        label = LABELS[i % len(LABELS)]
        words = rng.choices(VOCAB[label], k=rng.randint(3, 9)) + rng.choices(FILLER, k=3)
        rng.shuffle(words)
        out.append((" ".join(words), label))
    return out


def make_checkpoint(path: Path, *, seed: int = 11, steps: int = 40) -> Path:
    """Write the checkpoint directory at PATH (config.json, model.safetensors,
    tokenizer.json, tokenizer_config.json) and return it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()
    corpus = generated_texts(300, seed)
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(
        [t for t, _ in corpus] + [" ".join(w) for w in VOCAB.values()],
        trainers.WordPieceTrainer(vocab_size=120, special_tokens=special),
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[(t, tok.token_to_id(t)) for t in ("[CLS]", "[SEP]")],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    config = BertConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=len(LABELS),
        id2label=dict(enumerate(LABELS)),
        label2id={c: i for i, c in enumerate(LABELS)},
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    fast.model_max_length = 64
    # a few steps, so that the classes are told apart (its answers depend on the text)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    rng = random.Random(seed)
    for _ in range(steps):
        batch = rng.sample(corpus, 32)
        enc = fast(
            [t for t, _ in batch], padding=True, truncation=True, max_length=32, return_tensors="pt"
        )
        labels = torch.tensor([LABELS.index(y) for _, y in batch])
        opt.zero_grad()
        model(**enc, labels=labels).loss.backward()
        opt.step()
    model.eval()
    with contextlib.redirect_stderr(io.StringIO()):  # shard-writing progress
        model.save_pretrained(path)
        fast.save_pretrained(path)
    return path
