"""The fixed prompt sequence and every answer given to it: the sequence as the run keeps it,
per outputs file its lines, invalid lines, labels outside the classes, latencies (their p95
by nearest rank and their sum) and the lines out of the sequence's order; the answers of a
set of trials or of a policy's gate pass, how many of them equal a reference, and how many
of each trial's answers are the ones its policy's gate pass gave to the same prompt."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from auditor.protocols.b.artifacts import PROMPTS
from auditor.protocols.cache import per_view
from auditor.stats import nearest_rank_expr

if TYPE_CHECKING:
    from auditor.protocols.b.view import RunView


@dataclass(frozen=True)
class Sequence:
    """The fixed prompt sequence (prompts/sequence.jsonl)."""

    ids: tuple[str, ...]
    """The IDs in order."""
    sha256: str | None
    """The file's SHA-256, from the run-dir walk."""
    duplicates: tuple[str, ...]
    """IDs listed twice, sorted."""

    @property
    def n(self) -> int:
        return len(self.ids)


@per_view
def sequence(view: RunView) -> Sequence:
    ids = tuple(view.prompts["id"].to_list()) if view.prompts is not None else ()
    seen: set[str] = set()
    dups = {i for i in ids if i in seen or seen.add(i)}  # type: ignore[func-returns-value]
    return Sequence(ids, view.files_on_disk.get(PROMPTS), tuple(sorted(dups)))


_COUNTS = (
    "lines",
    "n_invalid",
    "invalid_first_line",
    "n_bad_label",
    "bad_label_first_line",
    "n_latencies",
    "order_diffs",
    "order_first_line",
)


@per_view
def trial_outputs(view: RunView) -> pl.DataFrame:
    """One row per outputs file: `policy_id`, `trial_index`, `file`, `lines`, `n_invalid`,
    `invalid_first_line`, `invalid_error`, `n_bad_label`, `bad_label_first_line`,
    `n_latencies`, `p95_ms`, `sum_ms`, `order_diffs` (lines whose ID is not the sequence's
    at that position, the sequence repeated), `order_first_line`, `order_first_id`."""
    idx = view.output_index
    o = view.outputs
    seq = sequence(view)
    if o is None:
        return idx.select("policy_id", "trial_index", "file").with_columns(
            *[pl.lit(None, dtype=pl.Int64).alias(c) for c in _COUNTS],
            pl.lit(None, dtype=pl.String).alias("invalid_error"),
            pl.lit(None, dtype=pl.Float64).alias("p95_ms"),
            pl.lit(None, dtype=pl.Float64).alias("sum_ms"),
            pl.lit(None, dtype=pl.String).alias("order_first_id"),
        )
    classes = list((view.m.get("task") or {}).get("classes") or [])
    if seq.n:
        expected = pl.Series("expected", seq.ids, dtype=pl.String)
        o = o.with_columns(
            expected.gather(((o["line"] - 1) % seq.n).cast(pl.Int64)).alias("expected")
        )
        off = (pl.col("id") != pl.col("expected")).fill_null(True)
    else:  # no readable sequence: the order cannot be judged (B1002 is skipped)
        off = pl.lit(False)
    bad_label = pl.col("valid") & ~pl.col("label").is_in(classes) if classes else pl.lit(False)
    lat = pl.col("latency_ms").filter(pl.col("valid"))
    agg = o.group_by("file_no").agg(
        pl.len().alias("lines"),
        (~pl.col("valid")).sum().alias("n_invalid"),
        pl.col("line").filter(~pl.col("valid")).first().alias("invalid_first_line"),
        pl.col("error").filter(~pl.col("valid")).first().alias("invalid_error"),
        bad_label.sum().alias("n_bad_label"),
        pl.col("line").filter(bad_label).first().alias("bad_label_first_line"),
        lat.len().alias("n_latencies"),
        nearest_rank_expr(lat).alias("p95_ms"),
        lat.sum().alias("sum_ms"),
        off.sum().alias("order_diffs"),
        pl.col("line").filter(off).first().alias("order_first_line"),
        pl.col("id").filter(off).first().alias("order_first_id"),
    )
    out = view.output_index.join(agg, on="file_no", how="left", maintain_order="left")
    counts = ["lines", "n_invalid", "n_bad_label", "n_latencies", "order_diffs"]
    return out.with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts]).drop("file_no")


def answers(view: RunView, keys: Iterable[tuple[str, int]]) -> pl.DataFrame | None:
    """The valid answers (`id`, `label`) of the trials KEYS ((policy_id, trial_index))."""
    if view.outputs is None:
        return None
    want = pl.DataFrame(
        list(keys), schema={"policy_id": pl.String, "trial_index": pl.Int64}, orient="row"
    )
    return (
        view.outputs.filter(pl.col("valid"))
        .join(want, on=["policy_id", "trial_index"], how="semi")
        .select("id", "label")
    )


def share_equal(answers: pl.DataFrame, ref: pl.DataFrame | None) -> float | None:
    """The share of ANSWERS whose label is REF's for the same ID (an ID REF lacks counts as
    not equal); None without a reference or an answer."""
    if ref is None or answers.height == 0:
        return None
    firsts = ref.unique(subset="id", keep="first").select("id", pl.col("label").alias("ref"))
    joined = answers.join(firsts, on="id", how="left")
    return joined.select((pl.col("label") == pl.col("ref")).fill_null(False).mean()).item()


@dataclass(frozen=True)
class GatePass:
    """A policy's gate pass (gates/<policy_id>.jsonl) against the references."""

    accuracy: float | None
    agreement: float | None
    answers: int


@per_view
def gate_pass(view: RunView) -> dict[str, GatePass]:
    """Per policy with a gate-pass file: accuracy, agreement and answers over it."""
    out: dict[str, GatePass] = {}
    if view.gate_outputs is None:
        return out
    for (pid,), g in view.gate_outputs.filter(pl.col("valid")).group_by(
        "policy_id", maintain_order=True
    ):
        got = g.select("id", "label")
        out[pid] = GatePass(
            share_equal(got, view.references), share_equal(got, view.reference_outputs), got.height
        )
    return out


@dataclass(frozen=True)
class AgainstGate:
    """One trial's answers against its policy's gate pass (the gated evaluation)."""

    answers: int
    """The trial's valid answers to a prompt the gate pass answered."""
    same: int
    """Of them, those equal to the gate pass's answer to the same prompt."""
    first_line: int | None
    """The trial's first line whose answer differs."""

    @property
    def share(self) -> float | None:
        return self.same / self.answers if self.answers else None


@per_view
def trials_against_gate(view: RunView) -> dict[tuple[str, int], AgainstGate]:
    """Per trial of a policy with a gate pass, its answers against that pass's (each prompt's
    first valid gate answer); one join over every outputs file."""
    if view.outputs is None or view.gate_outputs is None:
        return {}
    gate = (
        view.gate_outputs.filter(pl.col("valid"))
        .unique(subset=["policy_id", "id"], keep="first")
        .select("policy_id", "id", pl.col("label").alias("gated"))
    )
    per = (
        view.outputs.filter(pl.col("valid"))
        .join(gate, on=["policy_id", "id"], how="inner")
        .group_by("policy_id", "trial_index")
        .agg(
            pl.len().alias("n"),
            (pl.col("label") == pl.col("gated")).sum().alias("same"),
            pl.col("line").filter(pl.col("label") != pl.col("gated")).min().alias("first"),
        )
    )
    return {(pid, k): AgainstGate(n, same, first) for pid, k, n, same, first in per.iter_rows()}
