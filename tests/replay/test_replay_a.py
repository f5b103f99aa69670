"""`audit replay` on a real protocol A run: the clean run replays at 100%; a forgery made
consistent in every file (outputs, CSV claims, set check, manifest re-hashed) passes `audit
check` and is rejected by replay alone; an archive that is not the declared one, or not
plain ONNX and data, is refused before anything runs; a broken tokenizer is a finding."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import damage
import onnx
import pytest
import runfactory as rf
from replay_helpers import copy, redeclare

import schemas
from auditor.engine import run_check
from auditor.errors import AuditorError
from auditor.replay import tokenizer_base, tokenizers
from auditor.replay.core import replay

ONNX = "model/model.onnx"
TOKENIZER = "model/tokenizer.json"


def codes(result: object) -> list[str]:
    return [f.code for f in result.findings]  # type: ignore[attr-defined]


def audit_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from auditor.cli import main; main()", *args],
        capture_output=True,
        text=True,
    )


def test_clean_run_replays_with_full_agreement(run_a: Path) -> None:
    result = replay(run_a, sample_size=1000)
    assert result.verdict == "accepted" and result.findings == ()
    assert len(result.files) == 18  # 3 variants x (1 cold + 5 warm)
    assert {a.status for a in result.files} == {"met"}
    assert all(a.agreed == a.compared == 40 and a.threshold.exact for a in result.files)
    assert result.sample is not None and result.sample.population == 40
    assert result.model is not None and "CPUExecutionProvider" in result.model["runtime"]


def test_cli_json_validates_and_exit_codes(run_a: Path, tmp_path: Path) -> None:
    proc = audit_cli("replay", str(run_a), "--sample", "25", "--seed", "7", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert list(schemas.validator("replay_result").iter_errors(doc)) == []
    assert doc["sample"]["seed"] == 7 and doc["sample"]["seed_source"] == "--seed"
    assert doc["sample"]["drawn"] == 25 and doc["verdict"] == "accepted"
    text = audit_cli("replay", str(run_a), "--sample", "5")
    assert text.returncode == 0 and "replay accepted" in text.stdout
    assert "not the run's `audit check` verdict" in text.stdout
    assert audit_cli("replay", str(run_a), "--sample", "0").returncode == 2
    assert audit_cli("replay", str(tmp_path)).returncode == 2  # not a run directory


def test_sample_is_seeded_and_recorded(run_a: Path, tmp_path: Path) -> None:
    one, two = replay(run_a, sample_size=10), replay(run_a, sample_size=10)
    assert one.sample == two.sample and one.sample is not None
    assert (
        one.sample.seed_source.startswith("default:")
        and one.manifest_sha256 in one.sample.seed_source
    )
    other = replay(run_a, sample_size=10, seed=123)
    assert other.sample is not None and other.sample.seed == 123
    assert other.sample.ids != one.sample.ids
    # another manifest, another default sample: the submitter cannot know it in advance
    root = copy(run_a, tmp_path)
    manifest = rf.read_json(root, "manifest.json")
    manifest["notes"] += " (re-declared)"
    rf.write_json(root, "manifest.json", manifest)
    moved = replay(root, sample_size=10)
    assert moved.sample is not None and moved.sample.seed != one.sample.seed


def forge(root: Path) -> set[str]:
    """The forgery the issue names, made consistent in every file: in every output file the
    wrong answers become the reference labels (a better score) and the answers of two IDs
    of different classes are swapped; the CSV claims and the set check are re-derived from
    the outputs and every hash re-declared. Returns the IDs whose answers changed."""
    refs = {r["id"]: r["label"] for r in rf.read_jsonl(root, "corpus/references.jsonl")}
    first = {o["id"]: o["label"] for o in rf.read_jsonl(root, "outputs/batch-1/cold-1.jsonl")}
    a = next(i for i in sorted(first) if first[i] == refs[i])
    b = next(i for i in sorted(first) if first[i] == refs[i] and first[i] != first[a])
    forged = {i: refs[i] for i in first if first[i] != refs[i]} | {a: first[b], b: first[a]}
    for path in sorted(root.glob("outputs/*/*.jsonl")):
        rel = path.relative_to(root).as_posix()
        lines = rf.read_jsonl(root, rel)
        for line in lines:
            line["label"] = forged.get(line["id"], line["label"])
        rf.write_jsonl(root, rel, lines)
    rf.recompute_claims(root)
    return set(forged)


def test_consistent_forgery_passes_check_and_is_rejected_by_replay(
    run_a: Path, tmp_path: Path
) -> None:
    root = copy(run_a, tmp_path)
    forged = forge(root)
    assert len(forged) >= 2
    checked = run_check(root)
    assert checked.verdict == "accepted", [f.to_json() for f in checked.findings]
    assert replay(run_a).verdict == "accepted"
    result = replay(root)
    assert result.verdict == "rejected" and result.exit_code == 1
    assert set(codes(result)) == {"RA06"} and len(result.findings) == 18
    f = result.findings[0]
    assert f.protocol_ref == "A2.5" and f.evidence["expected"] == 1.0
    for a in result.files:
        assert a.status == "failed" and {d.id for d in a.disagreements} == forged
        assert all(d.margin is not None and d.margin > 0 and not d.tie for d in a.disagreements)


def test_model_other_than_declared_is_refused_before_running(run_a: Path, tmp_path: Path) -> None:
    root = copy(run_a, tmp_path)
    data = bytearray((root / ONNX).read_bytes())
    data[-1] ^= 1
    (root / ONNX).write_bytes(bytes(data))
    result = replay(root)
    assert codes(result) == ["RA02", "RA02"]  # the replay section's hash and the artifacts'
    assert result.model is None and result.sample is None and result.files == ()
    assert all("nothing was run" in f.message for f in result.findings)


def _edit_model(root: Path, edit: object) -> None:
    model = onnx.load_model_from_string((root / ONNX).read_bytes())
    edit(model)  # type: ignore[operator]
    (root / ONNX).write_bytes(model.SerializeToString())
    redeclare(root)


def test_redeclared_other_model_fails_agreement(run_a: Path, tmp_path: Path) -> None:
    """A valid ONNX model, declared with its own hash everywhere, that is not the one that
    answered: the run's answers are not its answers."""
    root = copy(run_a, tmp_path)

    def bias(model: onnx.ModelProto) -> None:
        init = next(t for t in model.graph.initializer if t.name == "head.bias")
        values = onnx.numpy_helper.to_array(init).copy()
        values[0] += 50.0  # the first class wins everywhere
        init.CopyFrom(onnx.numpy_helper.from_array(values, init.name))

    _edit_model(root, bias)
    result = replay(root, sample_size=40)
    assert set(codes(result)) == {"RA06"} and result.verdict == "rejected"


