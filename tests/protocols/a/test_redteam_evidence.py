"""Red-team round on protocol A, issue 31 ("whose evidence is it"): every revision, hash and
count the run states is recomputed from its files, and a field a verdict reads is required
by its schema. Each lie is told with every other file made consistent (re-hashed), and
raises the one rule that recomputes it; its honest twin, told the same way, stays accepted.
Notes written in the seeds' languages (Portuguese, French) and English get the warnings an
English note gets; notes that say nothing of the kind get none."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import runfactory as rf
from runfactory import edit_json, edit_rows

from auditor.engine import run_check

TOKENIZER = "model/tokenizer.json"


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("redteam-evidence")
    return {
        "cpu": rf.make_clean_run(base / "cpu"),
        "trained": rf.make_clean_run(base / "trained", trained=True),
    }


def _sha(root: Path, rel: str) -> str:
    return "sha256:" + hashlib.sha256((root / rel).read_bytes()).hexdigest()


def _pin(root: Path, **revisions: str | None) -> None:
    """Set (None: drop) manifest revisions; model and tokenizer in every row too."""

    def change(m: dict) -> None:
        for k, v in revisions.items():
            if v is None:
                m["revisions"].pop(k, None)
            else:
                m["revisions"][k] = v

    edit_json(root, "manifest.json", change, rehash=False)
    cols = {"model": "model_revision", "tokenizer": "tokenizer_revision"}
    edit_rows(
        root,
        lambda rows: [
            r.update({cols[k]: v for k, v in revisions.items() if k in cols}) for r in rows
        ],
    )


# -- revisions: the hash of the file(s) each kind names -----------------------------------


def _model_is_config(root: Path) -> None:
    (root / "model/config.json").write_text('{"id2label": {"0": "negative"}}')
    _pin(root, model=_sha(root, "model/config.json"), config=_sha(root, "model/config.json"))


def _config_pinned(root: Path) -> None:
    (root / "model/config.json").write_text('{"id2label": {"0": "negative"}}')
    _pin(root, config=_sha(root, "model/config.json"))


def _config_unpinned(root: Path) -> None:
    (root / "model/config.json").write_text('{"id2label": {"0": "negative"}}')
    rf.rehash(root)


def _shards(root: Path, keep: int = 2) -> list[str]:
    weights = (root / "model/model.safetensors").read_bytes()
    (root / "model/model.safetensors").unlink()
    names = []
    for i, part in enumerate((weights[:40], weights[40:]), 1):
        if i <= keep:
            name = f"model-{i:05d}-of-00002.safetensors"
            (root / "model" / name).write_bytes(part)
            names.append(name)
    return names


def _sharded(root: Path) -> None:
    names = _shards(root)
    listing = "".join(f"{_sha(root, 'model/' + n)[7:]}  {n}\n" for n in sorted(names))
    _pin(root, model="sha256:" + hashlib.sha256(listing.encode()).hexdigest())


def _sharded_first_only(root: Path) -> None:
    names = _shards(root)
    _pin(root, model=_sha(root, "model/" + names[0]))


def _shard_missing(root: Path) -> None:
    names = _shards(root, keep=1)
    _pin(root, model=_sha(root, "model/" + names[0]))


def _recipe_unpinned(root: Path) -> None:
    _pin(root, recipe=None)


def _no_recipe(root: Path) -> None:
    (root / "model/recipe.json").unlink()
    _pin(root, recipe=None)


def _recipe_other_split(root: Path) -> None:
    edit_json(
        root,
        "model/recipe.json",
        lambda r: r["training_inputs"].update(ids_sha256="0" * 64),
        rehash=False,
    )
    _pin(root, recipe=_sha(root, "model/recipe.json"))


def _recipe_same(root: Path) -> None:
    # rewritten byte for byte in another key order: another hash, the same recipe, re-pinned
    edit_json(root, "model/recipe.json", lambda r: None, rehash=False)
    _pin(root, recipe=_sha(root, "model/recipe.json"))


# -- the archived ONNX model and tokenizer -----------------------------------------------


def _onnx_swapped(root: Path) -> None:
    (root / "model/model.onnx").write_bytes(b"another export altogether")
    rf.rehash(root)


def _onnx_swapped_and_declared(root: Path) -> None:
    """The honest twin: a re-export declared as such (the replay section says its hash)."""
    (root / "model/model.onnx").write_bytes(b"another export altogether")
    edit_json(
        root,
        "manifest.json",
        lambda m: m["replay"]["model"].update(sha256=_sha(root, "model/model.onnx")[7:]),
    )


def _onnx_absent(root: Path) -> None:
    (root / "model/model.onnx").unlink()
    rf.rehash(root)


def _tokenizer_declared_wrong(root: Path) -> None:
    edit_json(root, "manifest.json", lambda m: m["replay"]["tokenizer"].update(sha256="0" * 64))


# -- truncation -------------------------------------------------------------------------


def _truncated(n: int) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        edit_json(
            root, "manifest.json", lambda m: m["corpus"]["truncation"].update(truncated_texts=n)
        )

    return change


def _context_64(root: Path) -> None:
    """A tokenizer whose file states another context than the run's: it cannot count."""
    edit_json(root, TOKENIZER, lambda t: t.update(context=64), rehash=False)
    sha = _sha(root, TOKENIZER)
    edit_json(
        root,
        "manifest.json",
        lambda m: m["replay"]["tokenizer"].update(sha256=sha[7:]),
        rehash=False,
    )
    _pin(root, tokenizer=sha)


