"""Every fact of a protocol B run the rules, the report and the run summary judge by,
recomputed from raw evidence once per view (cached on the view's identity). A claim of the
run (a trials.csv or policies.csv cell, a gate file) is only ever compared with these.

Conventions (documented for reviewers):

- **p95 latency**: the nearest rank, the ceil(0.95 n)-th smallest of the per-inference
  latencies (`latency_ms` of the outputs file; per policy over every latency of its `ok`
  trials). Under `MIN_P95_VALUES` latencies the 95th percentile is the maximum and says
  nothing a p95 claims: a p95 claimed over fewer is unsupported.
- **Median wall time**: the median of the `ok` trials' recomputed wall times (the mean of
  the two middle values for an even count).
- **The window** of a trial: the `window_start`/`window_end` markers of its trace when its
  tool writes markers (our runner); otherwise the trial's `started_at`/`ended_at` (the only
  statement of the region a tool without markers has, checked against the latencies: they
  cannot add up to more than the window). Wall time = end - start, to the nanosecond.
- **Energy over the window**, from the series `power_series` picks from the trace:
  - a cumulative counter (our runner's NVML and RAPL records): the sum of the deltas between
    consecutive readings both inside the window (the last reading inside minus the first,
    wraps resolved by the reader), as the runner reads its counters right at both markers;
    the stretches between a marker and the nearest reading are left out and must each be
    under one declared sampling period, else the counter does not cover the window;
  - a power reading over an interval (powermetrics' measured `elapsed` interval, a sensor
    log's or nvidia-smi's point reading held since the previous one): watts x the part of its
    interval inside the window, so a sample straddling an edge counts pro rata
    (`energy_j` x overlap / interval where the tool gives its energy). The window must lie
    inside the span of the intervals, and no two readings may be more than `gap_factor`
    (manifest `energy.minimums.gap_factor`, default `GAP_FACTOR`) declared sampling periods
    apart;
  - our runner's counters must cover the unit the policy computes on (RAPL for a cpu-only
    policy, NVML for a GPU policy: `_unit_not_measured`), else the window is not measured
    (`no_domain`), as the runner itself records it;
  - average power = energy / wall time; joules per inference = energy / answers (the lines
    of the outputs file). A policy's figures pool its `ok` trials: the sum of energy over the
    sum of wall times, or of answers, and exist only when every `ok` trial has one, from the
    same domains.
- **Counters against samples** (B0605): a summed counter's average power over the stretch
  its readings observe, against the same instrument's power samples (same domain and
  device; `POWER_INSTANT` before rolling averages) integrated as above over the seconds of
  the window they cover; judged only when the samples are dense (`sample_periods` readings,
  no spacing or unobserved edge over `gap_factor` periods). Allowance: `CROSS_REL` of the
  larger + `CROSS_ABS_W`, + the highest sample x the unobserved share of the window, + for
  a rolling average the highest sample x `AVERAGING_S` / window; beyond
  `CROSS_ERROR_FACTOR` allowances they disagree, between one and that many is the grey band.
- **Time order**: a trace whose time goes back anywhere (the reader's `order` warning: an
  edited or merged file, a clock step) measures no window; a reading at the time of the
  previous one (`repeat`) is only left without an interval.
- **Resolution**: a window shorter than the declared minimum (`energy.minimums`:
  `window_seconds`), a power series with fewer readings over the window than
  `sample_periods`, or a counter that changed fewer than `counter_updates` times inside it
  gives no figure (`below_resolution`): a claim from it is unsupported.
- **Domains summed** (the same for every trial and policy, B7): `DOMAIN_RULES` per tool.
  Inside one domain and device one source is used (`SOURCE_PREFERENCE`), never two added.
- **Accuracy and agreement**: answers equal to corpus/references.jsonl (or
  reference/outputs.jsonl) / answers, over every answer of the policy's `ok` trials, or of
  its gate pass (gates/<policy_id>.jsonl) when it has none; an answer whose ID has no
  reference counts as not equal.
- **Placement shares**: `auditor.readers.placement._frame.placement_shares` over the
  policy's placement frame against its accelerator (`accelerator_of`); an ONNX Runtime policy
  that names its execution provider counts the nodes of exactly that provider (the runner's
  rule); a torch record counts the aten operators of the diagnostic pass whose outputs all
  lie on the accelerator (its `dispatched_ops`).
- **Claims** agree with a recomputed value when they differ by at most half a unit of the
  claim's last written decimal (its rounding), and never by more than `CLAIM_REL_CAP` of the
  value (a claim written with too few digits to be checked does not agree), plus
  `CLAIM_REL_FLOOR` of the value (a harness's arithmetic on float epoch seconds loses about
  a microsecond of a window, so a claim written with more digits than that is still read as
  its value).
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.protocols.b.artifacts import PROMPTS
from auditor.protocols.cache import per_view
from auditor.readers import evidence_kinds, timestamps
from auditor.readers.placement._frame import ACCELERATORS, device_of, placement_shares

if TYPE_CHECKING:
    from auditor.protocols.b.view import Evidence, RunView

P95 = 0.95
MIN_P95_VALUES = 20
"""Fewer latencies than this do not support a p95 (nearest rank: it would be the maximum)."""
CLAIM_REL_CAP = 0.005
"""A claim never agrees with a value more than 0.5 % away, whatever its rounding."""
CLAIM_REL_FLOOR = 1e-6
"""A claim within a millionth of the recomputed value agrees whatever digits it shows."""
FLOAT_EPS = 1e-9
GAP_FACTOR = 1.5
"""Readings more than this many declared sampling periods apart leave a gap (when the
manifest declares no `gap_factor`): jitter passes, a missed reading does not."""
PROTOCOL_WARMUP = 100
PROTOCOL_PROMPTS = 1000
MIN_TRIALS = 5
CAPTURE_MARGIN_S = 3600.0
"""Placement evidence is of this session when captured between the declaration and the
last trial's end, give or take this (clocks, a diagnostic pass before the declaration)."""

COMPUTE_OPS = frozenset({
    "Gather", "GatherElements", "GatherND", "Gemm", "MatMul", "MatMulInteger", "FusedMatMul",
    "QGemm", "QLinearMatMul", "Conv", "ConvTranspose", "FusedConv", "QLinearConv", "Loop",
    "Attention", "MultiHeadAttention", "Softmax", "Einsum", "EmbedLayerNormalization",
    "LayerNormalization", "SkipLayerNormalization", "EmbeddingBag", "ios17.conv",
    "ios17.linear", "ios17.matmul", "ios16.softmax"})
"""Operator types that do a model's arithmetic (embedding gathers, matrix products,
convolutions, reductions (`Reduce*`), attention), as against shape and cast operations an
execution provider may leave on the CPU on purpose."""


def is_compute_op(op_type: str | None) -> bool:
    return bool(op_type) and (op_type in COMPUTE_OPS or op_type.startswith("Reduce"))


# -- claims ---------------------------------------------------------------------------------

def claim_tolerance(text: str | None, value: float) -> float:
    """Half a unit of the last decimal written in TEXT (a claim's rounding), capped at
    `CLAIM_REL_CAP` of VALUE, plus `CLAIM_REL_FLOOR` of VALUE."""
    digits = 0
    if text and re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text.strip()):
        mantissa, _, exponent = text.strip().lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        digits = decimals - (int(exponent) if exponent else 0)
    rounding = 0.5 * 10.0 ** (-digits)
    return (min(rounding, CLAIM_REL_CAP * abs(value)) + CLAIM_REL_FLOOR * abs(value)
            + FLOAT_EPS)


