"""`audit verify REPORT_DIR --ca CA`: is this report what was signed, by a key that chains
to CA? Exit 0 only when all of these hold, else `VerificationFailed("<file>: <what>")`:

1. `report.pdf` carries exactly one signature, and pyHanko finds it intact, valid, trusted
   (path to CA) and covering the entire file: no revision was added after signing;
2. `signer.pem` is the very certificate that signed the PDF, and pyhanko-certvalidator
   builds and validates its path to CA (signatures, names, CA constraints, validity
   period: an expired or not-yet-valid certificate anywhere on the path is refused), and it
   is a signing certificate (key usage digital signature or non-repudiation; an extended
   key usage, when present, one meant for documents: `SIGNING_EKU`);
3. `bundle.dsse.json` verifies against `signer.pem` (DSSE PAE, ECDSA SHA-256);
4. every file the Statement lists exists, is a regular file and has its SHA-256; and no file
   of the report directory is left unlisted (except the envelope itself and `signer.pem`,
   which the signature checks cover).

Every check that can run does, so a tampered report gets one line per failure
(`VerificationFailed` holds them, one a line, the first check's first); a damaged file of
any kind is a failure line, never a traceback.

The PDF's signature may carry an RFC 3161 timestamp (`audit report --tsa URL`): verify
says whether one is present, whether its authority chains to CA (or `--tsa-ca`) and its
time. The signer's certificate is checked as of now either way.

What `pdfsig` (NSS) and `openssl pkeyutl -verify` check independently is the same: see
tests/test_verify.py.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from auditor.dirkind import REPORT_FILES, wrong_kind
from auditor.errors import AuditorError, VerificationFailed
from auditor.fsutil import list_files, sha256_file
from auditor.report import dsse

if TYPE_CHECKING:
    from cryptography import x509

PDF = "report.pdf"
HTML = "report.html"
AUDIT_JSON = "audit.json"
ENVELOPE = "bundle.dsse.json"
SIGNER = "signer.pem"
#: Files covered by a signature check rather than listed in the Statement, and why.
NOT_LISTED = {
    ENVELOPE: "the envelope cannot list its own hash; its signature covers the Statement",
    SIGNER: "checked by chaining to --ca and matching the PDF's signer",
}
MUST_LIST = (PDF, HTML, AUDIT_JSON)
COMPARISON_JSON = "comparison.json"
#: The files a Statement must list, by its predicate type: a run report, or an archive
#: comparison (`audit compare`), signed and bundled the same way; and what a verified
#: comparison's predicate tells.
MUST_LIST_BY_TYPE = {
    dsse.PREDICATE_TYPE: MUST_LIST,
    dsse.COMPARISON_PREDICATE_TYPE: (PDF, HTML, COMPARISON_JSON),
}
COMPARISON_FACTS = ("runs", "ranked", "index_sha256")


def _load_ca(ca: Path, option: str = "--ca") -> list[x509.Certificate]:
    """The certificates of a trust anchor the user named; a file that holds none (a key, a
    damaged file) is bad usage, exit 2, as `audit report` treats the same mistake: nothing
    of the report has been checked yet."""
    from cryptography import x509

    try:
        certs = x509.load_pem_x509_certificates(Path(ca).read_bytes())
    except (ValueError, OSError) as exc:
        why = (
            "this is a private key: give the CA's certificate (ca.pem of audit keygen)"
            if b"PRIVATE KEY-----" in _head(ca)
            else str(exc)
        )
        raise AuditorError(f"{option} {ca}: not a PEM certificate ({why})") from None
    if not certs:
        raise AuditorError(f"{option} {ca}: holds no certificate")
    return certs


def _head(path: Path) -> bytes:
    try:
        with Path(path).open("rb") as fh:
            return fh.read(4096)
    except OSError:
        return b""


@dataclass(frozen=True)
class Timestamp:
    """The RFC 3161 timestamp of the PDF's signature (`audit report --tsa URL`)."""

    trusted: bool
    """Its authority chains to the CA given (or --tsa-ca) and its token is intact."""
    time: str | None
    """When the authority says the signature existed (UTC, RFC 3339)."""
    authority: str | None
    """The timestamp authority's certificate name."""
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "present": True,
            "trusted": self.trusted,
            **({"time": self.time} if self.time else {}),
            **({"authority": self.authority} if self.authority else {}),
            **({"problem": self.problem} if self.problem else {}),
        }

    def line(self) -> str:
        if self.trusted:
            return (
                f"{PDF}: trusted RFC 3161 timestamp: the signature existed at {self.time} "
                f"(timestamp authority: {self.authority})"
            )
        return (
            f"{PDF}: an RFC 3161 timestamp is present but not trusted ({self.problem}); "
            "the signing time is the signer's own claim"
        )


