"""Protocol B run dirs for the tests, written file by file as a harness would write them
(RUN_DIR.md's fixed names, docs/run-dir-residency.md's extras, every document per its schema),
with no dependency on `runner` or `auditor`.

`build(root, spec)` writes a run from a `Spec`: the fixed sequence, references, the reference
artifact's answers, every trial's answers with their latencies, one power trace per trial (our
runner's NVML/RAPL JSONL written from known constant powers, or a real tool's file given by
the spec), placement files, trials.csv and policies.csv with the figures a harness computes
from what it measured (its own small implementation of the protocol's conventions: nearest
rank p95, energy = power x time, pooled sums), gates, environment and the manifest with the
SHA-256 of every file. `synthetic(root)` is the clean run with energy: a CPU-only baseline
and two CUDA policies (torch and ONNX Runtime) measured with NVML and RAPL counters, which the
protocol accepts. Helpers edit a built run and re-seal it (`rehash`) so only the rule under
test can catch a mutation.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
CLASSES = ("billing", "bug", "feature", "praise")
INTERVAL = 0.05
TRIALS_COLUMNS = (
    "experiment_id",
    "policy_id",
    "role",
    "trial_index",
    "order_position",
    "prompt_sequence_sha256",
    "warmup_iterations",
    "inferences",
    "started_at",
    "ended_at",
    "wall_seconds",
    "p95_latency_ms",
    "average_power_w",
    "energy_j",
    "joules_per_inference",
    "power_source",
    "power_mode",
    "energy_source",
    "status",
    "notes",
)
POLICIES_COLUMNS = (
    "experiment_id",
    "policy_id",
    "role",
    "runtime",
    "compute_units",
    "model_tier",
    "trials",
    "median_wall_seconds",
    "p95_latency_ms",
    "average_power_w",
    "joules_per_inference",
    "accuracy",
    "agreement",
    "operation_share",
    "operation_share_floor",
    "estimated_cost_share",
    "verdict",
    "notes",
)


def iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="microseconds")


def num(x: float | None, digits: int = 6) -> str:
    return "" if x is None else repr(round(x, digits))


def nearest_rank(values: Sequence[float], q: float = 0.95) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(q * len(ordered)) - 1]


@dataclass
class Window:
    """One trial as scheduled: its window and what the harness measured over it."""

    policy_id: str
    trial_index: int
    position: int
    start: datetime
    wall_s: float
    labels: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    energy_j: float | None = None
    energy_source: str | None = None
    power_source: str = "ac"
    power_mode: str = "performance"

    @property
    def end(self) -> datetime:
        return self.start + timedelta(seconds=self.wall_s)


@dataclass
class Pol:
    policy_id: str
    role: str
    runtime: str
    compute_units: str
    latency_ms: float = 1.0
    wall_s: float = 1.2
    """Each trial's window (the sequence's latencies are scaled to fit inside it)."""
    watts: dict[str, float] = field(default_factory=dict)
    """Synthetic runner traces: instrument (nvml, rapl) -> constant power."""
    placement: tuple[str, bytes] | None = None
    """(file name after `placement/<policy_id>`, bytes)."""
    wrong_every: int = 0
    """Every n-th prompt answered with another label than the reference artifact's."""
    precision: str = "float32"
    extra: dict[str, Any] = field(default_factory=dict)
    """More of the manifest's declaration of the policy."""
    verdict: str | None = None
    """policies.csv's verdict (None: the harness's own rule)."""
    labels: Callable[[int, int], str] | None = None
    """(trial index, answer index) -> label, replacing `wrong_every`."""
    latency_fn: Callable[[int, int], list[float]] | None = None
    """(trial index, answers) -> the trial's latencies, replacing the spread around
    `latency_ms`."""
    claims: dict[str, Any] = field(default_factory=dict)
    """policies.csv cells the harness writes as given (shares from its placement tool)."""


Trace = Callable[["Spec", Window], tuple[str, bytes]]
"""(extension, bytes) of a trial's power file; sets the window's measured energy."""


