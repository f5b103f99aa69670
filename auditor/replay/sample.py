"""The seeded draw of the IDs replay re-runs, reproducible by anyone from the seed alone.

The sample is the N distinct IDs of the inputs file whose SHA-256 of `"<seed>:<id>"` (UTF-8,
hex) is smallest, listed in input order: no random generator, so two reviewers, or another
tool, draw the same IDs from the same seed whatever their language or version. Without
`--seed`, the seed is drawn from a fixed tag mixed with the manifest's SHA-256
(`default_seed`): the same run gives every reviewer the same sample, and a submitter cannot
know it before the manifest is final. The result records the seed and how it was chosen.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

SEED_TAG = "gpubench-audit/replay-sample/1"
"""Mixed with the manifest's SHA-256 to make the default seed (docs/replay.md)."""
METHOD = (
    "the N distinct input IDs with the smallest SHA-256 of '<seed>:<id>' (UTF-8, hex), "
    "in input order"
)


@dataclass(frozen=True)
class Sample:
    """The IDs drawn and how."""

    ids: tuple[str, ...]
    """In input order."""
    seed: int
    seed_source: str
    """`--seed`, or the default and what it was mixed with."""
    requested: int
    population: int
    """Distinct IDs the draw was made from."""

    def to_json(self) -> dict[str, object]:
        return {
            "seed": self.seed,
            "seed_source": self.seed_source,
            "requested": self.requested,
            "drawn": len(self.ids),
            "population": self.population,
            "method": METHOD,
            "ids": list(self.ids),
        }


def default_seed(manifest_sha256: str) -> int:
    """The seed of a replay without `--seed`: the first 48 bits of SHA-256 of
    `"<SEED_TAG>:<manifest sha256 hex>"`."""
    digest = hashlib.sha256(f"{SEED_TAG}:{manifest_sha256}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def draw(ids: Iterable[str], n: int, seed: int, seed_source: str) -> Sample:
    """N of IDS (all of them when there are fewer), as the module says."""
    distinct = list(dict.fromkeys(ids))

    def key(i: str) -> str:
        return hashlib.sha256(f"{seed}:{i}".encode()).hexdigest()

    chosen = set(sorted(distinct, key=key)[:n])
    return Sample(tuple(i for i in distinct if i in chosen), seed, seed_source, n, len(distinct))
