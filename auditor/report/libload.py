"""Import WeasyPrint without a subprocess per shared-library name it tries.

WeasyPrint's import opens pango, gobject, harfbuzz, fontconfig... through cffi, trying up
to six names per library (Windows and macOS spellings too); cffi resolves each with
`ctypes.util.find_library`, which on Linux runs `ldconfig -p`, then gcc, then ld, for every
name, found or not: 26 lookups, about 0.4 s of the report on the 2-core dev machine.

`import_weasyprint` reads the loader's cache once (`ldconfig -p`, as ctypes does) and
answers every lookup from it, by ctypes' own pattern, so a name is found exactly when
ctypes' first step finds it. Where that could differ from the normal lookup, the normal one
is used: on a system without glibc's ldconfig, with LD_LIBRARY_PATH set (ctypes' ld step
searches it), and when WeasyPrint cannot be imported from the cache alone (a library only
gcc or ld would find): it is then imported again the normal way, so the outcome, or the
error, is WeasyPrint's own."""

from __future__ import annotations

import contextlib
import ctypes.util
import io
import os
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from types import ModuleType

_ABI = {
    "x86_64-64": "libc6,x86-64",
    "ppc64-64": "libc6,64bit",
    "sparc64-64": "libc6,64bit",
    "s390x-64": "libc6,64bit",
    "ia64-64": "libc6,IA-64",
}
"""ctypes.util's map of machine to ldconfig's ABI tag (others: any libc6 entry)."""


@cache
def ld_cache() -> bytes | None:
    """The output of `ldconfig -p` (the loader's cache), or None where it cannot be read."""
    if not sys.platform.startswith("linux") or not os.path.exists("/sbin/ldconfig"):
        return None
    try:
        done = subprocess.run(
            ["/sbin/ldconfig", "-p"],
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env={"LC_ALL": "C", "LANG": "C"},
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 and done.stdout else None


def cached_lookup(name: str, listing: bytes) -> str | None:
    """The soname ctypes' `find_library(NAME)` takes from the cache LISTING, or None."""
    machine = f"{os.uname().machine}-{8 * struct.calcsize('P')}"
    pattern = rb"\s+(lib%s\.[^\s]+)\s+\(%s" % (
        re.escape(name).encode(),
        _ABI.get(machine, "libc6").encode(),
    )
    found = re.search(pattern, listing)
    return os.fsdecode(found.group(1)) if found else None


def usable_cache() -> bytes | None:
    """The cache listing when it alone may answer the lookups (see the module doc)."""
    if os.environ.get("LD_LIBRARY_PATH"):
        return None
    return ld_cache()


@contextlib.contextmanager
def lookups_from(listing: bytes) -> Iterator[None]:
    """Within: `ctypes.util.find_library` answers from LISTING only."""
    original = ctypes.util.find_library
    ctypes.util.find_library = lambda name: cached_lookup(name, listing)
    try:
        yield
    finally:
        ctypes.util.find_library = original


def import_weasyprint() -> ModuleType:
    """The `weasyprint` module, its libraries resolved from the loader's cache when it can
    be (module doc); the normal import otherwise."""
    if "weasyprint" in sys.modules:
        return sys.modules["weasyprint"]
    listing = usable_cache()
    if listing is not None:
        try:
            # WeasyPrint prints its help to stdout when a library is missing: the normal
            # import below says it if that is so.
            with lookups_from(listing), contextlib.redirect_stdout(io.StringIO()):
                import weasyprint
            return weasyprint
        except OSError:
            for mod in [m for m in sys.modules if m == "weasyprint" or m.startswith("weasyprint.")]:
                del sys.modules[mod]
    import weasyprint

    return weasyprint