@dataclass
class Spec:
    policies: list[Pol]
    experiment_id: str = "synthetic-b"
    model_tier: str = "deep"
    prompts: int = 1000
    repetitions: int = 1
    trials: int = 5
    warmup: int = 100
    baseline: str = "cpu"
    minimums: dict[str, Any] = field(
        default_factory=lambda: {
            "sampling_interval_s": INTERVAL,
            "sample_periods": 10,
            "window_seconds": 0.5,
            "counter_updates": 5,
            "gap_factor": 3.0,
            "rapl_max_watts": 1000.0,
        }
    )
    floor: float = 0.5
    accuracy_floor: float = 0.85
    agreement_floor: float = 0.99
    trace: Trace | None = None
    """None: our runner's NVML/RAPL JSONL from each policy's `watts`."""
    schedule: Callable[[Spec, list[tuple[str, int]]], list[tuple[datetime, float]]] | None = None
    """(start, wall) of each trial of the order; None: one after the other from T0."""
    window_hook: Callable[[Spec, Window], None] | None = None
    """Changes a trial's window before it is measured (its recorded power state)."""
    local_utc_offset: str = "+00:00"
    ref_wrong_every: int = 10
    """The reference artifact answers every n-th prompt wrongly (its accuracy: 1 - 1/n)."""
    failed: frozenset[tuple[str, int]] = frozenset()
    """Trials that failed: a row with status `failed` and no figure, no outputs, no trace."""
    order: list[tuple[str, int]] | None = None
    """The trial order (None: alternating rounds)."""
    reference_file: str = "model/model.onnx"
    energy_docs: bool = True
    gates_file: bool = True
    environment: dict[str, Any] = field(default_factory=dict)
    manifest_extra: dict[str, Any] = field(default_factory=dict)
    timer_includes_tokenization: bool | None = True
    """The manifest's typed statement (None: left out)."""
    extra_files: dict[str, bytes] = field(default_factory=dict)
    """More files of the run (relative path -> bytes): the power-state checks' evidence."""
    timer_scope: str = (
        "each latency_ms is one batch-one classification: tokenization, the "
        "model and the label; wall_seconds is the whole window"
    )
    notes: str = "test run"


# -- the sequence and its answers -----------------------------------------------------------


def prompt_ids(spec: Spec) -> list[str]:
    return [f"p{i:04d}" for i in range(spec.prompts)]


def reference_label(i: int) -> str:
    return CLASSES[i % len(CLASSES)]


def reference_answer(i: int, every: int = 10) -> str:
    """The accepted reference artifact's answer: right but for every n-th prompt."""
    return CLASSES[(i + 1) % len(CLASSES)] if i % every == 0 else reference_label(i)


def answer(spec: Spec, pol: Pol, k: int, j: int) -> str:
    """Policy POL's answer number J of trial K."""
    if pol.labels is not None:
        return pol.labels(k, j)
    i = j % spec.prompts
    ref = reference_answer(i, spec.ref_wrong_every)
    if pol.wrong_every and i % pol.wrong_every == 1:
        return CLASSES[(CLASSES.index(ref) + 2) % len(CLASSES)]
    return ref


FILL = 0.97
"""The share of a window its inferences take (an honest harness's loop around them: 3 %)."""


def latencies(pol: Pol, n: int, wall_s: float, trial: int = 1) -> list[float]:
    """N latencies around the policy's, spread over +-20 %, scaled to fill `FILL` of the
    window;
    values of their own in each TRIAL, as a live timer's are (B0305): the spread in another
    order, each value nudged by a trial-dependent few parts in a million."""
    raw = [
        pol.latency_ms
        * (0.8 + 0.4 * ((k * 7919 + 7 * trial) % 1000) / 1000)
        * (1 + 1e-6 * ((k * 31 + trial * 17) % 97))
        for k in range(n)
    ]
    budget = FILL * wall_s * 1000
    scale = budget / sum(raw)
    return [round(x * scale, 6) for x in raw]


# -- power traces -----------------------------------------------------------------------------


