"""The run is built with a trial order that runs cpu twice in a row while other policies have
trials left, every position recorded as run: only B0302 checks the alternation."""

from __future__ import annotations

from dataclasses import replace

import b_runs as br

from ._helpers import build

TEMPLATE = None  # the run is built from its own spec

#: cpu's trials 1 and 2 back to back, the others alternating as the protocol orders.
ORDER = [
    ("cpu", 1),
    ("cpu", 2),
    ("torch-cuda", 1),
    ("ort-cuda", 1),
    ("torch-cuda", 2),
    ("ort-cuda", 2),
] + [(p, k) for k in (3, 4, 5) for p in ("cpu", "torch-cuda", "ort-cuda")]

MUTATION = build(replace(br.synthetic_spec(), order=ORDER))