LIES: dict[str, tuple[str, Callable[[Path], None], str, str]] = {
    "model revision = the tokenizer's hash": (
        "cpu",
        lambda r: _pin(r, model=_sha(r, TOKENIZER)),
        "A0106",
        "A1.2",
    ),
    "model revision = the config's hash": ("cpu", _model_is_config, "A0106", "A1.2"),
    "config kept, not pinned": ("cpu", _config_unpinned, "A0106", "A1.2"),
    "one shard of two pinned": ("cpu", _sharded_first_only, "A0106", "A1.2"),
    "a shard missing": ("cpu", _shard_missing, "A0106", "A1.2"),
    "recipe kept, not pinned": ("trained", _recipe_unpinned, "A0106", "A1.2"),
    "trained weights, no recipe": ("trained", _no_recipe, "A0108", "A1.2"),
    "recipe of another train split": ("trained", _recipe_other_split, "A0108", "A1.2"),
    "ONNX export swapped": ("trained", _onnx_swapped, "A0107", "A1.2"),
    "ONNX export absent": ("trained", _onnx_absent, "A0107", "A1.2"),
    "tokenizer hash declared wrong": ("trained", _tokenizer_declared_wrong, "A0107", "A1.2"),
    "0 truncated declared, 2 cut": ("trained", _truncated(0), "A0307", "A3.3"),
    "1 truncated declared, 2 cut": ("trained", _truncated(1), "A0307", "A3.3"),
}

HONEST: dict[str, tuple[str, Callable[[Path], None]]] = {
    "config kept and pinned": ("cpu", _config_pinned),
    "every shard pinned together": ("cpu", _sharded),
    "the recipe re-written, re-pinned": ("trained", _recipe_same),
    "a re-export declared": ("trained", _onnx_swapped_and_declared),
    "2 truncated declared, 2 cut": ("trained", _truncated(2)),
}


@pytest.mark.parametrize("name", sorted(LIES))
def test_a_consistent_lie_is_rejected(
    templates: dict[str, Path], tmp_path: Path, name: str
) -> None:
    flavour, lie, code, ref = LIES[name]
    root = tmp_path / "run"
    shutil.copytree(templates[flavour], root)
    lie(root)
    result = run_check(root)
    errors = {(f.code, f.protocol_ref) for f in result.findings if f.severity == "error"}
    assert result.verdict == "rejected" and (code, ref) in errors, errors
    assert {c for c, _ in errors} == {code}, errors


@pytest.mark.parametrize("name", sorted(HONEST))
def test_the_honest_twin_is_accepted(templates: dict[str, Path], tmp_path: Path, name: str) -> None:
    flavour, change = HONEST[name]
    root = tmp_path / "run"
    shutil.copytree(templates[flavour], root)
    change(root)
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]
    assert [f for f in result.findings if f.severity != "info"] == []


def test_a_tokenizer_that_cannot_count_is_a_warning(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "run"
    shutil.copytree(templates["trained"], root)
    _context_64(root)
    result = run_check(root)
    assert [(f.code, f.severity) for f in result.findings] == [("A0307", "warning")]
    assert "context limit 64" in result.findings[0].message


def test_undeclared_truncation_is_about_a3_3(templates: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(templates["trained"], root)
    edit_json(root, "manifest.json", lambda m: m["corpus"].pop("truncation"))
    found = [f for f in run_check(root).findings if f.code == "A0001"]
    assert [(f.protocol_ref, f.pointer) for f in found] == [("A3.3", "/corpus")]
    assert "'truncation' is a required property" in found[0].message


# -- a field a verdict reads is required, and constrained, by its schema -------------------

PLACEMENT = "evidence/placement/batch-1/cold-1.json"
TRACE = "traces/memory/batch-1/cold-1.json"

FIELD_LIES: dict[str, tuple[str, Callable[[dict], None], str, str]] = {
    # a missing property is reported on the object that lacks it (the root: ""), and cited
    # under the rule of the pointer it would have had (/pid: A6.5)
    "a placement without its pid": (PLACEMENT, lambda d: d.pop("pid"), "A6.5", ""),
    "a parameter device that is no device": (
        PLACEMENT,
        lambda d: d["parameter_devices"].update({"the big gpu": 1}),
        "A4.2",
        "/parameter_devices",
    ),
    "an input device that is no device": (
        PLACEMENT,
        lambda d: d.update(input_devices={"GPU0": 8}),
        "A4.2",
        "/input_devices",
    ),
    "a free-text memory unit": (
        TRACE,
        lambda d: d["other_sources"][0].update(unit="megs"),
        "A7.5",
        "/other_sources/0/unit",
    ),
}

FIELD_HONEST: dict[str, tuple[str, Callable[[dict], None]]] = {
    "parameters on cpu and an unused cuda:1 count of 0": (
        PLACEMENT,
        lambda d: d["parameter_devices"].update({"cuda:1": 0}),
    ),
    "a memory unit in KiB": (
        TRACE,
        lambda d: d["other_sources"][0].update(
            unit="KiB", value=d["other_sources"][0]["value"] // 1024
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(FIELD_LIES))
def test_a_field_a_verdict_reads_is_required(
    templates: dict[str, Path], tmp_path: Path, name: str
) -> None:
    rel, change, ref, pointer = FIELD_LIES[name]
    root = tmp_path / "run"
    shutil.copytree(templates["cpu"], root)
    edit_json(root, rel, change)
    errors = [f for f in run_check(root).findings if f.severity == "error"]
    assert [(f.code, f.artifact, f.protocol_ref) for f in errors] == [("A0002", rel, ref)]
    assert errors[0].pointer == pointer


@pytest.mark.parametrize("name", sorted(FIELD_HONEST))
def test_a_constrained_field_used_well_is_accepted(
    templates: dict[str, Path], tmp_path: Path, name: str
) -> None:
    rel, change = FIELD_HONEST[name]
    root = tmp_path / "run"
    shutil.copytree(templates["cpu"], root)
    edit_json(root, rel, change)
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]
