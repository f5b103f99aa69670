"""The signature checks of `audit verify` (checks 1 and 2 of `verify`): the PDF's PAdES
signature, validated by pyHanko (intact, valid, trusted, covering the entire file, its RFC
3161 timestamp if any), and the signer's certificate, `signer.pem`, which must be the one that
signed the PDF, chain to the CA (pyhanko-certvalidator, as of now) and be a signing
certificate (`SIGNING_KEY_USAGE`, `SIGNING_EKU`). Also the trust anchors the user names
(`--ca`, `--tsa-ca`). Each check raises `VerificationFailed("<file>: <what>")`; `verify`
runs them, with the DSSE envelope's and the Statement's.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.errors import AuditorError, VerificationFailed

if TYPE_CHECKING:
    from cryptography import x509

PDF = "report.pdf"
SIGNER = "signer.pem"


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
