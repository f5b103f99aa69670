"""Whose evidence each file of a protocol B run is (PROTOCOL.md, "Evidence belongs to the run
only when it shows so"): the machine the run's evidence shows, and every power trace,
placement file and power-state file checked against it, against the run's model and
against the session's time span.

- **The run's machine** (`run_machine`): environment.json's `machine.value` (the host model),
  `cpu.model` and each of `gpus` (`name`, `uuid`, `serial`). A part environment.json does
  not name is the one most of the evidence files name (ties: the first file in path order),
  so two traces of one run can still not name two machines.
- **A file's machine** is what its reader found in it (`meta["identity"]`:
  `auditor.readers.identity`): powermetrics' `Machine model`, HWiNFO's sensor groups,
  nvidia-smi's GPU names, UUIDs and serials, a Windows ML record's assigned GPUs.
- **Same machine** (`machine_mismatches`), part by part, only where both name it: every host
  model the file names is the run's; every CPU it names is the run's; of the GPUs, the file
  names at least one of the run's (a sensor log lists every GPU of the machine, integrated
  ones included; an 8-GPU server's nvidia-smi log every board, the run used one) by name,
  by UUID and by serial, each compared apart. Names are compared by their words (`names_match`):
  one name's words are all among the other's (`NVIDIA RTX A2000` is `NVIDIA RTX A2000 8GB
  Laptop`; `12th Gen Intel(R) Core(TM) i9-12900H` is HWiNFO's `Intel Core i9-12900H`), and
  they share a word holding a digit (the model number).
- **Same model** (`model_mismatches`): a record that names the SHA-256 of the model it ran
  (a Windows ML or ONNX Runtime record) names one the run runs: the policy's own
  `artifact_sha256` for its placement file (B0401 compares that one), else the manifest's
  `artifact_sha256`; for a power-state file, any model of the run (the manifest's or a
  policy's).
- **Inside the session** (`span_outside`): a power-state file's readings (a trace) or its
  capture time (a record) lie after the declaration (`CLOCK_TOLERANCE_S`) and no later than
  `CAPTURE_MARGIN_S` after the last trial's end; the trials' own traces are judged by their
  windows (B0601) and placement files by B0401."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from auditor.protocols.b.facts.declared import policies
from auditor.protocols.b.facts.placement import CAPTURE_MARGIN_S, CLOCK_TOLERANCE_S
from auditor.protocols.b.facts.trials import run_span
from auditor.protocols.cache import per_view
from auditor.readers import timestamps
from auditor.readers.identity import Identity, known

if TYPE_CHECKING:
    from auditor.protocols.b.view import Evidence, RunView

ENVIRONMENT = "environment.json"
PARTS = ("machine", "cpu", "gpu", "gpu uuid", "gpu serial")
"""The parts of a machine compared, in the order a finding names them."""
_NOISE = frozenset({"r", "tm", "cpu", "processor", "with", "graphics"})
_ZEROS = re.compile(r"^(?:gpu-)?[0-]+$", re.IGNORECASE)


def _words(name: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9]+", name.lower()) if w not in _NOISE)


def names_match(a: str, b: str) -> bool:
    """Whether names A and B name the same product (module docstring)."""
    wa, wb = _words(a), _words(b)
    small, big = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    return bool(small) and small <= big and any(ch.isdigit() for w in small for ch in w)


def _ident(value: Any) -> str | None:
    """A UUID or serial as compared: lower case; None for a tool's "not known" and for the
    all-zero values an anonymized log holds."""
    v = known(value)
    # CUDA writes a UUID without NVML's `GPU-` prefix: the same board either way
    return None if v is None or _ZEROS.match(v) else v.lower().removeprefix("gpu-")


def _parts(ident: Identity) -> dict[str, tuple[str, ...]]:
    """What IDENT names, part by part."""
    return {
        "machine": ident.machines,
        "cpu": ident.cpus,
        "gpu": tuple(g.name for g in ident.gpus if g.name),
        "gpu uuid": tuple(x for g in ident.gpus if (x := _ident(g.uuid))),
        "gpu serial": tuple(x for g in ident.gpus if (x := _ident(g.serial))),
    }


@dataclass(frozen=True)
class RunMachine:
    """The machine a run's evidence shows, part by part, and where each part comes from."""

    parts: Mapping[str, tuple[str, ...]]
    sources: Mapping[str, str]
    """Part -> `environment.json`, or the evidence file(s) that name it."""


