"""The registry and the frame schemas stay honest: every reader module declares itself and
says what it reads; names are unique; both frame schemas are well-formed and are what the
readers build."""

from __future__ import annotations

import polars as pl

import schemas
from auditor.readers import evidence_kinds
from auditor.readers.placement import _frame as placement
from auditor.readers.power import _frame as power


def test_every_reader_declares_itself():
    names = evidence_kinds.names()
    modules = (*evidence_kinds.POWER.modules, *evidence_kinds.PLACEMENT.modules)
    assert len(names) == len(set(names)) == len(modules)
    ranks = [r.rank for r in evidence_kinds.readers()]
    assert len(ranks) == len(set(ranks)), "two readers share a rank: the order is not defined"
    for r in evidence_kinds.readers():
        assert r.doc and len(r.doc) > 200, r.name
        assert r.family in ("power", "placement")
        assert r.extensions and all(e.startswith(".") for e in r.extensions)
        assert callable(r.sniff) and callable(r.read)
        assert r.sniff(b"") is False


def test_frame_schemas():
    allowed = {"datetime", "number", "integer", "string"}
    for kind, built in (("power_samples", power.schema()), ("placement_nodes", placement.schema())):
        doc = schemas.frame(kind)
        assert [f["name"] for f in doc["fields"]] == list(built)
        for f in doc["fields"]:
            assert f["type"] in allowed and f["description"] and isinstance(f["nullable"], bool)
    assert power.schema()["start"] == pl.Datetime("us", "UTC")
    assert list(power.schema()) == [
        "start",
        "end",
        "interval_s",
        "domain",
        "device",
        "watts",
        "energy_j",
        "source",
        "line",
        "kind",
        "role",
        "instrument",
        "includes",
        "rank",
        "averaging_s",
        "wrap_j",
    ]
    assert list(placement.schema()) == ["node", "op_type", "device", "provider", "cost", "line"]