def runner_trace(spec: Spec, w: Window) -> tuple[str, bytes]:
    """Our runner's trace of constant powers: markers, counters at both markers and every
    sampling period between, an NVML power sample each period."""
    pol = next(p for p in spec.policies if p.policy_id == w.policy_id)
    steps = round(w.wall_s / INTERVAL)
    recs: list[dict[str, Any]] = [
        {
            "kind": "marker",
            "t": iso(w.start),
            "t_source": "host",
            "event": "window_start",
            "label": f"{w.policy_id} trial {w.trial_index}",
        }
    ]
    base = {"nvml": 123_456_789, "rapl": 9_000_000_000}
    for k in range(steps + 1):
        t = iso(w.start + timedelta(seconds=k * INTERVAL))
        if "nvml" in pol.watts:
            recs.append(
                {
                    "kind": "counter",
                    "t": t,
                    "t_source": "host",
                    "source": "nvml",
                    "domain": "gpu",
                    "device": 0,
                    "field": "nvmlDeviceGetTotalEnergyConsumption",
                    "value": base["nvml"] + round(pol.watts["nvml"] * 1000 * k * INTERVAL),
                    "unit": "mJ",
                    "max_range": None,
                }
            )
            recs.append(
                {
                    "kind": "sample",
                    "t": t,
                    "t_source": "nvml",
                    "source": "nvml",
                    "domain": "gpu",
                    "device": 0,
                    "field": "POWER_INSTANT",
                    "watts": pol.watts["nvml"],
                }
            )
        if "rapl" in pol.watts:
            recs.append(
                {
                    "kind": "counter",
                    "t": t,
                    "t_source": "host",
                    "source": "rapl",
                    "domain": "package",
                    "device": 0,
                    "field": "/sys/class/powercap/intel-rapl:0/energy_uj",
                    "value": base["rapl"] + round(pol.watts["rapl"] * 1e6 * k * INTERVAL),
                    "unit": "uJ",
                    "max_range": 262_143_328_850,
                }
            )
    recs.append(
        {
            "kind": "marker",
            "t": iso(w.end),
            "t_source": "host",
            "event": "window_end",
            "label": f"{w.policy_id} trial {w.trial_index}",
        }
    )
    w.energy_j = sum(pol.watts.values()) * steps * INTERVAL
    w.energy_source = "+".join(sorted(pol.watts)) or None
    return ".jsonl", "".join(json.dumps(r) + "\n" for r in recs).encode()


def torch_placement(pid: str, device: str, on_device: int = 100, on_cpu: int = 40) -> bytes:
    """Our runner's torch record: every tensor on DEVICE, the diagnostic pass's dispatched
    operators (tokenization's CPU tensors among them)."""
    disp = [{"name": "aten::lift_fresh", "devices": "cpu", "count": on_cpu}]
    if device != "cpu":
        disp.append({"name": "aten::embedding_bag", "devices": device, "count": on_device})
    else:
        disp[0]["count"] += on_device
    doc = {
        "format": "torch-placement/1",
        "policy_id": pid,
        "requested_device": device,
        "torch_version": "2.13.0",
        "parameters": {device: 3},
        "buffers": {},
        "tensors": [
            {"name": n, "kind": "parameter", "device": device, "numel": k}
            for n, k in (("bag.weight", 4096), ("head.weight", 256), ("head.bias", 4))
        ],
        "ops": [
            {
                "name": "aten::addmm",
                "device_type": "cpu",
                "count": 20,
                "self_time_us": 80.0,
                "is_kernel": False,
            }
        ],
        "dispatched_ops": disp,
        "diagnostic": {
            "prompts": 20,
            "started_at": iso(T0 - timedelta(seconds=2)),
            "ended_at": iso(T0 - timedelta(seconds=1)),
        },
    }
    return (json.dumps(doc, indent=1) + "\n").encode()


ORT_GPU_NODES = (
    [
        ("Gather", "CUDAExecutionProvider"),
        ("Gemm", "CUDAExecutionProvider"),
        ("ReduceSum", "CUDAExecutionProvider"),
        ("ReduceMean", "CUDAExecutionProvider"),
    ]
    + [("Add", "CUDAExecutionProvider")] * 26
    + [("Shape", "CPUExecutionProvider")] * 4
    + [("Cast", None)] * 2
)