def agrees(claim: float | None, text: str | None, value: float | None) -> bool:
    """Whether CLAIM (written as TEXT) is VALUE at the claim's rounding; two absent values
    agree, one absent and one present do not."""
    if claim is None or value is None:
        return claim is None and value is None
    return abs(claim - value) <= claim_tolerance(text, value)


def nearest_rank(values: list[float], q: float = P95) -> float | None:
    """The ceil(q n)-th smallest of VALUES (None when empty)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def epoch_s(text: Any) -> float | None:
    ns = timestamps.epoch_ns(text)
    return None if ns is None else ns / 1e9


# -- what the manifest declares ------------------------------------------------------------

@dataclass(frozen=True)
class Policy:
    """One compute policy as the manifest declares it."""

    policy_id: str
    role: str
    runtime: str
    compute_units: str
    status: str | None
    reason: str | None
    precision: str | None
    is_baseline: bool
    accelerator: frozenset[str]
    """Devices that count as this policy's accelerator (empty for a cpu-only policy)."""
    provider: str | None
    """The execution provider asked for, for an ONNX Runtime or Windows ML policy that
    names one: its nodes count exactly."""
    floor: float | None
    """The operation-share floor it must meet (its own, else the run's)."""
    gpu_floor: float | None
    """A GPU retry's own floor of GPU operations (B7)."""
    is_gpu_retry: bool
    placement_file: str | None
    artifact_file: str | None
    artifact_sha256: str | None

    @property
    def label(self) -> str:
        return f"{self.policy_id} ({self.runtime} {self.compute_units})"


_COREML_UNITS = {"cpuandneuralengine": {"ane"}, "cpu-and-ne": {"ane"},
                 "cpuandgpu": {"gpu"}, "cpu-and-gpu": {"gpu"}, "all": {"ane", "gpu"}}
_WINDOWS_POLICIES = {"default", "prefer_npu", "prefer_gpu", "max_performance",
                     "max_efficiency", "min_overall_power"}


def accelerator_of(role: str, runtime: str, compute_units: str) -> tuple[frozenset[str],
                                                                         str | None]:
    """(the devices a policy's operations count as on its accelerator, the execution
    provider it names, if any)."""
    if role != "accelerator":
        return frozenset(), None
    units = compute_units.strip()
    key = units.lower()
    if runtime.lower() == "coreml":
        return frozenset(_COREML_UNITS.get(key, ACCELERATORS)), None
    if key.endswith("executionprovider"):
        device = device_of(units)
        return (frozenset({device}) if device in ACCELERATORS else ACCELERATORS), units
    if key.removeprefix("ortexecutionproviderdevicepolicy_") in _WINDOWS_POLICIES:
        return frozenset({"npu", "gpu"}), None
    device = device_of(units)
    return (frozenset({device}) if device in ACCELERATORS else ACCELERATORS), None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


@per_view
def policies(view: RunView) -> dict[str, Policy]:
    """The declared policies, in manifest order."""
    m = view.m
    run_floor = _num((m.get("placement") or {}).get("operation_share_floor"))
    baseline = m.get("baseline_policy")
    out: dict[str, Policy] = {}
    for p in m.get("policies") or []:
        if not isinstance(p, dict) or not isinstance(p.get("policy_id"), str):
            continue
        role, runtime = str(p.get("role")), str(p.get("runtime"))
        units = str(p.get("compute_units"))
        accel, provider = accelerator_of(role, runtime, units)
        retry = (role == "accelerator" and (isinstance(p.get("retry_of"), str)
                                            or (runtime.lower() == "coreml"
                                                and units.lower() == "all")))
        own = _num(p.get("operation_share_floor"))
        out[p["policy_id"]] = Policy(
            policy_id=p["policy_id"], role=role, runtime=runtime, compute_units=units,
            status=p.get("status"), reason=p.get("reason"), precision=p.get("precision"),
            is_baseline=p["policy_id"] == baseline, accelerator=accel, provider=provider,
            floor=(own if own is not None else run_floor) if role == "accelerator" else None,
            gpu_floor=_num(p.get("gpu_operation_share_floor")), is_gpu_retry=retry,
            placement_file=p.get("placement_file"), artifact_file=p.get("artifact_file"),
            artifact_sha256=p.get("artifact_sha256"))
    return out


def model_tier(view: RunView) -> str | None:
    return view.m.get("model_tier")


def repetitions(view: RunView) -> int:
    r = (view.m.get("energy") or {}).get("repetitions")
    return r if isinstance(r, int) and r > 0 else 1


def minimums(view: RunView) -> dict[str, float]:
    mins = (view.m.get("energy") or {}).get("minimums") or {}
    out = {k: float(v) for k, v in mins.items()
           if isinstance(v, int | float) and not isinstance(v, bool)}
    out.setdefault("gap_factor", GAP_FACTOR)
    return out


# -- the prompt sequence and the answers ---------------------------------------------------

@per_view
def sequence(view: RunView) -> dict[str, Any]:
    """The fixed sequence: `ids` in order, `n`, `sha256` (of the file's bytes, from the
    run-dir walk), `duplicates` (IDs listed twice)."""
    ids = view.prompts["id"].to_list() if view.prompts is not None else []
    seen: set[str] = set()
    dups = sorted({i for i in ids if i in seen or seen.add(i)})  # type: ignore[func-returns-value]
    return {"ids": ids, "n": len(ids), "sha256": view.files_on_disk.get(PROMPTS),
            "duplicates": dups}


@per_view
def trial_outputs(view: RunView) -> pl.DataFrame:
    """One row per outputs file: `policy_id`, `trial_index`, `file`, `lines`, `n_invalid`,
    `invalid_first_line`, `invalid_error`, `n_bad_label`, `bad_label_first_line`,
    `n_latencies`, `p95_ms`, `sum_ms`, `order_diffs` (lines whose ID is not the sequence's
    at that position, the sequence repeated), `order_first_line`, `order_first_id`."""
    idx = view.output_index
    empty = idx.select("policy_id", "trial_index", "file")
    o = view.outputs
    seq = sequence(view)
    if o is None:
        return empty.with_columns(
            *[pl.lit(None, dtype=pl.Int64).alias(c) for c in (
                "lines", "n_invalid", "invalid_first_line", "n_bad_label",
                "bad_label_first_line", "n_latencies", "order_diffs", "order_first_line")],
            pl.lit(None, dtype=pl.String).alias("invalid_error"),
            pl.lit(None, dtype=pl.Float64).alias("p95_ms"),
            pl.lit(None, dtype=pl.Float64).alias("sum_ms"),
            pl.lit(None, dtype=pl.String).alias("order_first_id"))
    classes = list((view.m.get("task") or {}).get("classes") or [])
    if seq["n"]:
        expected = pl.Series("expected", seq["ids"], dtype=pl.String)
        o = o.with_columns(expected.gather(((o["line"] - 1) % seq["n"]).cast(pl.Int64))
                           .alias("expected"))
        off = (pl.col("id") != pl.col("expected")).fill_null(True)
    else:  # no readable sequence: the order cannot be judged (B1002 is skipped)
        off = pl.lit(False)
    bad_label = pl.col("valid") & ~pl.col("label").is_in(classes) if classes else pl.lit(False)
    lat = pl.col("latency_ms").filter(pl.col("valid"))
    n_lat = lat.len()
    agg = o.group_by("file_no").agg(
        pl.len().alias("lines"),
        (~pl.col("valid")).sum().alias("n_invalid"),
        pl.col("line").filter(~pl.col("valid")).first().alias("invalid_first_line"),
        pl.col("error").filter(~pl.col("valid")).first().alias("invalid_error"),
        bad_label.sum().alias("n_bad_label"),
        pl.col("line").filter(bad_label).first().alias("bad_label_first_line"),
        n_lat.alias("n_latencies"),
        lat.sort().slice(((n_lat * P95).ceil().cast(pl.Int64) - 1).clip(0), 1)
        .first().alias("p95_ms"),  # nearest rank; null without a valid latency
        lat.sum().alias("sum_ms"),
        off.sum().alias("order_diffs"),
        pl.col("line").filter(off).first().alias("order_first_line"),
        pl.col("id").filter(off).first().alias("order_first_id"))
    out = view.output_index.join(agg, on="file_no", how="left", maintain_order="left")
    counts = ["lines", "n_invalid", "n_bad_label", "n_latencies", "order_diffs"]
    return out.with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts]).drop(
        "file_no")


