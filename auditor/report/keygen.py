"""`audit keygen --out DIR`: a local root CA and a signing certificate (ECDSA P-256), so the
tool can be tried end to end. Both subjects say they are not for procurement use: a report
signed with them proves integrity, not who stands behind it. Real users pass their own key
and chain to `audit report`.

Writes `ca.pem` (the root, to pass as `--ca`/`--chain`), `signer.pem` (the signing
certificate) and `signer.key` (PKCS#8 PEM, unencrypted, mode 0600). The CA's private key is
not kept: nothing else should ever be signed with it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from auditor.errors import AuditorError
from auditor.fsutil import atomic_write

LABEL = "gpubench-audit LOCAL TEST {what} - NOT FOR PROCUREMENT USE"
VALID_DAYS = 825


def _name(what: str, key: ec.EllipticCurvePublicKey) -> x509.Name:
    """The subject: the not-for-procurement label, and the DN's serialNumber made from the
    key (the first 16 hex digits of its SHA-1 key identifier), so that two test CAs in one
    trust store (NSS's, which pdfsig reads, keys certificates by subject) are two names."""
    serial = x509.SubjectKeyIdentifier.from_public_key(key).digest.hex()[:16]
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "gpubench-audit (local test)"),
            x509.NameAttribute(NameOID.COMMON_NAME, LABEL.format(what=what)),
            x509.NameAttribute(NameOID.SERIAL_NUMBER, serial),
        ]
    )


def make_chain(now: dt.datetime | None = None) -> tuple[bytes, bytes, bytes]:
    """(ca_pem, signer_pem, signer_key_pem), freshly generated."""
    now = now or dt.datetime.now(dt.UTC)
    start = now - dt.timedelta(minutes=5)  # tolerate small clock skew between machines
    end = now + dt.timedelta(days=VALID_DAYS)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("CA", ca_key.public_key())
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    key = ec.generate_private_key(ec.SECP256R1())
    signer = (
        x509.CertificateBuilder()
        .subject_name(_name("SIGNER", key.public_key()))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=True,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        # emailProtection is the EKU NSS (pdfsig) accepts for document signing certificates.
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.EMAIL_PROTECTION, ExtendedKeyUsageOID.CODE_SIGNING]
            ),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return (
        ca_cert.public_bytes(pem),
        signer.public_bytes(pem),
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


def keygen(out_dir: Path) -> list[Path]:
    """Write ca.pem, signer.pem, signer.key into `out_dir`; refuse to overwrite a key."""
    out_dir = Path(out_dir)
    key_path = out_dir / "signer.key"
    if key_path.exists():
        raise AuditorError(f"{key_path}: already exists; not overwriting a signing key")
    if out_dir.exists() and not out_dir.is_dir():
        raise AuditorError(f"{out_dir}: not a directory")
    ca_pem, signer_pem, key_pem = make_chain()
    paths = [out_dir / "ca.pem", out_dir / "signer.pem", key_path]
    # The key first, so a crash never leaves certificates whose key is lost.
    atomic_write(key_path, key_pem, mode=0o600)
    atomic_write(paths[0], ca_pem, mode=0o644)
    atomic_write(paths[1], signer_pem, mode=0o644)
    return paths
