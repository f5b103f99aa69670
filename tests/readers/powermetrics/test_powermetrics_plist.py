"""powermetrics -f plist reader: the three real one-sample files, and a NUL-separated stream.

The stream is SYNTHETIC: no real multi-sample capture was found (SOURCES.md), so the tests
join the real documents with the NUL byte powermetrics writes between samples, and write
extra documents with plistlib from the real structure."""

from __future__ import annotations

import plistlib
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.readers.power import powermetrics_plist as R

P = "powermetrics/plist/"
FILES = [
    "pumas_powermetrics-output-m1.plist",
    "pumas_powermetrics-output-m1-2.plist",
    "pumas_powermetrics-output-m2ultra.plist",
]


def test_m1_sample(fixture_bytes, well_formed):
    r = R.read(fixture_bytes(P + FILES[0]), name=FILES[0])
    well_formed(r, FILES[0], "power")
    f = r.value
    # timestamp 2023-04-01T13:18:36Z, elapsed_ns 2019178750; processor: cpu_power 44.0773 mW,
    # cpu_energy 89 mJ, gpu_power 15.3528 / gpu_energy 31, ane 0 / 0, combined_power 59.4301
    assert f["domain"].to_list() == ["cpu", "gpu", "ane", "combined"]
    assert f["watts"].to_list() == pytest.approx([0.0440773, 0.0153528, 0.0, 0.0594301])
    assert f["energy_j"].to_list()[:3] == pytest.approx([0.089, 0.031, 0.0])
    assert f["energy_j"][3] == pytest.approx(0.0594301 * 2.01917875)
    assert set(f["end"]) == {datetime(2023, 4, 1, 13, 18, 36, tzinfo=UTC)}
    assert set(f["interval_s"]) == {2.01917875}
    assert set(f["line"]) == {1}
    assert r.meta["hw_model"] == "MacBookPro17,1"


def test_m1_2_and_m2ultra(fixture_bytes):
    r = R.read(fixture_bytes(P + FILES[1]), name=FILES[1])
    assert r.value["watts"].to_list() == pytest.approx([0.102663, 0.0190117, 0.0, 0.121675])
    assert set(r.value["interval_s"]) == {0.525992374}
    r = R.read(fixture_bytes(P + FILES[2]), name=FILES[2])
    f = r.value
    assert f["watts"].to_list() == pytest.approx([0.835188, 70.9246, 0.0, 71.7598])
    # processor.gpu_energy 72607 mJ is used; gpu.gpu_energy 73491 differs by 1.2%
    assert f["energy_j"][1] == pytest.approx(72.607)
    assert r.meta["gpu_energy_max_rel_diff"] == pytest.approx((73491 - 72607) / 73491, 1e-4)
    assert r.meta["hw_model"] == "Mac14,14"


def test_nul_separated_stream_with_a_bad_document(fixture_bytes, fault_kinds):
    docs = [fixture_bytes(P + f) for f in FILES[:2]]
    stream = docs[0] + b"\x00" + b"<?xml version='1.0'?><plist><dict><key>x" + b"\x00" + docs[1]
    r = R.read(stream, name="stream.plist")
    assert r.meta["documents"] == 3 and r.meta["samples"] == 2
    first_line = docs[0].count(b"\n") + 1
    assert ("error", "syntax", first_line) in fault_kinds(r)
    assert r.value.height == 8
    assert not [f for f in r.faults if f.kind == "order"]
    # m1-2 (2023-04-02) before m1 (2023-04-01): time goes back at the second document
    r = R.read(docs[1] + b"\x00" + docs[0], name="stream.plist")
    assert ("warning", "order", docs[1].count(b"\n") + 1) in fault_kinds(r)


def test_entity_declarations_are_refused():
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE plist [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;">]><plist><dict><key>k</key><string>&b;</string>'
        b"</dict></plist>"
    )
    r = R.read(bomb, name="bomb.plist")
    assert r.value is None and r.faults[0].kind == "syntax"


def test_document_without_elapsed_is_skipped():
    doc = plistlib.dumps({"timestamp": datetime(2024, 1, 1), "processor": {"cpu_power": 5.0}})
    r = R.read(doc, name="x.plist")
    assert r.value is None
    assert any(f.kind == "schema" and f.field == "elapsed_ns" for f in r.faults)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1e6), st.integers(1, 10**10)), min_size=1, max_size=5))
def test_generated_streams(samples):
    docs = [
        plistlib.dumps(
            {
                "timestamp": datetime(2024, 1, 1, 0, 0, i),
                "elapsed_ns": ns,
                "processor": {"cpu_power": mw, "cpu_energy": int(mw * ns / 1e9)},
            }
        )
        for i, (mw, ns) in enumerate(samples)
    ]
    r = R.read(b"\x00".join(docs), name="gen.plist")
    assert r.value["watts"].to_list() == pytest.approx([mw / 1000 for mw, _ in samples])
    assert r.value["interval_s"].to_list() == pytest.approx([ns / 1e9 for _, ns in samples])