def _answers(view: RunView, keys: Iterable[tuple[str, int]]) -> pl.DataFrame | None:
    """The valid answers (`id`, `label`) of the given trials."""
    if view.outputs is None:
        return None
    want = pl.DataFrame(list(keys), schema={"policy_id": pl.String, "trial_index": pl.Int64},
                        orient="row")
    return view.outputs.filter(pl.col("valid")).join(
        want, on=["policy_id", "trial_index"], how="semi").select("id", "label")


def _share_equal(answers: pl.DataFrame, ref: pl.DataFrame | None) -> float | None:
    if ref is None or answers.height == 0:
        return None
    firsts = ref.unique(subset="id", keep="first").select("id", pl.col("label").alias("ref"))
    joined = answers.join(firsts, on="id", how="left")
    return joined.select((pl.col("label") == pl.col("ref")).fill_null(False).mean()).item()


# -- trials, windows, latencies -----------------------------------------------------------

@dataclass
class Trial:
    """One trials.csv row and what the auditor recomputed for it."""

    policy_id: str
    trial_index: int
    row: int
    line: int | None
    status: str
    claims: dict[str, Any]
    """The row's typed cells."""
    texts: dict[str, str | None]
    """The row's cells as written (for their rounding)."""
    outputs_file: str | None = None
    lines: int | None = None
    p95_ms: float | None = None
    sum_ms: float | None = None
    n_latencies: int = 0
    start: int | None = None
    end: int | None = None
    """The window, epoch nanoseconds."""
    window_from: str | None = None
    """`markers` (the trace's own) or `trials.csv` (the row's started_at/ended_at)."""
    wall_s: float | None = None
    energy: Energy | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.policy_id, self.trial_index)

    @property
    def name(self) -> str:
        return f"{self.policy_id} trial {self.trial_index}"


@per_view
def trials(view: RunView) -> list[Trial]:
    """Every trials.csv row, in file order, with its outputs, window and energy."""
    if view.trials is None:
        return []
    raw = view.trials_raw
    outs = {(r["policy_id"], r["trial_index"]): r
            for r in trial_outputs(view).iter_rows(named=True)}
    out = []
    for i, r in enumerate(view.trials.iter_rows(named=True)):
        texts = ({k: v for k, v in raw.row(i, named=True).items()}
                 if raw is not None and i < raw.height else {})
        t = Trial(policy_id=r["policy_id"], trial_index=r["trial_index"], row=r["row"],
                  line=r.get("line"), status=r["status"], claims=r, texts=texts)
        o = outs.get(t.key)
        if o is not None:
            t.outputs_file, t.lines = o["file"], o["lines"]
            t.p95_ms, t.sum_ms, t.n_latencies = o["p95_ms"], o["sum_ms"], o["n_latencies"] or 0
        ev = view.power.get(t.key)
        markers = _markers(ev)
        if markers is not None:
            t.start, t.end, t.window_from = markers[0], markers[1], "markers"
        else:
            t.start = timestamps.epoch_ns(r.get("started_at"))
            t.end = timestamps.epoch_ns(r.get("ended_at"))
            t.window_from = "trials.csv" if t.start is not None and t.end is not None else None
        if t.start is not None and t.end is not None:
            t.wall_s = (t.end - t.start) / 1e9
        if t.status == "ok":
            t.energy = trial_energy(view, ev, t)
        out.append(t)
    return out


MIN_DISTINCT_COPIED = 10
"""A latency sequence with fewer distinct values than this (a coarse timer) can repeat
honestly from one trial to another; one with more cannot."""


@per_view
def copied_latencies(view: RunView) -> list[list[Trial]]:
    """Groups of ok trials (of one policy or several, in trials.csv order) whose outputs hold
    the very same sequence of latencies, of at least `MIN_P95_VALUES` values and
    `MIN_DISTINCT_COPIED` distinct ones: timed once, reported as several trials."""
    if view.outputs is None:
        return []
    ok = {t.key: t for t in trials(view) if t.status == "ok"}
    lat = pl.col("latency_ms")
    per_file = (view.outputs.filter(pl.col("valid") & lat.is_not_null())
                .group_by("policy_id", "trial_index", maintain_order=True)
                .agg(lat.alias("lats"), lat.n_unique().alias("distinct"))
                .filter((pl.col("distinct") >= MIN_DISTINCT_COPIED)
                        & (pl.col("lats").list.len() >= MIN_P95_VALUES))
                .with_columns(pl.col("lats").hash().alias("digest")))
    groups: dict[int, list[tuple[list[float], list[Trial]]]] = {}
    for pid, k, lats, _, digest in per_file.iter_rows():
        t = ok.get((pid, k))
        if t is None:
            continue
        same = groups.setdefault(digest, [])
        hit = next((g for g in same if g[0] == lats), None)  # equal lists, not only hashes
        if hit is None:
            same.append((lats, [t]))
        else:
            hit[1].append(t)
    order = {t.key: i for i, t in enumerate(ok.values())}
    return [sorted(ts, key=lambda t: order[t.key]) for gs in groups.values() for _, ts in gs
            if len(ts) > 1]


def _markers(ev: Evidence | None) -> tuple[int, int] | None:
    if ev is None:
        return None
    marks = {m.get("event"): timestamps.epoch_ns(m.get("t"))
             for m in ev.meta.get("markers") or [] if isinstance(m, Mapping)}
    start, end = marks.get("window_start"), marks.get("window_end")
    return (start, end) if start is not None and end is not None else None


# -- energy over a window -------------------------------------------------------------------

DOMAIN_RULES: dict[str, str] = {
    "runner-jsonl": "NVML counters (GPU) + RAPL package counters (psys where there is no "
                    "package zone); power samples are a cross-check only",
    "powermetrics": "Combined Power (CPU + GPU + ANE); without it Package Power; without it "
                    "CPU + GPU + ANE",
    "hwinfo": "CPU Package Power (else CPU PPT) + GPU Power of every GPU; without a package "
              "reading, Total System Power alone",
    "nvidia-smi": "GPU board power of every GPU",
    "other": "combined; else package + GPU; else CPU + GPU + ANE + NPU",
}
SOURCE_PREFERENCE = ("power.draw.instant", "power.draw [", "power.draw.average",
                     "power.draw")
