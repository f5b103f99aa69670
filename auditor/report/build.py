"""`audit report RUN_DIR --out REPORT_DIR`: audit the run (the same checks as `audit
check`), then write a self-contained report directory (layout in `auditor.report`).

Atomic: everything is built in a hidden temp directory beside REPORT_DIR and renamed into
place at the end, so a crash never leaves a half-written report that looks finished. A
REPORT_DIR that exists is replaced only when it looks like a report (it holds report.html);
anything else is refused rather than deleted.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from auditor import __version__
from auditor.dirkind import absent, wrong_kind
from auditor.errors import AuditorError
from auditor.fsutil import list_files, sha256_file
from auditor.model import AuditResult
from auditor.report import attachments
from auditor.rundir import MAX_HASHED_BYTES

RUN_SUBDIR = attachments.RUN_SUBDIR


class StepTimer:
    """Wall-clock time of each build step, for bench/report_bench.py."""

    def __init__(self) -> None:
        self.steps: dict[str, float] = {}

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.steps[name] = self.steps.get(name, 0.0) + time.perf_counter() - t0


def _copy_run(run_dir: Path, dest: Path) -> None:
    """Copy every regular file of the run byte for byte; a symlink is refused, never
    followed (it could pull a file from outside the run into a signed bundle), and so are a
    name the signed Statement cannot hold (not UTF-8) and a file too large to hash."""
    for rel in list_files(run_dir):
        src = run_dir / rel
        if src.is_symlink() or not src.is_file():
            raise AuditorError(f"{src}: not a regular file (symlink?); refusing to bundle it")
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise AuditorError(
                f"{run_dir / shown}: the file name is not UTF-8; a signed "
                "bundle cannot list it (audit check reports it)"
            ) from None
        if src.stat().st_size > MAX_HASHED_BYTES:
            raise AuditorError(
                f"{src}: larger than the auditor hashes; refusing to bundle it "
                "(audit check reports it)"
            )
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)


def _prepare_out(out_dir: Path) -> Path:
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise AuditorError(f"{out_dir}: exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / "report.html").exists():
        raise AuditorError(
            f"{out_dir}: exists, is not empty and is not a report; choose another --out"
        )
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=out_dir.parent))
    umask = os.umask(0o022)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp makes 0700; a report is meant to be shared
    return tmp


def _install(tmp: Path, out_dir: Path) -> None:
    old = None
    if out_dir.exists():
        old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
        os.replace(out_dir, old)
    os.replace(tmp, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def render_report(
    view: Any,
    result: AuditResult,
    *,
    generated_at: str,
    timer: StepTimer,
    inputs: Mapping[str, tuple[Any, str]] | None = None,
    signer: str | None = None,
    replay: Any = None,
    worker: Any = None,
) -> tuple[dict[str, Any], str, dict[str, str | None]]:
    """View model, plots and HTML of one audited run (no files written); REPLAY is the
    `ReplayResult` of `--replay`, if any. WORKER (an `auditor.report.worker.ReportWorker`)
    draws the figures in its own process, while this one imports WeasyPrint; without it they
    are drawn here: the same bytes either way."""
    from auditor import protocols
    from auditor.report import html, viewmodel

    protocol = protocols.get(result.protocol) if result.protocol else None
    with timer.step("view model"):
        vm = viewmodel.build_viewmodel(
            view,
            result,
            protocol.rules if protocol else (),
            inputs=inputs,
            tool_version=__version__,
            generated_at=generated_at,
            signer=signer,
            replay=replay,
        )
    part = viewmodel.protocol_report(result.protocol)
    specs = part.figures(vm) if part is not None and view is not None else {}
    if worker is not None:
        worker.submit(specs)
        with timer.step("pdf import"):
            from auditor.report.libload import import_weasyprint

            import_weasyprint()
        with timer.step("plots"):
            figs = worker.figures()
    else:
        with timer.step("plots"):
            from auditor.report import plots

            figs = plots.draw(specs)
    with timer.step("html"):
        page = html.render(vm, figs)
    return vm, page, figs


def load_signing(
    key: Path | None,
    cert: Path | None,
    chain: Path | None,
    tsa: str | None = None,
    *,
    load: bool = True,
) -> Any:
    """The `auditor.report.sign.Signing` of KEY and CERT (None without a key), timestamped
    by the authority at TSA, checked before any work is done, so a bad key fails fast;
    `AuditorError` when only one of the two is given, or a TSA without a key. LOAD false:
    the checked `SigningFiles` only, for the report worker to load (no pyHanko here)."""
    if (key is None) != (cert is None):
        raise AuditorError("--key and --cert go together")
    if key is None or cert is None:
        if tsa is not None:
            raise AuditorError("--tsa timestamps a signature: give --key and --cert too")
        return None
    from auditor.report.sign import check_signer, load_signer

    return (load_signer if load else check_signer)(key, cert, chain, tsa)


def timestamp(now: Callable[[], dt.datetime] | None = None) -> str:
    return (now or (lambda: dt.datetime.now(dt.UTC)))().strftime("%Y-%m-%dT%H:%M:%SZ")


def write_signed_dir(
    out_dir: Path,
    *,
    page: str,
    files: Mapping[str, bytes],
    attachments: list[tuple[str, bytes, str]],
    signer: Any,
    cert: Path | None,
    key: Path | None,
    predicate: Callable[[Mapping[str, str]], dict[str, Any]],
    predicate_type: str,
    timer: StepTimer,
    fill: Callable[[Path], None] | None = None,
    metadata: Any = None,
    sign_with: Callable[[bytes], bytes] | None = None,
) -> None:
    """Write a report directory atomically: FILL's files and FILES (relative name -> bytes),
    `report.html` (PAGE), `report.pdf` (PAGE with ATTACHMENTS, PAdES-signed with SIGNER) and,
    when signed, `signer.pem` and `bundle.dsse.json`: a Statement of PREDICATE_TYPE listing
    every file's SHA-256, whose predicate is PREDICATE(those digests); METADATA
    (`auditor.report.pdf.Metadata`) is the PDF's; SIGN_WITH, when given, signs the PDF
    instead of `sign_pdf(pdf, SIGNER)` (the report worker). What both the run report and the
    archive comparison write, and `audit verify` checks."""
    tmp = _prepare_out(out_dir)
    try:
        with timer.step("copy run"):
            if fill is not None:
                fill(tmp)
            for name, data in files.items():
                (tmp / name).parent.mkdir(parents=True, exist_ok=True)
                (tmp / name).write_bytes(data)
            (tmp / "report.html").write_text(page, encoding="utf-8")
        with timer.step("pdf"):
            from auditor.report import pdf

            pdf_bytes = pdf.render(page, attachments, metadata=metadata)
        if signer is not None:
            with timer.step("sign"):
                from auditor.report.sign import sign_pdf

                pdf_bytes = (
                    sign_with(pdf_bytes) if sign_with is not None else sign_pdf(pdf_bytes, signer)
                )
        (tmp / "report.pdf").write_bytes(pdf_bytes)
        if signer is not None and cert is not None:
            with timer.step("dsse"):
                _write_bundle(tmp, predicate, predicate_type, cert, key)
        _install(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def build_report(
    run_dir: Path,
    out_dir: Path,
    *,
    key: Path | None = None,
    cert: Path | None = None,
    chain: Path | None = None,
    offers: Path | None = None,
    timer: StepTimer | None = None,
    now: Callable[[], dt.datetime] | None = None,
    replay_sample: int | None = None,
    tsa: str | None = None,
    in_worker: bool = False,
) -> AuditResult:
    """Write the report of RUN_DIR into OUT_DIR; return the audit result. With
    REPLAY_SAMPLE, also replay that many IDs of the archived model (`audit replay`): its
    section goes into the report and `replay.json` into the signed bundle and the PDF. With
    TSA (a timestamp authority's URL), the PDF's signature is timestamped (RFC 3161).
    IN_WORKER: draw the figures and sign the PDF in a second process started first, so
    importing matplotlib and pyHanko and drawing overlap the audit and the layout (`audit
    report` does; a process that has imported them already, a test, is faster alone)."""
    timer = timer or StepTimer()
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    if problem := wrong_kind(run_dir, "run", "audit report"):
        raise AuditorError(problem)
    if problem := absent(run_dir):
        raise AuditorError(problem)
    if out_dir.resolve() == run_dir.resolve() or run_dir.resolve() in out_dir.resolve().parents:
        raise AuditorError(f"{out_dir}: the report cannot be written inside the run directory")
    from auditor.report.worker import ReportWorker

    with ReportWorker(signs=key is not None) if in_worker else contextlib.nullcontext() as worker:
        return _build(
            run_dir,
            out_dir,
            key=key,
            cert=cert,
            chain=chain,
            offers=offers,
            timer=timer,
            now=now,
            replay_sample=replay_sample,
            tsa=tsa,
            worker=worker,
        )


def report_input(run_dir: Path, name: str, path: Path) -> tuple[Any, str]:
    """The file PATH given as `--NAME`, read and checked by the run's protocol's report part
    (`ReportPart.inputs`), with its label; an error when that report takes no such file."""
    from auditor.engine import find_protocol

    protocol, declared = find_protocol(Path(run_dir))
    part = protocol.report() if protocol is not None and protocol.report is not None else None
    load = part.inputs.get(name) if part is not None else None
    if load is None:
        what = protocol.title if protocol is not None else f"protocol {declared!r}"
        raise AuditorError(f"--{name}: a report of {what} takes no {name} file")
    return load(path), str(path.name)


def _build(
    run_dir: Path,
    out_dir: Path,
    *,
    key: Path | None,
    cert: Path | None,
    chain: Path | None,
    offers: Path | None,
    timer: StepTimer,
    now: Callable[[], dt.datetime] | None,
    replay_sample: int | None,
    tsa: str | None,
    worker: Any,
) -> AuditResult:
    signer = load_signing(key, cert, chain, tsa, load=worker is None)
    inputs = {} if offers is None else {"offers": report_input(run_dir, "offers", offers)}

    from auditor.engine import audit

    with timer.step("audit"):
        view, result = audit(run_dir)
    replayed = None
    if replay_sample is not None:
        from auditor.replay.core import replay

        with timer.step("replay"):
            replayed = replay(run_dir, sample_size=replay_sample)
    generated_at = timestamp(now)
    vm, page, _ = render_report(
        view,
        result,
        inputs=inputs,
        generated_at=generated_at,
        timer=timer,
        signer=subject(cert) if cert is not None else None,
        replay=replayed,
        worker=worker,
    )
    # the bundle's copy of the run is `run/` beside it: no local path of this machine
    audit_json = _json_bytes({**result.to_json(), "run_dir": RUN_SUBDIR})
    replay_json = (
        None if replayed is None else _json_bytes({**replayed.to_json(), "run_dir": RUN_SUBDIR})
    )
    attached = attachments.files(vm, audit_json, run_dir, replay_json)
    # The hash list and the rule list lie beside report.html too, for its links.
    beside = {
        name: data for name, data, _ in attached if name in (attachments.HASHES, attachments.RULES)
    }
    if replay_json is not None:
        beside[attachments.REPLAY[1]] = replay_json

    def predicate(digests: Mapping[str, str]) -> dict[str, Any]:
        return {
            "verdict": result.verdict,
            "experiment_id": result.experiment_id,
            "protocol": result.protocol,
            "counts": result.counts(),
            "run_manifest_sha256": digests.get(f"{RUN_SUBDIR}/manifest.json"),
            "tool": {"name": "gpubench-audit", "version": __version__},
            "generated_at": generated_at,
            **({} if replayed is None else {"replay": replay_predicate(replayed)}),
        }

    from auditor.report import dsse

    write_signed_dir(
        out_dir,
        page=page,
        files={"audit.json": audit_json, **beside},
        attachments=attached,
        signer=signer,
        cert=cert,
        key=key,
        predicate=predicate,
        predicate_type=dsse.PREDICATE_TYPE,
        timer=timer,
        fill=lambda tmp: _copy_run(run_dir, tmp / RUN_SUBDIR),
        metadata=run_metadata(
            vm["title"], result, run_dir, generated_at, subject(cert) if cert is not None else None
        ),
        sign_with=(
            None if worker is None or signer is None else lambda pdf: worker.sign(pdf, signer)
        ),
    )
    return result


def author(signer: str | None) -> str:
    """The PDF's Author: who signed it, or that nobody did."""
    return signer or "gpubench-audit (unsigned report: nobody signed it)"


def run_metadata(
    title: str, result: AuditResult, run_dir: Path, generated_at: str, signer: str | None
) -> Any:
    """The PDF metadata of a run's report: its title, the signer as author, what was
    audited and the verdict as subject, and the run's identity (experiment, protocol, the
    SHA-256 of its manifest, which the signed Statement lists too)."""
    from auditor.report.pdf import Metadata

    manifest = Path(run_dir) / "manifest.json"
    sha = sha256_file(manifest) if manifest.is_file() and not manifest.is_symlink() else None
    experiment = result.experiment_id or "unknown experiment"
    return Metadata(
        title=title,
        author=author(signer),
        subject=(
            f"gpubench-audit report of run {experiment} (protocol "
            f"{result.protocol or 'unknown'}): {result.verdict}"
            + (f"; run manifest SHA-256 {sha}" if sha else "")
        ),
        keywords=(
            "gpubench-audit",
            "audit report",
            f"experiment {experiment}",
            f"protocol {result.protocol or 'unknown'}",
            f"verdict {result.verdict}",
            *((f"manifest sha256 {sha}",) if sha else ()),
            f"auditor {__version__}",
        ),
        created=generated_at,
    )


def subject(cert_path: Path) -> str:
    """The signing certificate's common name (or full subject), shown in the report."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    cert = x509.load_pem_x509_certificate(Path(cert_path).read_bytes())
    cns = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(cns[0].value) if cns else cert.subject.rfc4514_string()


def _write_bundle(
    tmp: Path,
    predicate: Callable[[Mapping[str, str]], dict[str, Any]],
    predicate_type: str,
    cert_path: Path,
    key_path: Path | None,
) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, load_pem_private_key

    from auditor.report import dsse

    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    assert key_path is not None  # a signed report: load_signing took both key and cert
    key = load_pem_private_key(Path(key_path).read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)  # sign.check_signer: ECDSA only
    (tmp / "signer.pem").write_bytes(cert.public_bytes(Encoding.PEM))
    digests = {
        rel: sha256_file(tmp / rel)
        for rel in list_files(tmp)
        if rel not in ("signer.pem", "bundle.dsse.json")
    }
    stmt = dsse.statement(digests, predicate(digests), predicate_type)
    (tmp / "bundle.dsse.json").write_bytes(dsse.sign_envelope(stmt, key, cert))


def replay_predicate(replayed: Any) -> dict[str, Any]:
    """What the signed Statement records of a replay (`audit report --replay N`)."""
    return {
        "verdict": replayed.verdict,
        "counts": replayed.counts(),
        "sample": len(replayed.sample.ids) if replayed.sample else 0,
        "seed": replayed.sample.seed if replayed.sample else None,
    }
