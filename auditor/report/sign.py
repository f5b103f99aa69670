"""Sign the report PDF with pyHanko: PAdES baseline B-B, SHA-256, the signer's ECDSA key,
with the signing certificate and the chain (the CA) embedded so a verifier that trusts only
the root can build the path. One signature, made as the last and only incremental update, so
it covers the whole file. With a timestamp authority (`--tsa URL`), pyHanko asks it for an
RFC 3161 timestamp of the signature (PAdES B-T), so the signing time is no longer only the
signer's own claim: `audit verify` says whether a trusted one is there."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from auditor.errors import AuditorError

FIELD_NAME = "AuditReportSignature"
TSA_TIMEOUT_SECONDS = 30


@dataclass(frozen=True)
class Signing:
    """How a report's PDF is signed: pyHanko's signer, and the timestamp authority asked
    for an RFC 3161 timestamp (None: no timestamp)."""

    signer: Any
    tsa_url: str | None = None


@dataclass(frozen=True)
class SigningFiles:
    """The key, certificate and chain files of a signing, checked (`check_signer`) but not
    loaded into pyHanko yet: what the report worker signs with (`auditor.report.worker`),
    so this process need not import pyHanko."""

    key: Path
    cert: Path
    chain: Path | None
    tsa_url: str | None = None


def check_signer(
    key: Path, cert: Path, chain: Path | None, tsa_url: str | None = None
) -> SigningFiles:
    """KEY, CERT, CHAIN and TSA_URL checked as signing needs them, or AuditorError naming
    the file (or the --tsa URL) that cannot be used."""
    if tsa_url is not None and not tsa_url.startswith(("http://", "https://")):
        raise AuditorError(f"--tsa {tsa_url}: a timestamp authority is an http:// or https:// URL")
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key_obj = load_pem_private_key(Path(key).read_bytes(), password=None)
    except (ValueError, TypeError, OSError) as exc:
        raise AuditorError(f"{key}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key_obj, ec.EllipticCurvePrivateKey):
        raise AuditorError(
            f"{key}: the signing key must be ECDSA (P-256); pdfsig/NSS cannot "
            "check Ed25519 signatures"
        )
    try:
        cert_obj = x509.load_pem_x509_certificate(Path(cert).read_bytes())
    except (ValueError, OSError) as exc:
        raise AuditorError(f"{cert}: not a PEM certificate ({exc})") from None
    public = cert_obj.public_key()
    if (
        not isinstance(public, ec.EllipticCurvePublicKey)
        or public.public_numbers() != key_obj.public_key().public_numbers()
    ):
        raise AuditorError(f"{cert}: this certificate does not belong to the key {key}")
    if chain is not None:
        try:
            x509.load_pem_x509_certificates(Path(chain).read_bytes())
        except (ValueError, OSError) as exc:
            raise AuditorError(f"{chain}: not PEM certificates ({exc})") from None
    return SigningFiles(Path(key), Path(cert), Path(chain) if chain else None, tsa_url)


def load_signer(key: Path, cert: Path, chain: Path | None, tsa_url: str | None = None) -> Signing:
    """The signing of KEY and CERT, or AuditorError naming the file (or the --tsa URL)
    that could not be used."""
    return load_checked(check_signer(key, cert, chain, tsa_url))


def load_checked(files: SigningFiles) -> Signing:
    """The signing of FILES, checked already (`check_signer`): pyHanko loads them."""
    from pyhanko.sign import signers

    signer = signers.SimpleSigner.load(
        str(files.key), str(files.cert), ca_chain_files=(str(files.chain),) if files.chain else None
    )
    if signer is None:
        raise AuditorError(
            f"{files.key}/{files.cert}: pyHanko could not load the key and certificate"
        )
    return Signing(signer, files.tsa_url)


def sign_pdf(pdf: bytes, signing: Signing) -> bytes:
    """The signed PDF bytes (timestamped when SIGNING names a timestamp authority)."""
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, signers

    meta = signers.PdfSignatureMetadata(
        field_name=FIELD_NAME,
        md_algorithm="sha256",
        subfilter=fields.SigSeedSubFilter.PADES,
        reason="gpubench-audit report: integrity of the audit result",
    )
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    timestamper = None
    if signing.tsa_url is not None:
        from pyhanko.sign.timestamps.requests_client import HTTPTimeStamper

        timestamper = HTTPTimeStamper(signing.tsa_url, timeout=TSA_TIMEOUT_SECONDS)
    try:
        out = signers.sign_pdf(writer, meta, signer=signing.signer, timestamper=timestamper)
    except Exception as exc:
        if timestamper is None:
            raise
        # the authority is unreachable, refuses, or answers something that is no timestamp
        raise AuditorError(
            f"--tsa {signing.tsa_url}: no timestamp from the authority "
            f"({type(exc).__name__}: {exc})"
        ) from None
    return out.getvalue()
