"""A protocol A run's summary, a fact of the protocol: per variant its verdict, why (in a few
words, and the deciding finding's code and message), the GPUs its device maps show, its warm
median and range, throughput and each offer's cost; the accepted configurations fastest
first; and how sure to be (unstable warm spread, concurrent load, a shared GPU, example
prices). `Protocol.summarize` (the archive, and through it `audit compare`) and page 1 of the
report read this one derivation, so they can never disagree.

Every figure comes from the facts (`auditor/protocols/a/facts/`), never from the run's own
claims; a configuration is `accepted` only when all its passes are recomputed as accepted
and the audit accepts the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auditor.model import (
    AuditResult,
    ConfigSummary,
    ConfigVerdict,
    Finding,
    OfferCost,
    RunSummary,
)
from auditor.present import lookup, natural_key
from auditor.protocols import machine
from auditor.protocols.a.facts.economics import Economics, economics
from auditor.protocols.a.facts.gpus import VariantGpus, variant_gpus
from auditor.protocols.a.facts.identity import run_identity
from auditor.protocols.a.facts.passes import texts_per_corpus, variants_accepted
from auditor.protocols.a.facts.timing import VariantDurations, fastest_first, variant_durations
from auditor.protocols.a.figures import VariantFigures
from auditor.protocols.summary import main_reason, summary_of

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView

SPREAD_SHARE = 0.10
"""A variant's warm passes are pointed out as unstable when their spread (max - min) is above
this share of their median (pyperf warns at a standard deviation of 10 % of the mean; five
passes are too few for a standard deviation, so the range stands in for it)."""
LOAD_SHARE = 0.5
"""Concurrent load is pointed out when the 1-minute load average recorded before or after the
passes, less the one process that runs them, is above this share of the machine's CPUs."""


@dataclass(frozen=True)
class Spread:
    """A variant whose warm passes spread over more than `SPREAD_SHARE` of their median."""

    variant_id: str
    min_s: float
    max_s: float
    share: float


@dataclass(frozen=True)
class Load:
    """The 1-minute load averages the environment recorded, when they exceed `LOAD_SHARE`
    of the machine's CPUs besides the run itself."""

    before: float | None
    """Before the passes (None: not recorded)."""
    after: float | None
    cpus: int


@dataclass(frozen=True)
class HowSure:
    """What to take with care in the figures of a run."""

    unstable: tuple[Spread, ...]
    load: Load | None
    measured: machine.Load | None
    """The machine's load while the passes ran, as the run measured it (other processes'
    CPUs, `auditor.protocols.machine`); None when the run recorded none."""
    gpu_processes: int
    """Other processes NVML saw holding GPU memory during the run."""
    example_prices: bool
    """The offers costed are example figures, not quotes (and there is one)."""


@dataclass(frozen=True)
class Summary:
    """The run's summary (`run`, what an archive keeps) and the facts page 1 shows beside
    it: the offers costed, the accepted configurations fastest first, the others, and how
    sure to be."""

    run: RunSummary
    economics: Economics
    fastest_first: tuple[str, ...]
    """The accepted configurations by warm median (empty unless the audit accepts the run)."""
    not_accepted: tuple[str, ...]
    """The other configurations, by name: never ranked (A10.2)."""
    how_sure: HowSure


def _deciding(result: AuditResult, variant: str) -> Finding | None:
    """The variant's own finding that decides it is not accepted: the first error about it
    (one that is not about missing evidence first); None when nothing is against it."""
    own = [
        f
        for f in result.findings
        if f.severity == "error" and f.subject is not None and f.subject.config == variant
    ]
    return next((f for f in own if not f.missing_evidence), None) or next(iter(own), None)


def _run_is(result: AuditResult) -> str | None:
    """A configuration that takes its run's verdict: the run's deciding finding, said to be
    the run's (never one rule's title joined to another's message)."""
    why = main_reason(result)
    return f"the run is {result.verdict}: {why}" if why else None


