"""Benchmark the vectorized evidence readers against a bare polars read of the same bytes.

Generates, from real fixture rows repeated with advancing timestamps (tests/readers/fixtures):

- a one-hour 1 Hz HWiNFO log (the Dell Precision rows: 451 columns, cp1252, footer kept),
  3,600 rows;
- a one-hour 10 Hz `nvidia-smi --query-gpu` CSV (the VirtualClient H100 row, 39 fields),
  36,000 rows;
- a one-hour 10 Hz runner NVML trace (JSONL: a POWER_INSTANT sample and an energy counter
  reading per poll), 72,000 lines;
- a one-hour 1 Hz powermetrics text log (CodeCarbon's real sample blocks, M1, with their
  processor sections), 3,600 samples;
- a one-hour 1 Hz nvidia-smi dmon log of eight GPUs (the H200 capture's rows, one per GPU
  per poll, the header repeated every 10 polls as dmon does), 28,800 rows;

then times, on the same bytes, the reader (`read`: decoding, every check, the normalized
frame with intervals) and the floor: a bare `polars.read_csv` (`read_ndjson` for JSON lines)
of the same bytes, with only the options it needs not to fail: HWiNFO's cp1252 bytes, ragged
footer and repeated header need `encoding="utf8-lossy", truncate_ragged_lines=True,
infer_schema=False`; the text logs are read as one column of lines (a separator and quote
that never occur). Each time is the minimum of --repeat rounds, the reader and its floor
run in turn in each round (the same load on a shared machine); the ratio is reader / floor,
PASS when it is within `AIM` (3x), MISS otherwise.

    python bench/readers_bench.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from auditor.readers.power import (  # noqa: E402
    hwinfo,
    nvidia_smi_csv,
    nvidia_smi_dmon,
    powermetrics_text,
    runner_jsonl,
)

FIXTURES = ROOT / "tests" / "readers" / "fixtures"
HOUR = 3600
AIM = 3.0
"""Each reader should take at most this many times a bare polars read of the same bytes."""


def hwinfo_log(hz: int = 1) -> bytes:
    lines = (
        (FIXTURES / "hwinfo/hwinfo-tui_sensors_DellPrecision5570_head50.csv")
        .read_bytes()
        .decode("cp1252")
        .split("\n")
    )
    header, rows, footer = lines[0], lines[1:51], lines[51:53]
    t0 = datetime(2025, 8, 13, 13, 0, 0)
    out = [header]
    for i in range(HOUR * hz):
        t = t0 + timedelta(seconds=i / hz)
        cells = rows[i % len(rows)].split(",")
        cells[0] = f"{t.day}.{t.month}.{t.year}"
        cells[1] = f"{t.hour}:{t.minute}:{t.second}.{t.microsecond // 1000}"
        out.append(",".join(cells))
    return ("\n".join([*out, *footer]) + "\n").encode("cp1252")


def nvidia_smi_log(hz: int = 10) -> bytes:
    header, row = (
        (FIXTURES / "nvidia-smi/VirtualClient_query-gpu-1xH100.csv").read_text().split("\n")[:2]
    )
    t0 = datetime(2024, 3, 15, 13, 0, 0)
    rest = row.split(", ", 1)[1]
    out = [header]
    for i in range(HOUR * hz):
        t = t0 + timedelta(seconds=i / hz)
        out.append(f"{t:%Y/%m/%d %H:%M:%S}.{t.microsecond // 1000:03d}, {rest}")
    return ("\n".join(out) + "\n").encode()


def runner_trace(hz: int = 10) -> bytes:
    t0 = datetime(2025, 3, 1, 10, 0, 0)
    out = []
    for i in range(HOUR * hz):
        t = (t0 + timedelta(seconds=i / hz)).isoformat(timespec="microseconds") + "Z"
        out.append(
            json.dumps(
                {
                    "kind": "sample",
                    "t": t,
                    "t_source": "nvml",
                    "source": "nvml",
                    "domain": "gpu",
                    "device": 0,
                    "field": "POWER_INSTANT",
                    "watts": 70.0 + (i % 7),
                }
            )
        )
        out.append(
            json.dumps(
                {
                    "kind": "counter",
                    "t": t,
                    "source": "nvml",
                    "domain": "gpu",
                    "device": 0,
                    "field": "nvmlDeviceGetTotalEnergyConsumption",
                    "value": 10**6 + 7 * i,
                    "unit": "mJ",
                    "max_range": None,
                }
            )
        )
    return ("\n".join(out) + "\n").encode()


def powermetrics_log(hz: int = 1) -> bytes:
    text = (
        FIXTURES / "powermetrics/text/codecarbon_powermetrics_log_macbookair10-1_i100.txt"
    ).read_text()
    head, _, rest = text.partition("\n\n\n\n")
    blocks = [b for b in rest.split("*** Sampled system activity") if b.strip()]
    t0 = datetime(2023, 11, 10, 12, 0, 0)
    out = [head + "\n\n\n"]
    for i in range(HOUR * hz):
        t = t0 + timedelta(seconds=i / hz)
        body = blocks[i % len(blocks)].split("***", 1)[1]
        out.append(
            f"\n*** Sampled system activity ({t:%a %b %d %H:%M:%S %Y} +0100) "
            f"({1000 / hz:.2f}ms elapsed) ***{body.rstrip()}\n\n"
        )
    return "".join(out).encode()


def dmon_log(gpus: int = 8) -> bytes:
    lines = (FIXTURES / "nvidia-smi/dmon_load_h200_590.48.01.txt").read_text().split("\n")
    rows = lines[2:7]
    out = []
    for poll in range(HOUR):
        if poll % 10 == 0:
            out += lines[:2]
        out += [f"{g:5d}" + rows[(poll + g) % 5][5:] for g in range(gpus)]
    return ("\n".join(out) + "\n").encode()


def lines_floor(data: bytes) -> object:
    return pl.read_csv(
        data, has_header=False, separator="\x1f", quote_char=None, infer_schema=False
    )


def best_of(fns: list[Callable[[], object]], repeat: int) -> list[float]:
    """The minimum time of each of FNS over REPEAT rounds, the FNS run in turn within each
    round, so the reader and its floor see the same load on a shared machine."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, spent in zip(fns, times, strict=True):
            t = time.perf_counter()
            fn()
            spent.append(time.perf_counter() - t)
    return [min(t) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    cases = [
        (
            "HWiNFO 1 h @ 1 Hz",
            hwinfo_log(),
            hwinfo.read,
            lambda d: pl.read_csv(
                d, encoding="utf8-lossy", truncate_ragged_lines=True, infer_schema=False
            ),
        ),
        (
            "nvidia-smi CSV 1 h @ 10 Hz",
            nvidia_smi_log(),
            nvidia_smi_csv.read,
            lambda d: pl.read_csv(d),
        ),
        (
            "runner NVML JSONL 1 h @ 10 Hz",
            runner_trace(),
            runner_jsonl.read,
            lambda d: pl.read_ndjson(d),
        ),
        ("powermetrics text 1 h @ 1 Hz", powermetrics_log(), powermetrics_text.read, lines_floor),
        ("nvidia-smi dmon 1 h @ 1 Hz", dmon_log(), nvidia_smi_dmon.read, lines_floor),
    ]
    print(
        f"{'log':32} {'MB':>6} {'rows':>7} {'reader s':>9} {'polars s':>9} {'ratio':>6}  "
        f"aim {AIM:g}x"
    )
    for label, data, reader, floor in cases:
        result = reader(data, name=label, local_utc_offset="+00:00")
        assert result.value is not None and not result.errors, result.faults[:3]
        t_reader, t_floor = best_of(
            [
                lambda d=data, r=reader: r(d, name="b", local_utc_offset="+00:00"),
                lambda d=data, f=floor: f(d),
            ],
            args.repeat,
        )
        ratio = t_reader / t_floor
        print(
            f"{label:32} {len(data) / 1e6:6.1f} {result.value.height:7,} {t_reader:9.3f} "
            f"{t_floor:9.3f} {ratio:6.1f}  {'PASS' if ratio <= AIM else 'MISS'}"
        )


if __name__ == "__main__":
    main()
