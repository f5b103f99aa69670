"""Tokenizer kind `bow-words-pairs/1` (the default workload's), implemented here from the
file's data alone: its rules (its word pattern, say) are fixed here, and the file must state
the same ones (schemas/tokenizer-bow.schema.json). `tokenizers.load` builds it from the file.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auditor.readers import json_doc
from auditor.readers.base import Fault
from auditor.replay import tokenizer_base as base

if TYPE_CHECKING:  # numpy is imported where a tensor is made: `audit check` counts truncation
    import numpy as np  # with this tokenizer and never needs it


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

    def truncated(self, texts: Sequence[str]) -> int:
        word, context = self.WORD, self.context
        return sum(1 for text in texts if len(word.findall(text.lower())) > context)

    def encode(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        import numpy as np

        ids: list[int] = []
        offsets: list[int] = []
        index = self.index
        for text in texts:
            offsets.append(len(ids))
            ids.extend(index[f] for f in self.features(text) if f in index)
        return {
            "ids": np.asarray(ids, dtype=np.int64),
            "offsets": np.asarray(offsets, dtype=np.int64),
        }

    @classmethod
    def from_doc(
        cls, doc: dict[str, Any], name: str, context: int
    ) -> tuple[BowWordsPairs | None, tuple[Fault, ...]]:
        if doc.get("kind") != cls.KIND:
            return None, (
                Fault(
                    name,
                    f"the file's kind {doc.get('kind')!r} is not the manifest's {cls.KIND!r}",
                    pointer="/kind",
                    kind="schema",
                ),
            )
        vocab = doc.get("vocab")
        if isinstance(vocab, list) and len(vocab) > base.MAX_VOCAB:
            return None, (
                Fault(
                    name,
                    f"the vocabulary holds {len(vocab):,} entries; the "
                    f"auditor reads at most {base.MAX_VOCAB:,}",
                    pointer="/vocab",
                    kind="limit",
                    value=str(len(vocab)),
                ),
            )
        # the schema checks everything but a list's entries, checked below in one pass
        faults = json_doc.schema_faults(
            {**doc, "vocab": []} if isinstance(vocab, list) else doc,
            "tokenizer_bow",
            name,
            label="tokenizer-bow",
        )
        if faults or not isinstance(vocab, list):
            return None, faults
        index: dict[str, int] = {}
        for i, entry in enumerate(vocab):
            problem = (
                f"is not a string but {type(entry).__name__}"
                if not isinstance(entry, str)
                else "is empty"
                if not entry
                else f"is {len(entry):,} characters long; the limit is {base.MAX_ENTRY_CHARS}"
                if len(entry) > base.MAX_ENTRY_CHARS
                else f"repeats entry {index[entry]}"
                if entry in index
                else None
            )
            if problem is not None:
                return None, (
                    Fault(
                        name,
                        f"vocabulary entry {i} {problem}",
                        pointer=f"/vocab/{i}",
                        kind="schema",
                        value=repr(entry)[:80],
                    ),
                )
            index[entry] = i
        return cls(cls.KIND, int(doc["context"]), index), ()
