"""Facts computed once per view: `per_view` caches a derivation on the view's identity (a
weak key, so a long benchmark or a server does not keep old runs' frames alive). Every fact
module of a protocol (`auditor/protocols/<p>/facts/`) decorates its derivations with it, so a
fact read by ten rules, the report and the summary is computed once."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import wraps
from typing import TypeVar

V = TypeVar("V")
T = TypeVar("T")


def per_view(fn: Callable[[V], T]) -> Callable[[V], T]:
    """Compute FN once per view; the result lives as long as the view (a weak key), so a
    long benchmark or a server does not keep old runs' frames alive."""
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @wraps(fn)
    def wrapper(view: V) -> T:
        if view not in cache:
            cache[view] = fn(view)
        return cache[view]

    wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
    return wrapper
