"""What makes `audit report` fast changes nothing it does: the loader-cache lookup of
WeasyPrint's libraries answers as ctypes would and falls back to the normal import, the
report command's GC settings are scoped, and the report worker draws the figures an
in-process draw gives and signs as this process would, or fails with an error, never a hang.
The imports run in a fresh interpreter each, so nothing patched here reaches another test.
Speed itself is bench/report_bench.py's."""

from __future__ import annotations

import ctypes.util
import gc
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from auditor.report import libload
from auditor.report.tuning import FULL_EVERY, report_process
from auditor.report.worker import ReportWorker, WorkerError

needs_cache = pytest.mark.skipif(
    libload.ld_cache() is None, reason="no readable glibc ldconfig cache here"
)


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        text=True,
        capture_output=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


@needs_cache
@pytest.mark.parametrize(
    "name",
    [
        "c",
        "m",
        "gobject-2.0",
        "pango-1.0",
        "harfbuzz",
        "fontconfig",
        "pangoft2-1.0",
        "libgobject-2.0-0",
        "harfbuzz-subset-0.0",
        "no-such-library-here",
    ],
)
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


@pytest.fixture(scope="module")
def clean_specs(tmp_path_factory) -> dict:
    """The figure specs of the factory's clean run, with a hostile variant name."""
    from runfactory import make_clean_run

    from auditor.engine import audit
    from auditor.report import viewmodel
    from auditor.report.build import StepTimer, render_report

    run = make_clean_run(tmp_path_factory.mktemp("speed") / "run")
    view, result = audit(run)
    vm, _, _ = render_report(view, result, generated_at="2026-01-01T00:00:00Z", timer=StepTimer())
    specs = viewmodel.protocol_report(result.protocol).figures(vm)
    specs["hostile"] = (
        "memory",
        [
            {
                "variant_id": "$x$ </svg><script>",
                "series": [{"label": "a & b", "peak_bytes": 3 * 2**20}],
            }
        ],
    )
    return specs


def test_worker_draws_the_bytes_drawn_here(clean_specs):
    from auditor.report import plots

    with ReportWorker() as worker:
        worker.submit(clean_specs)
        got = worker.figures()
    assert got == plots.draw(clean_specs)
    assert got["durations"] and got["durations"].startswith("<svg")


def test_a_failing_draw_is_an_error_with_the_workers_traceback():
    with ReportWorker() as worker:
        worker.submit({"x": ("no-such-plot", [])})
        with pytest.raises(WorkerError, match=r"failed on the figures(.|\n)*KeyError"):
            worker.figures()


def test_a_dead_worker_is_an_error_not_a_hang():
    worker = ReportWorker()
    worker._proc.kill()
    worker.submit({})
    with pytest.raises(WorkerError, match=r"ended \(exit status -9\) without"):
        worker.figures()


def test_a_silent_worker_is_stopped(monkeypatch):
    from auditor.report import worker as report_worker

    monkeypatch.setattr(report_worker, "_CHILD", "import time; time.sleep(600)")
    worker = ReportWorker()
    proc = worker._proc
    worker.submit({})
    with pytest.raises(WorkerError, match="gave no figures in 1 s"):
        worker.figures(timeout=1)
    assert proc.poll() is not None  # killed, not left behind


def test_a_worker_that_cannot_start_is_an_error(monkeypatch):
    from auditor.report import worker as report_worker

    monkeypatch.setattr(report_worker.sys, "executable", "/nonexistent/python")
    with pytest.raises(WorkerError, match="could not start"):
        ReportWorker()


def test_report_with_the_worker_is_the_report_without(tmp_path):
    """The same page (figures included: the PDF is drawn from it); a report that fails
    later (a bad key) stops its worker."""
    import datetime as dt

    from runfactory import make_clean_run

    from auditor.errors import AuditorError
    from auditor.report.build import build_report

    run = make_clean_run(tmp_path / "run")
    now = lambda: dt.datetime(2026, 1, 1, tzinfo=dt.UTC)  # noqa: E731
    build_report(run, tmp_path / "here", now=now)
    build_report(run, tmp_path / "worker", now=now, in_worker=True)
    for name in ("report.html", "audit.json"):
        assert (tmp_path / "worker" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()
    (tmp_path / "bad.key").write_text("not a key")
    with pytest.raises(AuditorError, match=r"bad\.key"):
        build_report(
            run,
            tmp_path / "never",
            key=tmp_path / "bad.key",
            cert=tmp_path / "bad.key",
            in_worker=True,
        )
    assert not (tmp_path / "never").exists()


def _dejavu() -> list:
    import matplotlib

    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    return [
        ttf / name
        for name in (
            "DejaVuSans.ttf",
            "DejaVuSans-Bold.ttf",
            "DejaVuSansMono.ttf",
            "DejaVuSansDisplay.ttf",
        )
    ]


@pytest.mark.parametrize(("legacy_kern", "hinting"), [(False, False), (True, False), (False, True)])
def test_fonts_subset_the_same_with_early_drops(legacy_kern, hinting):
    """WeasyPrint's subset options (pdf/fonts.py) on matplotlib's DejaVu faces: the same
    bytes whether the dropped tables go before fontTools' subset or in it."""
    import io

    from fontTools import subset
    from fontTools.ttLib import TTFont

    from auditor.report.fontsubset import drop_before_subsetting

    def subset_of(path: Path) -> bytes:
        options = subset.Options(
            retain_gids=True,
            passthrough_tables=True,
            ignore_missing_glyphs=True,
            hinting=hinting,
            desubroutinize=True,
            notdef_outline=False,
            legacy_kern=legacy_kern,
        )
        options.drop_tables += ["GSUB", "GPOS", "SVG"]
        subsetter = subset.Subsetter(options)
        subsetter.populate(gids=set(range(1, 400, 3)))
        font = TTFont(io.BytesIO(path.read_bytes()), recalcTimestamp=False)
        subsetter.subset(font)
        out = io.BytesIO()
        font.save(out)
        return out.getvalue()

    faces = _dejavu()
    assert len(faces) >= 4
    for face in faces:
        plain = subset_of(face)
        with drop_before_subsetting():
            early = subset_of(face)
        assert early == plain, face.name
    assert subset.Subsetter.subset.__name__ == "subset"  # restored


def test_a_report_signed_by_the_worker_verifies(tmp_path):
    """Signed in the worker: `audit verify` accepts it; a timestamp authority that does not
    answer is the same AuditorError as in-process, and no report is left."""
    from runfactory import make_clean_run

    from auditor.errors import AuditorError
    from auditor.report.build import build_report
    from auditor.report.keygen import keygen
    from auditor.report.verify import verify_report

    run = make_clean_run(tmp_path / "run", eval_size=10, warm_passes=2)
    keygen(tmp_path / "keys")
    k = tmp_path / "keys"
    signing = {"key": k / "signer.key", "cert": k / "signer.pem", "chain": k / "ca.pem"}
    build_report(run, tmp_path / "report", in_worker=True, **signing)
    lines = verify_report(tmp_path / "report", k / "ca.pem")
    assert any(line.startswith("OK:") for line in lines)
    with pytest.raises(AuditorError, match=r"--tsa http://127\.0\.0\.1:9/: no timestamp"):
        build_report(run, tmp_path / "never", in_worker=True, tsa="http://127.0.0.1:9/", **signing)
    assert not (tmp_path / "never").exists()