"""nvidia-smi: the instantaneous reading, then `power.draw` (a 1 s average on Ampere and
newer), then the explicit average; every other tool: the first source name in sort order."""


def _tool_family(reader: str | None) -> str:
    if reader is None:
        return "other"
    if reader.startswith("powermetrics"):
        return "powermetrics"
    if reader.startswith("nvidia-smi"):
        return "nvidia-smi"
    return reader if reader in DOMAIN_RULES else "other"


def _domains(family: str, present: set[str]) -> list[str]:
    if family == "runner-jsonl":
        return []  # by source, see _runner_series
    if family == "nvidia-smi":
        return ["gpu"] if "gpu" in present else []
    if "combined" in present and family in ("powermetrics", "other"):
        return ["combined"]
    if family == "powermetrics":
        if "package" in present:
            return ["package"]
        return [d for d in ("cpu", "gpu", "ane") if d in present]
    host = next((d for d in ("package", "ppt") if d in present), None)
    if host is not None:
        return [host, *[d for d in ("gpu", "npu") if d in present]]
    if family == "hwinfo":
        return ["psys"] if "psys" in present else []
    return [d for d in ("cpu", "gpu", "ane", "npu") if d in present]


def _pick_source(sources: list[str]) -> str:
    for pref in SOURCE_PREFERENCE:
        hit = sorted(s for s in sources if s.startswith(pref))
        if hit:
            return hit[0]
    return sorted(sources)[0]


@dataclass
class Series:
    domain: str
    device: int | None
    source: str
    kind: str
    """`counter` (cumulative energy read at instants) or `interval` (power over intervals)."""
    readings: int = 0
    """Readings over the window (counter readings inside it; intervals overlapping it)."""
    updates: int = 0
    """Counter changes inside the window."""
    energy_j: float = 0.0
    max_interval_s: float | None = None
    covered: bool = False
    uncovered: str | None = None
    observed: tuple[float, float] | None = None
    """The stretch of the window the readings observe (seconds from the window's start): a
    counter's first and last reading inside it; intervals' first and last overlap with it."""
    observed_s: float = 0.0
    """Seconds of the window the readings observe (intervals: the sum of their overlaps)."""

    @property
    def name(self) -> str:
        dev = "" if self.device is None else f" {self.device}"
        return f"{self.domain}{dev} ({self.source})"


@dataclass
class Energy:
    """A trial's energy over its window, or why there is none."""

    status: str
    """`measured`, or why not: `no_trace`, `fault`, `disordered` (time goes back in the
    trace), `unavailable`, `no_window`, `no_domain`, `not_covered`, `gap`,
    `below_resolution`."""
    reason: str | None
    trace: str | None = None
    tool: str | None = None
    source: str | None = None
    """The instrument, as trials.csv's `energy_source` names it (nvml, rapl, nvml+rapl,
    powermetrics, hwinfo, nvidia-smi)."""
    domains: tuple[str, ...] = ()
    """`domain[:device]` of every series summed."""
    series: list[Series] = field(default_factory=list)
    energy_j: float | None = None
    """The energy of the series over the window (also when not `measured`, for the report;
    only a `measured` one supports a figure)."""
    average_power_w: float | None = None
    joules_per_inference: float | None = None
    span: tuple[float, float] | None = None
    """The trace's span over the summed series, in seconds from the window's start."""
    curve: list[tuple[float, float]] = field(default_factory=list)
    """The summed power of those series over time, (seconds from the window's start,
    watts) at each step, from half a window before it to half a window after (the report's
    figure)."""
    cross_checks: list[CrossCheck] = field(default_factory=list)
    """Each summed counter against the same instrument's power samples over the window
    (`counter_cross_checks`)."""

    @property
    def measured(self) -> bool:
        return self.status == "measured"


def _runner_series(frame: pl.DataFrame) -> tuple[pl.DataFrame, str | None]:
    """Our runner's counter rows it sums (NVML, RAPL package else psys), and a reason when
    an instrument gave power samples for a device but no counter."""
    counters = frame.filter(pl.col("energy_j").is_not_null())
    samples = frame.filter(pl.col("energy_j").is_null())
    inst = pl.col("source").str.split(":").list.first()
    nvml = counters.filter(inst == "nvml")
    rapl = counters.filter((inst == "rapl") & (pl.col("domain") == "package"))
    if rapl.is_empty():
        rapl = counters.filter((inst == "rapl") & (pl.col("domain") == "psys"))
    have = set(counters.select(inst.alias("i"), "device").unique().iter_rows())
    lacking = sorted(set(samples.select(inst.alias("i"), "device").unique().iter_rows()) - have,
                     key=str)
    why = ("; ".join(f"{i} device {d}: power samples but no energy counter (samples are a "
                     "cross-check, never the energy)" for i, d in lacking) or None)
    return pl.concat([nvml, rapl]), why


def _unit_not_measured(pol: Policy | None, instruments: list[str]) -> str | None:
    """Our runner's instruments must cover the unit a policy computes on: a cpu-only
    policy measured by NVML alone would be costed at the GPU board's idle draw, a GPU
    policy measured by RAPL alone at its CPU side only (the runner says the same: such a
    window is not measured). The unit not measured, or None."""
    if pol is None or not instruments:
        return None
    if not pol.accelerator and "rapl" not in instruments:
        return "the CPU packages (RAPL)"
    if "gpu" in pol.accelerator and "nvml" not in instruments:
        return "the GPU (NVML)"
    return None


