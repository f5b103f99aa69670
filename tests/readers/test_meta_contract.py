"""A reader family's `meta` is a contract, like its frame: the keys protocols read are
documented beside the frame schema (`meta` in schemas/*.frame.json) and typed in the
family's `_frame` module (`PowerMeta`, `PlacementMeta`); every reader writes them with the
documented JSON types, and no protocol module reads a key that is not documented (so no
protocol branches on a key only one reader happens to write)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import schemas
from auditor.readers import evidence_kinds
from auditor.readers.identity import Identity
from auditor.readers.placement._frame import PlacementMeta
from auditor.readers.power._frame import PowerMeta

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FAMILIES = {"power": ("power_samples", PowerMeta), "placement": ("placement_nodes", PlacementMeta)}
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
    # not JSON: what a reader hands the protocols as typed Python values
    "identity": (Identity,),
    "frame": (pl.DataFrame,),
}

ORT_RECORD = {
    "format": "ort-placement/1",
    "policy_id": "cuda",
    "requested_providers": ["CUDAExecutionProvider", "CPUExecutionProvider"],
    "active_providers": ["CPUExecutionProvider"],
    "source": "graph_assignment_info",
    "profile_file": "p.json",
    "nodes": [{"name": "/fc/Gemm", "op_type": "Gemm", "provider": "CPUExecutionProvider"}],
}
TORCH_RECORD = {
    "format": "torch-placement/1",
    "policy_id": "cuda",
    "requested_device": "cuda",
    "parameters": {"cuda:0": 1},
    "buffers": {},
    "ops": [{"name": "aten::mm", "device_type": "cuda", "count": 3}],
    "dispatched_ops": [{"name": "aten::mm", "devices": "cuda:0", "count": 3}],
}


def _documented(kind: str) -> dict[str, list[str]]:
    return {m["name"]: m["type"] for m in schemas.frame(kind)["meta"]}


def _files() -> list[tuple[str, bytes]]:
    """Real files of every tool the readers' tests hold, and our runner's records."""
    found = [
        (p.name, p.read_bytes())
        for p in sorted(HERE.rglob("*"))
        if p.is_file() and p.suffix in (".json", ".jsonl", ".csv", ".txt", ".xml", ".log", ".plist")
    ]
    found += [
        ("cuda.ort.json", json.dumps(ORT_RECORD).encode()),
        ("cuda.torch.json", json.dumps(TORCH_RECORD).encode()),
    ]
    return found


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_typed_meta_is_the_documented_meta(family: str) -> None:
    kind, typed = FAMILIES[family]
    documented = _documented(kind)
    assert set(typed.__annotations__) == set(documented)
    assert all(set(t) <= set(JSON_TYPES) and m for m, t in documented.items())


def test_every_reader_writes_the_documented_keys_with_their_types() -> None:
    seen: dict[str, set[str]] = {"power": set(), "placement": set()}
    for name, data in _files():
        reader, read = evidence_kinds.read(data, name)
        if reader is None:
            continue
        documented = _documented(FAMILIES[reader.family][0])
        for key, value in read.meta.items():
            if key in documented:
                seen[reader.family].add(reader.name)
                assert isinstance(
                    value, tuple(t for j in documented[key] for t in JSON_TYPES[j])
                ), (name, key, value)
                assert not (isinstance(value, bool) and "boolean" not in documented[key]), (
                    name,
                    key,
                    value,
                )
    # the check saw every reader of both families write some of the contract
    every = {r.name for r in evidence_kinds.readers()}
    assert seen["power"] | seen["placement"] == every


_READ = re.compile(
    r"""meta(?:\.get\(|\[)\s*["']([a-z_]+)["']"""
    r"""|_text\(\w*\.?meta, ["']([a-z_]+)["']"""
)


def _keys_read(path: Path) -> set[str]:
    return {a or b for a, b in _READ.findall(path.read_text(encoding="utf-8"))}


def test_no_protocol_reads_an_undocumented_meta_key() -> None:
    documented = set(_documented("power_samples")) | set(_documented("placement_nodes"))
    read: dict[str, set[str]] = {}
    for path in sorted((ROOT / "auditor" / "protocols").rglob("*.py")):
        if keys := _keys_read(path) - documented:
            read[str(path.relative_to(ROOT))] = keys
    assert read == {}
    # the scan sees what the placement facts read
    assert {"runtime", "session_provider", "fallback_reason", "profile_file"} <= _keys_read(
        ROOT / "auditor" / "protocols" / "b" / "facts" / "placement_files.py"
    )


def test_what_the_placement_facts_read_comes_from_the_records() -> None:
    """The runtime, session provider, session record and fallback of a file come from its
    reader, whichever it is: a Windows ML record names the first three, an ORT record its
    provider and how it fell back."""
    winml = next((HERE / "windows_ml").glob("example.winml.json")).read_bytes()
    _, w = evidence_kinds.read(winml, "example.winml.json")
    _, o = evidence_kinds.read(json.dumps(ORT_RECORD).encode(), "cuda.ort.json")
    _, t = evidence_kinds.read(json.dumps(TORCH_RECORD).encode(), "cuda.torch.json")
    meta: dict[str, Any] = dict(w.meta)
    assert meta["runtime"] == "windows-ml" and meta["session_recorded"] is True
    assert meta["session_provider"] == meta["assigned"][0]["execution_provider"]
    assert o.meta["session_provider"] == "CPUExecutionProvider"
    assert o.meta["fallback_reason"] == (
        "ORT fell back: CUDAExecutionProvider was requested, CPUExecutionProvider is active."
    )
    assert "runtime" not in o.meta and "session_recorded" not in o.meta
    assert t.meta["runtime"] == "torch"
