"""How much the runner adds around a Hugging Face classifier (runner.workloads.hf): side by
side in one process, the same checkpoint over the same texts (the default corpus's evaluation
texts) at the same batch, interleaved repetitions, medians and their ratio.

The baseline is the loop a user would write without the runner: transformers'
`AutoModelForSequenceClassification` and the checkpoint's fast tokenizer
(`AutoTokenizer`, padding and truncation to the context), `argmax` of the logits, under
`torch.inference_mode()`.

1. processing_only: the elapsed time `run_pass` records (the workload's classify calls:
   tokenizer.json through the tokenizers library, the model, the labels) vs that bare loop;
2. full_chain (the default timer scope): `run_pass`'s elapsed vs the bare loop reading the
   same inputs file and writing the same JSONL answers;
3. for information, the whole `run_pass` call (memory probe, trace and placement files
   outside the timed region) vs the bare chain.

Two checkpoints, both made here with random weights (nothing is downloaded): `tiny` (2 layers
of 32, the tests' size: the overhead is visible) and `small` (4 layers of 256, closer to a
real classifier: the model dominates).

Usage: .venv/bin/python bench/hf_overhead.py [--reps 5] [--batches 1,8] [--texts 300]
       [--sizes tiny,small] [--threads 1]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from runner.a.passes import INPUTS_FILE, PassSpec, run_pass
from runner.corpus import load_corpus
from runner.workloads.base import TrainingData, Workload
from runner.workloads.hf import SequenceClassifier

SIZES = {
    "tiny": {
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
    },
    "small": {
        "hidden_size": 256,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "intermediate_size": 1024,
    },
}
CONTEXT = 128


def make_checkpoint(path: Path, size: str, texts: list[str], classes: tuple[str, ...]) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        texts,
        trainers.WordPieceTrainer(
            vocab_size=8000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        ),
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
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
        max_position_embeddings=CONTEXT,
        num_labels=len(classes),
        id2label=dict(enumerate(classes)),
        label2id={c: i for i, c in enumerate(classes)},
        **SIZES[size],
    )
    torch.manual_seed(0)
    with contextlib.redirect_stderr(io.StringIO()):
        BertForSequenceClassification(config).save_pretrained(path)
        fast.save_pretrained(path)


class Bare:
    """The user's loop without the runner."""

    def __init__(self, path: Path) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.model = AutoModelForSequenceClassification.from_pretrained(
            str(path), local_files_only=True
        ).eval()
        self.tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.labels = [
            self.model.config.id2label[i] for i in range(len(self.model.config.id2label))
        ]

    def classify(self, texts: list[str]) -> list[str]:
        enc = self.tok(
            texts, padding=True, truncation=True, max_length=CONTEXT, return_tensors="pt"
        )
        with torch.inference_mode():
            best = self.model(**enc).logits.argmax(dim=1).tolist()
        return [self.labels[i] for i in best]

    def loop(self, texts: list[str], batch: int) -> float:
        t0 = time.perf_counter()
        for i in range(0, len(texts), batch):
            self.classify(texts[i : i + batch])
        return time.perf_counter() - t0

    def chain(self, inputs: Path, out: Path, batch: int) -> float:
        t0 = time.perf_counter()
        rows = [json.loads(line) for line in inputs.read_text(encoding="utf-8").splitlines()]
        with open(out, "w", encoding="utf-8") as f:
            for i in range(0, len(rows), batch):
                chunk = rows[i : i + batch]
                labels = self.classify([r["text"] for r in chunk])
                f.write(
                    "".join(
                        json.dumps({"id": r["id"], "label": lab}, ensure_ascii=False) + "\n"
                        for r, lab in zip(chunk, labels, strict=True)
                    )
                )
        return time.perf_counter() - t0