def trial_energy(view: RunView, ev: Evidence | None, t: Trial) -> Energy:
    """The energy of trial T over its window, from its trace EV (conventions above)."""
    if ev is None:
        return Energy("no_trace", "no power trace for this trial")
    base = {"trace": ev.path, "tool": ev.tool}
    if not ev.usable:
        return Energy("fault", f"{ev.path} could not be read (see its B0002 findings)", **base)
    if ev.time_back:
        lines = ", ".join(str(n) for n in ev.time_back[:5])
        return Energy("disordered", f"{ev.path}: time goes back at line(s) {lines} (an edited "
                      "or merged trace, or a clock step): its intervals are not the tool's",
                      **base)
    if ev.frame is None or ev.frame.is_empty():
        reasons = [f"{u.get('source')}: {u.get('reason')}" for u in
                   ev.meta.get("unavailable") or [] if isinstance(u, Mapping)]
        return Energy("unavailable", "; ".join(reasons) or "; ".join(ev.content)
                      or "the trace holds no power reading", **base)
    if t.start is None or t.end is None or t.end <= t.start:
        return Energy("no_window", "the trial's window is not known (no markers in the trace, "
                      "no started_at/ended_at)", **base)
    family = _tool_family(ev.reader)
    # seconds from the window's start: float epoch seconds would lose the microseconds
    origin = t.start // 1000
    frame = ev.frame.with_columns(
        ((pl.col("start").dt.epoch("us") - origin) / 1e6).alias("s"),
        ((pl.col("end").dt.epoch("us") - origin) / 1e6).alias("e"))
    t0, t1 = (t.start - origin * 1000) / 1e9, (t.end - origin * 1000) / 1e9
    if family == "runner-jsonl":
        chosen, why = _runner_series(frame)
        if why:
            return Energy("unavailable", why, **base)
        instruments = sorted(set(chosen["source"].str.split(":").list.first().to_list()))
        source = "+".join(instruments) or None
        lacking = _unit_not_measured(policies(view).get(t.policy_id), instruments)
        if lacking:
            return Energy("no_domain", f"{lacking} where this policy computes are not "
                          f"measured: {source or 'what the trace holds'} alone would misstate "
                          "its cost", **base, source=source)
    else:
        present = set(frame["domain"].unique().to_list())
        domains = _domains(family, present)
        parts = []
        for _, g in frame.filter(pl.col("domain").is_in(domains)).group_by(
                "domain", "device", maintain_order=True):
            parts.append(g.filter(pl.col("source") == _pick_source(g["source"].unique()
                                                                    .to_list())))
        chosen = pl.concat(parts) if parts else frame.clear()
        source = family if family != "other" else ev.reader
    if chosen.is_empty():
        return Energy("no_domain", f"no power domain the auditor sums for {ev.tool} "
                      f"({DOMAIN_RULES[family]})", **base, source=source)
    mins = minimums(view)
    period = mins.get("sampling_interval_s")
    gap_limit = mins["gap_factor"] * period if period else None
    series: list[Series] = []
    for (dom, dev, src), g in chosen.sort("e").group_by("domain", "device", "source",
                                                        maintain_order=True):
        kind = "counter" if family == "runner-jsonl" else "interval"
        series.append(_series(g, dom, dev, src, kind, t0, t1, period))
    energy = sum(s.energy_j for s in series)
    curve = _curve(chosen, -CURVE_PAD * (t1 - t0), t1 + CURVE_PAD * (t1 - t0))
    spans = [(g["s"].min(), g["e"].max()) for _, g in chosen.group_by("domain", "device")]
    starts = [a if a is not None else b for a, b in spans]
    span = (max(starts), min(b for _, b in spans)) if spans else None
    wall = t1 - t0
    n = t.lines or 0
    e = Energy("measured", None, **base, source=source,
               domains=tuple(sorted({s.domain + ("" if s.device is None else f":{s.device}")
                                     for s in series})),
               series=series, energy_j=energy, span=span, curve=curve,
               average_power_w=energy / wall if wall > 0 else None,
               joules_per_inference=energy / n if n else None)
    if family == "runner-jsonl":
        e.cross_checks = counter_cross_checks(frame, series, t0, t1, mins)
    uncovered = [f"{s.name}: {s.uncovered}" for s in series if not s.covered]
    if uncovered:
        e.status, e.reason = "not_covered", "; ".join(uncovered)
        return e
    if gap_limit is not None:
        gaps = [s for s in series if s.kind == "interval" and s.max_interval_s is not None
                and s.max_interval_s > gap_limit]
        if gaps:
            e.status = "gap"
            e.reason = "; ".join(f"{s.name}: {s.max_interval_s:.3f} s between two readings, "
                                 f"more than {mins['gap_factor']:g} x the declared "
                                 f"{period:g} s" for s in gaps)
            return e
    short = []
    if wall < mins.get("window_seconds", 0.0):
        short.append(f"window {wall:.3f} s is shorter than the declared minimum of "
                     f"{mins['window_seconds']:g} s")
    short += [f"{s.name}: {s.readings} reading(s) over the window, fewer than the declared "
              f"{mins['sample_periods']:g}" for s in series
              if s.kind == "interval" and s.readings < mins.get("sample_periods", 0)]
    short += [f"{s.name}: updated {s.updates} time(s) inside the window, fewer than the "
              f"declared {mins['counter_updates']:g}" for s in series
              if s.kind == "counter" and s.updates < mins.get("counter_updates", 0)]
    if short:
        e.status, e.reason = "below_resolution", "; ".join(short)
    return e


CURVE_PAD = 0.5
"""The power curve shows this many windows of trace before and after the window."""


def _curve(chosen: pl.DataFrame, lo: float, hi: float) -> list[tuple[float, float]]:
    """Steps of the summed power of CHOSEN's series over [LO, HI]: at every interval edge,
    the sum of each series' reading over the interval that holds the next instant."""
    rows = [r for r in chosen.select("domain", "device", "source", "s", "e", "watts").rows()
            if r[3] is not None and r[5] is not None and r[4] > lo and r[3] < hi]
    by: dict[tuple, list[tuple[float, float, float]]] = {}
    for d, dev, src, a, b, w in rows:
        by.setdefault((d, dev, src), []).append((a, b, w))
    for ivs in by.values():
        ivs.sort()
    bounds = sorted({min(hi, max(lo, x)) for _, _, _, a, b, _ in rows for x in (a, b)})
    out: list[tuple[float, float]] = []
    for a, b in itertools.pairwise(bounds):
        mid = (a + b) / 2
        total = 0.0
        for ivs in by.values():
            k = bisect.bisect_right(ivs, (mid, math.inf, math.inf)) - 1
            if k >= 0 and ivs[k][0] <= mid < ivs[k][1]:
                total += ivs[k][2]
        out.append((a, total))
    if bounds:
        out.append((bounds[-1], out[-1][1] if out else 0.0))
    return out


def _series(g: pl.DataFrame, dom: str, dev: int | None, src: str, kind: str, t0: float,
            t1: float, period: float | None) -> Series:
    s = Series(dom, dev, src, kind)
    rows = g.select("s", "e", "energy_j", "watts", "interval_s").rows()
    if kind == "counter":
        inside = [(a, b, en) for a, b, en, _, _ in rows
                  if a is not None and t0 <= a and b <= t1]
        reads = sorted({x for a, b, _ in inside for x in (a, b)})
        s.readings = len(reads)
        s.updates = sum(1 for _, _, en in inside if en)
        s.energy_j = sum(en for _, _, en in inside if en)
        steps = [b - a for a, b, _ in inside]
        s.max_interval_s = max(steps) if steps else None
        if len(reads) >= 2:
            s.observed, s.observed_s = (reads[0], reads[-1]), reads[-1] - reads[0]
        edge = period if period else 0.0
        if len(reads) < 2:
            s.uncovered = f"{len(reads)} reading(s) inside the window, fewer than the two needed"
        elif reads[0] - t0 > edge or t1 - reads[-1] > edge:
            s.uncovered = (f"first reading {reads[0] - t0:.3f} s after the window starts, last "
                           f"{t1 - reads[-1]:.3f} s before it ends (more than one sampling "
                           "period unobserved)")
        else:
            s.covered = True
        return s
    timed = sorted((a, b, en, w) for a, b, en, w, _ in rows if a is not None and b > a)
    over = [(a, b, en, w) for a, b, en, w in timed if min(b, t1) - max(a, t0) > 0]
    for a, b, en, watts in over:
        joules = en if en is not None else (watts or 0.0) * (b - a)
        s.energy_j += joules * (min(b, t1) - max(a, t0)) / (b - a)
    s.readings = len(over)
    if over:
        s.observed = (max(over[0][0], t0), min(max(b for _, b, _, _ in over), t1))
        s.observed_s = sum(min(b, t1) - max(a, t0) for a, b, _, _ in over)
    # how far apart the readings are: each reading's end after the previous one's (the
    # first: its own interval), so a missed reading shows whatever the tool's intervals say
    spacing = [b - a for a, b, _, _ in over[:1]]
    spacing += [b - prev for (_, prev, _, _), (_, b, _, _) in itertools.pairwise(over)]
    s.max_interval_s = max(spacing) if spacing else None
    first = min((a for a, _, _, _ in timed), default=None)
    last = max((b for _, b, _, _ in timed), default=None)
    if first is None or last is None or first > t0 or last < t1:
        s.uncovered = ("no reading covers an interval" if first is None or last is None else
                       f"the trace spans {_span_text(first, last)}, the window "
                       f"{_span_text(t0, t1)}: the window is not inside it")
    else:
        s.covered = True
    return s