def test_custom_domain_node_is_refused(run_a: Path, tmp_path: Path) -> None:
    root = copy(run_a, tmp_path)

    def custom(model: onnx.ModelProto) -> None:
        model.opset_import.append(onnx.helper.make_opsetid("com.example.custom", 1))
        out = model.graph.output[0].name
        last = next(n for n in model.graph.node if out in n.output)
        last.output[list(last.output).index(out)] = "pre_custom"
        model.graph.node.append(
            onnx.helper.make_node("Steal", ["pre_custom"], [out], domain="com.example.custom")
        )

    _edit_model(root, custom)
    result = replay(root)
    assert codes(result) == ["RA04"] and result.model is None
    assert "custom domain" in result.findings[0].message


def test_external_data_is_refused(run_a: Path, tmp_path: Path) -> None:
    root = copy(run_a, tmp_path)

    def external(model: onnx.ModelProto) -> None:
        init = next(t for t in model.graph.initializer if t.name == "head.bias")
        init.data_location = onnx.TensorProto.EXTERNAL
        entry = init.external_data.add()
        entry.key, entry.value = "location", "../../../etc/passwd"

    _edit_model(root, external)
    result = replay(root)
    assert codes(result) == ["RA04"] and "external file" in result.findings[0].message


def _edit_tokenizer(root: Path, data: bytes) -> None:
    (root / TOKENIZER).write_bytes(data)
    redeclare(root)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'{"kind": "bow-words-pairs/1", "vocab": ["a"', "line 1"),
        (b"[1, 2, 3]", "not a JSON object"),
        (json.dumps({"kind": "sentencepiece/2"}).encode(), "not the manifest's"),
    ],
)
def test_malformed_tokenizer_is_a_finding(
    run_a: Path, tmp_path: Path, data: bytes, words: str
) -> None:
    root = copy(run_a, tmp_path)
    _edit_tokenizer(root, data)
    result = replay(root)
    assert set(codes(result)) == {"RA03"} and result.model is None
    assert result.findings[0].artifact == TOKENIZER


