"""The A7 memory path on CUDA, exercised with a fake `torch.cuda` namespace (no GPU here),
the CPU path, placement evidence, and `runner memory-probe`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from click.testing import CliRunner

import schemas
from runner.a import memory
from runner.a import probe as probe_mod
from runner.a.memory import MemoryProbe, placement
from runner.a.passes import PassSpec, run_pass
from runner.cli import cli
from runner.workloads.base import Workload


class FakeCuda:
    """Records every call; the allocator grows while 'work' happens between begin and end."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.allocated, self.reserved = 1_000, 2_048
        self.peak_allocated, self.peak_reserved = 5_000, 8_192

    def _log(self, name: str, device: Any) -> None:
        self.calls.append(name)
        assert str(device) == "cuda:0"

    def synchronize(self, device: Any = None) -> None:
        self._log("synchronize", device)

    def memory_allocated(self, device: Any = None) -> int:
        self._log("memory_allocated", device)
        return self.allocated

    def memory_reserved(self, device: Any = None) -> int:
        self._log("memory_reserved", device)
        return self.reserved

    def memory_stats(self, device: Any = None) -> dict[str, Any]:
        self._log("memory_stats", device)
        return {
            "allocated_bytes.all.current": self.allocated,
            "num_ooms": 0,
            "reserved_bytes.all.peak": self.peak_reserved,
        }

    def reset_peak_memory_stats(self, device: Any = None) -> None:
        self._log("reset_peak_memory_stats", device)

    def max_memory_allocated(self, device: Any = None) -> int:
        self._log("max_memory_allocated", device)
        return self.peak_allocated

    def max_memory_reserved(self, device: Any = None) -> int:
        self._log("max_memory_reserved", device)
        return self.peak_reserved

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 2

    def current_device(self) -> int:
        return 0

    def get_device_properties(self, index: int) -> Any:
        return SimpleNamespace(name="Fake H200", uuid=f"GPU-fake-{index}", total_memory=141 * 2**30)


def test_cuda_path_order_values_and_trace_schema() -> None:
    fake = FakeCuda()
    probe = MemoryProbe("cuda:0", cuda=fake)
    probe.begin()
    fake.calls.append("-- pass --")
    probe.end()
    assert fake.calls == [
        "synchronize",
        "memory_allocated",
        "memory_reserved",
        "memory_stats",
        "reset_peak_memory_stats",
        "-- pass --",
        "synchronize",
        "max_memory_allocated",
        "max_memory_reserved",
        "memory_stats",
    ]
    assert probe.cells() == {
        "baseline_allocated_bytes": 1_000,
        "baseline_reserved_bytes": 2_048,
        "peak_allocated_bytes": 5_000,
        "peak_reserved_bytes": 8_192,
    }
    trace = probe.trace("batch-1", "warm", 3)
    schemas.validator("memory_trace").validate(trace)
    assert trace["allocator_measured"] and trace["synchronized"] and trace["peak_stats_reset"]
    assert trace["memory_stats_before"]["allocated_bytes.all.current"] == 1_000


def test_cpu_path_leaves_cells_empty_and_names_rss() -> None:
    probe = MemoryProbe("cpu")
    probe.begin()
    probe.end()
    assert set(probe.cells().values()) == {None}
    trace = probe.trace("batch-1", "cold", 1)
    schemas.validator("memory_trace").validate(trace)
    assert not trace["allocator_measured"]
    (rss,) = trace["other_sources"]
    assert rss["name"] == "process_peak_rss_bytes" and rss["value"] > 1_000_000
    assert "VmHWM" in rss["source"] or "ru_maxrss" in rss["source"]


def test_placement_counts_gpus_from_where_tensors_lived() -> None:
    fake = FakeCuda()
    params = [SimpleNamespace(device=torch.device("cuda:0"))] * 3
    place = placement("batch-1", "warm", 1, 42, "cuda:0", params, {"cuda:0": 10}, cuda=fake)
    schemas.validator("placement").validate(place)
    assert place["gpus_used"] == [
        {"index": 0, "name": "Fake H200", "uuid": "GPU-fake-0", "total_memory_bytes": 141 * 2**30}
    ]
    assert place["gpus_visible"] == 2  # visible is not used: one GPU held everything
    cpu = placement("batch-1", "warm", 1, 42, "cpu", [torch.zeros(1)], {"cpu": 4})
    assert cpu["gpus_used"] == [] and cpu["parameter_devices"] == {"cpu": 1}


class _Echo(Workload):
    def classify(self, texts: list[str], batch: int) -> list[str]:
        self.note_input(torch.zeros(len(texts)))
        return ["x"] * len(texts)

    def parameters(self) -> Any:
        return [torch.zeros(2)]

    def token_lengths(self, texts: list[str]) -> list[int]:
        return [1] * len(texts)


def test_run_pass_on_fake_cuda_fills_the_four_cells(tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus/eval-inputs.jsonl").write_text(
        '{"id": "a", "text": "t"}\n{"id": "b", "text": "u"}\n'
    )
    fake = FakeCuda()
    rec = run_pass(
        _Echo(),
        PassSpec(0, "batch-1", "warm", 1, 1, "cuda:0", "full_chain"),
        tmp_path,
        fresh_process=False,
        cuda=fake,
    )
    assert rec["cells"]["peak_reserved_bytes"] == 8_192
    assert rec["entry"]["status"] == "ok" and rec["answers"] == 2
    assert fake.calls.count("synchronize") == 2


def test_memory_probe_on_cpu_says_allocator_cannot_be_measured() -> None:
    result = CliRunner().invoke(cli, ["memory-probe", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "cannot be measured on CPU" in result.output
    assert "process_peak_rss_bytes" in result.output


def test_memory_probe_cuda_report_with_fake(monkeypatch: Any) -> None:
    fake = FakeCuda()
    monkeypatch.setattr(probe_mod, "resolve_device", lambda _d: "cuda:0")
    monkeypatch.setattr(probe_mod, "synthetic_step", lambda _d: fake.calls.append("mlp"))
    lines = list(probe_mod.probe("cuda", cuda=fake))
    assert "peak_allocated_bytes: 5000" in lines
    assert sum(line.startswith("ok  ") for line in lines) == 4
    assert fake.calls.index("reset_peak_memory_stats") < fake.calls.index("mlp")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_fresh_process_peak_rss_is_its_own_not_the_parents() -> None:
    """ru_maxrss in a forked-then-exec'd child starts from the parent's high-water mark; the
    figure a cold pass records must be the fresh process's own."""
    ballast = bytearray(1 << 30)  # 1 GiB, touched: the parent's RSS high-water mark rises
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    parent, _ = memory.peak_rss()
    out = subprocess.run(
        [sys.executable, "-c", "from runner.a.memory import peak_rss; print(peak_rss()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    del ballast
    assert int(out) < parent - (512 << 20)
