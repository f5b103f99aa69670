"""`audit keygen`, the signed report and `audit verify`: an untouched report verifies (with
our verifier, with poppler's pdfsig and with openssl over the DSSE PAE), and any change to a
bundled byte or file makes verify fail naming the file."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from runfactory import make_clean_run

import schemas
from auditor.errors import AuditorError, VerificationFailed
from auditor.report import dsse
from auditor.report.build import build_report
from auditor.report.keygen import keygen
from auditor.report.verify import verify_report


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("keys")
    keygen(d)
    return d


@pytest.fixture(scope="module")
def signed(tmp_path_factory, keys) -> Path:
    """One signed report of the factory's clean run, built once for the module."""
    base = tmp_path_factory.mktemp("signed")
    run = make_clean_run(base / "run")
    out = base / "report"
    build_report(run, out, key=keys / "signer.key", cert=keys / "signer.pem", chain=keys / "ca.pem")
    return out


@pytest.fixture
def copy(signed, tmp_path) -> Path:
    """A private copy of the signed report for a test to tamper with."""
    return Path(shutil.copytree(signed, tmp_path / "report"))


def _fails(report: Path, ca: Path, file_part: str, what: str = "") -> str:
    with pytest.raises(VerificationFailed) as exc:
        verify_report(report, ca)
    msg = str(exc.value)
    assert msg.startswith(file_part), msg
    assert what in msg, msg
    return msg


# -- keygen -----------------------------------------------------------------------------


def test_keygen_writes_a_labelled_chain_with_a_private_key(keys):
    ca = x509.load_pem_x509_certificate((keys / "ca.pem").read_bytes())
    signer = x509.load_pem_x509_certificate((keys / "signer.pem").read_bytes())
    assert stat.S_IMODE((keys / "signer.key").stat().st_mode) == 0o600
    for cert in (ca, signer):
        assert "NOT FOR PROCUREMENT USE" in cert.subject.rfc4514_string()
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    assert not signer.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    ku = signer.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ku.digital_signature and ku.content_commitment
    signer.verify_directly_issued_by(ca)  # raises if the chain is broken
    assert signer.public_key().curve.name == "secp256r1"
    assert not list(keys.glob(".*tmp"))  # atomic writes leave no temp file


def test_keygen_refuses_to_overwrite_a_key(keys):
    before = (keys / "signer.key").read_bytes()
    with pytest.raises(AuditorError, match=r"signer\.key: already exists"):
        keygen(keys)
    assert (keys / "signer.key").read_bytes() == before


# -- an untouched report ----------------------------------------------------------------


def test_untouched_report_verifies(signed, keys):
    lines = verify_report(signed, keys / "ca.pem")
    assert "intact, valid, trusted" in lines[0] and "entire file" in lines[0]
    assert lines[-2] == 'OK: experiment "exp-batch", verdict accepted'
    assert "local test key" in lines[-1]
    page = (signed / "report.html").read_text(encoding="utf-8")
    assert "NOT FOR PROCUREMENT USE" in page and "local test key" in page
    names = sorted(p.relative_to(signed).as_posix() for p in signed.rglob("*") if p.is_file())
    assert {
        "report.html",
        "report.pdf",
        "audit.json",
        "bundle.dsse.json",
        "signer.pem",
        "run/manifest.json",
        "run/resultats-bruts.csv",
    } <= set(names)


def test_statement_lists_every_file_but_the_envelope_and_signer(signed):
    env = json.loads((signed / "bundle.dsse.json").read_bytes())
    assert env["payloadType"] == "application/vnd.in-toto+json"
    stmt = json.loads(base64.b64decode(env["payload"]))
    assert stmt["_type"] == "https://in-toto.io/Statement/v1"
    listed = {s["name"] for s in stmt["subject"]}
    on_disk = {p.relative_to(signed).as_posix() for p in signed.rglob("*") if p.is_file()}
    assert listed == on_disk - {"bundle.dsse.json", "signer.pem"}
    assert stmt["predicate"]["verdict"] == "accepted"
    assert stmt["predicate"]["experiment_id"] == "exp-batch"


