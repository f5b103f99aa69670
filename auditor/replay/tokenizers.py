"""Tokenizer kinds the auditor implements from data alone, so that replay never runs a
tokenizer shipped with a run: their protocol (`Tokenizer`) and registry (`KINDS`, `load`).

A run archives its tokenizer as data (vocabulary and rules, `model/tokenizer.json`) and names
its kind in the manifest (`replay.tokenizer.kind`); `load` looks the kind up in `KINDS` and
builds the tokenizer from the file, or returns faults (as data, never an exception): a file
over `MAX_BYTES`, not strict JSON, off its kind's schema, a vocabulary over `MAX_VOCAB`
entries or with an entry over `MAX_ENTRY_CHARS` characters or repeated (both limits in
`tokenizer_base`, which every kind reads), a kind the auditor does not know, a context limit
that differs from the manifest's. Nothing in the file is compiled or executed.

- `bow-words-pairs/1` (the default workload): `tokenizer_bow`; its rules (its word
  pattern, say) are fixed there, and the file must state the same ones.
- `hf-tokenizers/1` (a Hugging Face `tokenizer.json`): `tokenizer_hf`, applied by the
  tokenizers library (Rust; serialization parsed as data), once the file is checked there
  against `schemas/tokenizer-hf.schema.json`: the same size and vocabulary limits, a
  WordPiece, BPE, Unigram or WordLevel model, normalizers, pre-tokenizers and
  post-processors from a fixed list, literal patterns only (a `Regex` from a run is never
  compiled), no BPE dropout (it is random). The library sees the checked document
  re-serialized, its decoder removed.

Adding a kind: one module beside these with one class with `KIND`, `tensors` and
`from_doc`, one line in `KINDS`, its schema in `schemas/`, and its description in
docs/replay.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from auditor.readers import json_doc
from auditor.readers.base import Fault
from auditor.replay.tokenizer_base import TokenizerFailed as TokenizerFailed  # caught here
from auditor.replay.tokenizer_bow import BowWordsPairs
from auditor.replay.tokenizer_hf import HfTokenizers

if TYPE_CHECKING:  # numpy is imported where a tensor is made: `audit check` counts truncation
    import numpy as np  # with these tokenizers and never needs it

MAX_BYTES = 64 << 20
"""The largest tokenizer file read (the default workload's is about 75 kB)."""


class Tokenizer(Protocol):
    """What replay needs of a tokenizer: the model's input tensors for a batch of texts."""

    @property
    def kind(self) -> str: ...  # read-only: the tokenizers are frozen dataclasses

    @property
    def context(self) -> int: ...

    @property
    def tensors(self) -> tuple[str, ...]:
        """The names of the tensors `encode` returns (the contract maps graph inputs to them)."""
        ...

    def encode(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The input tensors of TEXTS, one batch."""
        ...

    def truncated(self, texts: Sequence[str]) -> int:
        """How many of TEXTS the context limit cuts (A3.3): those longer than `context` in
        the kind's own units."""
        ...


KINDS: dict[str, Callable[[dict[str, Any], str, int], tuple[Tokenizer | None, tuple[Fault, ...]]]]
KINDS = {BowWordsPairs.KIND: BowWordsPairs.from_doc, HfTokenizers.KIND: HfTokenizers.from_doc}
"""Tokenizer kind -> its builder from the parsed file (and the manifest's context limit)."""


def load(
    data: bytes, *, name: str, kind: str, context: int
) -> tuple[Tokenizer | None, tuple[Fault, ...]]:
    """The tokenizer of kind KIND (the manifest's) from the file's bytes DATA, named NAME in
    faults; CONTEXT is the manifest's context limit, which the file must state too."""
    if len(data) > MAX_BYTES:
        return None, (json_doc.too_large(name, len(data), MAX_BYTES),)
    build = KINDS.get(kind)
    if build is None:
        return None, (
            Fault(
                name,
                f"tokenizer kind {kind!r} is not one the auditor implements "
                f"(known: {', '.join(sorted(KINDS))})",
                kind="format",
                value=kind,
            ),
        )
    read = json_doc.read(data, name=name)
    if read.errors or not isinstance(read.value, dict):
        return None, read.errors or (Fault(name, "not a JSON object", kind="schema"),)
    tokenizer, faults = build(read.value, name, context)
    if tokenizer is not None and tokenizer.context != context:
        return None, (
            Fault(
                name,
                f"the file's context limit {tokenizer.context} is not the manifest's {context}",
                pointer="/context",
                kind="schema",
            ),
        )
    return tokenizer, faults
