"""The HTML through WeasyPrint: PDF/A-4f (PDF 2.0, so pyHanko's signature update keeps the
file's version consistent) with the raw CSV, the manifest and the audit JSON attached as
associated files (`/AF`), so the PDF alone carries the evidence it summarises; and its
document metadata (`Metadata`: title, author, subject, keywords, dates; the subject and the
keywords name the run: experiment, protocol, verdict, the SHA-256 of its manifest), so a
file manager or a document system names the report without opening it. PDF/A-4 keeps
metadata in the XMP stream only (it forbids the PDF 1.x information dictionary, which
WeasyPrint therefore leaves out): `pdfinfo -meta report.pdf` shows it, as `dc:title`,
`dc:creator`, `dc:description` and `pdf:Keywords`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PDF_VARIANT = "pdf/a-4f"


@dataclass(frozen=True)
class Metadata:
    """What the PDF says about itself."""

    title: str
    author: str
    """Who stands behind it: the signer's name, or that it is unsigned."""
    subject: str
    """One line: what was audited and the verdict."""
    keywords: tuple[str, ...] = ()
    created: str | None = None
    """W3C date-time (`2026-05-01T12:00:00Z`), the report's generation time."""


def render(
    html: str,
    attachments: list[tuple[str, bytes, str]],
    base_url: Path | None = None,
    metadata: Metadata | None = None,
) -> bytes:
    """`attachments`: (file name, bytes, description); missing files are simply not listed
    by the caller. METADATA replaces what WeasyPrint takes from the page's head. Returns
    the PDF bytes."""
    from auditor.report.libload import import_weasyprint

    weasyprint = import_weasyprint()
    files = [
        weasyprint.Attachment(string=data, name=name, description=desc, relationship="Source")
        for name, data, desc in attachments
    ]
    doc = weasyprint.HTML(string=html, base_url=str(base_url) if base_url else None).render()
    if metadata is not None:
        meta = doc.metadata
        meta.title, meta.authors, meta.description = (
            metadata.title,
            [metadata.author],
            metadata.subject,
        )
        meta.keywords = list(metadata.keywords)
        if metadata.created:
            meta.created = meta.modified = metadata.created
    from auditor.report.fontsubset import drop_before_subsetting

    with drop_before_subsetting():
        return doc.write_pdf(pdf_variant=PDF_VARIANT, attachments=files)
