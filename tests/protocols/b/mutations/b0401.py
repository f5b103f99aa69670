"""torch-cuda's placement record is removed and the manifest re-sealed: an accelerator policy
without placement evidence, which only B0401 requires."""

from __future__ import annotations

from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    (root / "placement/torch-cuda.torch.json").unlink()
    br.rehash(root)


MUTATION = mutate