NO_TIMESTAMP = (
    "no trusted timestamp: the signing time is the signer's own claim "
    "(audit report --tsa URL adds an RFC 3161 timestamp)"
)


def _timestamp(status: Any) -> Timestamp | None:
    """What pyHanko found of the signature's timestamp token; None when there is none."""
    ts = getattr(status, "timestamp_validity", None)
    if ts is None:
        return None
    when = ts.timestamp.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if ts.timestamp else None
    tsa = ts.signing_cert.subject.native.get("common_name") if ts.signing_cert else None
    if not (ts.intact and ts.valid):
        return Timestamp(False, when, tsa, "its token does not verify")
    if not ts.trusted:
        return Timestamp(False, when, tsa, "its authority does not chain to --tsa-ca or --ca")
    return Timestamp(True, when, tsa)


def _check_pdf(
    pdf_path: Path,
    ca_certs: list[x509.Certificate],
    tsa_certs: list[x509.Certificate] | None = None,
) -> tuple[bytes, str, Timestamp | None]:
    """Validate the PDF signature; return the signer cert's DER, a summary line and its
    timestamp, if any."""
    from asn1crypto import x509 as asn1_x509
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko.sign.validation.settings import KeyUsageConstraints
    from pyhanko.sign.validation.status import SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    roots = [asn1_x509.Certificate.load(c.public_bytes(Encoding.DER)) for c in ca_certs]
    ts_roots = [
        asn1_x509.Certificate.load(c.public_bytes(Encoding.DER)) for c in (tsa_certs or ca_certs)
    ]
    data = pdf_path.read_bytes()
    try:
        reader = PdfFileReader(io.BytesIO(data), strict=False)
        sigs = reader.embedded_signatures
    except Exception as exc:  # pyHanko raises many types on a damaged file
        raise VerificationFailed(f"{PDF}: cannot be parsed as a PDF ({exc})") from None
    if not sigs:
        raise VerificationFailed(f"{PDF}: carries no signature (report built without --key?)")
    if len(sigs) != 1:
        raise VerificationFailed(f"{PDF}: carries {len(sigs)} signatures, expected exactly 1")
    sig = sigs[0]
    try:
        vc = ValidationContext(trust_roots=roots, allow_fetching=False)
        ts_vc = ValidationContext(trust_roots=ts_roots, allow_fetching=False)
        # pyHanko's own key usage check (its rebuilt policy would demand an extended key
        # usage if given ours); the extended key usage policy is `signer_problem`'s, below
        status = validate_pdf_signature(
            sig,
            vc,
            ts_validation_context=ts_vc,
            key_usage_settings=KeyUsageConstraints(key_usage=set(SIGNING_KEY_USAGE)),
        )
    except Exception as exc:
        raise VerificationFailed(f"{PDF}: signature cannot be validated ({exc})") from None
    if not status.intact:
        raise VerificationFailed(f"{PDF}: signed bytes were changed (digest mismatch)")
    if not status.valid:
        raise VerificationFailed(f"{PDF}: the cryptographic signature is not valid")
    signer = x509.load_der_x509_certificate(sig.signer_cert.dump())
    others = [x509.load_der_x509_certificate(c.dump()) for c in sig.other_embedded_certs]
    problem = signer_problem(signer, ca_certs, others)
    if problem is not None or not status.trusted:
        raise VerificationFailed(
            f"{PDF}: the signer's certificate {problem or 'is not trusted for signing (pyHanko)'}"
        )
    if status.coverage != SignatureCoverageLevel.ENTIRE_FILE:
        raise VerificationFailed(
            f"{PDF}: the signature does not cover the whole file "
            f"({status.coverage.name if status.coverage else 'unknown'}): "
            "bytes or a revision were added after signing"
        )
    revisions = reader.xrefs.total_revisions
    if sig.signed_revision != revisions - 1:
        raise VerificationFailed(f"{PDF}: a revision was added after the signed one")
    cert_der = sig.signer_cert.dump()
    cn = sig.signer_cert.subject.native.get("common_name", "?")
    line = (
        f"{PDF}: PAdES signature intact, valid, trusted (signer: {cn}), "
        f"covers the entire file (its revision is the last of {revisions})"
    )
    return cert_der, line, _timestamp(status)


