"""The DSSE envelope (`bundle.dsse.json`) around an in-toto Statement v1 that lists the
SHA-256 of every file of a report directory.

Why both a PDF signature and this: the PDF signature covers only the PDF; the envelope
covers the HTML, the audit JSON and the bundled run too, and anyone can check it with
`openssl pkeyutl -verify` over the pre-authentication encoding (PAE), no pyHanko needed:

    PAE = "DSSEv1" SP len(type) SP type SP len(body) SP body   (lengths in ASCII decimal)

The signature is DER-encoded ECDSA (SHA-256) over PAE; `keyid` is the SHA-256 (hex) of the
signer certificate's DER, which sits beside the envelope as `signer.pem`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://gpubench-audit.invalid/audit-report/v1"
COMPARISON_PREDICATE_TYPE = "https://gpubench-audit.invalid/comparison-report/v1"
"""An archive comparison (`audit compare`): the same envelope over another predicate."""


class EnvelopeError(ValueError):
    """The envelope is malformed or its signature does not verify; the message says how."""


def pae(payload_type: str, body: bytes) -> bytes:
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def statement(digests: Mapping[str, str], predicate: Mapping[str, Any],
              predicate_type: str = PREDICATE_TYPE) -> dict[str, Any]:
    """An in-toto Statement v1: one subject per file (sorted by name), our predicate."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": digests[name]}}
                    for name in sorted(digests)],
        "predicateType": predicate_type,
        "predicate": dict(predicate),
    }


def cert_keyid(cert: x509.Certificate) -> str:
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def sign_envelope(stmt: Mapping[str, Any], key: ec.EllipticCurvePrivateKey,
                  cert: x509.Certificate) -> bytes:
    """The envelope as bytes (JSON, sorted keys, trailing newline)."""
    body = json.dumps(stmt, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")
    sig = key.sign(pae(PAYLOAD_TYPE, body), ec.ECDSA(hashes.SHA256()))
    env = {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(body).decode("ascii"),
        "signatures": [{"keyid": cert_keyid(cert), "sig": base64.b64encode(sig).decode("ascii")}],
    }
    return (json.dumps(env, indent=2, sort_keys=True) + "\n").encode("utf-8")


def open_envelope(raw: bytes, cert: x509.Certificate) -> dict[str, Any]:
    """Check the envelope's one signature against `cert` and return the Statement.
    Raises EnvelopeError saying what is wrong."""
    try:
        env = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EnvelopeError(f"not JSON ({exc})") from None
    if not isinstance(env, dict) or env.get("payloadType") != PAYLOAD_TYPE:
        raise EnvelopeError(f"payloadType is not {PAYLOAD_TYPE!r}")
    sigs = env.get("signatures")
    if not isinstance(sigs, list) or len(sigs) != 1 or not isinstance(sigs[0], dict):
        raise EnvelopeError("expected exactly one signature")
    try:
        body = base64.b64decode(env.get("payload", ""), validate=True)
        sig = base64.b64decode(sigs[0].get("sig", ""), validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise EnvelopeError("payload or sig is not valid base64") from None
    if sigs[0].get("keyid") != cert_keyid(cert):
        raise EnvelopeError("keyid does not match signer.pem")
    pub = cert.public_key()
    if not isinstance(pub, ec.EllipticCurvePublicKey):
        raise EnvelopeError("signer certificate does not hold an ECDSA key")
    try:
        pub.verify(sig, pae(PAYLOAD_TYPE, body), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise EnvelopeError("signature does not verify over the payload") from None
    try:
        stmt = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise EnvelopeError("payload is not JSON") from None
    if not isinstance(stmt, dict) or stmt.get("_type") != STATEMENT_TYPE:
        raise EnvelopeError(f"payload is not an in-toto Statement ({STATEMENT_TYPE})")
    return stmt
