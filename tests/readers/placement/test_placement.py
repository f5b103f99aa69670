"""Placement readers and `placement_shares`: the seed's example, the ONNX Runtime profiles
and Core ML files of fixtures/ with figures read off the files, our runner's records and the
Windows ML record, malformed variants, and generated inputs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schemas
from auditor.readers.placement import (
    _frame,
    coreml_compute_plan,
    coreml_profiling_csv,
    coreml_profiling_text,
    onnxruntime_profile,
    ort_record,
    torch_record,
    windows_ml,
)

ORT = "onnxruntime-profile/"
CML = "coreml/"
WINML = Path(__file__).parents[1] / "windows_ml"


def test_seed_example_shares():
    """Seed 004: 150 of 165 operations with placement information on the Neural Engine
    (90.91%) and 59.71% of estimated cost; unplaced operations count in neither."""
    rows = (
        [{"node": f"a{i}", "device": "ane", "cost": 59.71 / 150} for i in range(150)]
        + [{"node": f"c{i}", "device": "cpu", "cost": 40.29 / 15} for i in range(15)]
        + [{"node": f"u{i}", "device": "unknown", "cost": 7.0} for i in range(9)]
    )
    s = _frame.placement_shares(_frame.from_rows(rows), {"ane"})
    assert (s["ops_with_placement"], s["ops_on_accelerator"], s["nodes"]) == (165, 150, 174)
    assert round(s["operation_share"] * 100, 2) == 90.91
    assert round(s["cost_share"] * 100, 2) == 59.71
    assert s["cpu_node_share"] == pytest.approx(15 / 165)
    assert s["by_device"] == {"cpu": 15, "ane": 150, "unknown": 9}


def test_shares_without_costs_or_placement():
    s = _frame.placement_shares(_frame.from_rows([{"node": "x", "device": "unknown"}]))
    assert s["operation_share"] is None and s["cost_share"] is None
    s = _frame.placement_shares(_frame.from_rows([{"node": "x", "device": "gpu"}]))
    assert s["operation_share"] == 1.0 and s["cost_share"] is None
    assert s["placed_without_cost"] == 1


@pytest.mark.parametrize(
    ("provider", "device"),
    [
        ("CPUExecutionProvider", "cpu"),
        ("CUDAExecutionProvider", "gpu"),
        ("QNNExecutionProvider", "npu"),
        ("OpenVINOExecutionProvider", "unknown"),
        ("MLNeuralEngineComputeDevice", "ane"),
        ("bnns", "cpu"),
        ("classic_cpu", "cpu"),
        ("mps_graph", "gpu"),
        ("cuda:1", "gpu"),
        ("NPU", "npu"),
        (None, "unknown"),
        ("", "unknown"),
        ("SomethingNew", "unknown"),
    ],
)
def test_device_table(provider, device):
    assert _frame.device_of(provider) == device


def test_ort_profile_with_fences(fixture_bytes, well_formed):
    name = "quadric-onnxruntime_1gpnpu_2025-01-31_02-41-47.json"
    r = onnxruntime_profile.read(fixture_bytes(ORT + name), name=name)
    well_formed(r, name, "placement")
    f = r.value
    # 235 events: 4 Session, 77 x (fence_before, kernel_time, fence_after); all on the CPU EP
    assert f.height == 77 and set(f["provider"]) == {"CPUExecutionProvider"}
    assert (r.meta["session_events"], r.meta["fence_events"], r.meta["model_runs"]) == (4, 154, 1)
    assert f.row(0) == (
        "input_QuantizeLinear",
        "QuantizeLinear",
        "cpu",
        "CPUExecutionProvider",
        1278.0,
        5,
    )
    assert f["node"][-1] == "output_DequantizeLinear"
    assert f["cost"].sum() == 326302.0
    assert f.filter(pl.col("op_type") == "QLinearConv").height == 53
    assert not r.faults


def test_ort_profile_cut_upstream(fixture_bytes, fault_kinds):
    name = "quadric-onnxruntime_4cpu_2025-01-29_23-03-39_head.json"
    r = onnxruntime_profile.read(fixture_bytes(ORT + name), name=name)
    # 391 events kept: 2 Session, 130 kernel_time (the last node has no fence_after)
    assert r.value.height == 130 and r.meta["fence_events"] == 259
    assert r.value.row(0)[:2] == ("input.1_QuantizeLinear", "QuantizeLinear")
    assert r.value.row(0)[4:] == (192.0, 5)
    assert fault_kinds(r) == [("warning", "truncated", None)]


def _event(name, provider=None, op="Conv", dur=10, index=None, cat="Node"):
    args = {"op_name": op} if op else {}
    if provider:
        args["provider"] = provider
    if index is not None:
        args["node_index"] = str(index)
    return {
        "cat": cat,
        "pid": 1,
        "tid": 1,
        "dur": dur,
        "ts": 5,
        "ph": "X",
        "name": name,
        "args": args,
    }


def _profile(events):
    return ("[\n" + ",\n".join(json.dumps(e) for e in events) + "\n]\n").encode()


def test_ort_profile_variants(fault_kinds):
    # newer ORT: no fences; two runs of each node; names with dots, spaces and quotes
    events = [
        _event('enc.0 "attn" q_kernel_time', "CUDAExecutionProvider", "MatMul", 10, 0),
        _event("Shape 1_kernel_time", "CPUExecutionProvider", "Shape", 1, 1),
        _event('enc.0 "attn" q_kernel_time', "CUDAExecutionProvider", "MatMul", 12, 0),
        _event("Shape 1_kernel_time", "CPUExecutionProvider", "Shape", 2, 1),
        _event("model_run", cat="Session", op=None),
    ]
    r = onnxruntime_profile.read(_profile(events), name="p.json")
    assert r.value.rows() == [
        ('enc.0 "attn" q', "MatMul", "gpu", "CUDAExecutionProvider", 22.0, 2),
        ("Shape 1", "Shape", "cpu", "CPUExecutionProvider", 3.0, 3),
    ]
    assert r.meta["kernel_events_per_node_max"] == 2 and not r.meta["fence_events_present"]
    # very old ORT: no provider -> unknown, never CPU
    old = onnxruntime_profile.read(
        _profile([_event("a_kernel_time"), _event("model_run", cat="Session", op=None)]),
        name="old.json",
    )
    assert old.value["device"].to_list() == ["unknown"]
    assert [f.kind for f in old.errors] == ["empty"]
    # the {"traceEvents": [...]} form, re-indented: read as one document, without lines
    doc = json.dumps({"traceEvents": events}, indent=2).encode()
    r2 = onnxruntime_profile.read(doc, name="t.json")
    assert r2.value["line"].null_count() == 2 and r2.value["cost"].to_list() == [22.0, 3.0]


def test_ort_profile_cut_mid_event(fixture_bytes, fault_kinds):
    data = fixture_bytes(ORT + "quadric-onnxruntime_1gpnpu_2025-01-31_02-41-47.json")
    lines = data.split(b"\n")
    cut = b"\n".join(lines[:100]) + b"\n" + lines[100][:50]
    r = onnxruntime_profile.read(cut, name="cut.json")
    assert ("error", "syntax", 101) in fault_kinds(r)
    assert ("warning", "truncated", 101) in fault_kinds(r)
    # kernel events are on lines 5, 8, 11, ... (every third line from 5): 32 before line 101
    assert r.value.height == 32


def test_ort_record(well_formed):
    record = {
        "format": "ort-placement/1",
        "policy_id": "cuda",
        "requested_providers": ["CUDAExecutionProvider", "CPUExecutionProvider"],
        "active_providers": ["CPUExecutionProvider"],
        "source": "graph_assignment_info",
        "nodes": [
            {"name": "/embed/Gather", "op_type": "Gather", "provider": "CPUExecutionProvider"},
            {"name": "", "op_type": "Cast", "provider": None},
            {"name": "/fc/Gemm", "op_type": "Gemm", "provider": "CPUExecutionProvider"},
            {"name": "bad"},
        ],
    }
    r = ort_record.read(json.dumps(record).encode(), name="cuda.ort.json")
    well_formed(r, "cuda.ort.json", "placement")
    assert r.value["device"].to_list() == ["cpu", "unknown", "cpu"]
    assert r.meta["fallback"] is True and "fell back" in r.meta["notes"][0]
    assert [(f.kind, f.pointer) for f in r.faults] == [
        ("schema", "/nodes/3"),
        ("schema", "/nodes/3"),
    ]
    none = {**record, "source": "none", "nodes": []}
    assert ort_record.read(json.dumps(none).encode(), name="n.json").value is None


def test_torch_record():
    record = {
        "format": "torch-placement/1",
        "policy_id": "cuda",
        "requested_device": "cuda",
        "parameters": {"cuda:0": 2},
        "buffers": {"cpu": 1},
        "tensors": [
            {"name": "emb.weight", "kind": "parameter", "device": "cuda:0", "numel": 3000},
            {"name": "fc.weight", "kind": "parameter", "device": "cuda:0", "numel": 600},
            {"name": "offsets", "kind": "buffer", "device": "cpu", "numel": 400},
        ],
        "ops": [
            {"name": "aten::embedding_bag", "device_type": "cpu", "count": 10},
            {"name": "embedding_bag_kernel", "device_type": "cuda", "count": 10, "is_kernel": True},
        ],
    }
    schemas.validator("torch_placement").validate(record)
    r = torch_record.read(json.dumps(record).encode(), name="t.json")
    s = _frame.placement_shares(r.value)
    assert (s["ops_with_placement"], s["ops_on_accelerator"], s["cost_share"]) == (3, 2, 0.9)
    assert r.meta["kernels_by_device"] == {"cuda": 10}
    assert r.meta["ops_by_device"] == {"cpu": 10, "cuda": 10}
    del record["tensors"]
    r = torch_record.read(json.dumps(record).encode(), name="t.json")
    assert r.value["device"].to_list() == ["gpu", "gpu", "cpu"]
    assert r.value["cost"].null_count() == 3


def test_windows_ml_examples(well_formed):
    for path in WINML.glob("*.winml.json"):
        schemas.validator("windows_ml_placement").validate(json.loads(path.read_text()))
    r = windows_ml.read((WINML / "example.winml.json").read_bytes(), name="e.json")
    well_formed(r, "e.json", "placement")
    assert r.value["device"].to_list() == ["cpu", "npu", "cpu", "unknown"]
    assert r.meta["granularity"] == "node" and r.meta["selection"]["policy"] == "MAX_EFFICIENCY"
    assert _frame.placement_shares(r.value)["operation_share"] == pytest.approx(1 / 3)
    m = windows_ml.read((WINML / "model-level.winml.json").read_bytes(), name="m.json")
    assert m.value.rows() == [("", None, "cpu", "CPUExecutionProvider", None, None)]
    assert m.meta["granularity"] == "model"
    assert any("AOT compilation failed" in n for n in m.meta["notes"])
    assert any("Only CPU" in n for n in m.meta["notes"])


def test_json_records_refuse_garbage(fault_kinds):
    for reader in (ort_record, torch_record, windows_ml):
        r = reader.read(b'{"format": ', name="x.json")
        assert r.value is None and r.errors[0].kind == "syntax"
        r = reader.read(b"[1, 2]", name="x.json")
        assert r.value is None and r.errors[0].kind == "schema"


def test_coreml_compute_plan_excerpt(fixture_bytes, well_formed, fault_kinds):
    name = "coreml_modelc_profling_README_MLComputePlan_excerpt.log"
    r = coreml_compute_plan.read(fixture_bytes(CML + name), name=name)
    well_formed(r, name, "placement")
    f = r.value
    # lines 3-15: 3 operations on MLCPUComputeDevice (mul, add, cast), 10 on the Neural Engine
    assert f["line"].to_list() == list(range(3, 16))
    assert f["device"].to_list() == ["cpu"] * 3 + ["ane"] * 10
    assert f.row(0) == (
        "ios17.mul",
        "ios17.mul",
        "cpu",
        "MLCPUComputeDevice",
        pytest.approx(0.046175),
        3,
    )
    s = _frame.placement_shares(f, {"ane"})
    assert (s["ops_with_placement"], s["ops_on_accelerator"]) == (13, 10)
    # ANE costs 0.5662+2.4627+4.5811+2.9749+2.4627+0.6614+3.0671+2.4627+0.6614+1.8685 = 21.7687
    # of 21.7687 + 4.6175+3.6490+2.2767 = 32.3119 (percent)
    assert s["cost_share"] == pytest.approx(21.7687 / 32.3119)
    assert fault_kinds(r) == [("warning", "truncated", 16)]


def test_coreml_profiling_csv(fixture_bytes, well_formed):
    name = "coreml_modelc_profling_without_compute_plan_2.csv"
    r = coreml_profiling_csv.read(fixture_bytes(CML + name), name=name)
    well_formed(r, name, "placement")
    f = r.value
    # 119 operations: SelectedBackend "ane" 114, "bnns" 4, "classic_cpu" 1
    assert f.height == 119
    assert dict(f.group_by("provider").len().iter_rows()) == {
        "ane": 114,
        "bnns": 4,
        "classic_cpu": 1,
    }
    # line 2: bnns is backend_1, its est_time_1 0.009895773939055228
    assert f.row(0) == (
        "ios17.tensor_buffer_to_tensor:5:12",
        "ios17.tensor_buffer_to_tensor",
        "cpu",
        "bnns",
        0.009895773939055228,
        2,
    )
    # line 120: classic_cpu is backend_2, est_time_2 9.870924060302019e-05
    assert f.row(-1)[3:] == ("classic_cpu", 9.870924060302019e-05, 120)
    assert not r.faults


def test_coreml_profiling_text(fixture_bytes, well_formed):
    name = "coreml_modelc_profling_without_compute_plan_output.txt"
    r = coreml_profiling_text.read(fixture_bytes(CML + name), name=name)
    well_formed(r, name, "placement")
    f = r.value
    # 119 dictionaries: SelectedBackend "\"ane\"" 114, "\"classic_cpu\"" 5
    assert f.height == 119
    assert dict(f.group_by("device").len().iter_rows()) == {"ane": 114, "cpu": 5}
    assert f.row(0) == ("ios17.conv:107:12", "ios17.conv", "ane", "ane", 0.003661746555695056, 2)
    assert r.meta["model"] == "file:///tmp/MobilenetEdgeTPU.mlmodelc/"
    assert not r.faults


def test_coreml_malformed(fixture_bytes, fault_kinds):
    text = fixture_bytes(CML + "coreml_modelc_profling_without_compute_plan_output.txt")
    cut = text[: text.index(b"ios16.relu:106:12")]
    r = coreml_profiling_text.read(cut, name="cut.txt")
    assert r.value.height == 1 and ("error", "truncated", 36) in fault_kinds(r)
    lines = fixture_bytes(CML + "coreml_modelc_profling_without_compute_plan_2.csv").split(b"\n")
    lines[2] = lines[2][:40]
    lines[3] = lines[3].replace(b'"bnns"', b'""')
    r = coreml_profiling_csv.read(b"\n".join(lines), name="x.csv")
    assert ("error", "truncated", 3) in fault_kinds(r)
    assert r.value.filter(pl.col("line") == 4)["device"].item() == "unknown"
    assert r.value.height == 118


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12),
            st.sampled_from(["ane", "classic_cpu", "mps_graph", "bnns"]),
            st.floats(0, 10, allow_nan=False),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_generated_nslog_dictionaries(ops):
    def q(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    blocks = "".join(
        f"2024-08-03 09:09:29.128 tool[1:2] at /x/analytics.mil:{i}:12, {{\n"
        f"    DebugName = {q(name)};\n    EstimatedRunTime =     {{\n"
        f'        {q(backend)} = "{cost!r}";\n    }};\n'
        f"    OpPath =     (\n                {{\n            Type = Program;\n        }}\n    );\n"
        f"    SelectedBackend = {q(q(backend))};\n}} \n"
        for i, (name, backend, cost) in enumerate(ops)
    )
    r = coreml_profiling_text.read(blocks.encode(), name="g.txt")
    assert r.value["node"].to_list() == [n for n, _, _ in ops]
    assert r.value["provider"].to_list() == [b for _, b, _ in ops]
    assert r.value["cost"].to_list() == pytest.approx([c for _, _, c in ops])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20),
            st.sampled_from(["CUDAExecutionProvider", "CPUExecutionProvider", None]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_generated_ort_names(nodes):
    events = [
        _event(name + "_kernel_time", provider, "Op", 1, i)
        for i, (name, provider) in enumerate(nodes)
    ]
    r = onnxruntime_profile.read(_profile(events), name="g.json")
    assert r.value["node"].to_list() == [n for n, _ in nodes]
    assert r.value["device"].to_list() == [_frame.device_of(p) for _, p in nodes]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["MLCPUComputeDevice", "MLGPUComputeDevice", "MLNeuralEngineComputeDevice"]
            ),
            st.floats(0, 100, allow_nan=False),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_generated_compute_plan_lines(ops):
    text = "".join(
        f"2024-06-13 16:59:10.785 x[1:2] operation ios17.conv, device <{d}: 0x1>, cost {c:.4f}%\n"
        for d, c in ops
    )
    r = coreml_compute_plan.read(text.encode(), name="g.log")
    assert r.value["provider"].to_list() == [d for d, _ in ops]
    assert r.value["cost"].to_list() == pytest.approx([round(c, 4) / 100 for _, c in ops])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["ane", "bnns", "classic_cpu", "mps_graph", ""]),
            st.floats(0, 1, allow_nan=False),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_generated_profiling_csv(ops):
    header = (
        "DebugName, OpType, SelectedBackend, backend_0, backend_1, est_time_0, "
        "est_time_1, invalid_0, invalid_1"
    )
    rows = [
        f'op{i}:1:2, ios17.conv, "{b}", ane, {b or "bnns"}, 0.5, {c!r}, , '
        for i, (b, c) in enumerate(ops)
    ]
    r = coreml_profiling_csv.read("\n".join([header, *rows]).encode(), name="g.csv")
    assert r.value["provider"].to_list() == [b or None for b, _ in ops]
    # the selected backend's est_time: ane is backend_0 (0.5), any other backend_1
    assert r.value["cost"].to_list() == pytest.approx(
        [None if not b else 0.5 if b == "ane" else c for b, c in ops]
    )
