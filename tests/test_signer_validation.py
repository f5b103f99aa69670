"""`audit verify` validates the signer's chain with pyhanko-certvalidator and refuses an
expired, a not-yet-valid or a wrong-usage signer (certificates the test makes); `audit
report --tsa URL` timestamps the signature at an RFC 3161 authority the test starts on the
loopback, and `audit verify` says whether a trusted timestamp is present."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.x509.oid import ExtendedKeyUsageOID
from pki import NOW, PEM, issue, make_ca, make_tsa, timestamp_authority
from runfactory import make_clean_run

import schemas
from auditor.errors import AuditorError, VerificationFailed
from auditor.report.build import build_report
from auditor.report.verify import verify_report, verify_result

DAY = dt.timedelta(days=1)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_clean_run(tmp_path_factory.mktemp("signer") / "run", eval_size=10, warm_passes=2)


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory):
    authority = make_ca()
    folder = tmp_path_factory.mktemp("ca")
    (folder / "ca.pem").write_bytes(authority.cert.public_bytes(PEM))
    return authority, folder / "ca.pem"


def _report(run: Path, ca, signer, tmp_path: Path, tsa: str | None = None) -> Path:
    _, ca_pem = ca
    cert, key = signer.write(tmp_path / "keys", "signer")
    out = tmp_path / "report"
    build_report(run, out, key=key, cert=cert, chain=ca_pem, tsa=tsa)
    return out


def _failures(report: Path, ca_pem: Path) -> str:
    with pytest.raises(VerificationFailed) as exc:
        verify_report(report, ca_pem)
    return str(exc.value)


def test_a_valid_signer_verifies_without_a_timestamp(run, ca, tmp_path):
    report = _report(run, ca, issue(ca[0], "signer"), tmp_path)
    lines = verify_report(report, ca[1])
    assert any(
        "no trusted timestamp: the signing time is the signer's own claim" in line for line in lines
    )
    doc = verify_result(report, ca[1])
    assert doc["ok"] and doc["timestamp"] == {"present": False, "trusted": False}
    assert list(schemas.validator("verify_result").iter_errors(doc)) == []


@pytest.mark.parametrize(
    ("when", "why"),
    [
        ((NOW - 30 * DAY, NOW - DAY), "expired"),
        ((NOW + DAY, NOW + 30 * DAY), "not valid yet"),
    ],
)
def test_an_expired_or_not_yet_valid_signer_is_refused(run, ca, tmp_path, when, why):
    report = _report(run, ca, issue(ca[0], "signer", start=when[0], end=when[1]), tmp_path)
    msg = _failures(report, ca[1])
    lines = msg.splitlines()
    assert lines[0].startswith("report.pdf: the signer's certificate") and why in lines[0]
    assert any(line.startswith("signer.pem:") and why in line for line in lines), msg


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"eku": [ExtendedKeyUsageOID.SERVER_AUTH]}, "server auth"),  # a TLS certificate
        ({"sign": False}, "digital signature"),  # key usage without signing
    ],
)
def test_a_signer_without_a_signing_usage_is_refused(run, ca, tmp_path, kwargs, why):
    report = _report(run, ca, issue(ca[0], "signer", **kwargs), tmp_path)
    msg = _failures(report, ca[1])
    assert "not a signing certificate" in msg or "not trusted for signing" in msg, msg
    assert why in msg.replace("_", " ").lower(), msg
    assert any(line.startswith("signer.pem:") for line in msg.splitlines()), msg


def test_a_signer_with_no_extended_key_usage_or_document_signing_is_accepted(run, ca, tmp_path):
    from cryptography.x509 import ObjectIdentifier

    for i, eku in enumerate(([], [ObjectIdentifier("1.3.6.1.5.5.7.3.36")])):
        report = _report(run, ca, issue(ca[0], "signer", eku=eku), tmp_path / str(i))
        assert verify_report(report, ca[1])[-1].startswith("OK:")


def test_a_trusted_timestamp_is_reported(run, ca, tmp_path):
    tsa = make_tsa(ca[0])
    with timestamp_authority(tsa) as url:
        report = _report(run, ca, issue(ca[0], "signer"), tmp_path, tsa=url)
    lines = verify_report(report, ca[1])
    stamped = next(line for line in lines if "RFC 3161 timestamp" in line)
    assert (
        stamped.startswith("report.pdf: trusted RFC 3161 timestamp: the signature existed at ")
        and "(timestamp authority: test TSA)" in stamped
    )
    doc = verify_result(report, ca[1])
    assert doc["ok"] and doc["timestamp"]["present"] and doc["timestamp"]["trusted"]
    when = dt.datetime.fromisoformat(doc["timestamp"]["time"].replace("Z", "+00:00"))
    assert abs(when - dt.datetime.now(dt.UTC)) < dt.timedelta(minutes=10)
    assert list(schemas.validator("verify_result").iter_errors(doc)) == []


def test_a_timestamp_from_an_authority_nobody_trusts_is_said_so(run, ca, tmp_path):
    other = make_ca("another CA")
    (tmp_path / "other.pem").write_bytes(other.cert.public_bytes(PEM))
    with timestamp_authority(make_tsa(other, "stranger TSA")) as url:
        report = _report(run, ca, issue(ca[0], "signer"), tmp_path, tsa=url)
    doc = verify_result(report, ca[1])
    assert doc["ok"] and doc["timestamp"]["present"] and not doc["timestamp"]["trusted"]
    lines = verify_report(report, ca[1])
    assert any("an RFC 3161 timestamp is present but not trusted" in line for line in lines)
    # trusting that authority's CA for timestamps (--tsa-ca) makes it trusted
    assert verify_result(report, ca[1], tsa_ca=tmp_path / "other.pem")["timestamp"]["trusted"]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor",
            "verify",
            str(report),
            "--ca",
            str(ca[1]),
            "--tsa-ca",
            str(tmp_path / "other.pem"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and "trusted RFC 3161 timestamp" in proc.stdout


def test_an_unreachable_authority_fails_the_report_cleanly(run, ca, tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(AuditorError, match=r"--tsa http://127\.0\.0\.1:\d+/: no timestamp"):
        _report(run, ca, issue(ca[0], "signer"), tmp_path, tsa=f"http://127.0.0.1:{port}/")
    assert not (tmp_path / "report").exists()
    with pytest.raises(AuditorError, match="--tsa ftp://x: a timestamp authority is an"):
        _report(run, ca, issue(ca[0], "signer"), tmp_path, tsa="ftp://x")
    assert json.loads(json.dumps({"ok": True}))  # the report dir was never half-written