def ort_placement(
    pid: str,
    provider: str,
    nodes: Sequence[tuple[str, str | None]] = ORT_GPU_NODES,
    active: str | None = None,
    profile_file: str | None = None,
) -> bytes:
    doc = {
        "format": "ort-placement/1",
        "policy_id": pid,
        "ort_version": "1.24.1",
        "requested_providers": [provider, "CPUExecutionProvider"],
        "active_providers": [active or provider, "CPUExecutionProvider"],
        "source": "graph_assignment_info",
        "nodes": [
            {"name": f"n{i}_{op}", "op_type": op, "provider": prov}
            for i, (op, prov) in enumerate(nodes)
        ],
        "profile_file": profile_file,
        "diagnostic": {"prompts": 20, "started_at": iso(T0 - timedelta(seconds=3))},
    }
    return (json.dumps(doc, indent=1) + "\n").encode()


def ort_profile(nodes: Sequence[tuple[str, str | None]] = ORT_GPU_NODES, runs: int = 2) -> bytes:
    """ONNX Runtime's profile of RUNS runs over NODES (`ort_placement`'s names), in ORT's
    layout (one Chrome-trace event a line): Session events, each node's `_kernel_time` event
    per run with its provider (none for a node without one), a `model_run` per run."""
    events: list[dict[str, Any]] = [
        {
            "cat": "Session",
            "pid": 1,
            "tid": 1,
            "dur": 900,
            "ts": 1,
            "ph": "X",
            "name": "model_loading_uri",
            "args": {},
        },
        {
            "cat": "Session",
            "pid": 1,
            "tid": 1,
            "dur": 3000,
            "ts": 910,
            "ph": "X",
            "name": "session_initialization",
            "args": {},
        },
    ]
    ts = 5000
    for _ in range(runs):
        start = ts
        for i, (op, prov) in enumerate(nodes):
            args: dict[str, Any] = {"op_name": op, "node_index": str(i)}
            if prov:
                args["provider"] = prov
            events.append(
                {
                    "cat": "Node",
                    "pid": 1,
                    "tid": 1,
                    "dur": 12,
                    "ts": ts,
                    "ph": "X",
                    "name": f"n{i}_{op}_kernel_time",
                    "args": args,
                }
            )
            ts += 15
        events.append(
            {
                "cat": "Session",
                "pid": 1,
                "tid": 1,
                "dur": ts - start,
                "ts": start,
                "ph": "X",
                "name": "model_run",
                "args": {},
            }
        )
        ts += 100
    return ("[\n" + ",\n".join(json.dumps(e) for e in events) + "\n]\n").encode()


# -- the run dir --------------------------------------------------------------------------------


def trial_order(spec: Spec) -> list[tuple[str, int]]:
    """Round k holds trial k of every policy; a round never starts with the policy that
    ended the previous one."""
    ids = [p.policy_id for p in spec.policies]
    order: list[tuple[str, int]] = []
    for k in range(1, spec.trials + 1):
        rnd = ids if k % 2 else ids[::-1]
        if order and rnd[0] == order[-1][0]:
            rnd = rnd[1:] + rnd[:1]
        order += [(p, k) for p in rnd]
    return order


def _schedule(spec: Spec, order: list[tuple[str, int]]) -> list[tuple[datetime, float]]:
    walls = {p.policy_id: p.wall_s for p in spec.policies}
    out, t = [], T0
    for pid, _ in order:
        out.append((t, walls[pid]))
        t += timedelta(seconds=walls[pid] + 0.5)
    return out


