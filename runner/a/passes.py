"""One measured pass and one warm-up block: the code both the fresh cold-pass processes
(`runner.a.pass_worker`) and the main process (warm passes) run, so every pass is timed,
measured and written the same way.

The timer covers the declared scope (A5.1): `full_chain` is reading the inputs file,
tokenization, classification and writing the output file; `processing_only` sums the
`classify` calls alone. Memory is measured around the timed region (A7), never inside it.
A failure (out of memory or any exception) ends the pass where it happened: the answers
produced so far stay in the output file, the elapsed time is the time until the failure,
and the status and incident are returned for the timeline (A6.4, A10.3).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from runner.a.memory import MemoryProbe, placement
from runner.records import incident_of, now_iso
from runner.workloads.base import Workload

INPUTS_FILE = "corpus/eval-inputs.jsonl"
# one encoder for every line: json.dumps(..., ensure_ascii=False) would build one per call
_encode = json.JSONEncoder(ensure_ascii=False).encode


@dataclass(frozen=True)
class PassSpec:
    """Which pass to run and where its files go (paths relative to the run dir)."""

    order_index: int
    variant_id: str
    phase: str
    run_index: int
    batch: int
    device: str
    timer_scope: str

    @property
    def stem(self) -> str:
        return f"{self.variant_id}/{self.phase}-{self.run_index}"

    @property
    def output_file(self) -> str:
        return f"outputs/{self.stem}.jsonl"

    @property
    def memory_trace(self) -> str:
        return f"traces/memory/{self.stem}.json"

    @property
    def placement_file(self) -> str:
        return f"evidence/placement/{self.stem}.json"

    def entry(
        self,
        *,
        status: str,
        started_at: str,
        ended_at: str,
        elapsed_seconds: float | None,
        load_seconds: float | None,
        pid: int,
        fresh_process: bool,
        memory_trace: str | None,
        placement: str | None,
        incident: dict[str, Any] | None,
        **more: Any,
    ) -> dict[str, Any]:
        """This pass's timeline entry (schemas/timeline-entry.schema.json): the one shape a
        pass that ran, one whose model did not load and one whose process died all write."""
        return {
            "order_index": self.order_index,
            "variant_id": self.variant_id,
            "phase": self.phase,
            "run_index": self.run_index,
            "status": status,
            "started_at": started_at,
            "ended_at": ended_at,
            "elapsed_seconds": elapsed_seconds,
            "load_seconds": load_seconds,
            "pid": pid,
            "fresh_process": fresh_process,
            "output_file": self.output_file,
            "memory_trace": memory_trace,
            "placement": placement,
            "incident": incident,
            **more,
        }

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def read_inputs(run_dir: Path) -> tuple[list[str], list[str]]:
    ids, texts = [], []
    with open(run_dir / INPUTS_FILE, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            ids.append(row["id"])
            texts.append(row["text"])
    return ids, texts


def run_pass(
    workload: Workload,
    spec: PassSpec,
    run_dir: Path,
    *,
    fresh_process: bool,
    load_seconds: float | None = None,
    cuda: Any | None = None,
) -> dict[str, Any]:
    """Run one pass; write its output, memory trace and placement; return its record:
    `entry` (a timeline entry), `cells` (the four memory cells), `gpus_used`."""
    workload.begin_pass(spec.variant_id, spec.phase, spec.run_index)
    workload.input_devices.clear()
    out_path = run_dir / spec.output_file
    out_path.parent.mkdir(parents=True, exist_ok=True)
    probe = MemoryProbe(spec.device, cuda=cuda)
    full_chain = spec.timer_scope == "full_chain"
    ids: list[str] = []
    texts: list[str] = []
    if not full_chain:
        ids, texts = read_inputs(run_dir)
    incident: dict[str, str] | None = None
    processing = 0.0
    written = 0
    batch = spec.batch
    probe.begin()
    pid = os.getpid()
    # written before the pass and rewritten after it: a process that dies mid-pass still
    # leaves where its parameters lived and its baselines (A4.2, A7), marked unfinished
    unfinished = {
        "finished": False,
        "note": "written before the pass; the process ended before rewriting it",
    }
    _write_json(
        run_dir / spec.memory_trace,
        {**probe.trace(spec.variant_id, spec.phase, spec.run_index), **unfinished},
    )
    _write_json(
        run_dir / spec.placement_file,
        {
            **placement(
                spec.variant_id,
                spec.phase,
                spec.run_index,
                pid,
                spec.device,
                workload.parameters(),
                {},
                cuda=cuda,
            ),
            **unfinished,
        },
    )
    started_at = now_iso()
    t0 = time.perf_counter()
    out = open(out_path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 (closed below)
    try:
        if full_chain:
            ids, texts = read_inputs(run_dir)
        for start in range(0, len(texts), batch):
            chunk = texts[start : start + batch]
            if full_chain:
                labels = workload.classify(chunk, batch)
            else:
                t = time.perf_counter()
                try:
                    labels = workload.classify(chunk, batch)
                finally:  # a failed call counts too: the time until failure
                    processing += time.perf_counter() - t
            out.write(
                "".join(
                    _encode({"id": i, "label": lab}) + "\n"
                    for i, lab in zip(ids[start : start + batch], labels, strict=True)
                )
            )
            written += len(labels)
        out.flush()
    except Exception as exc:  # any failure is an observation: keep the row, go on (A6.4)
        incident = incident_of(exc)
    finally:
        out.close()  # what was produced before a failure stays in the file
        elapsed = time.perf_counter() - t0 if full_chain else processing
        ended_at = now_iso()
    if incident is not None and elapsed <= 0:
        elapsed = time.perf_counter() - t0  # never 0 for a failure (A10.3)
    try:
        probe.end()
    except Exception as exc:  # a broken device after a failure must not lose the row
        incident = incident or incident_of(exc)
    trace = probe.trace(spec.variant_id, spec.phase, spec.run_index)
    place = placement(
        spec.variant_id,
        spec.phase,
        spec.run_index,
        pid,
        spec.device,
        workload.parameters(),
        dict(workload.input_devices),
        cuda=cuda,
    )
    _write_json(run_dir / spec.memory_trace, trace)
    _write_json(run_dir / spec.placement_file, place)
    entry = spec.entry(
        status=incident["kind"] if incident else "ok",
        started_at=started_at,
        ended_at=ended_at,
        elapsed_seconds=elapsed,
        load_seconds=load_seconds,
        pid=pid,
        fresh_process=fresh_process,
        memory_trace=spec.memory_trace,
        placement=spec.placement_file,
        incident=incident,
        torch_threads=torch.get_num_threads(),
    )
    return {
        "entry": entry,
        "cells": probe.cells(),
        "gpus_used": place["gpus_used"],
        "answers": written,
    }


def run_warmup(
    workload: Workload,
    order_index: int,
    variant_id: str,
    batch: int,
    iterations: int,
    texts: list[str],
    *,
    load_seconds: float | None = None,
) -> dict[str, Any]:
    """The announced warm-up of one variant (A6.1): `iterations` batches, untimed as a pass,
    recorded as a timeline entry (never a CSV row)."""
    workload.begin_pass(variant_id, "warmup", 1)
    incident = None
    started_at = now_iso()
    t0 = time.perf_counter()
    done = 0
    try:
        for i in range(iterations):
            start = (i * batch) % max(1, len(texts))
            workload.classify(texts[start : start + batch] or texts[:batch], batch)
            done += 1
    except Exception as exc:
        incident = incident_of(exc)
    elapsed = time.perf_counter() - t0
    return {
        "order_index": order_index,
        "variant_id": variant_id,
        "phase": "warmup",
        "run_index": 1,
        "status": incident["kind"] if incident else "ok",
        "started_at": started_at,
        "ended_at": now_iso(),
        "elapsed_seconds": elapsed,
        "load_seconds": load_seconds,
        "pid": os.getpid(),
        "fresh_process": False,
        "iterations": done,
        "output_file": None,
        "memory_trace": None,
        "placement": None,
        "incident": incident,
        "torch_threads": torch.get_num_threads(),
    }


def _write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n", encoding="utf-8")
