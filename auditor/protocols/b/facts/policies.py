"""What the auditor recomputed for each declared policy of a protocol B run, from its trials:
the median wall time of its ok trials, the p95 by nearest rank over every latency of them,
accuracy and agreement over every answer of them (or of its gate pass when it has none), and
its pooled energy.

- **Median wall time**: the median of the `ok` trials' recomputed wall times (the mean of the
  two middle values for an even count).
- **Pooled energy**: the sum of energy over the sum of wall times (average power), or of
  answers (joules per inference); it exists only when every `ok` trial has a measured energy
  from the same domains.
- **Accuracy and agreement**: answers equal to corpus/references.jsonl (or
  reference/outputs.jsonl) / answers; an answer whose ID has no reference counts as not equal.
  The gate is passed when both meet the manifest's floors. Where the run keeps the policy's
  gate pass (the gated evaluation, gates/<policy_id>.jsonl), it is judged too, on its own
  answers (`gated_passed`): a candidate whose gated evaluation fails is rejected whatever
  its trials answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, Any

import polars as pl

from auditor.protocols.b.facts.claims import FLOAT_EPS
from auditor.protocols.b.facts.declared import Policy, number, policies
from auditor.protocols.b.facts.sequence import GatePass, answers, gate_pass, share_equal
from auditor.protocols.b.facts.trials import Trial, trials
from auditor.protocols.cache import per_view
from auditor.stats import nearest_rank_expr

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView


@dataclass(frozen=True)
class PolicyFacts:
    """What the auditor recomputed for one declared policy."""

    policy: Policy
    trials: tuple[Trial, ...]
    ok: tuple[Trial, ...]
    median_wall_s: float | None
    p95_ms: float | None
    n_latencies: int
    accuracy: float | None
    agreement: float | None
    answers_from: str | None
    """`trials` (every answer of the ok trials) or `gate pass` (gates/<policy_id>.jsonl)."""
    answers_passed: bool | None
    """Whether the answers accuracy and agreement are over (`answers_from`) meet both floors."""
    gate_passed: bool | None
    """Whether the policy passes the gates: its answers and, where kept, its gated evaluation
    both meet the floors (False when either fails; None when neither can be judged)."""
    gated: GatePass | None
    """Its gate pass (gates/<policy_id>.jsonl) against the references, when the run keeps one."""
    gated_passed: bool | None
    """Whether that gate pass meets both floors (None without one, or without floors)."""
    energy_j: float | None
    wall_s: float | None
    inferences: int | None
    average_power_w: float | None
    joules_per_inference: float | None
    energy_source: str | None
    domains: tuple[str, ...]
    includes: frozenset[str]
    """The devices whose power the summed series hold (empty without a pooled figure)."""
    domain_power_w: tuple[tuple[str, float], ...]
    """Each summed domain's own average power (`domain[:device]`, watts) over the ok trials'
    windows: "average package power" is their sum, each also reported (the protocol's
    decision on B7)."""
    energy_missing: str | None
    """Why the policy has no pooled energy figure (None when it has one)."""
    claims: Mapping[str, Any]
    texts: Mapping[str, str | None]
    row: int | None


def _latencies(view: RunView) -> dict[str, tuple[float | None, int]]:
    """Per policy, (p95, count) over every valid latency of its ok trials: one query."""
    if view.outputs is None:
        return {}
    ok = [t.key for t in trials(view) if t.status == "ok"]
    if not ok:
        return {}
    keys = pl.DataFrame(ok, schema={"policy_id": pl.String, "trial_index": pl.Int64}, orient="row")
    lat = pl.col("latency_ms").drop_nulls()
    per = (
        view.outputs.filter(pl.col("valid"))
        .join(keys, on=["policy_id", "trial_index"], how="semi")
        .group_by("policy_id")
        .agg(nearest_rank_expr(lat).alias("p95"), lat.len().alias("n"))
    )
    return {pid: (p95, n) for pid, p95, n in per.iter_rows()}


def _by_domain(ok: tuple[Trial, ...], wall_s: float | None) -> tuple[tuple[str, float], ...]:
    """Each summed domain's energy over the ok trials' windows, over their wall time."""
    if not wall_s:
        return ()
    energy: dict[str, float] = {}
    for t in ok:
        for s in t.energy.series if t.energy else ():
            name = s.domain + ("" if s.device is None else f":{s.device}")
            energy[name] = energy.get(name, 0.0) + s.energy_j
    return tuple((name, e / wall_s) for name, e in sorted(energy.items()))


def _passes(
    acc: float | None, agr: float | None, acc_floor: float | None, agr_floor: float | None
) -> bool | None:
    if None in (acc, agr, acc_floor, agr_floor):
        return None
    return (
        acc >= acc_floor - FLOAT_EPS  # type: ignore[operator]
        and agr >= agr_floor - FLOAT_EPS  # type: ignore[operator]
    )


def _missing(ok: tuple[Trial, ...]) -> str | None:
    """Why OK's trials give no pooled energy figure, or None."""
    if not ok:
        return "no ok trial"
    bad = next((t for t in ok if t.energy is None or not t.energy.measured), None)
    if bad is not None:
        e = bad.energy
        return f"{bad.name}: energy {e.status if e else 'none'}" + (
            f" ({e.reason})" if e and e.reason else ""
        )
    if len({t.energy.domains for t in ok if t.energy}) > 1:
        return "the trials summed different power domains"
    return None