@pytest.mark.skipif(
    not (shutil.which("pdfsig") and shutil.which("certutil")),
    reason="pdfsig/certutil not installed (poppler-utils, libnss3-tools)",
)
def test_pdfsig_agrees(signed, keys, tmp_path):
    nss = tmp_path / "nss"
    nss.mkdir()
    subprocess.run(["certutil", "-N", "-d", f"sql:{nss}", "--empty-password"], check=True)
    subprocess.run(
        [
            "certutil",
            "-A",
            "-d",
            f"sql:{nss}",
            "-n",
            "ca",
            "-t",
            "CT,C,C",
            "-i",
            str(keys / "ca.pem"),
        ],
        check=True,
    )
    out = subprocess.run(
        ["pdfsig", "-nssdir", f"sql:{nss}", str(signed / "report.pdf")],
        capture_output=True,
        text=True,
    ).stdout
    # pdfsig exits 0 even for a bad signature: read what it says.
    assert "Signature is Valid" in out, out
    assert "Certificate is Trusted" in out, out
    assert "Total document signed" in out, out
    assert out.count("Signature #") == 1, out


def test_two_keygen_cas_have_two_subjects(tmp_path):
    from cryptography import x509

    names = []
    for d in ("one", "two"):
        keygen(tmp_path / d)
        ca = x509.load_pem_x509_certificate((tmp_path / d / "ca.pem").read_bytes())
        signer = x509.load_pem_x509_certificate((tmp_path / d / "signer.pem").read_bytes())
        assert "NOT FOR PROCUREMENT USE" in ca.subject.rfc4514_string()
        assert signer.issuer == ca.subject
        names.append(ca.subject)
    assert names[0] != names[1]


@pytest.mark.skipif(
    not (shutil.which("pdfsig") and shutil.which("certutil")),
    reason="pdfsig/certutil not installed (poppler-utils, libnss3-tools)",
)
def test_pdfsig_trusts_the_right_ca_among_two_test_cas(signed, keys, tmp_path):
    """Two `audit keygen` CAs in one NSS store (a reviewer who tried the tool twice): pdfsig
    still finds the CA that signed, the other one listed first."""
    keygen(tmp_path / "other")
    nss = tmp_path / "nss"
    nss.mkdir()
    subprocess.run(["certutil", "-N", "-d", f"sql:{nss}", "--empty-password"], check=True)
    for nick, ca in (("other", tmp_path / "other" / "ca.pem"), ("ca", keys / "ca.pem")):
        subprocess.run(
            ["certutil", "-A", "-d", f"sql:{nss}", "-n", nick, "-t", "CT,C,C", "-i", str(ca)],
            check=True,
        )
    listed = subprocess.run(
        ["certutil", "-L", "-d", f"sql:{nss}"], capture_output=True, text=True, check=True
    ).stdout
    assert "other" in listed and "\nca " in listed, listed
    out = subprocess.run(
        ["pdfsig", "-nssdir", f"sql:{nss}", str(signed / "report.pdf")],
        capture_output=True,
        text=True,
    ).stdout
    assert "Signature is Valid" in out and "Certificate is Trusted" in out, out


@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl not installed")
def test_openssl_verifies_the_dsse_signature_over_pae(signed, tmp_path):
    env = json.loads((signed / "bundle.dsse.json").read_bytes())
    (tmp_path / "pae.bin").write_bytes(
        dsse.pae(env["payloadType"], base64.b64decode(env["payload"]))
    )
    (tmp_path / "sig.der").write_bytes(base64.b64decode(env["signatures"][0]["sig"]))
    pub = subprocess.run(
        ["openssl", "x509", "-in", str(signed / "signer.pem"), "-pubkey", "-noout"],
        capture_output=True,
        check=True,
    ).stdout
    (tmp_path / "pub.pem").write_bytes(pub)

    def check(data: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                "openssl",
                "pkeyutl",
                "-verify",
                "-pubin",
                "-inkey",
                str(tmp_path / "pub.pem"),
                "-rawin",
                "-digest",
                "sha256",
                "-in",
                str(data),
                "-sigfile",
                str(tmp_path / "sig.der"),
            ],
            capture_output=True,
            text=True,
        )

    ok = check(tmp_path / "pae.bin")
    assert ok.returncode == 0 and "Signature Verified Successfully" in ok.stdout, ok
    bad = tmp_path / "bad.bin"
    bad.write_bytes((tmp_path / "pae.bin").read_bytes() + b" ")
    assert check(bad).returncode != 0