def write_csv(path: Path, columns: Sequence[str], rows: list[dict[str, Any]]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\r\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: "" if r.get(c) is None else r[c] for c in columns})
    path.write_text(buf.getvalue(), encoding="utf-8", newline="")


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _write(root: Path, rel: str, data: bytes | str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    p.write_bytes(data)


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def build(root: Path, spec: Spec) -> Path:
    """Write the run SPEC describes into ROOT (created); return ROOT."""
    root.mkdir(parents=True, exist_ok=True)
    ids = prompt_ids(spec)
    _write(
        root,
        "prompts/sequence.jsonl",
        _jsonl([{"id": i, "text": f"ticket {i}: the invoice total is wrong again"} for i in ids]),
    )
    seq_sha = hashlib.sha256((root / "prompts/sequence.jsonl").read_bytes()).hexdigest()
    _write(
        root,
        "corpus/references.jsonl",
        _jsonl([{"id": i, "label": reference_label(k)} for k, i in enumerate(ids)]),
    )
    _write(
        root,
        "reference/outputs.jsonl",
        _jsonl(
            [
                {"id": i, "label": reference_answer(k, spec.ref_wrong_every)}
                for k, i in enumerate(ids)
            ]
        ),
    )
    _write(root, "model/weights.pt", b"synthetic float32 weights\n")
    _write(root, "model/model.onnx", b"synthetic onnx export\n")
    pols = {p.policy_id: p for p in spec.policies}
    order = spec.order or trial_order(spec)
    sched = (spec.schedule or _schedule)(spec, order)
    trace = spec.trace or runner_trace
    n = spec.prompts * spec.repetitions
    windows: list[Window] = []
    env = environment(spec)  # each trial records the power state the snapshot says
    state = {
        c: str(v) for c in ("power_source", "power_mode") if (v := (env.get(c) or {}).get("value"))
    }
    for pos, ((pid, k), (start, wall)) in enumerate(zip(order, sched, strict=True), start=1):
        pol = pols[pid]
        w = Window(pid, k, pos, start, wall, **state)
        if spec.window_hook is not None:
            spec.window_hook(spec, w)
        if (pid, k) in spec.failed:
            w.position = 0
            windows.append(w)
            continue
        w.labels = [answer(spec, pol, k, j) for j in range(n)]
        w.latencies = (
            pol.latency_fn(k, n) if pol.latency_fn is not None else latencies(pol, n, wall, k)
        )
        ext, data = trace(spec, w)
        _write(
            root,
            f"outputs/{pid}/trial-{k}.jsonl",
            _jsonl(
                [
                    {"id": ids[j % spec.prompts], "label": lab, "latency_ms": lat}
                    for j, (lab, lat) in enumerate(zip(w.labels, w.latencies, strict=True))
                ]
            ),
        )
        _write(root, f"power/{pid}/trial-{k}{ext}", data)
        if spec.energy_docs:
            _write(root, f"energy/{pid}/trial-{k}.json", json.dumps(energy_doc(spec, w), indent=1))
        windows.append(w)
    for p in spec.policies:
        if p.placement is not None:
            _write(root, f"placement/{p.policy_id}{p.placement[0]}", p.placement[1])
    trial_rows = []
    for w in sorted(windows, key=lambda w: (list(pols).index(w.policy_id), w.trial_index)):
        if not w.labels:
            trial_rows.append(
                {
                    "experiment_id": spec.experiment_id,
                    "policy_id": w.policy_id,
                    "role": pols[w.policy_id].role,
                    "trial_index": w.trial_index,
                    "order_position": None,
                    "prompt_sequence_sha256": seq_sha,
                    "status": "failed",
                    "notes": "the session crashed before the window",
                }
            )
            continue
        e = w.energy_j
        trial_rows.append(
            {
                "experiment_id": spec.experiment_id,
                "policy_id": w.policy_id,
                "role": pols[w.policy_id].role,
                "trial_index": w.trial_index,
                "order_position": w.position,
                "prompt_sequence_sha256": seq_sha,
                "warmup_iterations": spec.warmup,
                "inferences": n,
                "started_at": iso(w.start),
                "ended_at": iso(w.end),
                "wall_seconds": num(w.wall_s),
                "p95_latency_ms": num(nearest_rank(w.latencies)),
                "average_power_w": num(e / w.wall_s if e is not None else None),
                "energy_j": num(e),
                "joules_per_inference": num(e / n if e is not None else None, 9),
                "power_source": w.power_source,
                "power_mode": w.power_mode,
                "energy_source": w.energy_source if e is not None else None,
                "status": "ok",
                "notes": "" if e is not None else "energy not measured",
            }
        )
    write_csv(root / "trials.csv", TRIALS_COLUMNS, trial_rows)
    policy_rows = []
    for p in spec.policies:
        mine = [w for w in windows if w.policy_id == p.policy_id and w.labels]
        walls = [w.wall_s for w in mine]
        lats = [x for w in mine for x in w.latencies]
        measured = all(w.energy_j is not None for w in mine)
        e = sum(w.energy_j or 0.0 for w in mine) if measured else None
        answers = [(lab, j % spec.prompts) for w in mine for j, lab in enumerate(w.labels)]
        acc = sum(lab == reference_label(i) for lab, i in answers) / len(answers)
        agr = sum(lab == reference_answer(i, spec.ref_wrong_every) for lab, i in answers) / len(
            answers
        )
        passed = acc >= spec.accuracy_floor and agr >= spec.agreement_floor
        verdict = p.verdict or (
            "baseline" if p.policy_id == spec.baseline else "accepted" if passed else "rejected"
        )
        policy_rows.append(
            {
                "experiment_id": spec.experiment_id,
                "policy_id": p.policy_id,
                "role": p.role,
                "runtime": p.runtime,
                "compute_units": p.compute_units,
                "model_tier": spec.model_tier,
                "trials": len(mine),
                "median_wall_seconds": num(statistics.median(walls)),
                "p95_latency_ms": num(nearest_rank(lats)),
                "average_power_w": num(e / sum(walls) if e is not None else None),
                "joules_per_inference": num(e / (n * len(mine)) if e is not None else None, 9),
                "accuracy": num(acc, 4),
                "agreement": num(agr, 4),
                "operation_share": None,
                "operation_share_floor": num(p.extra.get("operation_share_floor", spec.floor))
                if p.role == "accelerator"
                else None,
                "estimated_cost_share": None,
                "verdict": verdict,
                "notes": "",
                **p.claims,
            }
        )
    write_csv(root / "policies.csv", POLICIES_COLUMNS, policy_rows)
    if spec.gates_file:
        gate_policies = []
        for p in spec.policies:
            labels = [answer(spec, p, 0, i) for i in range(spec.prompts)]
            _write(
                root,
                f"gates/{p.policy_id}.jsonl",
                _jsonl([{"id": ids[i], "label": lab} for i, lab in enumerate(labels)]),
            )
            acc = sum(lab == reference_label(i) for i, lab in enumerate(labels)) / len(labels)
            agr = sum(
                lab == reference_answer(i, spec.ref_wrong_every) for i, lab in enumerate(labels)
            ) / len(labels)
            gate_policies.append(
                {
                    "policy_id": p.policy_id,
                    "status": "evaluated",
                    "outputs_file": f"gates/{p.policy_id}.jsonl",
                    "artifact_sha256": p.extra.get("artifact_sha256")
                    or hashlib.sha256(b"synthetic float32 weights\n").hexdigest(),
                    "answers": len(labels),
                    "accuracy": acc,
                    "agreement": agr,
                    "accuracy_passed": acc >= spec.accuracy_floor,
                    "agreement_passed": agr >= spec.agreement_floor,
                    "passed": acc >= spec.accuracy_floor and agr >= spec.agreement_floor,
                    "reason": None,
                }
            )
        _write(
            root,
            "gates/gates.json",
            json.dumps(
                {
                    "format": "gates/1",
                    "accuracy_floor": spec.accuracy_floor,
                    "agreement_floor": spec.agreement_floor,
                    "reference": {
                        "artifact": "the accepted ONNX export",
                        "artifact_file": spec.reference_file,
                        "artifact_sha256": None,
                    },
                    "policies": gate_policies,
                },
                indent=1,
            ),
        )
    for rel, data in spec.extra_files.items():
        _write(root, rel, data)
    first = min(start for start, _ in sched)
    _write(root, "environment.json", json.dumps(environment(spec, first), indent=1))
    _write(root, "manifest.json", json.dumps(manifest(spec, order, seq_sha, first), indent=1))
    rehash(root)
    return root


def energy_doc(spec: Spec, w: Window) -> dict[str, Any]:
    n = spec.prompts * spec.repetitions
    e = w.energy_j
    return {
        "format": "energy-window/1",
        "policy_id": w.policy_id,
        "trial_index": w.trial_index,
        "power_trace": f"power/{w.policy_id}/trial-{w.trial_index}.jsonl",
        "repetitions": spec.repetitions,
        "inferences": n,
        "minimums": spec.minimums,
        "status": "measured" if e is not None else "not_measured",
        "reason": None if e is not None else "no instrument",
        "started_at": iso(w.start),
        "ended_at": iso(w.end),
        "window_seconds": w.wall_s,
        "energy_j": e,
        "average_power_w": e / w.wall_s if e is not None else None,
        "joules_per_inference": e / n if e is not None else None,
        "energy_source": w.energy_source,
        "series": [],
    }


def environment(spec: Spec, first: datetime = T0) -> dict[str, Any]:
    env = {
        "observed_at": iso(first - timedelta(minutes=1)),
        "machine": {"value": "Synthetic GPU server", "source": "test builder"},
        "os": {
            "platform": "Linux",
            "os_release": {"PRETTY_NAME": "Ubuntu 24.04 LTS"},
            "kernel_release": "6.8.0",
        },
        "power_source": {"value": "ac", "source": "test builder"},
        "power_mode": {"value": "performance", "source": "test builder"},
        "python_version": "3.11.7",
        "torch_version": "2.13.0",
        "onnxruntime": {
            "version": "1.24.1",
            "available_providers": ["CUDAExecutionProvider", "CPUExecutionProvider"],
        },
        "code_version": "harness 1.0 (git 0123abc)",
        "runtime": {"name": "cuda", "version": "12.8"},
        "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}],
        "concurrent_load": {"loadavg_before": [0.1, 0.1, 0.1], "loadavg_after": [0.2, 0.1, 0.1]},
    }
    env.update(spec.environment)
    return env


def manifest(
    spec: Spec, order: list[tuple[str, int]], seq_sha: str, first: datetime = T0
) -> dict[str, Any]:
    weights = hashlib.sha256(b"synthetic float32 weights\n").hexdigest()
    onnx = hashlib.sha256(b"synthetic onnx export\n").hexdigest()
    m = {
        "schema_version": "1",
        "protocol": "residency-energy",
        "experiment_id": spec.experiment_id,
        "status": "complete",
        "declared_at": iso(first - timedelta(minutes=2)),
        "model_tier": spec.model_tier,
        "artifact_sha256": weights,
        "artifact": {"file": "model/weights.pt", "description": "synthetic"},
        "revisions": {
            "corpus": "sha256:" + "1" * 64,
            "model": "sha256:" + weights,
            "tokenizer": "sha256:" + "2" * 64,
            "code": "harness 1.0 (git 0123abc)",
        },
        "seed": 7,
        "task": {"classes": list(CLASSES)},
        "prompt_sequence": {
            "file": "prompts/sequence.jsonl",
            "sha256": seq_sha,
            "prompts": spec.prompts,
        },
        "reference": {
            "file": "reference/outputs.jsonl",
            "artifact": "the accepted ONNX export",
            "artifact_file": spec.reference_file,
            "artifact_sha256": onnx,
        },
        "baseline_policy": spec.baseline,
        "policies": [
            {
                "policy_id": p.policy_id,
                "role": p.role,
                "runtime": p.runtime,
                "compute_units": p.compute_units,
                "precision": p.precision,
                "status": "ran",
                "reason": None,
                **(
                    {"placement_file": f"placement/{p.policy_id}{p.placement[0]}"}
                    if p.placement
                    else {}
                ),
                **p.extra,
            }
            for p in spec.policies
        ],
        "trials_per_policy": spec.trials,
        "planned_trials": len(order),
        "warmup_iterations": spec.warmup,
        "trial_order": [[p, k] for p, k in order],
        "timer_scope": spec.timer_scope,
        "timer_includes_tokenization": spec.timer_includes_tokenization,
        "energy": {
            "repetitions": spec.repetitions,
            "inferences_per_trial": spec.prompts * spec.repetitions,
            "minimums": spec.minimums,
            "instruments": [
                {"source": "nvml", "status": "available"},
                {"source": "rapl", "status": "available"},
            ],
        },
        "gates": {
            "accuracy_floor": spec.accuracy_floor,
            "agreement_floor": spec.agreement_floor,
            "measure_rejected_energy": False,
        },
        "placement": {"diagnostic_prompts": 20, "operation_share_floor": spec.floor},
        "local_utc_offset": spec.local_utc_offset,
        "notes": spec.notes,
        "artifacts": {},
    }
    m.update(spec.manifest_extra)
    return m


def synthetic(root: Path, **changes: Any) -> Path:
    """The clean run with energy (see `synthetic_spec`)."""
    return build(root, replace(synthetic_spec(), **changes))


def synthetic_spec(**changes: Any) -> Spec:
    """The clean run with energy: CPU baseline 40 W package + 30 W idle GPU over 2.0 s windows;
    torch CUDA 15 W + 45 W over 1.2 s; ONNX Runtime CUDA 14 W + 44 W over 1.1 s (CHANGES: other
    fields of the `Spec`)."""
    return replace(_synthetic(), **changes)


def _synthetic() -> Spec:
    return Spec(
        policies=[
            Pol(
                "cpu",
                "cpu-only",
                "torch",
                "cpu",
                latency_ms=1.8,
                wall_s=2.0,
                watts={"rapl": 40.0, "nvml": 30.0},
                placement=(".torch.json", torch_placement("cpu", "cpu")),
            ),
            Pol(
                "torch-cuda",
                "accelerator",
                "torch",
                "cuda",
                latency_ms=1.0,
                wall_s=1.2,
                watts={"rapl": 15.0, "nvml": 45.0},
                placement=(".torch.json", torch_placement("torch-cuda", "cuda:0")),
            ),
            Pol(
                "ort-cuda",
                "accelerator",
                "onnxruntime",
                "CUDAExecutionProvider",
                latency_ms=0.9,
                wall_s=1.1,
                watts={"rapl": 14.0, "nvml": 44.0},
                placement=(".ort.json", ort_placement("ort-cuda", "CUDAExecutionProvider")),
                extra={
                    "artifact_file": "model/model.onnx",
                    "artifact_sha256": hashlib.sha256(b"synthetic onnx export\n").hexdigest(),
                },
            ),
        ]
    )


def with_policy(spec: Spec, pid: str, **changes: Any) -> Spec:
    """SPEC with policy PID changed."""
    return replace(
        spec, policies=[replace(p, **changes) if p.policy_id == pid else p for p in spec.policies]
    )


# -- editing a built run --------------------------------------------------------------------


def _sha256(path: Path) -> str:
    with path.open("rb") as fh:  # in chunks: a test may list a file of gigabytes
        return hashlib.file_digest(fh, "sha256").hexdigest()


def rehash(root: Path) -> None:
    """Rewrite the manifest's SHA-256 table from the files on disk."""
    path = root / "manifest.json"
    m = json.loads(path.read_text(encoding="utf-8"))
    m["artifacts"] = {
        p.relative_to(root).as_posix(): _sha256(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and p != path
    }
    path.write_text(json.dumps(m, indent=1), encoding="utf-8")


def edit_csv(root: Path, name: str, fn: Callable[[list[dict[str, str]]], None]) -> None:
    rows = read_csv(root / name)
    fn(rows)
    write_csv(root / name, TRIALS_COLUMNS if name == "trials.csv" else POLICIES_COLUMNS, rows)
    rehash(root)


def edit_json(
    root: Path, rel: str, fn: Callable[[dict[str, Any]], None], seal: bool = True
) -> None:
    path = root / rel
    doc = json.loads(path.read_text(encoding="utf-8"))
    fn(doc)
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    if seal:
        rehash(root)


def edit_jsonl(root: Path, rel: str, fn: Callable[[list[dict[str, Any]]], Any]) -> None:
    path = root / rel
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    out = fn(rows)
    path.write_text(_jsonl(out if out is not None else rows), encoding="utf-8")
    rehash(root)


def row(rows: list[dict[str, str]], pid: str, k: int | None = None) -> dict[str, str]:
    return next(
        r for r in rows if r["policy_id"] == pid and (k is None or r["trial_index"] == str(k))
    )