@per_view
def policy_facts(view: RunView) -> dict[str, PolicyFacts]:
    """Per declared policy, its trials and every figure recomputed from them."""
    rows: dict[str, tuple[dict, dict]] = {}
    if view.policies is not None:
        raw = view.policies_raw
        for i, r in enumerate(view.policies.iter_rows(named=True)):
            texts = raw.row(i, named=True) if raw is not None and i < raw.height else {}
            rows.setdefault(r["policy_id"], (r, texts))
    gates = view.m.get("gates") or {}
    acc_floor, agr_floor = number(gates.get("accuracy_floor")), number(gates.get("agreement_floor"))
    lats = _latencies(view)
    out = {}
    for pid, pol in policies(view).items():
        mine = tuple(t for t in trials(view) if t.policy_id == pid)
        ok = tuple(t for t in mine if t.status == "ok")
        walls = [t.wall_s for t in ok if t.wall_s is not None]
        given = answers(view, [t.key for t in ok]) if ok else None
        source = "trials" if given is not None and given.height else None
        if source is None and view.gate_outputs is not None:
            g = view.gate_outputs.filter((pl.col("policy_id") == pid) & pl.col("valid"))
            if g.height:
                given, source = g.select("id", "label"), "gate pass"
        acc = share_equal(given, view.references) if source and given is not None else None
        agr = share_equal(given, view.reference_outputs) if source and given is not None else None
        passed = _passes(acc, agr, acc_floor, agr_floor)
        gated = gate_pass(view).get(pid)
        gated_passed = (
            _passes(gated.accuracy, gated.agreement, acc_floor, agr_floor) if gated else None
        )
        verdicts = {passed, gated_passed} - {None}
        missing = _missing(ok)
        first = ok[0].energy if ok and missing is None else None
        e_j = s = n = None
        if missing is None:
            e_j = sum(t.energy.energy_j or 0.0 for t in ok if t.energy)
            s = sum(t.wall_s or 0.0 for t in ok)
            n = sum(t.lines or 0 for t in ok)
        r, texts = rows.get(pid, ({}, {}))
        p95, n_lat = lats.get(pid, (None, 0))
        out[pid] = PolicyFacts(
            policy=pol,
            trials=mine,
            ok=ok,
            median_wall_s=median(walls) if walls else None,
            p95_ms=p95,
            n_latencies=n_lat,
            accuracy=acc,
            agreement=agr,
            answers_from=source,
            answers_passed=passed,
            gate_passed=(False not in verdicts) if verdicts else None,
            gated=gated,
            gated_passed=gated_passed,
            energy_j=e_j,
            wall_s=s,
            inferences=n,
            average_power_w=e_j / s if e_j is not None and s else None,
            joules_per_inference=e_j / n if e_j is not None and n else None,
            energy_source=first.source if first else None,
            domains=first.domains if first else (),
            includes=first.includes if first else frozenset(),
            domain_power_w=_by_domain(ok, s) if missing is None else (),
            energy_missing=missing,
            claims=r,
            texts=texts,
            row=r.get("row"),
        )
    return out