def _config(
    view: RunView,
    result: AuditResult,
    d: VariantDurations,
    econ: Economics,
    accepted: frozenset[str],
    declared: Mapping[str, Any],
) -> ConfigSummary:
    """The ConfigSummary of the variant D, ACCEPTED the configurations accepted, DECLARED
    the manifest's variants by ID."""
    vid = d.variant_id
    passes_ok = variants_accepted(view)
    texts = texts_per_corpus(view)
    gpus = variant_gpus(view).get(vid, VariantGpus((), 0))
    mine = vid in accepted
    costs = tuple(
        OfferCost(
            offer_id=str(o.offer_id),
            gpu_model=str(o.offer.get("gpu_model")),
            lots=int(o.lots),
            package_total_usd_minor=o.total_usd_minor,
            cost_per_accepted_corpus_usd_minor=(
                float(o.per_corpus_usd_minor)
                if mine and o.per_corpus_usd_minor is not None
                else None
            ),
            why_not=(
                None
                if mine and o.per_corpus_usd_minor is not None
                else o.why_not
                if mine or o.problem
                else "not accepted"
            ),
            measured_here=bool(o.measured_here),
        )
        for o in econ.offers
    )
    verdict: ConfigVerdict = (
        "accepted"
        if mine
        else "rejected"
        if vid not in passes_ok or result.verdict == "accepted"
        else result.verdict
    )
    deciding = None if mine else _deciding(result, vid)
    median = d.warm.median_s
    return ConfigSummary(
        config_id=vid,
        verdict=verdict,
        gpu_model=", ".join(gpus.models) or None,
        gpu_count=gpus.count,
        precision=lookup(declared.get(vid), "precision"),
        median_s=median,
        min_s=d.warm.min_s,
        max_s=d.warm.max_s,
        throughput_per_s=(texts / median if texts and median else None),
        reason=None
        if mine
        else (
            "a pass is not accepted"
            if vid not in passes_ok
            else f"run {result.verdict} (its own passes pass)"
        ),
        detail=(
            f"{deciding.code}: {deciding.message}"
            if deciding is not None
            else _run_is(result)
            if not mine
            else None
        ),
        costs=costs,
        context=_int(lookup(declared.get(vid), "context")),
        figures=VariantFigures(
            batch=lookup(declared.get(vid), "batch"), cold_median_s=d.cold.median_s, texts=texts
        ),
    )


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _how_sure(view: RunView, econ: Economics) -> HowSure:
    """What to take with care: the warm spreads, the load, the GPU and the prices."""
    unstable = tuple(
        Spread(d.variant_id, d.warm.min_s, d.warm.max_s, d.warm.spread_share)
        for d in variant_durations(view)
        if d.warm.spread_share is not None
        and d.warm.spread_share > SPREAD_SHARE
        and d.warm.min_s is not None
        and d.warm.max_s is not None
    )
    env = view.environment or {}
    load = env.get("concurrent_load") or {}
    cpus = lookup(env, "host", "cpu_count")
    firsts = [
        x[0] if isinstance(x, list) and x and isinstance(x[0], (int, float)) else None
        for x in (load.get("loadavg_before_passes"), load.get("loadavg"))
    ]
    ones = [x for x in firsts if x is not None]
    busy = (
        Load(firsts[0], firsts[1], cpus)
        if ones and isinstance(cpus, int) and cpus > 0 and max(ones) - 1 > LOAD_SHARE * cpus
        else None
    )
    procs = load.get("gpu_processes")
    measured = machine.load_of(env)
    return HowSure(
        unstable=unstable,
        load=None if measured is not None else busy,
        measured=measured,
        gpu_processes=len(procs) if isinstance(procs, list) else 0,
        example_prices=econ.example_prices and bool(econ.offers),
    )


def summary(view: RunView, result: AuditResult, offers: Mapping[str, Any] | None = None) -> Summary:
    """The summary of RESULT's run, its offers costed: OFFERS when given (`audit report
    --offers`), else the run's own. Not cached: the verdict and the offers are the caller's;
    the facts it reads are computed once per view."""
    econ = economics(view, view.offers if offers is None else offers, result.verdict)
    ranked = fastest_first(view) if result.verdict == "accepted" else ()
    durations = variant_durations(view)
    # Without a CSV there is no configuration to list but the accepted ones.
    names = [d.variant_id for d in durations] if durations else sorted(ranked, key=natural_key)
    declared = {
        str(v.get("variant_id")): v
        for v in lookup(view.manifest, "variants") or []
        if isinstance(v, Mapping)
    }
    configs = [_config(view, result, d, econ, frozenset(ranked), declared) for d in durations]
    return Summary(
        run=summary_of(view, result, configs, run_identity(view)),
        economics=econ,
        fastest_first=ranked,
        not_accepted=tuple(v for v in names if v not in ranked),
        how_sure=_how_sure(view, econ),
    )


def summarize(view: RunView, result: AuditResult) -> RunSummary:
    """The small summary an archive keeps of one protocol A run (`Summary.run`), the run's
    own offers costed."""
    return summary(view, result).run