SIGNING_KEY_USAGE = frozenset({"digital_signature", "non_repudiation"})
"""A signer's key usage must allow one of these."""
SIGNING_EKU = frozenset(
    {
        "email_protection",  # what NSS (pdfsig) accepts for document signing, audit keygen's
        "code_signing",
        "1.3.6.1.5.5.7.3.36",  # id-kp-documentSigning, RFC 9336
        "microsoft_document_signing",
        "adobe_authentic_documents_trust",
        "any_extended_key_usage",
    }
)
"""An extended key usage, when the certificate has one, must include one of these: a TLS
server certificate (serverAuth only) does not sign reports."""


def usage_constraints() -> Any:
    """pyHanko's key usage policy for the signer: `SIGNING_KEY_USAGE`, `SIGNING_EKU`."""
    from pyhanko.sign.validation.settings import KeyUsageConstraints

    return KeyUsageConstraints(
        key_usage=set(SIGNING_KEY_USAGE),
        match_all_key_usages=False,
        extd_key_usage=set(SIGNING_EKU),
        explicit_extd_key_usage_required=False,
    )


def _when(moment: Any) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%SZ")


def signer_problem(cert: Any, ca_certs: list[Any], others: Sequence[Any] = ()) -> str | None:
    """Why CERT (a `cryptography` certificate) may not sign a report trusted by CA_CERTS,
    in words; None when it may. The path (through OTHERS, certificates that may be
    intermediates) is built and validated by pyhanko-certvalidator as of now, the usage
    checked by pyHanko's key usage policy."""
    import asyncio

    from asn1crypto import x509 as asn1_x509
    from cryptography.hazmat.primitives.serialization import Encoding
    from pyhanko_certvalidator import CertificateValidator, ValidationContext
    from pyhanko_certvalidator.errors import (
        ExpiredError,
        InvalidCertificateError,
        NotYetValidError,
        PathBuildingError,
        PathValidationError,
    )

    def asn1(c: Any) -> Any:
        return asn1_x509.Certificate.load(c.public_bytes(Encoding.DER))

    end = asn1(cert)
    extra = [asn1(c) for c in others]
    context = ValidationContext(
        trust_roots=[asn1(c) for c in ca_certs],
        other_certs=extra,
        allow_fetching=False,
        revocation_mode="soft-fail",
    )
    try:
        asyncio.run(CertificateValidator(end, extra, context).async_validate_path())
    except ExpiredError:
        return (
            f"expired (or a certificate of its chain did): it is valid from "
            f"{_when(cert.not_valid_before_utc)} to {_when(cert.not_valid_after_utc)}, "
            "and an expired signer is refused"
        )
    except NotYetValidError:
        return (
            f"is not valid yet (or a certificate of its chain is not): it is valid from "
            f"{_when(cert.not_valid_before_utc)}, and a signer not yet valid is refused"
        )
    except PathBuildingError:
        return "does not chain to the CA given (no path from it to a certificate of --ca)"
    except PathValidationError as exc:
        return f"does not chain to the CA given ({exc})"
    except InvalidCertificateError as exc:
        return f"is not a valid certificate ({exc})"
    try:
        usage_constraints().validate(end)
    except InvalidCertificateError:
        ku = end.key_usage_value.native if end.key_usage_value else ["any"]
        eku = end.extended_key_usage_value.native if end.extended_key_usage_value else []
        return (
            "is not a signing certificate: its key usage is "
            f"{', '.join(sorted(ku)).replace('_', ' ')}"
            + (f", its extended key usage {', '.join(eku).replace('_', ' ')}" if eku else "")
            + " (a report signer needs key usage digital signature or non-repudiation "
            "and, when it has an extended key usage, one for documents or e-mail)"
        )
    return None


