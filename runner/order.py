"""Orders drawn before measuring, shared by both protocols: passes (A6.2) and trials (B3)
alternate between variants or policies in seeded rounds, and the order is recorded."""

from __future__ import annotations

import random


def alternating_rounds(items: list[str], rounds: int, rng: random.Random) -> list[tuple[str, int]]:
    """(item, round) pairs: `rounds` rounds, each a seeded permutation of `items`, redrawn
    (up to 20 times) when it would start with the item that ended the round before, so that
    no item runs twice in a row across rounds. Shared by both protocols (A6.2, B3)."""
    out: list[tuple[str, int]] = []
    last = None
    for r in range(1, rounds + 1 if items else 1):
        perm = rng.sample(items, len(items))
        for _ in range(20):
            if len(items) == 1 or perm[0] != last:
                break
            perm = rng.sample(items, len(items))
        out += [(v, r) for v in perm]
        last = perm[-1]
    return out
