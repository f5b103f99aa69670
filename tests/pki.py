"""A small PKI for the signature tests: a CA whose key the test keeps, signers of any
validity and usage, and an RFC 3161 timestamp authority served over HTTP on the loopback
(pyHanko's `DummyTimeStamper` answers each request), started and stopped by the test."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NOW = dt.datetime.now(dt.UTC)
PEM = serialization.Encoding.PEM


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _ku(*, sign: bool = False, cert_sign: bool = False) -> x509.KeyUsage:
    # a key usage names at least one use: without signing or certifying, encipherment
    return x509.KeyUsage(
        digital_signature=sign,
        content_commitment=sign,
        key_encipherment=not (sign or cert_sign),
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


@dataclass
class Issued:
    cert: x509.Certificate
    key: object

    def write(self, folder: Path, name: str) -> tuple[Path, Path]:
        folder.mkdir(parents=True, exist_ok=True)
        cert, key = folder / f"{name}.pem", folder / f"{name}.key"
        cert.write_bytes(self.cert.public_bytes(PEM))
        key.write_bytes(
            self.key.private_bytes(
                PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        return cert, key


def make_ca(cn: str = "test CA") -> Issued:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(_name(cn))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - dt.timedelta(days=400))
        .not_valid_after(NOW + dt.timedelta(days=400))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_ku(cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Issued(cert, key)


def issue(
    ca: Issued,
    cn: str,
    *,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    sign: bool = True,
    eku: list | None = None,
    rsa_key: bool = False,
    eku_critical: bool = False,
) -> Issued:
    """A leaf certificate issued by CA: valid START to END (default: now +- a day), key
    usage digital signature and non-repudiation when SIGN, the extended key usages EKU
    (default emailProtection, what audit keygen gives)."""
    key = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        if rsa_key
        else ec.generate_private_key(ec.SECP256R1())
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start or NOW - dt.timedelta(days=1))
        .not_valid_after(end or NOW + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_ku(sign=sign), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.cert.public_key()), critical=False
        )
    )
    usages = [ExtendedKeyUsageOID.EMAIL_PROTECTION] if eku is None else eku
    if usages:
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=eku_critical)
    return Issued(builder.sign(ca.key, hashes.SHA256()), key)


def make_tsa(ca: Issued, cn: str = "test TSA") -> Issued:
    """A timestamp authority's certificate (RSA: pyHanko's DummyTimeStamper signs with RSA),
    with the critical timeStamping extended key usage RFC 3161 requires."""
    return issue(ca, cn, eku=[ExtendedKeyUsageOID.TIME_STAMPING], rsa_key=True, eku_critical=True)


@contextmanager
def timestamp_authority(tsa: Issued) -> Iterator[str]:
    """An RFC 3161 timestamp authority on 127.0.0.1 for the duration of the block; yields
    its URL. Each POSTed TimeStampReq is answered by pyHanko's DummyTimeStamper."""
    from asn1crypto import keys, tsp
    from asn1crypto import x509 as asn1_x509
    from pyhanko.sign.timestamps.dummy_client import DummyTimeStamper

    stamper = DummyTimeStamper(
        tsa_cert=asn1_x509.Certificate.load(tsa.cert.public_bytes(serialization.Encoding.DER)),
        tsa_key=keys.PrivateKeyInfo.load(
            tsa.key.private_bytes(
                serialization.Encoding.DER,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        ),
    )

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            answer = asyncio.run(
                stamper.async_request_tsa_response(tsp.TimeStampReq.load(body))
            ).dump()
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/tsa"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
