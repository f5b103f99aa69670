"""Replay's parts on their own: the Wilson interval and the decision per file, the seeded
draw, the tokenizer kind against the runner's own tokenizer, the ONNX session against the
torch model, and the codes' registry (documented, explained, listed, never run by `audit
check`, which imports none of replay's heavy modules)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import schemas
from auditor.protocols import all_rules
from auditor.replay import codes, sample, tokenizers
from auditor.replay import run as onnx_run
from auditor.replay.compare import DEFAULT_FLOOR, Threshold, compare, wilson
from runner.workloads.bow import BagOfWords, Tokenizer

EXACT = Threshold(1.0, "float32 on cpu")
FLOOR = Threshold(DEFAULT_FLOOR, "float16 on cuda:0")


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (200, 200, 0.9812, 1.0),
        (197, 200, 0.9568, 0.9949),
    ],
)
def test_wilson_interval(k: int, n: int, lo: float, hi: float) -> None:
    got = wilson(k, n)
    assert got == pytest.approx((lo, hi), abs=1e-4)


def _agreement(
    n: int, wrong: int, threshold: Threshold, *, margin: float = 1.0, judged: bool = True
):
    ids = [f"id-{i}" for i in range(n)]
    replayed = dict.fromkeys(ids, "a")
    scores = {i: {"a": margin, "b": 0.0} for i in ids}
    answered = {i: ["b" if k < wrong else "a"] for k, i in enumerate(ids)}
    return compare(
        "outputs/v/warm-1.jsonl",
        "pass",
        "v",
        threshold,
        judged,
        None,
        answered,
        ids,
        replayed,
        scores,
    )


def test_decision_per_file() -> None:
    assert _agreement(200, 0, EXACT).status == "met"
    assert _agreement(200, 1, EXACT).status == "failed"
    tie = _agreement(200, 1, EXACT, margin=1e-6)
    assert tie.status == "met" and tie.ties == 1 and tie.disagreements[0].tie
    assert _agreement(200, 1, FLOOR).status == "met"  # 99.5% >= 99%
    assert _agreement(200, 3, FLOOR).status == "inconclusive"  # 98.5%, upper end 99.5%
    assert _agreement(200, 10, FLOOR).status == "failed"  # upper end 97.3% < 99%
    assert _agreement(200, 10, FLOOR, judged=False).status == "not judged"
    empty = compare("f", "pass", None, EXACT, True, None, {}, ["x"], {"x": "a"}, {"x": {"a": 1.0}})
    assert empty.status == "nothing to compare" and empty.missing == 1


def test_every_answer_of_an_id_counts() -> None:
    """A trial answers each ID once per repetition: one wrong repetition is a disagreement."""
    got = compare(
        "outputs/p/trial-1.jsonl",
        "trial",
        "p",
        EXACT,
        True,
        None,
        {"x": ["a", "b", "a"], "y": ["a", "a"]},
        ["x", "y"],
        {"x": "a", "y": "a"},
        {"x": {"a": 2.0, "b": 1.5}, "y": {"a": 1.0, "b": 0}},
    )
    assert (got.compared, got.agreed, got.answers) == (2, 1, 5)
    (d,) = got.disagreements
    assert d.id == "x" and d.answered == ("b",) and d.answers == 1 and d.margin == 0.5


def test_seeded_draw() -> None:
    ids = [f"id-{i}" for i in range(1000)]
    one = sample.draw(ids, 50, 7, "--seed")
    assert one == sample.draw(ids, 50, 7, "--seed")
    assert set(one.ids) == set(sample.draw(reversed(ids), 50, 7, "--seed").ids)
    assert list(one.ids) == [i for i in ids if i in set(one.ids)]  # input order
    assert sample.draw(ids, 50, 8, "--seed").ids != one.ids
    assert len(sample.draw(ids[:10] * 2, 50, 7, "x").ids) == 10
    assert (
        sample.default_seed("ab" * 32)
        == sample.default_seed("ab" * 32)
        != sample.default_seed("cd" * 32)
    )


TEXTS = [
    "",
    "Hello, World! hello world",
    "ÉCOLE école Straße STRASSE",
    "a_b1 _x 9lives x9",
    "word " * 100,
    "the cat\tsat\non the mat",
    "İstanbul ǅemal ﬁne",
    "tabs\t\tand  spaces",
]


def test_tokenizer_kind_matches_the_runner(tmp_path: Path) -> None:
    vocab = sorted({f for t in TEXTS for f in Tokenizer.features(Tokenizer.words(t))})[::2]
    theirs = Tokenizer(vocab, context=7)
    data = json.dumps(theirs.to_json()).encode()
    ours, faults = tokenizers.load(
        data, name="model/tokenizer.json", kind=Tokenizer.KIND, context=7
    )
    assert faults == () and ours is not None
    ids, offsets = theirs.batch(TEXTS)
    got = ours.encode(TEXTS)
    assert got["ids"].tolist() == ids.tolist() and got["offsets"].tolist() == offsets.tolist()


def test_onnx_session_agrees_with_the_torch_model(run_a: Path) -> None:
    """The archived graph, run by replay, gives the labels the runner's workload gives, also
    for texts with no known word (an empty bag)."""
    manifest = json.loads((run_a / "manifest.json").read_text())
    section = manifest["replay"]
    data = (run_a / section["model"]["file"]).read_bytes()
    onnx_run.inspect(data, section["model"])
    tok, _ = tokenizers.load(
        (run_a / section["tokenizer"]["file"]).read_bytes(),
        name="t",
        kind=section["tokenizer"]["kind"],
        context=section["context"],
    )
    assert tok is not None
    texts = [
        json.loads(line)["text"]
        for line in (run_a / "corpus/eval-inputs.jsonl").read_text().splitlines()
    ] + TEXTS
    session = onnx_run.Session.create(data, section["model"])
    scores = session.scores(tok.encode, texts, len(section["labels"]))
    labels = [section["labels"][i] for i in scores.argmax(axis=1)]
    torch.set_num_threads(1)
    workload = BagOfWords().load(run_a / "model", "cpu", "float32", section["context"], {})
    assert labels == workload.classify(texts, len(texts))


def test_replay_codes_are_documented_and_apart_from_check() -> None:
    from auditor import protocol_text

    rules = codes.REPLAY_RULES
    assert [r.code for r in rules] == [f"R{p}0{n}" for p in "AB" for n in range(1, 8)]
    cited = protocol_text.rules()
    assert not {r.code for r in rules} & {r.code for r in all_rules()}
    for r in rules:
        parts = r.info().parts()
        assert all(parts[k] for k in ("what", "why", "example", "reads")), r.code
        assert r.doc.startswith(f"{r.code}: ") and r.fix.endswith(".")
        assert r.protocol_ref in cited
        assert r.protocol_ref in (("A1.4", "A2.5") if r.code[1] == "A" else ("B8",))
        with pytest.raises(TypeError):
            list(r.run(None))


def _audit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from auditor.cli import main; main()", *args],
        capture_output=True,
        text=True,
    )


def test_explain_and_rules_list_replay_codes() -> None:
    proc = _audit("explain", "ra06")
    assert proc.returncode == 0 and proc.stdout.startswith(
        "RA06: answers disagree with the archived model\nprotocol rule A2.5"
    )
    assert "never by `audit check`" in proc.stdout and "What to do:" in proc.stdout
    proc = _audit("explain", "B8")
    assert "RB06" in proc.stdout.split("enforced by:")[1]
    proc = _audit("rules", "--format", "json")
    doc = json.loads(proc.stdout)
    assert list(schemas.validator("audit_rules").iter_errors(doc)) == []
    replayed = [r for r in doc["rules"] if r["command"] == "replay"]
    assert [r["code"] for r in replayed] == [r.code for r in codes.REPLAY_RULES]
    assert {r["protocol"] for r in replayed} == {"accepted-corpus-cost", "residency-energy"}
    text = _audit("rules").stdout
    assert "raised by `audit replay` only:" in text and "RB07" in text


def test_check_never_selects_replay_codes(run_a: Path) -> None:
    proc = _audit("check", str(run_a), "--select", "RA06")
    assert proc.returncode == 2 and "no rule code starts with RA06" in proc.stderr
