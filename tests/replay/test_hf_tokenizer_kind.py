"""Tokenizer kind `hf-tokenizers/1`: a Hugging Face `tokenizer.json` applied as data by the
tokenizers library, with the contract's truncation and padding. WordPiece, BPE and Unigram
files (each trained here on a generated corpus, with their normalizers and pre-tokenizers)
give the runner's tensors exactly; what replay does not apply is a finding, never a crash:
a regular expression, a component of an unknown type, BPE dropout, the size and vocabulary
limits of every kind, a library that is not installed."""

from __future__ import annotations

import builtins
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("tokenizers")

from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

from auditor.replay import tokenizer_base, tokenizer_hf
from auditor.replay import tokenizers as kinds
from runner.workloads.hf_inference import TENSORS
from runner.workloads.hf_inference import Tokenizer as RunnerTokenizer

KIND = "hf-tokenizers/1"
WORDS = [
    "apple",
    "banana",
    "cherry",
    "hammer",
    "wrench",
    "storm",
    "thunder",
    "the",
    "of",
    "Éclair",
    "naïve",
    "café",
    "123",
    "4567",
]
CORPUS = [" ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(2 + i % 9)) for i in range(300)]
TEXTS = [
    "Apple banana, cherry!",
    "the storm of thunder " * 8,
    "café naïve Éclair 4567",
    "zzz unknownword qqq",
    "",
]


def wordpiece() -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        CORPUS,
        trainers.WordPieceTrainer(
            vocab_size=80, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
        ),
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    return tok


def bpe() -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.Digits(individual_digits=True)]
    )
    tok.train_from_iterator(
        CORPUS, trainers.BpeTrainer(vocab_size=90, special_tokens=["<pad>", "<unk>", "<s>", "</s>"])
    )
    tok.post_processor = processors.RobertaProcessing(("</s>", 3), ("<s>", 2))
    return tok


