"""Render the view model to one self-contained HTML page (CSS inlined, figures as SVG data
URIs). Autoescaping is on for every value, so text from a run (notes, ids) is shown
literally; an SVG in an <img> cannot run script either."""

from __future__ import annotations

import base64
from functools import cache
from typing import Any

import jinja2

import templates

PLOTS = ("durations", "memory", "cost")


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
    env = _env()
    css = (templates.directory() / "report.css").read_text(encoding="utf-8")
    uris = {k: svg_data_uri(plots.get(k)) for k in PLOTS}
    return env.get_template("report.html.j2").render(vm=vm, plots=uris, css=css)
