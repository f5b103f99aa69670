"""Process settings of the commands that write a signed report (`audit report`, `audit
compare --out`), which import WeasyPrint, matplotlib, pyHanko and polars into one short-lived
process and lay out a page. Scoped to the command (`report_process`), never set by the
library, so a caller of `build_report` (the tests, bench/) keeps its own.

Cyclic GC: each import and the layout grow the heap by a quarter again and again, and each
time CPython runs a full collection over the whole heap (five of them, about 0.5 s of a
4 s report on the 2-core dev machine, nearly all of them finding nothing: the objects are
modules, classes and the document being built). Full collections are made ten times rarer
(`FULL_EVERY` young collections instead of 10); young collections run as usual, so memory
stays bounded (peak RSS of the default report unchanged, about 240 MiB)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FULL_EVERY = 100
"""Middle-generation collections between two full ones (CPython's default: 10)."""


@contextmanager
def report_process() -> Iterator[None]:
    """Within: the GC settings of a report command; the previous ones restored after."""
    old = gc.get_threshold()
    gc.set_threshold(old[0], old[1], max(old[2], FULL_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(*old)