# -- counters against power samples ----------------------------------------------------------

CROSS_REL = 0.05
"""A power reading may be off by this share of the draw (NVML's nvmlDeviceGetPowerUsage: "on
Fermi and Kepler GPUs the reading is accurate to within +/- 5% of current power draw"; NVML
gives no figure for newer boards, EVIDENCE.md none at all: not verified on a GPU here)."""
CROSS_ABS_W = 5.0
"""... plus this many watts (nvidia-smi's manual for power.draw on older boards: "accurate to
within +/- 5 watts"), which dominates at the low draws of an idle GPU."""
CROSS_ERROR_FACTOR = 3.0
"""A counter and its samples further apart than this many allowances disagree (an error: one
of them is not the measurement); between one allowance and this many: the grey band (a
warning)."""
AVERAGING_S = 1.0
"""An averaged power field averages over about this long (EVIDENCE.md: `power.draw` is a
1-second average on Ampere and newer): it lags a change of load by up to that much."""
AVERAGED_FIELDS = ("POWER_AVERAGE", "nvmlDeviceGetPowerUsage")
"""Sample fields that are rolling averages, not instantaneous readings (NVML's
nvmlDeviceGetPowerUsage is what `power.draw` reads)."""


@dataclass
class CrossCheck:
    """A summed energy counter against the same instrument's power samples (same domain and
    device) over a trial's window. `status`: `agrees`, `grey` (beyond the allowance, within
    `CROSS_ERROR_FACTOR` of it), `disagrees`, or `sparse` (the samples are too few or too far
    apart over the window to judge by: no judgement)."""

    counter: str
    """The counter's source (`nvml:nvmlDeviceGetTotalEnergyConsumption`)."""
    samples: str
    """The sample source compared (`nvml:POWER_INSTANT`)."""
    domain: str
    device: int | None
    status: str
    reason: str | None = None
    counter_w: float | None = None
    """The counter's average power: its energy over the stretch its readings observe."""
    samples_w: float | None = None
    """The samples' average power: their energy over the window (`_series`'s integration:
    each reading held over its interval, pro rata at the edges) over the seconds of the
    window their intervals cover."""
    readings: int = 0
    allowance_w: float | None = None

    @property
    def name(self) -> str:
        dev = "" if self.device is None else f" {self.device}"
        return f"{self.domain}{dev}"

    @property
    def ratio(self) -> float | None:
        """The counter's power over the samples' (None when the samples say 0 W)."""
        if self.counter_w is None or not self.samples_w:
            return None
        return self.counter_w / self.samples_w


def _sample_rank(source: str) -> tuple[int, str]:
    """Instantaneous readings first, then the others, rolling averages last (by name)."""
    fld = source.partition(":")[2]
    return (0 if fld == "POWER_INSTANT" else 2 if fld in AVERAGED_FIELDS else 1, source)


def counter_cross_checks(frame: pl.DataFrame, series: list[Series], t0: float, t1: float,
                         mins: Mapping[str, float]) -> list[CrossCheck]:
    """Each covered counter series of our runner's trace against the power samples of the
    same instrument, domain and device over the window [T0, T1] (seconds from its start),
    where the trace has such samples (our runner writes NVML's; RAPL gives none).

    The samples judge only when dense enough: at least `sample_periods` (and two) readings
    over the window, none more than `gap_factor` declared sampling periods after the
    previous one, and the stretches they leave unobserved at each edge of the window under
    `gap_factor` periods; otherwise `sparse`. The two average powers then agree within an
    allowance of `CROSS_REL` of the larger plus `CROSS_ABS_W` (a reading's accuracy), plus
    the highest sample over the window times the share of the window the samples leave
    unobserved (held at their mean there), plus, for a rolling average, the highest sample
    times `AVERAGING_S` over the window (its lag at the edges)."""
    period = mins.get("sampling_interval_s")
    gap = mins["gap_factor"] * period if period else None
    need = max(2, math.ceil(mins.get("sample_periods", 0.0)))
    inst = pl.col("source").str.split(":").list.first()
    samples = frame.filter(pl.col("energy_j").is_null() & pl.col("watts").is_not_null())
    wall = t1 - t0
    out: list[CrossCheck] = []
    for c in series:
        if c.kind != "counter" or not c.covered or c.observed_s <= 0 or wall <= 0:
            continue
        mine = samples.filter((inst == c.source.split(":")[0]) & (pl.col("domain") == c.domain)
                              & pl.col("device").eq_missing(c.device))
        if mine.is_empty():
            continue
        src = min(mine["source"].unique().to_list(), key=_sample_rank)
        g = mine.filter(pl.col("source") == src).sort("e")
        sm = _series(g, c.domain, c.device, src, "interval", t0, t1, period)
        x = CrossCheck(c.source, src, c.domain, c.device, "sparse", readings=sm.readings)
        out.append(x)
        if gap is None:
            x.reason = "no declared sampling period to judge the samples' density by"
        elif sm.readings < need or sm.observed is None:
            x.reason = f"{sm.readings} sample(s) over the window, fewer than {need}"
        elif sm.max_interval_s is not None and sm.max_interval_s > gap:
            x.reason = (f"{sm.max_interval_s:.3f} s between two samples, more than "
                        f"{mins['gap_factor']:g} x the declared {period:g} s")
        elif sm.observed[0] - t0 > gap or t1 - sm.observed[1] > gap:
            x.reason = (f"the samples leave {sm.observed[0] - t0:.3f} s at the window's start "
                        f"and {t1 - sm.observed[1]:.3f} s at its end unobserved")
        if x.reason is not None:
            continue
        top = g.filter((pl.col("e") > t0) & (pl.col("s") < t1))["watts"].max() or 0.0
        x.counter_w = c.energy_j / c.observed_s
        x.samples_w = sm.energy_j / sm.observed_s
        allowance = (CROSS_REL * max(x.counter_w, x.samples_w) + CROSS_ABS_W
                     + top * max(0.0, wall - sm.observed_s) / wall)
        if src.partition(":")[2] in AVERAGED_FIELDS:
            allowance += top * AVERAGING_S / wall
        x.allowance_w = allowance
        diff = abs(x.counter_w - x.samples_w)
        x.status = ("agrees" if diff <= allowance + FLOAT_EPS else
                    "grey" if diff <= CROSS_ERROR_FACTOR * allowance + FLOAT_EPS
                    else "disagrees")
    return out


def _span_text(a: float, b: float) -> str:
    """An interval in seconds from the window's start, in words."""
    return f"{a:+.3f} s to {b:+.3f} s from the window's start"


# -- policies -----------------------------------------------------------------------------

@dataclass
class PolicyFacts:
    """What the auditor recomputed for one declared policy."""

    policy: Policy
    trials: list[Trial]
    ok: list[Trial]
    median_wall_s: float | None
    p95_ms: float | None
    n_latencies: int
    accuracy: float | None
    agreement: float | None
    answers_from: str | None
    """`trials` (every answer of the ok trials) or `gate pass` (gates/<policy_id>.jsonl)."""
    gate_passed: bool | None
    energy_j: float | None
    wall_s: float | None
    inferences: int | None
    average_power_w: float | None
    joules_per_inference: float | None
    energy_source: str | None
    domains: tuple[str, ...]
    energy_missing: str | None
    """Why the policy has no pooled energy figure (None when it has one)."""
    claims: dict[str, Any]
    texts: dict[str, str | None]
    row: int | None


