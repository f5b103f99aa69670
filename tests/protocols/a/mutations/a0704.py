"""A typed memory figure claimed for batch-1's warm-2 pass is its peak allocated plus its peak
reserved bytes: only A0704 looks for such a sum."""

from __future__ import annotations

from pathlib import Path

from ._helpers import edit_claims, pass_figures

TEMPLATE = "cuda+claims"


def mutate(root: Path) -> None:
    t = pass_figures(root)
    total = t["peak_allocated_bytes"] + t["peak_reserved_bytes"]
    edit_claims(
        root,
        lambda c: c["memory_figures"].append(
            {
                "name": "gpu_memory_used",
                "value": round(total / 1e9, 2),
                "unit": "GB",
                "source": "torch.cuda",
                "variant_id": "batch-1",
                "phase": "warm",
                "run_index": 2,
            }
        ),
    )


MUTATION = mutate
