"""Sign the report PDF with pyHanko: PAdES baseline B-B, SHA-256, the signer's ECDSA key,
with the signing certificate and the chain (the CA) embedded so a verifier that trusts only
the root can build the path. One signature, made as the last and only incremental update, so
it covers the whole file."""

from __future__ import annotations

import io
from pathlib import Path

from auditor.errors import AuditorError

FIELD_NAME = "AuditReportSignature"


def load_signer(key: Path, cert: Path, chain: Path | None):
    """A pyHanko SimpleSigner, or AuditorError naming the file that could not be used."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from pyhanko.sign import signers

    try:
        key_obj = load_pem_private_key(Path(key).read_bytes(), password=None)
    except (ValueError, TypeError, OSError) as exc:
        raise AuditorError(f"{key}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key_obj, ec.EllipticCurvePrivateKey):
        raise AuditorError(f"{key}: the signing key must be ECDSA (P-256); pdfsig/NSS cannot "
                           "check Ed25519 signatures")
    try:
        cert_obj = x509.load_pem_x509_certificate(Path(cert).read_bytes())
    except (ValueError, OSError) as exc:
        raise AuditorError(f"{cert}: not a PEM certificate ({exc})") from None
    if cert_obj.public_key().public_numbers() != key_obj.public_key().public_numbers():
        raise AuditorError(f"{cert}: this certificate does not belong to the key {key}")
    if chain is not None:
        try:
            x509.load_pem_x509_certificates(Path(chain).read_bytes())
        except (ValueError, OSError) as exc:
            raise AuditorError(f"{chain}: not PEM certificates ({exc})") from None
    signer = signers.SimpleSigner.load(
        str(key), str(cert), ca_chain_files=(str(chain),) if chain else None
    )
    if signer is None:
        raise AuditorError(f"{key}/{cert}: pyHanko could not load the key and certificate")
    return signer


def sign_pdf(pdf: bytes, signer) -> bytes:
    """The signed PDF bytes."""
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, signers

    meta = signers.PdfSignatureMetadata(
        field_name=FIELD_NAME,
        md_algorithm="sha256",
        subfilter=fields.SigSeedSubFilter.PADES,
        reason="gpubench-audit report: integrity of the audit result",
    )
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    out = signers.sign_pdf(writer, meta, signer=signer)
    return out.getvalue()
