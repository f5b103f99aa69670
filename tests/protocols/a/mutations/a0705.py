"""A typed `allocator_cache` figure claimed for batch-1's warm-2 pass is its peak reserved minus
its peak allocated bytes, in MiB: only A0705 looks for such a difference."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_claims, pass_figures

TEMPLATE = "cuda+claims"


def mutate(root: Path) -> None:
    t = pass_figures(root)
    cache = (t["peak_reserved_bytes"] - t["peak_allocated_bytes"]) / 2**20
    edit_claims(
        root,
        lambda c: c["memory_figures"].append(
            {
                "name": "allocator_cache",
                "value": round(cache),
                "unit": "MiB",
                "source": "torch.cuda",
                "variant_id": "batch-1",
                "phase": "warm",
                "run_index": 2,
            }
        ),
    )


MUTATION = mutate