def bench_size(
    size: str, args: argparse.Namespace, corpus: Any, texts: list[str], root: Path
) -> None:
    ckpt = root / f"ckpt-{size}"
    make_checkpoint(ckpt, size, corpus.split("train")["text"].to_list(), corpus.classes)
    factory = SequenceClassifier()
    options = {"path": str(ckpt)}
    factory.prepare(
        TrainingData([], [], corpus.classes), root / f"model-{size}", 1, CONTEXT, options
    )
    w: Workload = factory.load(root / f"model-{size}", "cpu", "float32", CONTEXT, options)
    bare = Bare(ckpt)
    assert bare.classify(texts[:16]) == w.classify(texts[:16], 16), "not the same answers"
    params = sum(p.numel() for p in bare.model.parameters())
    print(
        f"\n{size}: BERT {SIZES[size]['num_hidden_layers']} layers of "
        f"{SIZES[size]['hidden_size']}, {params / 1e6:.2f} M parameters, context {CONTEXT}"
    )
    for batch in (int(b) for b in args.batches.split(",")):
        for _ in range(2):  # warm-up of this batch shape, as the protocol does
            bare.loop(texts, batch)
            w.classify(texts[:batch], batch)
        proc = PassSpec(0, f"batch-{batch}", "warm", 1, batch, "cpu", "processing_only")
        full = PassSpec(0, f"batch-{batch}", "warm", 2, batch, "cpu", "full_chain")
        series: dict[str, list[float]] = {k: [] for k in ("bare", "proc", "chain", "full", "wall")}
        for _ in range(args.reps):
            series["bare"].append(bare.loop(texts, batch))
            series["proc"].append(
                run_pass(w, proc, root, fresh_process=False)["entry"]["elapsed_seconds"]
            )
            series["chain"].append(bare.chain(root / INPUTS_FILE, root / "bare.jsonl", batch))
            t0 = time.perf_counter()
            series["full"].append(
                run_pass(w, full, root, fresh_process=False)["entry"]["elapsed_seconds"]
            )
            series["wall"].append(time.perf_counter() - t0)
        for label, base, mine in (
            ("processing_only elapsed vs bare transformers loop", "bare", "proc"),
            ("full_chain elapsed vs bare read+classify+write", "chain", "full"),
            ("whole run_pass call (wall) vs bare chain", "chain", "wall"),
        ):
            mb, mr = statistics.median(series[base]), statistics.median(series[mine])
            lb, lr = min(series[base]), min(series[mine])
            print(
                f"{batch:>5}  {label:<50} {mb * 1e3:>9.1f} {mr * 1e3:>9.1f} {mr / mb:>6.3f}"
                f"  {lb * 1e3:>9.1f} {lr * 1e3:>9.1f} {lr / lb:>6.3f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--texts", type=int, default=300)
    ap.add_argument("--sizes", default="tiny,small")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch intra-op threads for both sides (default 1: on a shared "
        "machine more threads spin against other processes)",
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    corpus = load_corpus(None, 1000, None, seed=20260924)
    ev = corpus.split("eval").head(args.texts)
    texts = ev["text"].to_list()
    print(
        f"runner overhead around a Hugging Face classifier, {len(texts)} texts, "
        f"{args.reps} interleaved repetitions each, medians and minimums in ms "
        f"(torch threads {torch.get_num_threads()})"
    )
    print(
        f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs "
        "(other processes make medians noisy; the minimums show the floor)"
    )
    print(
        f"{'batch':>5}  {'comparison':<50} {'bare':>9} {'runner':>9} {'ratio':>6}"
        f"  {'min bare':>9} {'min run':>9} {'ratio':>6}"
    )
    with tempfile.TemporaryDirectory(prefix="hf-bench-") as d:
        root = Path(d)
        (root / "corpus").mkdir()
        (root / INPUTS_FILE).write_text(
            "".join(
                json.dumps(r, ensure_ascii=False) + "\n" for r in ev.select("id", "text").to_dicts()
            ),
            encoding="utf-8",
        )
        for size in args.sizes.split(","):
            bench_size(size, args, corpus, texts, root)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
