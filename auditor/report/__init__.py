"""The signed report: `audit report` builds a self-contained report directory (HTML, PDF/A,
the audit JSON, a copy of the run, a DSSE bundle), `audit verify` checks one, `audit keygen`
makes a local test CA and signing key.

Layout of a report directory (`build.py` writes it, `verify.py` and `verify_pdf.py` check
it):

    report.html        the report, Jinja2-rendered, autoescaped
    report.pdf         the same HTML through WeasyPrint (PDF/A-4f; the hash list, the rule
                       list, CSV, manifest and audit JSON attached), signed with pyHanko
                       (PAdES B-B, SHA-256, ECDSA)
    audit.json         the audit result (schemas/audit-result.schema.json)
    artifact-hashes.sha256, rules.txt
                       the PDF's attachments, beside report.html (`attachments.py`)
    run/...            a byte-for-byte copy of the run directory's files
    bundle.dsse.json   DSSE envelope of an in-toto Statement listing every file above
    signer.pem         the signing certificate, so `verify` can check the DSSE signature

Heavy imports (weasyprint, pyhanko, matplotlib) stay inside the modules that need them.
"""
