"""The DSSE envelope (`bundle.dsse.json`) around an in-toto Statement v1 that lists the
SHA-256 of every file of a report directory, made and checked by securesystemslib's DSSE
(`securesystemslib.dsse.Envelope`: the pre-authentication encoding, the base64 fields, the
signature over PAE by a `CryptoSigner`, its verification against an `SSlibKey`).

Why both a PDF signature and this: the PDF signature covers only the PDF; the envelope
covers the HTML, the audit JSON and the bundled run too, and anyone can check it with
`openssl pkeyutl -verify` over the pre-authentication encoding (PAE), no pyHanko needed:

    PAE = "DSSEv1" SP len(type) SP type SP len(body) SP body   (lengths in ASCII decimal)

The signature is DER-encoded ECDSA (SHA-256, securesystemslib's `ecdsa-sha2-nistp256`) over
PAE; `keyid` is the SHA-256 (hex) of the signer certificate's DER, which sits beside the
envelope as `signer.pem`. Envelopes written before securesystemslib did this are the same
bytes in the same standard layout, and read the same.
"""

from __future__ import annotations

import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

SCHEME = "ecdsa-sha2-nistp256"
"""securesystemslib's name for ECDSA P-256 with SHA-256 over DER signatures."""
PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://gpubench-audit.invalid/audit-report/v1"
COMPARISON_PREDICATE_TYPE = "https://gpubench-audit.invalid/comparison-report/v1"
"""An archive comparison (`audit compare`): the same envelope over another predicate."""


class EnvelopeError(ValueError):
    """The envelope is malformed or its signature does not verify; the message says how."""


def pae(payload_type: str, body: bytes) -> bytes:
    """The pre-authentication encoding DSSE signs (securesystemslib's)."""
    from securesystemslib.dsse import Envelope

    return Envelope(body, payload_type, {}).pae()


def _key(cert: x509.Certificate) -> Any:
    """The certificate's public key as securesystemslib's key, under our keyid."""
    from securesystemslib.signer import SSlibKey

    return SSlibKey.from_crypto(cert.public_key(), keyid=cert_keyid(cert), scheme=SCHEME)


def statement(
    digests: Mapping[str, str], predicate: Mapping[str, Any], predicate_type: str = PREDICATE_TYPE
) -> dict[str, Any]:
    """An in-toto Statement v1: one subject per file (sorted by name), our predicate."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": name, "digest": {"sha256": digests[name]}} for name in sorted(digests)
        ],
        "predicateType": predicate_type,
        "predicate": dict(predicate),
    }


def cert_keyid(cert: x509.Certificate) -> str:
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def sign_envelope(
    stmt: Mapping[str, Any], key: ec.EllipticCurvePrivateKey, cert: x509.Certificate
) -> bytes:
    """The envelope as bytes (JSON, sorted keys, trailing newline)."""
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import CryptoSigner

    body = json.dumps(stmt, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )
    env = Envelope(body, PAYLOAD_TYPE, {})
    env.sign(CryptoSigner(key, _key(cert)))
    return (json.dumps(env.to_dict(), indent=2, sort_keys=True) + "\n").encode("utf-8")


def open_envelope(raw: bytes, cert: x509.Certificate) -> dict[str, Any]:
    """Check the envelope's one signature against `cert` and return the Statement.
    Raises EnvelopeError saying what is wrong."""
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import FormatError, VerificationError

    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EnvelopeError(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("payloadType") != PAYLOAD_TYPE:
        raise EnvelopeError(f"payloadType is not {PAYLOAD_TYPE!r}")
    sigs = data.get("signatures")
    if not isinstance(sigs, list) or len(sigs) != 1 or not isinstance(sigs[0], dict):
        raise EnvelopeError("expected exactly one signature")
    if not isinstance(data.get("payload"), str) or not isinstance(sigs[0].get("sig"), str):
        raise EnvelopeError("payload or sig is not valid base64")
    keyid = sigs[0].get("keyid")
    try:  # from_dict consumes the dicts it is given: give it a copy
        env = Envelope.from_dict(json.loads(json.dumps(data)))
    except (binascii.Error, ValueError, TypeError, KeyError, FormatError):
        raise EnvelopeError("payload or sig is not valid base64") from None
    if keyid != cert_keyid(cert):
        raise EnvelopeError("keyid does not match signer.pem")
    if not isinstance(cert.public_key(), ec.EllipticCurvePublicKey):
        raise EnvelopeError("signer certificate does not hold an ECDSA key")
    try:
        env.verify([_key(cert)], 1)
    except VerificationError:
        raise EnvelopeError("signature does not verify over the payload") from None
    try:
        stmt = json.loads(env.payload)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise EnvelopeError("payload is not JSON") from None
    if not isinstance(stmt, dict) or stmt.get("_type") != STATEMENT_TYPE:
        raise EnvelopeError(f"payload is not an in-toto Statement ({STATEMENT_TYPE})")
    return stmt
