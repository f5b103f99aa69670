"""Tokenizer kinds the auditor implements from data alone, so that replay never runs a
tokenizer shipped with a run.

A run archives its tokenizer as data (vocabulary and rules, `model/tokenizer.json`) and names
its kind in the manifest (`replay.tokenizer.kind`); `load` looks the kind up in `KINDS` and
builds the tokenizer from the file, or returns faults (as data, never an exception): a file
over `MAX_BYTES`, not strict JSON, off its kind's schema, a vocabulary over `MAX_VOCAB`
entries or with an entry over `MAX_ENTRY_CHARS` characters or repeated, a kind the auditor
does not know, a context limit that differs from the manifest's. Nothing in the file is
compiled or executed: a kind's rules (its word pattern, say) are fixed here, and the file
must state the same ones.

Adding a kind: one class with `KIND`, `TENSORS` and `from_doc`, one line in `KINDS`, its
schema in `schemas/`, and its description in docs/replay.md.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from auditor.readers import json_doc
from auditor.readers.base import Fault

MAX_BYTES = 64 << 20
"""The largest tokenizer file read (the default workload's is about 75 kB)."""
MAX_VOCAB = 2_000_000
"""The most vocabulary entries a tokenizer may hold."""
MAX_ENTRY_CHARS = 256
"""The longest vocabulary entry, in characters."""


class Tokenizer(Protocol):
    """What replay needs of a tokenizer: the model's input tensors for a batch of texts."""

    kind: str
    context: int

    @property
    def tensors(self) -> tuple[str, ...]:
        """The names of the tensors `encode` returns (the contract maps graph inputs to them)."""
        ...

    def encode(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The input tensors of TEXTS, one batch."""
        ...


@dataclass(frozen=True)
class BowWordsPairs:
    """`bow-words-pairs/1` (schemas/tokenizer-bow.schema.json): Unicode-lowercase the text,
    take the maximal matches of `[a-z_][a-z0-9_]*`, keep the first `context`, add each pair
    of neighbouring kept words joined by one space, and look every feature up in the
    vocabulary (position = id); unknown features are dropped. One bag per text: `ids` (int64,
    every text's ids in turn) and `offsets` (int64, where each text's ids start)."""

    KIND = "bow-words-pairs/1"
    WORD = re.compile(r"[a-z_][a-z0-9_]*")
    kind: str
    context: int
    index: dict[str, int]

    @property
    def tensors(self) -> tuple[str, ...]:
        return ("ids", "offsets")

    def features(self, text: str) -> list[str]:
        words = self.WORD.findall(text.lower())[: self.context]
        return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]

    def encode(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        ids: list[int] = []
        offsets: list[int] = []
        index = self.index
        for text in texts:
            offsets.append(len(ids))
            ids.extend(index[f] for f in self.features(text) if f in index)
        return {"ids": np.asarray(ids, dtype=np.int64),
                "offsets": np.asarray(offsets, dtype=np.int64)}

    @classmethod
    def from_doc(cls, doc: dict[str, Any], name: str) -> tuple[BowWordsPairs | None,
                                                               tuple[Fault, ...]]:
        vocab = doc.get("vocab")
        if isinstance(vocab, list) and len(vocab) > MAX_VOCAB:
            return None, (Fault(name, f"the vocabulary holds {len(vocab):,} entries; the "
                                f"auditor reads at most {MAX_VOCAB:,}", pointer="/vocab",
                                kind="limit", value=str(len(vocab))),)
        # the schema checks everything but a list's entries, checked below in one pass
        faults = json_doc.schema_faults({**doc, "vocab": []} if isinstance(vocab, list) else doc,
                                        "tokenizer_bow", name, label="tokenizer-bow")
        if faults or not isinstance(vocab, list):
            return None, faults
        index: dict[str, int] = {}
        for i, entry in enumerate(vocab):
            problem = (f"is not a string but {type(entry).__name__}"
                       if not isinstance(entry, str) else
                       "is empty" if not entry else
                       f"is {len(entry):,} characters long; the limit is {MAX_ENTRY_CHARS}"
                       if len(entry) > MAX_ENTRY_CHARS else
                       f"repeats entry {index[entry]}" if entry in index else None)
            if problem is not None:
                return None, (Fault(name, f"vocabulary entry {i} {problem}",
                                    pointer=f"/vocab/{i}", kind="schema",
                                    value=repr(entry)[:80]),)
            index[entry] = i
        return cls(cls.KIND, int(doc["context"]), index), ()


KINDS: dict[str, Callable[[dict[str, Any], str], tuple[Tokenizer | None, tuple[Fault, ...]]]]
KINDS = {BowWordsPairs.KIND: BowWordsPairs.from_doc}
"""Tokenizer kind -> its builder from the parsed file."""


def load(data: bytes, *, name: str, kind: str, context: int
         ) -> tuple[Tokenizer | None, tuple[Fault, ...]]:
    """The tokenizer of kind KIND (the manifest's) from the file's bytes DATA, named NAME in
    faults; CONTEXT is the manifest's context limit, which the file must state too."""
    if len(data) > MAX_BYTES:
        return None, (json_doc.too_large(name, len(data), MAX_BYTES),)
    build = KINDS.get(kind)
    if build is None:
        return None, (Fault(name, f"tokenizer kind {kind!r} is not one the auditor implements "
                            f"(known: {', '.join(sorted(KINDS))})", kind="format",
                            value=kind),)
    read = json_doc.read(data, name=name)
    if read.errors or not isinstance(read.value, dict):
        return None, read.errors or (Fault(name, "not a JSON object", kind="schema"),)
    if read.value.get("kind") != kind:
        return None, (Fault(name, f"the file's kind {read.value.get('kind')!r} is not the "
                            f"manifest's {kind!r}", pointer="/kind", kind="schema"),)
    tokenizer, faults = build(read.value, name)
    if tokenizer is not None and tokenizer.context != context:
        return None, (Fault(name, f"the file's context limit {tokenizer.context} is not the "
                            f"manifest's {context}", pointer="/context", kind="schema"),)
    return tokenizer, faults
