"""No reader passes on a non-finite, negative or absurd figure: a real file of each format
with one reading replaced by a 400-digit number (or a negative one, or inf) gives a `type` or
`units` fault naming the line, and a frame whose every watt, joule and cost is finite, not
negative and plausible, so a window's energy can never become infinite from one bad
sample. Each case edits one value of a real fixture (said in its id)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from auditor.readers import evidence_kinds
from auditor.readers.power._frame import MAX_WATTS

FIXTURES = Path(__file__).parent / "fixtures"
BIG = "9" * 400


def text(rel: str, enc: str = "utf-8") -> str:
    return (FIXTURES / rel).read_bytes().decode(enc)


def _hwinfo(value: str) -> str:
    lines = text("hwinfo/hwInfoAnalyzer_test_Ryzen9950X3D.csv").split("\n")
    cells = lines[2].split(",")
    cells[261] = value  # CPU Package Power [W], line 3
    lines[2] = ",".join(cells)
    return "\n".join(lines)


def _csv(value: str) -> str:
    lines = text("nvidia-smi/VirtualClient_query-gpu-8xH100.csv").split("\n")
    header = [c.strip() for c in lines[0].split(",")]
    cells = lines[1].split(", ")
    cells[header.index("power.draw.average [W]")] = value  # line 2
    lines[1] = ", ".join(cells)
    return "\n".join(lines)


def _jsonl(value: object) -> str:
    rec = [
        {
            "kind": "sample",
            "t": f"2025-03-01T10:00:0{i}.000000Z",
            "t_source": "nvml",
            "source": "nvml",
            "domain": "gpu",
            "device": 0,
            "field": "POWER_INSTANT",
            "watts": w,
        }
        for i, w in enumerate([70.0, value, 71.0])
    ]
    return "\n".join(json.dumps(r) for r in rec) + "\n"


def _torch() -> str:
    return json.dumps(
        {
            "format": "torch-placement/1",
            "policy_id": "cuda",
            "requested_device": "cuda",
            "parameters": {"cuda:0": 1},
            "buffers": {"cpu": 1},
            "ops": [],
            "tensors": [
                {"name": "w", "kind": "parameter", "device": "cuda:0", "numel": int(BIG)},
                {"name": "b", "kind": "buffer", "device": "cpu", "numel": 10},
            ],
        }
    )


PLIST = text("powermetrics/plist/pumas_powermetrics-output-m1.plist")
CASES = {
    "powermetrics-text 400 digits": (
        text("powermetrics/text/power-server_sonoma-m1max.txt").replace(
            "CPU Power: 211 mW", f"CPU Power: {BIG} mW"
        ),
        175,
    ),
    "powermetrics-plist power 400 digits": (
        re.sub(r"(<key>cpu_power</key>\s*<real>)[^<]*", r"\g<1>" + BIG, PLIST),
        1,
    ),
    "powermetrics-plist energy 400-digit integer": (
        re.sub(r"(<key>cpu_energy</key>\s*<integer>)[^<]*", r"\g<1>" + BIG, PLIST),
        1,
    ),
    "powermetrics-plist negative energy": (
        re.sub(r"(<key>cpu_energy</key>\s*<integer>)[^<]*", r"\g<1>-89", PLIST),
        1,
    ),
    "hwinfo 400 digits": (_hwinfo(BIG), 3),
    "hwinfo negative": (_hwinfo("-5.0"), 3),
    "nvidia-smi-csv inf": (_csv("inf"), 2),
    "nvidia-smi-csv 400 digits": (_csv(BIG + " W"), 2),
    "nvidia-smi-xml 400 digits": (
        text("nvidia-smi/telegraf_q-x_tesla-t4-v11.xml").replace("26.78 W", BIG + " W"),
        170,
    ),
    "nvidia-smi-q 400 digits": (
        re.sub(
            r"(Average Power Draw\s+: )[\d.]+",
            r"\g<1>" + BIG,
            text("nvidia-smi/q_load_h100-80gb_590.48.01.txt"),
            count=1,
        ),
        None,
    ),
    "nvidia-smi-dmon 400 digits": (
        re.sub(
            r"^(\s+0\s+)\d+",
            r"\g<1>" + BIG,
            text("nvidia-smi/dmon_load_h100-80gb_590.48.01.txt"),
            count=1,
            flags=re.M,
        ),
        3,
    ),
    "runner-jsonl absurd": (_jsonl(1e9), 2),
    "onnxruntime-profile 400-digit duration": (
        re.sub(
            r'"dur" :\d+',
            '"dur" :' + BIG,
            text("onnxruntime-profile/quadric-onnxruntime_1gpnpu_2025-01-31_02-41-47.json"),
            count=5,
        ),
        None,
    ),
    "torch-record 400-digit numel": (_torch(), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_figure_is_a_fault_never_a_row(case):
    data, line = CASES[case]
    reader, read = evidence_kinds.read(data.encode(), case, local_utc_offset="+00:00")
    assert reader is not None and read.value is not None, read.faults
    bad = [f for f in read.faults if f.kind in ("type", "units")]
    assert bad, read.faults
    if line is not None:
        assert any(f.line == line for f in bad)
    frame = read.value
    cols = ["watts", "energy_j"] if reader.family == "power" else ["cost"]
    for col in cols:
        v = frame[col].drop_nulls()
        assert v.is_finite().all() and (v >= 0).all(), (case, col)
    if reader.family == "power":
        assert (frame["watts"].drop_nulls() <= MAX_WATTS).all()
        assert frame.select(pl.col("energy_j").sum()).item() < 1e9