@pytest.mark.skipif(not shutil.which("pdfdetach"), reason="pdfdetach not installed")
def test_pdf_is_pdf2_with_the_evidence_attached(signed):
    assert (signed / "report.pdf").read_bytes().startswith(b"%PDF-2.0")
    out = subprocess.run(
        ["pdfdetach", "-list", str(signed / "report.pdf")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in (
        "artifact-hashes.sha256",
        "rules.txt",
        "resultats-bruts.csv",
        "manifest.json",
        "audit.json",
    ):
        assert name in out, out


def test_the_hash_list_and_the_rule_list_are_attachments_not_pages(signed):
    page = (signed / "report.html").read_text(encoding="utf-8")
    assert "SHA-256" not in page.split('id="appendix"')[0]  # no hash table in the pages
    listed = (signed / "artifact-hashes.sha256").read_text().splitlines()
    run_files = sorted(
        p.relative_to(signed).as_posix() for p in (signed / "run").rglob("*") if p.is_file()
    )
    assert sorted(line.split("  ", 1)[1] for line in listed) == run_files
    if shutil.which("sha256sum"):  # the list checks the copy under run/ as it is
        subprocess.run(
            ["sha256sum", "--quiet", "-c", "artifact-hashes.sha256"], cwd=signed, check=True
        )
    rules = (signed / "rules.txt").read_text()
    from auditor.protocols import get

    assert all(
        f"{r.code}  {r.severity}  protocol {r.protocol_ref}" in rules
        for r in get("accepted-corpus-cost").rules
    )
    assert "What to do:" in rules and "Protocol A2.1:" in rules


def test_the_cli_verifies_and_exits_1_on_tampering(copy, keys):
    def run() -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-c",
                "from auditor.cli import main; main()",
                "verify",
                str(copy),
                "--ca",
                str(keys / "ca.pem"),
            ],
            capture_output=True,
            text=True,
        )

    ok = run()
    assert ok.returncode == 0, ok.stderr
    assert "OK: experiment" in ok.stdout
    (copy / "audit.json").write_text("{}\n")
    bad = run()
    assert bad.returncode == 1
    assert bad.stderr.startswith("FAILED: audit.json: SHA-256"), bad.stderr


def test_verify_json_validates_and_names_the_failing_file(copy, keys):
    def run() -> tuple[int, dict]:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "from auditor.cli import main; main()",
                "verify",
                str(copy),
                "--ca",
                str(keys / "ca.pem"),
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
        )
        doc = json.loads(proc.stdout)
        assert list(schemas.validator("verify_result").iter_errors(doc)) == []
        return proc.returncode, doc

    code, doc = run()
    assert code == 0 and doc["ok"] and doc["verdict"] == "accepted" and doc["test_key"]
    assert [c["file"] for c in doc["checks"]] == ["report.pdf", "bundle.dsse.json", "*"]
    (copy / "audit.json").write_text("{}\n")
    code, doc = run()
    assert code == 1 and not doc["ok"]
    assert doc["failure"]["file"] == "audit.json" and "SHA-256" in doc["failure"]["reason"]
    assert [c["file"] for c in doc["checks"]] == ["report.pdf", "bundle.dsse.json"]


