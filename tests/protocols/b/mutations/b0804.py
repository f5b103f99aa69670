"""gates/gates.json says ort-cuda's gate pass evaluated another artifact than the ONNX export
the policy runs (re-sealed): only B0804 ties the gated evaluation to the artifact timed."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    br.edit_json(
        root,
        "gates/gates.json",
        lambda g: next(p for p in g["policies"] if p["policy_id"] == "ort-cuda").update(
            artifact_sha256="f" * 64
        ),
    )


MUTATION = mutate
