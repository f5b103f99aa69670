"""Render the view model to one self-contained HTML page (CSS inlined, figures as SVG data
URIs). Autoescaping is on for every value, so text from a run (notes, ids) is shown
literally; an SVG in an <img> cannot run script either."""

from __future__ import annotations

import base64
import collections
from functools import cache
from typing import Any

import jinja2

import templates


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates.directory())),
        autoescape=True,  # every template, whatever its extension
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
        keep_trailing_newline=True,
    )


def svg_data_uri(svg: str | None) -> str | None:
    if not svg:
        return None
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def render(vm: dict[str, Any], plots: dict[str, str | None]) -> str:
    """The page of view model VM with its figures PLOTS (name -> SVG text); the run's
    protocol supplies the template of its own sections."""
    from auditor.report.viewmodel import protocol_report

    module = protocol_report(vm.get("protocol"))
    return render_page("report.html.j2", vm, plots,
                       protocol_template=getattr(module, "TEMPLATE", None))


def render_page(template: str, vm: dict[str, Any], plots: dict[str, str | None],
                **extra: Any) -> str:
    """TEMPLATE rendered with VM, its figures PLOTS as data URIs and the report's CSS."""
    css = (templates.directory() / "report.css").read_text(encoding="utf-8")
    # A figure that was not drawn is simply absent from the page.
    uris = collections.defaultdict(lambda: None,
                                   {k: svg_data_uri(v) for k, v in plots.items()})
    return _env().get_template(template).render(vm=vm, plots=uris, css=css, **extra)