@dataclass(frozen=True)
class Mismatch:
    """A file that names another machine, model or time than the run's."""

    path: str
    part: str
    """`machine`, `cpu`, `gpu`, `gpu uuid`, `gpu serial`; `model`; `time`."""
    named: tuple[str, ...]
    """What the file names."""
    expected: tuple[str, ...]
    """What the run is."""
    source: str
    """Where the run's value comes from."""


def evidence_files(view: RunView) -> dict[str, Evidence]:
    """Every power trace, placement file and power-state file of the run, by path."""
    out: dict[str, Evidence] = {ev.path: ev for ev in view.power.values()}
    out.update({ev.path: ev for evs in view.placement.values() for ev in evs})
    out.update(view.power_state)
    return dict(sorted(out.items()))


def identity_of(ev: Evidence) -> Identity:
    ident = ev.meta.get("identity")
    return ident if isinstance(ident, Identity) else Identity()


def _environment(view: RunView) -> dict[str, tuple[str, ...]]:
    env = view.environment or {}
    machine = got if isinstance(got := env.get("machine"), Mapping) else {}
    cpu = got if isinstance(got := env.get("cpu"), Mapping) else {}
    gpus = [g for g in env.get("gpus") or [] if isinstance(g, Mapping)]
    out = {
        "machine": tuple(filter(None, [known(machine.get("value"))])),
        "cpu": tuple(filter(None, [known(cpu.get("model"))])),
        "gpu": tuple(n for g in gpus if (n := known(g.get("name")))),
        "gpu uuid": tuple(x for g in gpus if (x := _ident(g.get("uuid")))),
        "gpu serial": tuple(x for g in gpus if (x := _ident(g.get("serial")))),
    }
    return out


@per_view
def run_machine(view: RunView) -> RunMachine:
    """The run's machine (module docstring)."""
    env = _environment(view)
    parts: dict[str, tuple[str, ...]] = {}
    sources: dict[str, str] = {}
    named = {path: _parts(identity_of(ev)) for path, ev in evidence_files(view).items()}
    for part in PARTS:
        if env[part]:
            parts[part], sources[part] = env[part], ENVIRONMENT
            continue
        votes: Counter[str] = Counter()
        first: dict[str, str] = {}
        for path, p in named.items():
            for v in dict.fromkeys(p[part]):
                key = next((k for k in votes if _same(part, k, v)), v)
                votes[key] += 1
                first.setdefault(key, path)
        if votes:
            top = max(votes.values())
            pick = min((k for k, n in votes.items() if n == top), key=lambda k: first[k])
            parts[part] = (pick,)
            holders = [
                path for path, p in named.items() if any(_same(part, pick, v) for v in p[part])
            ]
            sources[part] = f"{holders[0]}" + (
                f" and {len(holders) - 1} other evidence file(s)" if len(holders) > 1 else ""
            )
    return RunMachine(parts, sources)


def _same(part: str, a: str, b: str) -> bool:
    return names_match(a, b) if part in ("machine", "cpu", "gpu") else a == b


def _mismatch(part: str, named: tuple[str, ...], run: tuple[str, ...]) -> bool:
    if not named or not run:
        return False
    hits = [any(_same(part, n, r) for r in run) for n in named]
    return not any(hits) if part.startswith("gpu") else not all(hits)


@per_view
def machine_mismatches(view: RunView) -> tuple[Mismatch, ...]:
    """Each evidence file that names another machine than the run's, part by part."""
    run = run_machine(view)
    out: list[Mismatch] = []
    for path, ev in evidence_files(view).items():
        named = _parts(identity_of(ev))
        for part in PARTS:
            mine = run.parts.get(part, ())
            if _mismatch(part, named[part], mine):
                out.append(
                    Mismatch(path, part, tuple(dict.fromkeys(named[part])), mine, run.sources[part])
                )
    return tuple(out)


