"""What makes `audit report` fast changes nothing it does: the loader-cache lookup of
WeasyPrint's libraries answers as ctypes would and falls back to the normal import, and the
report command's GC settings are scoped. The imports run in a fresh interpreter each, so
nothing patched here reaches another test. Speed itself is bench/report_bench.py's."""

from __future__ import annotations

import ctypes.util
import gc
import subprocess
import sys
import textwrap

import pytest

from auditor.report import libload
from auditor.report.tuning import FULL_EVERY, report_process

needs_cache = pytest.mark.skipif(libload.ld_cache() is None,
                                 reason="no readable glibc ldconfig cache here")


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], text=True,
                          capture_output=True, env={**os.environ, **env}, timeout=120,
                          check=False)


@needs_cache
@pytest.mark.parametrize("name", ["c", "m", "gobject-2.0", "pango-1.0", "harfbuzz",
                                  "fontconfig", "pangoft2-1.0", "libgobject-2.0-0",
                                  "harfbuzz-subset-0.0", "no-such-library-here"])
def test_cached_lookup_answers_as_ctypes(name):
    listing = libload.ld_cache()
    assert listing is not None
    found = libload.cached_lookup(name, listing)
    if found is not None or ctypes.util.find_library(name) is not None:
        # a name ctypes finds only through gcc or ld (outside the cache) differs: the
        # import then falls back (test below)
        assert found == ctypes.util.find_library(name)


def test_ld_library_path_means_the_normal_lookup(monkeypatch):
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/elsewhere/lib")
    assert libload.usable_cache() is None


@needs_cache
def test_weasyprint_imports_from_the_cache_without_a_lookup_subprocess():
    done = _python("""
        import ctypes.util
        calls = []
        original = ctypes.util.find_library
        ctypes.util.find_library = lambda name: calls.append(name) or original(name)
        from auditor.report.libload import import_weasyprint
        weasyprint = import_weasyprint()
        assert weasyprint.HTML is not None
        assert ctypes.util.find_library.__name__ == "<lambda>"  # restored: ours again
        print("normal lookups:", len(calls))
        """)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "normal lookups: 0\n"


def test_weasyprint_falls_back_to_the_normal_import():
    """A library the cache cannot give (pango here: as if only gcc or ld found it): the
    half-done import is dropped and the normal one runs and succeeds, and WeasyPrint's help
    text of the failed attempt is not shown."""
    done = _python("""
        import contextlib
        import cffi
        from auditor.report import libload
        attempts = []
        real_dlopen, real_lookups = cffi.FFI.dlopen, libload.lookups_from

        def no_pango(self, name, *args):
            if "pango" in str(name):
                attempts.append(name)
                raise OSError(f"cannot load {name}")
            return real_dlopen(self, name, *args)

        @contextlib.contextmanager
        def lookups_without_pango(listing):
            cffi.FFI.dlopen = no_pango
            try:
                with real_lookups(listing):
                    yield
            finally:
                cffi.FFI.dlopen = real_dlopen

        libload.lookups_from = lookups_without_pango
        libload.usable_cache = lambda: b"an empty cache\\n"
        weasyprint = libload.import_weasyprint()
        assert weasyprint.HTML(string="<p>x</p>").render().pages
        print("fast attempt failed:", bool(attempts))
        """)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "fast attempt failed: True\n"


def test_report_process_scopes_the_gc_settings():
    before = gc.get_threshold()
    with report_process():
        assert gc.get_threshold() == (before[0], before[1], max(before[2], FULL_EVERY))
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), report_process():
        raise RuntimeError("a failed report restores them too")
    assert gc.get_threshold() == before