def _check_signer(
    report_dir: Path, ca_certs: list[x509.Certificate], pdf_signer_der: bytes | None
) -> x509.Certificate:
    """signer.pem: the PDF's signer (when known), with a valid path to the CA and the usage
    of a signing certificate (`signer_problem`)."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    path = report_dir / SIGNER
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except (ValueError, OSError) as exc:
        raise VerificationFailed(f"{SIGNER}: not a PEM certificate ({exc})") from None
    if pdf_signer_der is not None and cert.public_bytes(Encoding.DER) != pdf_signer_der:
        raise VerificationFailed(f"{SIGNER}: is not the certificate that signed {PDF}")
    problem = signer_problem(cert, ca_certs)
    if problem is not None:
        raise VerificationFailed(f"{SIGNER}: {problem}")
    return cert


def _safe_name(name: object) -> str | None:
    if not isinstance(name, str) or not name or "\\" in name:
        return None
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or p.as_posix() != name:
        return None
    return name


def _check_files(report_dir: Path, stmt: dict) -> int:
    subjects = stmt.get("subject")
    if not isinstance(subjects, list) or not subjects:
        raise VerificationFailed(f"{ENVELOPE}: the Statement lists no subject")
    listed: dict[str, str] = {}
    for i, s in enumerate(subjects):
        name = _safe_name(s.get("name") if isinstance(s, dict) else None)
        digests = s.get("digest") if isinstance(s, dict) else None
        digest = digests.get("sha256") if isinstance(digests, dict) else None
        if name is None or not isinstance(digest, str):
            raise VerificationFailed(f"{ENVELOPE}: subject {i} has no safe name or sha256")
        if name in listed:
            raise VerificationFailed(f"{ENVELOPE}: {name} listed twice")
        listed[name] = digest
    must = MUST_LIST_BY_TYPE.get(stmt.get("predicateType", ""))
    failures = (
        [f"{ENVELOPE}: unknown predicate type {stmt.get('predicateType')!r}"]
        if must is None
        else [
            f"{ENVELOPE}: the Statement does not list {name}" for name in must if name not in listed
        ]
    )
    for name, digest in listed.items():
        path = report_dir / name
        if path.is_symlink() or not path.is_file():
            failures.append(f"{name}: listed in the Statement but missing (or not a regular file)")
            continue
        try:
            actual = sha256_file(path)
        except OSError as exc:
            failures.append(f"{name}: cannot be read ({exc.strerror or exc})")
            continue
        if actual != digest:
            failures.append(
                f"{name}: SHA-256 {actual} differs from the signed {digest}: the file was changed"
            )
    on_disk = {
        n.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        for n in list_files(report_dir)
    }
    extra = sorted(on_disk - set(listed) - set(NOT_LISTED))
    if extra:
        failures.append(
            f"{extra[0]}: present in the report but not listed in the signed "
            "Statement" + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else "")
        )
    if failures:
        raise VerificationFailed("\n".join(failures))
    return len(listed)


@dataclass(frozen=True)
class Passed:
    """One check that passed."""

    file: str
    """The file it is about; `*` for the whole directory."""
    detail: str


def _verify(
    report_dir: Path, ca: Path, passed: list[Passed], tsa_ca: Path | None = None
) -> dict[str, Any]:
    """Run every check that can run, appending each that passes to PASSED; at the end,
    VerificationFailed with one line per failure (`file: reason`) if any failed. Returns the
    signed predicate's experiment and verdict, whether the signer is a local test key and
    the PDF signature's timestamp (trusted when its authority chains to TSA_CA, default
    CA). A directory of another kind (a run, an archive) is bad usage, `AuditorError`."""
    if problem := wrong_kind(report_dir, "report", "audit verify"):
        raise AuditorError(problem)
    if not any((report_dir / name).exists() for name in (*REPORT_FILES, ENVELOPE, SIGNER)):
        raise AuditorError(
            f"{report_dir}: not a report directory (none of {PDF}, "
            f"report.html, {ENVELOPE}, {SIGNER}); `audit report RUN_DIR --out "
            "DIR --key ... --cert ...` writes one"
        )
    ca_certs = _load_ca(ca)
    tsa_certs = _load_ca(tsa_ca, "--tsa-ca") if tsa_ca is not None else None
    failures: list[str] = []

    def attempt(check: Callable[..., Any], *args: Any) -> Any:
        try:
            return check(*args)
        except VerificationFailed as exc:
            failures.extend(str(exc).splitlines())
        except Exception as exc:  # a damaged file of any kind: a failure, not a traceback
            failures.append(
                f"{getattr(check, '__name__', 'check')}: cannot be checked "
                f"({type(exc).__name__}: {exc})"
            )
        return None

    missing = []
    for name in (PDF, ENVELOPE, SIGNER):
        p = report_dir / name
        if p.is_symlink() or not p.is_file():
            hint = " (report built without --key: it is unsigned)" if name != PDF else ""
            missing.append(name)
            failures.append(f"{name}: missing{hint}")
    pdf = None if PDF in missing else attempt(_check_pdf, report_dir / PDF, ca_certs, tsa_certs)
    if pdf is not None:
        passed.append(Passed(PDF, pdf[1]))
    cert = None
    if SIGNER not in missing:
        cert = attempt(_check_signer, report_dir, ca_certs, pdf[0] if pdf else None)
    stmt = None
    if cert is not None and ENVELOPE not in missing:
        try:
            stmt = dsse.open_envelope((report_dir / ENVELOPE).read_bytes(), cert)
        except (dsse.EnvelopeError, OSError) as exc:
            failures.append(f"{ENVELOPE}: {exc}")
        else:
            passed.append(
                Passed(
                    ENVELOPE,
                    f"{ENVELOPE}: DSSE signature valid (keyid "
                    f"{dsse.cert_keyid(cert)[:16]}...), {SIGNER} "
                    f"chains to {Path(ca).name}",
                )
            )
    n = attempt(_check_files, report_dir, stmt) if stmt is not None else None
    if n is not None:
        passed.append(
            Passed(
                "*",
                f"{n} files listed in the signed Statement, every SHA-256 "
                "matches, no unlisted file",
            )
        )
    if failures:
        raise VerificationFailed("\n".join(failures))
    assert cert is not None and stmt is not None
    pred = got if isinstance(got := stmt.get("predicate"), dict) else {}
    comparison = stmt.get("predicateType") == dsse.COMPARISON_PREDICATE_TYPE
    replay = got if isinstance(got := pred.get("replay"), dict) else {}
    return {
        "experiment_id": pred.get("experiment_id"),
        "verdict": pred.get("verdict"),
        "replay_verdict": replay.get("verdict"),
        "test_key": "NOT FOR PROCUREMENT USE" in cert.subject.rfc4514_string().upper(),
        "comparison": {k: pred.get(k) for k in COMPARISON_FACTS} if comparison else None,
        "timestamp": pdf[2] if pdf else None,
    }


def verify_result(report_dir: Path, ca: Path, tsa_ca: Path | None = None) -> dict[str, Any]:
    """`audit verify --format json` (schemas/verify-result.schema.json): every check that
    passed and, when one failed, its file and reason; `ok` only when all passed."""
    passed: list[Passed] = []
    doc: dict[str, Any] = {"schema_version": "1", "report_dir": str(report_dir)}
    try:
        facts = _verify(Path(report_dir), ca, passed, tsa_ca)
    except VerificationFailed as exc:
        failures = []
        for line in str(exc).splitlines():
            file, _, reason = line.partition(": ")
            failures.append({"file": file, "reason": reason or line})
        doc.update(ok=False, failure=failures[0], failures=failures)
    else:
        ts = facts["timestamp"]
        doc.update(
            ok=True,
            test_key=facts["test_key"],
            report="run",
            timestamp=ts.to_json() if ts is not None else {"present": False, "trusted": False},
        )
        if facts["comparison"] is not None:
            doc.update(report="comparison", **facts["comparison"])
        else:
            doc.update(
                {
                    k: facts[k]
                    for k in ("experiment_id", "verdict", "replay_verdict")
                    if facts[k] is not None
                }
            )
    doc["checks"] = [{"file": c.file, "detail": c.detail} for c in passed]
    return doc


def verify_report(report_dir: Path, ca: Path, tsa_ca: Path | None = None) -> list[str]:
    """The lines to print when the report verifies; VerificationFailed otherwise."""
    passed: list[Passed] = []
    facts = _verify(Path(report_dir), ca, passed, tsa_ca)
    lines = [c.detail for c in passed]
    ts = facts["timestamp"]
    lines.append(ts.line() if ts is not None else f"{PDF}: {NO_TIMESTAMP}")
    cmp = facts["comparison"]
    replay = f", replay {facts['replay_verdict']}" if facts["replay_verdict"] is not None else ""
    lines.append(
        f"OK: experiment {json.dumps(facts['experiment_id'])}, "
        f"verdict {facts['verdict'] or '?'}{replay}"
        if cmp is None
        else f"OK: comparison of {cmp['runs']} run(s), {cmp['ranked']} configuration(s) "
        f"ranked, index SHA-256 {str(cmp['index_sha256'])[:16]}..."
    )
    if facts["test_key"]:
        lines.append(
            "note: signed with a local test key (audit keygen): integrity only, "
            "not for procurement use"
        )
    return lines