@per_view
def policy_facts(view: RunView) -> dict[str, PolicyFacts]:
    """Per declared policy, its trials and every figure recomputed from them."""
    rows = {}
    if view.policies is not None:
        raw = view.policies_raw
        for i, r in enumerate(view.policies.iter_rows(named=True)):
            texts = raw.row(i, named=True) if raw is not None and i < raw.height else {}
            rows.setdefault(r["policy_id"], (r, texts))
    gates = view.m.get("gates") or {}
    acc_floor, agr_floor = _num(gates.get("accuracy_floor")), _num(gates.get("agreement_floor"))
    out = {}
    for pid, pol in policies(view).items():
        mine = [t for t in trials(view) if t.policy_id == pid]
        ok = [t for t in mine if t.status == "ok"]
        walls = [t.wall_s for t in ok if t.wall_s is not None]
        lats: list[float] = []
        if view.outputs is not None and ok:
            lats = view.outputs.filter(pl.col("valid") & (pl.col("policy_id") == pid)
                                       & pl.col("trial_index").is_in([t.trial_index for t in ok])
                                       )["latency_ms"].to_list()
        answers = _answers(view, [t.key for t in ok]) if ok else None
        source = "trials" if answers is not None and answers.height else None
        if source is None and view.gate_outputs is not None:
            g = view.gate_outputs.filter((pl.col("policy_id") == pid) & pl.col("valid"))
            if g.height:
                answers, source = g.select("id", "label"), "gate pass"
        acc = _share_equal(answers, view.references) if source else None
        agr = _share_equal(answers, view.reference_outputs) if source else None
        passed = None
        if acc is not None and agr is not None and acc_floor is not None \
                and agr_floor is not None:
            passed = acc >= acc_floor - FLOAT_EPS and agr >= agr_floor - FLOAT_EPS
        energies = [t.energy for t in ok]
        missing = None
        if not ok:
            missing = "no ok trial"
        elif any(e is None or not e.measured for e in energies):
            bad = next(t for t in ok if t.energy is None or not t.energy.measured)
            missing = (f"{bad.name}: energy {bad.energy.status if bad.energy else 'none'}"
                       + (f" ({bad.energy.reason})" if bad.energy and bad.energy.reason else ""))
        elif len({e.domains for e in energies if e}) > 1:
            missing = "the trials summed different power domains"
        e_j = s = n = None
        if missing is None:
            e_j = sum(e.energy_j or 0.0 for e in energies if e)
            s = sum(t.wall_s or 0.0 for t in ok)
            n = sum(t.lines or 0 for t in ok)
        r, texts = rows.get(pid, ({}, {}))
        out[pid] = PolicyFacts(
            policy=pol, trials=mine, ok=ok, median_wall_s=median(walls) if walls else None,
            p95_ms=nearest_rank(lats), n_latencies=len(lats), accuracy=acc, agreement=agr,
            answers_from=source, gate_passed=passed, energy_j=e_j, wall_s=s, inferences=n,
            average_power_w=e_j / s if e_j is not None and s else None,
            joules_per_inference=e_j / n if e_j is not None and n else None,
            energy_source=energies[0].source if missing is None and energies[0] else None,
            domains=energies[0].domains if missing is None and energies[0] else (),
            energy_missing=missing, claims=r, texts=texts, row=r.get("row"))
    return out


# -- placement ------------------------------------------------------------------------------

@dataclass
class Placement:
    """A policy's placement evidence and its shares."""

    policy_id: str
    files: tuple[str, ...]
    used: str | None
    """The file the shares come from: the one the manifest names, else the most specific
    reader's (a runner record before a raw profile)."""
    reader: str | None
    tool: str | None
    nodes: int = 0
    placed: int = 0
    operation_share: float | None = None
    cost_share: float | None = None
    cpu_node_share: float | None = None
    by_device: dict[str, int] = field(default_factory=dict)
    compute_ops: dict[str, dict[str, int]] = field(default_factory=dict)
    """Compute operator type -> device -> nodes."""
    gpu_share: float | None = None
    fallback: str | None = None
    """How the runtime ran elsewhere than asked (ORT's silent fallback, a Windows ML
    assignment to the CPU, a failed compilation), in words."""
    assigned: list[dict[str, Any]] = field(default_factory=list)
    """Windows ML: the session's providers and devices after compilation."""
    captured_at: float | None = None
    record_policy: str | None = None
    """The policy the file says it records (our runner's and Windows ML records)."""
    model_sha256: str | None = None
    """The SHA-256 of the model the file says it placed (ORT and Windows ML records)."""
    problem: str | None = None
    """Why there are no shares (no placed operation, an unreadable file)."""


def _module_rank(reader: str | None) -> int:
    """The reader's place in the registry's order, most specific first."""
    return evidence_kinds.rank(reader)


@per_view
def placements(view: RunView) -> dict[str, Placement]:
    """Per policy with placement files, its shares (conventions above)."""
    out = {}
    pols = policies(view)
    for pid, files in view.placement.items():
        pol = pols.get(pid)
        declared = pol.placement_file if pol else None
        usable = [f for f in files if f.usable]
        pick = next((f for f in usable if f.path == declared), None) or (
            min(usable, key=lambda f: _module_rank(f.reader)) if usable else None)
        p = Placement(pid, tuple(f.path for f in files), pick.path if pick else None,
                      pick.reader if pick else None, pick.tool if pick else None)
        out[pid] = p
        if pick is None:
            p.problem = "no placement file could be read"
            continue
        meta = pick.meta
        p.record_policy = meta.get("policy_id") if isinstance(meta.get("policy_id"), str) \
            else None
        p.model_sha256 = meta.get("model_sha256") if isinstance(meta.get("model_sha256"), str) \
            else None
        p.captured_at = epoch_s(meta.get("captured_at")) or epoch_s(
            (meta.get("diagnostic") or {}).get("started_at")
            if isinstance(meta.get("diagnostic"), Mapping) else None)
        if meta.get("fallback"):
            p.fallback = "; ".join(meta.get("notes") or []) or "the runtime fell back"
        if pick.reader == "windows-ml":
            p.assigned = [a for a in meta.get("assigned") or [] if isinstance(a, Mapping)]
            comp = meta.get("compilation") if isinstance(meta.get("compilation"), Mapping) else {}
            if comp.get("aot") and comp.get("succeeded") is False:
                p.fallback = f"AOT compilation failed: {comp.get('error') or 'no message'}"
        frame = pick.frame
        if frame is None or frame.filter(pl.col("device") != "unknown").is_empty():
            p.problem = "; ".join(pick.content) or "no operation with placement information"
            continue
        accel = pol.accelerator if pol and pol.accelerator else ACCELERATORS
        counted = frame
        if pol and pol.provider and frame["provider"].is_not_null().any():
            # the nodes of exactly the provider asked for (the runner's rule)
            counted = frame.with_columns(
                pl.when(pl.col("device") == "unknown").then(pl.lit("unknown"))
                .when(pl.col("provider") == pol.provider).then(pl.lit("accel"))
                .when(pl.col("device").is_in(list(accel))).then(pl.lit("other"))
                .otherwise(pl.col("device")).alias("device"))
            accel = frozenset({"accel"})
        shares = placement_shares(counted, accel)
        p.nodes, p.placed = shares["nodes"], shares["ops_with_placement"]
        if pol is None or pol.role == "accelerator":  # a CPU-only policy has no accelerator
            p.operation_share, p.cost_share = shares["operation_share"], shares["cost_share"]
        p.cpu_node_share = shares["cpu_node_share"]
        p.by_device = placement_shares(frame)["by_device"]
        p.gpu_share = placement_shares(frame, {"gpu"})["operation_share"]
        if pick.reader == "torch-record" and (pol is None or pol.role == "accelerator"):
            disp = meta.get("dispatched_by_devices") or {}
            total = sum(c for d, c in disp.items() if d != "none")
            on = sum(c for d, c in disp.items() if d != "none" and all(
                device_of(x) in accel for x in d.split(",")))
            p.operation_share = on / total if total else None
            p.cost_share = None  # a torch record carries no cost estimate
            p.cpu_node_share = (sum(c for d, c in disp.items() if d != "none" and all(
                device_of(x) == "cpu" for x in d.split(","))) / total) if total else None
        for op, dev in frame.select("op_type", "device").iter_rows():
            if is_compute_op(op):
                by = p.compute_ops.setdefault(op, {})
                by[dev] = by.get(dev, 0) + 1
    return out