# -- tampering --------------------------------------------------------------------------


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_one_byte_of_the_pdf_changed(copy, keys):
    pdf = copy / "report.pdf"
    _flip(pdf, len(pdf.read_bytes()) // 3)  # inside the first signed byte range
    _fails(copy, keys / "ca.pem", "report.pdf:")


def test_bytes_appended_to_the_pdf(copy, keys):
    with (copy / "report.pdf").open("ab") as fh:
        fh.write(b"\n% a later revision\n")
    _fails(copy, keys / "ca.pem", "report.pdf:")


def test_a_later_incremental_revision(copy, keys):
    import io

    from pyhanko.pdf_utils.generic import NameObject, TextStringObject
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    pdf = copy / "report.pdf"
    buf = io.BytesIO()
    with pdf.open("rb") as fh:
        w = IncrementalPdfFileWriter(fh)
        w.root[NameObject("/Lang")] = TextStringObject("fr")
        w.update_root()
        w.write(buf)
    pdf.write_bytes(buf.getvalue())
    msg = _fails(copy, keys / "ca.pem", "report.pdf:")
    assert "after" in msg or "whole file" in msg, msg


@pytest.mark.parametrize(
    "name",
    [
        "report.html",
        "audit.json",
        "run/resultats-bruts.csv",
        "run/manifest.json",
        "run/outputs/batch-1/warm-3.jsonl",
    ],
)
def test_one_byte_of_a_listed_file_changed(copy, keys, name):
    _flip(copy / name, 10)
    _fails(copy, keys / "ca.pem", f"{name}: SHA-256", "was changed")


def test_dsse_payload_changed(copy, keys):
    p = copy / "bundle.dsse.json"
    env = json.loads(p.read_bytes())
    stmt = json.loads(base64.b64decode(env["payload"]))
    stmt["predicate"]["verdict"] = "rejected"
    env["payload"] = base64.b64encode(json.dumps(stmt).encode()).decode()
    p.write_text(json.dumps(env))
    _fails(copy, keys / "ca.pem", "bundle.dsse.json:", "does not verify")


def test_dsse_one_payload_byte_changed(copy, keys):
    p = copy / "bundle.dsse.json"
    env = json.loads(p.read_bytes())
    body = bytearray(base64.b64decode(env["payload"]))
    body[40] ^= 0x01
    env["payload"] = base64.b64encode(bytes(body)).decode()
    p.write_text(json.dumps(env))
    _fails(copy, keys / "ca.pem", "bundle.dsse.json:")


def test_a_file_added(copy, keys):
    (copy / "run" / "extra.txt").write_text("slipped in\n")
    _fails(copy, keys / "ca.pem", "run/extra.txt:", "not listed")


def test_a_file_removed(copy, keys):
    (copy / "run" / "timeline.jsonl").unlink()
    _fails(copy, keys / "ca.pem", "run/timeline.jsonl:", "missing")


def test_a_file_replaced_by_a_symlink(copy, keys):
    target = copy / "run" / "environment.json"
    shutil.copy(target, copy / "elsewhere.json")
    target.unlink()
    target.symlink_to(copy / "elsewhere.json")
    _fails(copy, keys / "ca.pem", "run/environment.json:", "not a regular file")


def test_another_ca_is_not_trusted(signed, tmp_path):
    keygen(tmp_path / "other")
    _fails(signed, tmp_path / "other" / "ca.pem", "report.pdf:", "does not chain")


def test_signer_pem_swapped(copy, keys, tmp_path):
    keygen(tmp_path / "other")
    shutil.copy(tmp_path / "other" / "signer.pem", copy / "signer.pem")
    _fails(copy, keys / "ca.pem", "signer.pem:")


def test_unsigned_report_renders_but_does_not_verify(tmp_path, keys):
    run = make_clean_run(tmp_path / "run", eval_size=10, warm_passes=2)
    out = tmp_path / "unsigned"
    build_report(run, out)
    assert (out / "report.html").is_file() and (out / "report.pdf").is_file()
    assert not (out / "bundle.dsse.json").exists()
    _fails(out, keys / "ca.pem", "bundle.dsse.json:", "unsigned")


def test_a_bad_key_is_refused_before_any_work(tmp_path, keys):
    bad = tmp_path / "bad.key"
    bad.write_text("not a key")
    with pytest.raises(AuditorError, match=r"bad\.key: not an unencrypted PEM private key"):
        build_report(
            tmp_path, tmp_path.parent / f"{tmp_path.name}-out", key=bad, cert=keys / "signer.pem"
        )
    assert not (tmp_path.parent / f"{tmp_path.name}-out").exists()


def test_cert_that_does_not_match_the_key_is_refused(tmp_path, keys):
    keygen(tmp_path / "other")
    run = make_clean_run(tmp_path / "run", eval_size=10, warm_passes=2)
    with pytest.raises(AuditorError, match="does not belong to the key"):
        build_report(
            run, tmp_path / "out", key=keys / "signer.key", cert=tmp_path / "other" / "signer.pem"
        )
    assert not (tmp_path / "out").exists()


def test_pdf_replaced_by_garbage(copy, keys):
    (copy / "report.pdf").write_bytes(b"%PDF-2.0\nnot really a pdf\n")
    _fails(copy, keys / "ca.pem", "report.pdf:")


def test_a_ca_file_that_is_not_a_certificate_is_bad_usage(signed, tmp_path, keys):
    """As `audit report` treats the same mistake: nothing of the report was checked."""
    bad = tmp_path / "ca.pem"
    bad.write_text("hello\n")
    with pytest.raises(AuditorError, match=r"--ca .*not a PEM certificate"):
        verify_report(signed, bad)
    with pytest.raises(AuditorError, match="this is a private key"):
        verify_report(signed, keys / "signer.key")


def test_an_empty_directory_is_not_a_report(tmp_path, keys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(AuditorError, match="not a report directory"):
        verify_report(tmp_path / "empty", keys / "ca.pem")


def test_a_report_without_its_bundle_still_fails_as_unsigned(copy, keys):
    (copy / "bundle.dsse.json").unlink()
    _fails(copy, keys / "ca.pem", "bundle.dsse.json:", "unsigned")


def test_every_failure_is_one_line_and_none_a_traceback(copy, keys):
    """Two files changed: each failure gets its line, and the CLI prints them all, no
    traceback."""
    (copy / "audit.json").write_text("{}\n")
    (copy / "report.html").write_text("changed\n")
    with pytest.raises(VerificationFailed) as exc:
        verify_report(copy, keys / "ca.pem")
    lines = str(exc.value).splitlines()
    assert [line.split(":")[0] for line in lines] == ["audit.json", "report.html"]
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from auditor.cli import main; main()",
            "verify",
            str(copy),
            "--ca",
            str(keys / "ca.pem"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert [line.split(":")[:2] for line in proc.stderr.splitlines()] == [
        ["FAILED", " audit.json"],
        ["FAILED", " report.html"],
    ]


def _xmp(pdf: Path) -> str:
    """The PDF's XMP metadata stream, read with pyHanko (PDF/A-4 keeps metadata there)."""
    from pyhanko.pdf_utils.reader import PdfFileReader

    with pdf.open("rb") as fh:
        return PdfFileReader(fh, strict=False).root["/Metadata"].data.decode("utf-8")


def test_the_pdf_names_its_title_author_subject_and_run(signed):
    xmp = _xmp(signed / "report.pdf")
    manifest_sha = hashlib.sha256((signed / "run" / "manifest.json").read_bytes()).hexdigest()
    assert "<dc:title>" in xmp.replace(' xmlns:dc="http://purl.org/dc/elements/1.1/"', "")
    assert "Audit report: exp-batch" in xmp
    assert "gpubench-audit LOCAL TEST SIGNER - NOT FOR PROCUREMENT USE" in xmp  # dc:creator
    assert (
        "gpubench-audit report of run exp-batch (protocol accepted-corpus-cost): accepted; "
        f"run manifest SHA-256 {manifest_sha}"
    ) in xmp  # dc:description, the Subject
    assert f"manifest sha256 {manifest_sha}" in xmp and "experiment exp-batch" in xmp
    if shutil.which("pdfinfo"):  # poppler reads the same metadata
        meta = subprocess.run(
            ["pdfinfo", "-meta", str(signed / "report.pdf")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "Audit report: exp-batch" in meta and manifest_sha in meta


def test_securesystemslib_verifies_the_bundle_on_its_own(signed):
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import SSlibKey

    cert = x509.load_pem_x509_certificate((signed / "signer.pem").read_bytes())
    env = Envelope.from_dict(json.loads((signed / "bundle.dsse.json").read_bytes()))
    key = SSlibKey.from_crypto(
        cert.public_key(), keyid=dsse.cert_keyid(cert), scheme="ecdsa-sha2-nistp256"
    )
    assert list(env.verify([key], 1)) == [dsse.cert_keyid(cert)]


def test_an_envelope_made_by_hand_the_old_way_still_opens(keys):
    """Envelopes written before securesystemslib made them (PAE and the ECDSA signature by
    hand, base64 fields) are read as before."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key((keys / "signer.key").read_bytes(), password=None)
    cert = x509.load_pem_x509_certificate((keys / "signer.pem").read_bytes())
    stmt = dsse.statement({"a.txt": "0" * 64}, {"verdict": "accepted"})
    body = json.dumps(stmt, sort_keys=True, separators=(",", ":")).encode()
    t = dsse.PAYLOAD_TYPE.encode()
    pae = b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)
    assert pae == dsse.pae(dsse.PAYLOAD_TYPE, body)
    old = {
        "payloadType": dsse.PAYLOAD_TYPE,
        "payload": base64.b64encode(body).decode(),
        "signatures": [
            {
                "keyid": dsse.cert_keyid(cert),
                "sig": base64.b64encode(key.sign(pae, ec.ECDSA(hashes.SHA256()))).decode(),
            }
        ],
    }
    assert dsse.open_envelope(json.dumps(old).encode(), cert) == stmt
    ours = json.loads(dsse.sign_envelope(stmt, key, cert))
    assert ours.keys() == old.keys() and ours["payload"] == old["payload"]


def test_the_signed_audit_names_the_run_beside_it_not_a_local_path(signed):
    doc = json.loads((signed / "audit.json").read_text(encoding="utf-8"))
    assert doc["run_dir"] == "run" and (signed / doc["run_dir"] / "manifest.json").is_file()