def test_tokenizer_limits_and_rules_are_findings(
    run_a: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy(run_a, tmp_path)
    doc = rf.read_json(root, TOKENIZER)
    for change, words in (
        ({"vocab": [*doc["vocab"], doc["vocab"][0]]}, "repeats entry"),
        ({"vocab": [*doc["vocab"], "x" * 300]}, "characters long"),
        ({"word_pattern": "(a+)+$"}, "does not match"),
        ({"context": doc["context"] + 1}, "context limit"),
    ):
        _edit_tokenizer(root, json.dumps({**doc, **change}).encode())
        result = replay(root)
        assert codes(result) == ["RA03"], (change.keys(), codes(result))
        assert words in result.findings[0].message
    _edit_tokenizer(root, json.dumps(doc).encode())
    monkeypatch.setattr(tokenizers, "MAX_BYTES", 100)
    result = replay(root)
    assert (
        codes(result) == ["RA03"]
        and "parses such an artifact up to 100" in result.findings[0].message
    )
    monkeypatch.setattr(tokenizers, "MAX_BYTES", 64 << 20)
    monkeypatch.setattr(tokenizer_base, "MAX_VOCAB", 10)
    result = replay(root)
    assert codes(result) == ["RA03"] and "at most 10" in result.findings[0].message


def test_unknown_tokenizer_kind_in_the_manifest(run_a: Path, tmp_path: Path) -> None:
    root = copy(run_a, tmp_path)
    manifest = rf.read_json(root, "manifest.json")
    manifest["replay"]["tokenizer"]["kind"] = "wordpiece/9"
    rf.write_json(root, "manifest.json", manifest)
    result = replay(root)
    assert (
        codes(result) == ["RA03"] and "not one the auditor implements" in result.findings[0].message
    )


def test_run_without_replay_section_is_incomplete(run_a: Path, tmp_path: Path) -> None:
    root = copy(run_a, tmp_path)
    manifest = rf.read_json(root, "manifest.json")
    del manifest["replay"]
    manifest["replay_unavailable"] = "the workload offers no tensor form"
    rf.write_json(root, "manifest.json", manifest)
    result = replay(root)
    assert codes(result) == ["RA01"] and result.verdict == "incomplete"
    assert (
        result.exit_code == 1 and "the workload offers no tensor form" in result.findings[0].message
    )
    manifest["replay"] = {"model": {}}
    rf.write_json(root, "manifest.json", manifest)
    broken = replay(root)
    assert set(codes(broken)) == {"RA01"} and broken.verdict == "rejected"


def test_missing_inputs_and_unreadable_answers(run_a: Path, tmp_path: Path) -> None:
    root = copy(run_a, tmp_path)
    (root / "outputs/batch-1/warm-2.jsonl").write_text('{"id": "eval-0000", "label": \n')
    result = replay(root, sample_size=40)
    assert codes(result) == ["RA05"] and result.findings[0].line == 1
    (root / "corpus/eval-inputs.jsonl").unlink()
    result = replay(root)
    assert codes(result) == ["RA05"] and result.verdict == "incomplete"


def test_runner_tokenizer_file_matches_its_schema(run_a: Path) -> None:
    doc = rf.read_json(run_a, TOKENIZER)
    assert list(schemas.validator("tokenizer_bow").iter_errors(doc)) == []
    manifest = rf.read_json(run_a, "manifest.json")
    assert list(schemas.validator("replay_contract").iter_errors(manifest["replay"])) == []
    assert manifest["replay"]["tokenizer"]["sha256"] == manifest["revisions"][
        "tokenizer"
    ].removeprefix("sha256:")


REPLAY_READS = (
    ONNX,
    TOKENIZER,
    "corpus/eval-inputs.jsonl",
    "outputs/batch-4/warm-3.jsonl",
    "manifest.json",
)


@pytest.mark.parametrize("seed", range(40))
def test_damage_never_crashes_replay(run_a: Path, tmp_path: Path, seed: int) -> None:
    """Any damage to a file replay reads (re-declared as the submitter may, so the deeper
    steps see it) is a finding or bad usage, never an exception."""
    rng = random.Random(seed)
    root = copy(run_a, tmp_path)
    rel = REPLAY_READS[seed % len(REPLAY_READS)]
    op = rng.choice(sorted(damage._BYTE_OPS))
    (root / rel).write_bytes(damage._BYTE_OPS[op]((root / rel).read_bytes(), rng))
    if rel != "manifest.json":
        redeclare(root)
    try:
        result = replay(root)
    except AuditorError:
        assert rel == "manifest.json", (rel, op)  # a manifest that cannot be read: usage
        return
    assert result.verdict in ("accepted", "rejected", "incomplete"), (rel, op)
    json.dumps(result.to_json())