def run_span(view: RunView) -> tuple[float | None, float | None]:
    """(the declaration, the last trial's end), epoch seconds."""
    ends = [t.end / 1e9 for t in trials(view) if t.end is not None]
    return epoch_s(view.m.get("declared_at")), max(ends) if ends else None


def capture_outside(view: RunView, p: Placement) -> str | None:
    """Why P's capture time (where its format records one) is not of this run's session."""
    if p.captured_at is None:
        return None
    start, end = run_span(view)
    if start is not None and p.captured_at < start - CAPTURE_MARGIN_S:
        return "captured before the run was declared"
    if end is not None and p.captured_at > end + CAPTURE_MARGIN_S:
        return "captured after the run's last trial"
    return None


def placement_of_other(view: RunView, p: Placement) -> str | None:
    """Why P's file (where its format names them) records another policy or another model
    than the policy it stands for: the record's `policy_id`, and its model's SHA-256 against
    the artifact the policy declares it runs (`policies[].artifact_sha256`)."""
    pol = policies(view).get(p.policy_id)
    if p.record_policy is not None and p.record_policy != p.policy_id:
        return f"it records policy {p.record_policy!r}, not {p.policy_id!r}"
    want = pol.artifact_sha256 if pol is not None else None
    if p.model_sha256 is not None and isinstance(want, str) \
            and p.model_sha256.lower() != want.lower():
        return (f"it placed the model {p.model_sha256[:16]}..., the policy runs the artifact "
                f"{want[:16]}...")
    return None


def residency(view: RunView, pid: str) -> str | None:
    """Why accelerator policy PID did not run on its accelerator (a fallback, a share below
    its floor, no declared floor), or None when it did (or there is no evidence to say)."""
    pol = policies(view).get(pid)
    p = placements(view).get(pid)
    if pol is None or pol.role != "accelerator" or p is None or p.problem:
        return None
    if p.fallback:
        return p.fallback
    if pol.floor is None:
        return "no operation-share floor is declared for it"
    if p.operation_share is None:
        return "its placement evidence gives no operation share"
    if p.operation_share < pol.floor - FLOAT_EPS:
        where = "/".join(sorted(pol.accelerator))
        return (f"{p.operation_share:.2%} of its operations ran on {where}, below the "
                f"declared floor of {pol.floor:.2%}")
    return None


@per_view
def gate_pass(view: RunView) -> dict[str, tuple[float | None, float | None, int]]:
    """Per policy with a gate-pass file: (accuracy, agreement, answers) over it."""
    out: dict[str, tuple[float | None, float | None, int]] = {}
    if view.gate_outputs is None:
        return out
    for (pid,), g in view.gate_outputs.filter(pl.col("valid")).group_by(
            "policy_id", maintain_order=True):
        answers = g.select("id", "label")
        out[pid] = (_share_equal(answers, view.references),
                    _share_equal(answers, view.reference_outputs), answers.height)
    return out


DOMAINS_FOR = {"gpu": {"gpu", "combined", "psys"}, "ane": {"ane", "combined", "package"},
               "npu": {"npu", "combined", "package", "ppt", "psys"},
               "cpu": {"package", "ppt", "psys", "combined", "cpu"}}
"""The summed domains that include a device's power (a GPU policy measured without the GPU
is not measured)."""


@dataclass
class Comparison:
    """An accelerator policy against the CPU-only baseline (B7)."""

    policy_id: str
    baseline: str
    status: str
    """`lower` (both figures lower), `not_lower`, `incomplete` (a figure or a domain
    missing), `invalid` (different power sources)."""
    reason: str
    power_w: float | None = None
    baseline_power_w: float | None = None
    jpi: float | None = None
    baseline_jpi: float | None = None


def _power_sources(f: PolicyFacts) -> set[str]:
    return {str(t.claims.get("power_source")) for t in f.ok if t.claims.get("power_source")}


@per_view
def comparisons(view: RunView) -> dict[str, Comparison]:
    """Every accelerator policy with ok trials against the declared baseline."""
    facts = policy_facts(view)
    base = next((f for f in facts.values() if f.policy.is_baseline), None)
    out: dict[str, Comparison] = {}
    for pid, f in facts.items():
        if f.policy.role != "accelerator" or not f.ok:
            continue
        if base is None:
            out[pid] = Comparison(pid, "", "incomplete", "no declared cpu-only baseline")
            continue
        c = Comparison(pid, base.policy.policy_id, "incomplete", "",
                       f.average_power_w, base.average_power_w, f.joules_per_inference,
                       base.joules_per_inference)
        out[pid] = c
        mine, theirs = _power_sources(f), _power_sources(base)
        if mine and theirs and mine != theirs:
            c.status = "invalid"
            c.reason = (f"measured on {'/'.join(sorted(mine))}, the baseline on "
                        f"{'/'.join(sorted(theirs))}: not the same power source")
            continue
        if f.energy_missing or base.energy_missing:
            c.reason = (f"{pid}: {f.energy_missing}" if f.energy_missing
                        else f"baseline {base.policy.policy_id}: {base.energy_missing}")
            continue
        if f.domains != base.domains:
            c.reason = (f"{pid} sums {', '.join(f.domains)}, the baseline "
                        f"{', '.join(base.domains)}: not the same domains")
            continue
        summed = {d.split(":")[0] for d in f.domains}
        lacking = sorted(d for d in f.policy.accelerator if not DOMAINS_FOR[d] & summed) \
            if f.policy.accelerator <= DOMAINS_FOR.keys() else []
        if lacking or not DOMAINS_FOR["cpu"] & summed:
            c.reason = (f"the summed domains ({', '.join(f.domains)}) leave out the "
                        f"{'/'.join(lacking) or 'CPU'} the policies run on")
            continue
        if None in (c.power_w, c.baseline_power_w, c.jpi, c.baseline_jpi):
            c.reason = "a pooled figure is missing (no answer or no wall time to divide by)"
            continue
        lower = c.power_w < c.baseline_power_w and c.jpi < c.baseline_jpi
        c.status = "lower" if lower else "not_lower"
        c.reason = (f"{c.power_w:.4g} W and {c.jpi:.4g} J per inference against the "
                    f"baseline's {c.baseline_power_w:.4g} W and {c.baseline_jpi:.4g} J")
    return out
