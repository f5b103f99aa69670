"""`audit verify REPORT_DIR --ca CA`: is this report what was signed, by a key that chains
to CA? Exit 0 only when all of these hold, else `VerificationFailed("<file>: <what>")`:

1. `report.pdf` carries exactly one signature, and pyHanko finds it intact, valid, trusted
   (path to CA) and covering the entire file: no revision was added after signing;
2. `signer.pem` is the very certificate that signed the PDF, and pyhanko-certvalidator
   builds and validates its path to CA (signatures, names, CA constraints, validity
   period: an expired or not-yet-valid certificate anywhere on the path is refused), and it
   is a signing certificate (key usage digital signature or non-repudiation; an extended
   key usage, when present, one meant for documents: `verify_pdf.SIGNING_EKU`);
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

Checks 1 and 2 and the timestamp are `verify_pdf`'s (pyHanko, pyhanko-certvalidator);
this module checks the envelope and the Statement (3 and 4), runs every check and words the
result (`verify_report`, `verify_result`).

What `pdfsig` (NSS) and `openssl pkeyutl -verify` check independently is the same: see
tests/test_verify.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from auditor.dirkind import REPORT_FILES, wrong_kind
from auditor.errors import AuditorError, VerificationFailed
from auditor.fsutil import list_files, sha256_file
from auditor.report import dsse
from auditor.report.verify_pdf import (
    NO_TIMESTAMP,
    PDF,
    SIGNER,
    _check_pdf,  # `_verify` names a check that cannot run by its function name
    _check_signer,
    _load_ca,
)

HTML = "report.html"
AUDIT_JSON = "audit.json"
ENVELOPE = "bundle.dsse.json"
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
