"""The HTML through WeasyPrint: PDF/A-4f (PDF 2.0, so pyHanko's signature update keeps the
file's version consistent) with the raw CSV, the manifest and the audit JSON attached as
associated files (`/AF`), so the PDF alone carries the evidence it summarises."""

from __future__ import annotations

from pathlib import Path

PDF_VARIANT = "pdf/a-4f"


def render(html: str, attachments: list[tuple[str, bytes, str]],
           base_url: Path | None = None) -> bytes:
    """`attachments`: (file name, bytes, description); missing files are simply not listed
    by the caller. Returns the PDF bytes."""
    import weasyprint

    files = [weasyprint.Attachment(string=data, name=name, description=desc,
                                   relationship="Source")
             for name, data, desc in attachments]
    doc = weasyprint.HTML(string=html, base_url=str(base_url) if base_url else None)
    return doc.write_pdf(pdf_variant=PDF_VARIANT, attachments=files)
