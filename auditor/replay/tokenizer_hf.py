"""Tokenizer kind `hf-tokenizers/1` (a Hugging Face `tokenizer.json`): applied by the
tokenizers library (Rust; serialization parsed as data), once the file is checked here
against `schemas/tokenizer-hf.schema.json`: the vocabulary limits of every kind
(`tokenizer_base`), a WordPiece, BPE, Unigram or WordLevel model, normalizers,
pre-tokenizers and post-processors from a fixed list, literal patterns only (a `Regex` from
a run is never compiled), no BPE dropout (it is random). The library sees the checked
document re-serialized, its decoder removed. `tokenizers.load` builds it from the file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import schemas
from auditor.readers import json_doc
from auditor.readers.base import Fault
from auditor.replay import tokenizer_base as base

if TYPE_CHECKING:  # numpy is imported where a tensor is made: `audit check` counts truncation
    import numpy as np  # with this tokenizer and never needs it


MAX_COMPONENTS = 64
"""The most normalizers, pre-tokenizers or post-processors one file may chain."""
MAX_NESTING = 8
"""The deepest `Sequence` nesting of components."""
HF_BATCH = 16
"""Texts per ONNX Runtime call for a transformer: padded to the longest of the batch, so a
small batch bounds the memory of attention over long contexts."""
_HF_COMPONENTS = {
    "normalizer": (
        "normalizers",
        frozenset(
            {
                "BertNormalizer",
                "Strip",
                "StripAccents",
                "NFC",
                "NFD",
                "NFKC",
                "NFKD",
                "Sequence",
                "Lowercase",
                "Nmt",
                "Precompiled",
                "Replace",
                "Prepend",
                "ByteLevel",
            }
        ),
    ),
    "pre_tokenizer": (
        "pretokenizers",
        frozenset(
            {
                "BertPreTokenizer",
                "ByteLevel",
                "CharDelimiterSplit",
                "Metaspace",
                "Whitespace",
                "Sequence",
                "Split",
                "Punctuation",
                "WhitespaceSplit",
                "Digits",
                "UnicodeScripts",
                "FixedLength",
            }
        ),
    ),
    "post_processor": (
        "processors",
        frozenset(
            {"BertProcessing", "RobertaProcessing", "ByteLevel", "TemplateProcessing", "Sequence"}
        ),
    ),
}
"""Component -> (the key of a Sequence's members, the types replay applies)."""
_PAD_TOKENS = schemas.convention("replay", "pad_tokens")


_PROBE_TEXTS = ["", "a", "zqxj \u2603\U0001f600 Éñ 12345 xyzzyplugh!?", "the the the " * 40]
"""Texts a tokenizer must encode once loaded: the empty text, one letter, unknown words and
characters (the unknown-token path), and a text past any context (truncation)."""


@dataclass(frozen=True)
class HfTokenizers:
    """`hf-tokenizers/1` (schemas/tokenizer-hf.schema.json): a Hugging Face `tokenizer.json`
    applied by the tokenizers library, with the contract's rules instead of the file's own
    truncation and padding: at most `context` tokens a text (special tokens included, the
    first kept, longest first for pairs), padded on the right to the longest text of the
    batch with the file's padding id, else that of `[PAD]` or `<pad>`, else 0 (masked out).
    Tensors: `input_ids`, `attention_mask`, `token_type_ids` (int64, texts x tokens)."""

    KIND = "hf-tokenizers/1"
    kind: str
    context: int
    tokenizer: Any
    """The tokenizers.Tokenizer built from the checked document."""
    batch: int = HF_BATCH

    @property
    def tensors(self) -> tuple[str, ...]:
        return ("input_ids", "attention_mask", "token_type_ids")

    def truncated(self, texts: Sequence[str]) -> int:
        """Texts whose tokens, special tokens included, exceed the context (the runner counts
        them the same way), counted by a copy without truncation or padding, with the
        library's offset-free batch encoding where it has one (measured about 1.7x faster on
        1,000 texts than the padded, truncating encoding replay uses)."""
        import tokenizers

        try:
            full = tokenizers.Tokenizer.from_str(self.tokenizer.to_str())
            full.no_truncation()
            full.no_padding()
            encode = getattr(full, "encode_batch_fast", full.encode_batch)
            enc = encode(list(texts), add_special_tokens=True)
        except Exception as exc:  # the library's error on the file's own content
            raise base.TokenizerFailed(
                f"the tokenizers library cannot apply the file: {str(exc)[:200]}"
            ) from None
        return sum(1 for e in enc if len(e.ids) > self.context)

    def encode(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        import numpy as np

        try:
            enc = self.tokenizer.encode_batch(list(texts), add_special_tokens=True)
        except Exception as exc:  # the library's error on the file's own content
            raise base.TokenizerFailed(
                f"the tokenizers library cannot apply the file: {str(exc)[:200]}"
            ) from None
        return {
            "input_ids": np.asarray([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in enc], dtype=np.int64),
        }

    @classmethod
    def from_doc(
        cls, doc: dict[str, Any], name: str, context: int
    ) -> tuple[HfTokenizers | None, tuple[Fault, ...]]:
        model = doc.get("model")
        vocab = model.get("vocab") if isinstance(model, dict) else None
        merges = model.get("merges") if isinstance(model, dict) else None
        for what, pointer, entries in (
            ("vocabulary", "/model/vocab", vocab),
            ("merge list", "/model/merges", merges),
            ("added token list", "/added_tokens", doc.get("added_tokens")),
        ):
            if isinstance(entries, (list, dict)) and len(entries) > base.MAX_VOCAB:
                return None, (
                    Fault(
                        name,
                        f"the {what} holds {len(entries):,} entries; the "
                        f"auditor reads at most {base.MAX_VOCAB:,}",
                        pointer=pointer,
                        kind="limit",
                        value=str(len(entries)),
                    ),
                )
        fault = _hf_components(doc, name)
        if fault is None and isinstance(model, dict) and model.get("dropout") is not None:
            fault = Fault(
                name,
                f"BPE dropout {model['dropout']!r} makes tokenization random; "
                "replay applies a deterministic tokenizer only",
                pointer="/model/dropout",
                kind="schema",
                value=str(model["dropout"]),
            )
        if fault is not None:
            return None, (fault,)
        # the schema checks everything but the vocabulary and merges, checked below
        emptied = (
            {
                **doc,
                "model": {
                    **model,
                    **({"vocab": type(vocab)()} if isinstance(vocab, (list, dict)) else {}),
                    **({"merges": []} if isinstance(merges, list) else {}),
                },
            }
            if isinstance(model, dict)
            else doc
        )
        faults = json_doc.schema_faults(emptied, "tokenizer_hf", name, label="tokenizer-hf")
        if faults:
            return None, faults
        assert isinstance(model, dict)  # the schema requires the model object
        fault = _hf_vocab(model, name) or _hf_added(doc.get("added_tokens") or [], name)
        if fault is not None:
            return None, (fault,)
        try:
            import tokenizers
        except ImportError:
            return None, (
                Fault(
                    name,
                    f"tokenizer kind {cls.KIND} is applied by the tokenizers "
                    "library, which is not installed here (pip install "
                    '"gpubench-audit[hf]")',
                    kind="format",
                    value=cls.KIND,
                ),
            )
        checked = {**doc, "truncation": None, "padding": None, "decoder": None}
        try:
            tok = tokenizers.Tokenizer.from_str(json.dumps(checked))
        except Exception as exc:  # the library's own error on a document it cannot build
            return None, (
                Fault(
                    name,
                    f"the tokenizers library refuses the file: {str(exc)[:200]}",
                    kind="schema",
                ),
            )
        tok.enable_truncation(
            max_length=context, stride=0, strategy="longest_first", direction="right"
        )
        padding = doc.get("padding")
        pad = (
            padding["pad_id"]
            if isinstance(padding, dict) and isinstance(padding.get("pad_id"), int)
            else next((i for t in _PAD_TOKENS if (i := tok.token_to_id(t)) is not None), 0)
        )
        tok.enable_padding(direction="right", pad_id=pad, pad_token=tok.id_to_token(pad) or "")
        built = cls(cls.KIND, context, tok)
        try:
            built.encode(_PROBE_TEXTS)
        except base.TokenizerFailed as exc:
            return None, (Fault(name, str(exc), kind="schema"),)
        return built, ()


def _hf_components(doc: dict[str, Any], name: str) -> Fault | None:
    """The first normalizer, pre-tokenizer or post-processor replay does not apply: an
    unknown type, a regular expression, too many or too deeply nested; None when all fit."""
    for key, (members, allowed) in _HF_COMPONENTS.items():
        stack: list[tuple[Any, str, int]] = [(doc.get(key), f"/{key}", 0)]
        seen = 0
        while stack:
            part, pointer, depth = stack.pop()
            if part is None:
                continue
            seen += 1
            if not isinstance(part, dict) or seen > MAX_COMPONENTS or depth > MAX_NESTING:
                problem = (
                    "is not an object"
                    if not isinstance(part, dict)
                    else f"makes more than {MAX_COMPONENTS} components"
                    if seen > MAX_COMPONENTS
                    else f"nests Sequences deeper than {MAX_NESTING}"
                )
                return Fault(name, f"{key} {pointer} {problem}", pointer=pointer, kind="limit")
            kind = part.get("type")
            if not isinstance(kind, str) or kind not in allowed:
                return Fault(
                    name,
                    f"{key} type {kind!r} is not one replay applies (known: "
                    f"{', '.join(sorted(allowed))})",
                    pointer=f"{pointer}/type",
                    kind="schema",
                    value=str(kind)[:80],
                )
            pattern = part.get("pattern")
            if isinstance(pattern, dict) and "Regex" in pattern:
                return Fault(
                    name,
                    f"{key} {kind} uses a regular expression "
                    f"({str(pattern['Regex'])[:60]!r}); replay never compiles a "
                    'pattern from a run, only literal ones ({"String": ...})',
                    pointer=f"{pointer}/pattern",
                    kind="schema",
                )
            children = part.get(members)
            if isinstance(children, list):
                stack.extend(
                    (c, f"{pointer}/{members}/{i}", depth + 1) for i, c in enumerate(children)
                )
    return None


def _entry_problem(entry: Any) -> str | None:
    return (
        f"is not a string but {type(entry).__name__}"
        if not isinstance(entry, str)
        else "is empty"
        if not entry
        else f"is {len(entry):,} characters long; the limit is {base.MAX_ENTRY_CHARS}"
        if len(entry) > base.MAX_ENTRY_CHARS
        else None
    )


def _hf_vocab(model: dict[str, Any], name: str) -> Fault | None:
    """The first vocabulary or merge entry over the limits or repeated (a token twice, or
    two tokens with one id); None when every entry fits."""
    vocab = model.get("vocab")
    if model.get("type") == "Unigram":
        if not isinstance(vocab, list):
            return Fault(
                name,
                "a Unigram vocabulary is a list of [piece, score]",
                pointer="/model/vocab",
                kind="schema",
            )
        pieces: dict[str, int] = {}
        for i, entry in enumerate(vocab):
            piece = entry[0] if isinstance(entry, list) and len(entry) == 2 else None
            problem = (
                "is not a [piece, score] pair"
                if piece is None
                or isinstance(entry[1], bool)
                or not isinstance(entry[1], (int, float))
                else _entry_problem(piece)
                or (f"repeats entry {pieces[piece]}" if piece in pieces else None)
            )
            if problem is not None:
                return Fault(
                    name,
                    f"vocabulary entry {i} {problem}",
                    pointer=f"/model/vocab/{i}",
                    kind="schema",
                    value=repr(entry)[:80],
                )
            assert piece is not None  # a pair without a piece is a problem above
            pieces[piece] = i
        return None
    if not isinstance(vocab, dict):
        return Fault(
            name,
            f"a {model.get('type')} vocabulary is an object token -> id",
            pointer="/model/vocab",
            kind="schema",
        )
    ids: dict[int, str] = {}
    for token, i in vocab.items():
        problem = (
            _entry_problem(token)
            or (
                f"has id {i!r}, not a non-negative integer"
                if isinstance(i, bool) or not isinstance(i, int) or i < 0
                else None
            )
            or (f"repeats the id {i} of {ids[i]!r}" if i in ids else None)
        )
        if problem is not None:
            return Fault(
                name,
                f"vocabulary entry {token[:40]!r} {problem}"
                if isinstance(token, str)
                else f"a vocabulary entry {problem}",
                pointer=f"/model/vocab/{_pointer_token(str(token))}",
                kind="schema",
                value=repr(i)[:80],
            )
        ids[i] = token
    for i, merge in enumerate(model.get("merges") or []):
        parts = merge.split(" ") if isinstance(merge, str) else merge
        if not isinstance(parts, list) or len(parts) != 2 or any(_entry_problem(p) for p in parts):
            return Fault(
                name,
                f"merge {i} is not two vocabulary entries of at most "
                f"{base.MAX_ENTRY_CHARS} characters",
                pointer=f"/model/merges/{i}",
                kind="schema",
                value=repr(merge)[:80],
            )
    return None


def _hf_added(added: list[Any], name: str) -> Fault | None:
    """The first added token repeated (content or id); None when none is."""
    contents: dict[str, int] = {}
    ids: set[int] = set()
    for i, token in enumerate(added):
        content, tid = token.get("content"), token.get("id")
        if content in contents or tid in ids:
            return Fault(
                name,
                f"added token {i} repeats "
                + (
                    f"the content of added token {contents[content]}"
                    if content in contents
                    else f"the id {tid}"
                ),
                pointer=f"/added_tokens/{i}",
                kind="schema",
                value=repr(content)[:80],
            )
        contents[content] = i
        ids.add(tid)
    return None


def _pointer_token(token: str) -> str:
    """TOKEN escaped as one JSON pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")