def _models(view: RunView) -> frozenset[str]:
    shas = [view.m.get("artifact_sha256"), *(p.artifact_sha256 for p in policies(view).values())]
    return frozenset(s.lower() for s in shas if isinstance(s, str))


@per_view
def model_mismatches(view: RunView) -> tuple[Mismatch, ...]:
    """Each record that names another model than the run's (module docstring)."""
    out: list[Mismatch] = []
    manifest = view.m.get("artifact_sha256")
    pols = policies(view)
    for pid, evs in view.placement.items():
        pol = pols.get(pid)
        if pol is not None and pol.artifact_sha256:
            continue  # the policy's own artifact: B0401 compares it
        for ev in evs:
            sha = ev.meta.get("model_sha256")
            if (
                isinstance(sha, str)
                and isinstance(manifest, str)
                and sha.lower() != manifest.lower()
            ):
                out.append(
                    Mismatch(
                        ev.path, "model", (sha,), (manifest,), "manifest.json /artifact_sha256"
                    )
                )
    models = _models(view)
    for path, ev in view.power_state.items():
        sha = ev.meta.get("model_sha256")
        if isinstance(sha, str) and models and sha.lower() not in models:
            out.append(
                Mismatch(
                    path,
                    "model",
                    (sha,),
                    tuple(sorted(models)),
                    "manifest.json /artifact_sha256 and /policies/*/artifact_sha256",
                )
            )
    return tuple(sorted(out, key=lambda m: m.path))


def trace_span(ev: Evidence) -> tuple[float, float] | None:
    """(first, last) instant a trace's readings cover, epoch seconds; None for no trace."""
    if ev.family != "power" or ev.frame is None or ev.frame.is_empty():
        return None
    ends = ev.frame.select(pl.col("end").drop_nulls())
    if ends.is_empty():
        return None
    starts = ev.frame.select(pl.coalesce("start", "end").drop_nulls())
    first = cast(int, starts.to_series().dt.epoch("us").min())  # an Int64 column, not empty
    last = cast(int, ends.to_series().dt.epoch("us").max())
    return first / 1e6, last / 1e6


def span_outside(view: RunView, ev: Evidence) -> str | None:
    """Why power-state file EV lies outside the session's time span, in words (None: inside,
    or the file gives no time)."""
    start, end = run_span(view)
    span = trace_span(ev)
    if span is None:
        at = timestamps.epoch_s(ev.meta.get("captured_at"))
        span = (at, at) if at is not None else None
    if span is None:
        return None
    if start is not None and span[0] < start - CLOCK_TOLERANCE_S:
        return "it begins before the run was declared"
    if end is not None and span[1] > end + CAPTURE_MARGIN_S:
        return f"it ends more than {CAPTURE_MARGIN_S:g} s after the run's last trial"
    return None


@per_view
def time_mismatches(view: RunView) -> tuple[Mismatch, ...]:
    """Each power-state file outside the session's time span."""
    return tuple(
        Mismatch(path, "time", (why,), ("within the session",), "the trials")
        for path, ev in sorted(view.power_state.items())
        if (why := span_outside(view, ev))
    )


def foreign(view: RunView) -> dict[str, list[Mismatch]]:
    """Path -> every way that file is not the run's (machine, model, time)."""
    out: dict[str, list[Mismatch]] = {}
    for m in (*machine_mismatches(view), *model_mismatches(view), *time_mismatches(view)):
        out.setdefault(m.path, []).append(m)
    return out


def describe(m: Mismatch) -> str:
    """One mismatch in words."""
    if m.part == "time":
        return m.named[0]
    return (
        f"it names the {m.part} {', '.join(m.named)}; the run's is "
        f"{', '.join(m.expected)} ({m.source})"
    )
