"""Jinja2 templates and stylesheets of the signed report (`audit report`).

`report.html.j2` renders the view model of `auditor.report.viewmodel`; `report.css` styles
it on screen and, through its `@page` and `@media print` rules, in the WeasyPrint PDF. The
CSS is inlined into the HTML so `report.html` is one self-contained file.
"""

from __future__ import annotations

from pathlib import Path


def directory() -> Path:
    """The folder holding the templates (shipped as package data)."""
    return Path(__file__).resolve().parent