def bytelevel_bpe() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.train_from_iterator(
        CORPUS,
        trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=["<pad>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    return tok


def unigram() -> Tokenizer:
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence(
        [normalizers.NFD(), normalizers.StripAccents(), normalizers.Replace("``", '"')]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.train_from_iterator(
        CORPUS,
        trainers.UnigramTrainer(
            vocab_size=60, special_tokens=["<pad>", "<unk>"], unk_token="<unk>"
        ),
    )
    return tok


def load(doc: dict[str, Any], context: int = 8) -> tuple[Any, tuple[Any, ...]]:
    return kinds.load(
        json.dumps(doc).encode(), name="model/tokenizer.json", kind=KIND, context=context
    )


@pytest.mark.parametrize("make", [wordpiece, bpe, bytelevel_bpe, unigram])
def test_replay_gives_the_runners_tensors(make: Any, tmp_path: Any) -> None:
    path = tmp_path / "tokenizer.json"
    make().save(str(path))
    runner = RunnerTokenizer(path, 8, tuple(TENSORS))
    tok, faults = kinds.load(path.read_bytes(), name="model/tokenizer.json", kind=KIND, context=8)
    assert faults == () and tok is not None and tok.context == 8
    got = tok.encode(TEXTS)
    want = runner.encode(TEXTS)
    for name, tensor in zip(TENSORS, want, strict=True):
        assert got[name].dtype.name == "int64"
        assert got[name].tolist() == tensor.tolist(), name
    # the context limit is the contract's, special tokens included; padding is masked
    assert got["input_ids"].shape[1] <= 8
    assert got["attention_mask"].sum(axis=1).tolist() == [min(n, 8) for n in runner.lengths(TEXTS)]


def test_the_files_own_truncation_and_padding_are_replaced(tmp_path: Any) -> None:
    tok = wordpiece()
    tok.enable_truncation(max_length=3)
    tok.enable_padding(pad_id=1, pad_token="[UNK]", length=40)
    doc = json.loads(tok.to_str())
    replayed, faults = load(doc, context=6)
    assert faults == ()
    out = replayed.encode([TEXTS[1], ""])
    assert out["input_ids"].shape == (2, 6)  # the contract's context, padded to the longest
    assert out["attention_mask"].tolist() == [[1] * 6, [1, 1, 0, 0, 0, 0]]
    assert out["input_ids"][1].tolist()[2:] == [1] * 4  # the file's pad id, masked out


def _fault(doc: dict[str, Any]) -> str:
    tok, faults = load(doc)
    assert tok is None and faults, "the file was accepted"
    return faults[0].message


def test_a_regular_expression_is_refused() -> None:
    tok = wordpiece()
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"(a+)+$"), behavior="isolated")
    assert "regular expression" in _fault(json.loads(tok.to_str()))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.normalizer = normalizers.Sequence([normalizers.Replace(Regex(r"\s+"), " ")])
    assert "regular expression" in _fault(json.loads(tok.to_str()))


def test_unknown_components_and_dropout_are_refused() -> None:
    doc = json.loads(wordpiece().to_str())
    assert "not one replay applies" in _fault({**doc, "normalizer": {"type": "Script"}})
    assert "not one replay applies" in _fault(
        {
            **doc,
            "pre_tokenizer": {
                "type": "Sequence",
                "pretokenizers": [{"type": "Whitespace"}, {"type": "Custom"}],
            },
        }
    )
    assert "not one replay applies" in _fault({**doc, "post_processor": {"type": "Python"}})
    deep: dict[str, Any] = {"type": "Lowercase"}
    for _ in range(tokenizer_hf.MAX_NESTING + 1):
        deep = {"type": "Sequence", "normalizers": [deep]}
    assert "deeper" in _fault({**doc, "normalizer": deep})
    b = json.loads(bpe().to_str())
    b["model"]["dropout"] = 0.1
    assert "dropout" in _fault(b)
    assert "WordPiece" in _fault({**doc, "model": {**doc["model"], "type": "Python"}})


def test_vocabulary_limits_and_repeats_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = json.loads(wordpiece().to_str())
    vocab = doc["model"]["vocab"]
    monkeypatch.setattr(tokenizer_base, "MAX_VOCAB", len(vocab) - 1)
    assert "at most" in _fault(doc)
    monkeypatch.undo()
    long = {**vocab, "x" * (tokenizer_base.MAX_ENTRY_CHARS + 1): len(vocab)}
    assert "characters long" in _fault({**doc, "model": {**doc["model"], "vocab": long}})
    twice = {**vocab, "another": 0}
    assert "repeats the id 0" in _fault({**doc, "model": {**doc["model"], "vocab": twice}})
    u = json.loads(unigram().to_str())
    u["model"]["vocab"].append(list(u["model"]["vocab"][3]))
    assert "repeats entry 3" in _fault(u)
    b = json.loads(bpe().to_str())
    b["model"]["merges"].append(["a", "b", "c"])
    assert "merge" in _fault(b)
    added = doc["added_tokens"] + [dict(doc["added_tokens"][0])]
    assert "repeats" in _fault({**doc, "added_tokens": added})


def test_file_size_and_json_faults(monkeypatch: pytest.MonkeyPatch) -> None:
    data = wordpiece().to_str().encode()
    monkeypatch.setattr(kinds, "MAX_BYTES", len(data) - 1)
    tok, faults = kinds.load(data, name="t.json", kind=KIND, context=8)
    assert tok is None and faults[0].kind == "limit"
    monkeypatch.undo()
    tok, faults = kinds.load(
        b'{"model": {"type": "BPE", "vocab": {}, "vocab": {}}}', name="t.json", kind=KIND, context=8
    )
    assert tok is None and "twice" in faults[0].message
    tok, faults = kinds.load(b"[]", name="t.json", kind=KIND, context=8)
    assert tok is None and faults


def test_without_the_tokenizers_library_it_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def no_tokenizers(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "tokenizers":
            raise ImportError("No module named 'tokenizers'")
        return real(name, *args, **kwargs)

    doc = json.loads(wordpiece().to_str())
    monkeypatch.setattr(builtins, "__import__", no_tokenizers)
    assert "gpubench-audit[hf]" in _fault(doc)


_WORDPIECE = json.loads(wordpiece().to_str())
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300) | st.floats(-1, 1) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# found by this test: a WordPiece vocabulary without its [UNK] builds, then fails to encode
@example(section="model", key="vocab", value={})
@given(
    section=st.sampled_from(
        [
            "normalizer",
            "pre_tokenizer",
            "post_processor",
            "model",
            "added_tokens",
            "padding",
            "truncation",
        ]
    ),
    key=st.sampled_from(
        [
            "type",
            "vocab",
            "merges",
            "pattern",
            "normalizers",
            "pretokenizers",
            "processors",
            "content",
            "id",
            "pad_id",
        ]
    ),
    value=_JSON,
)
def test_any_edit_is_a_tokenizer_or_a_finding_never_a_crash(
    section: str, key: str, value: Any
) -> None:
    doc = json.loads(json.dumps(_WORDPIECE))
    part = doc.get(section)
    if isinstance(part, dict):
        part[key] = value
    elif isinstance(part, list) and part:
        part[0] = {**part[0], key: value} if isinstance(part[0], dict) else value
    else:
        doc[section] = {key: value}
    tok, faults = load(doc)
    assert (tok is None) == bool(faults)
    if tok is not None:
        out = tok.encode(TEXTS)
        assert out["input_ids"].shape[0] == len(TEXTS) and out["input_ids"].shape[1] <= 8
