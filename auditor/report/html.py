"""Render the view model to one self-contained HTML page (CSS inlined, figures as SVG data
URIs). Autoescaping is on for every value, so text from a run (notes, ids) is shown
literally; an SVG in an <img> cannot run script either.

The `nb` filter keeps what must never be split across lines whole (a rule code, a protocol
rule, a column name, a file name) and lets a path break only after a `/`; `words` lets a
table header break only between its words.

Text from a run is shown to `MAX_TEXT` characters (`clip`): a note of 100,000 characters
without a space would otherwise keep the PDF's line breaking busy for minutes; the run's own
file holds it whole."""

from __future__ import annotations

import base64
import collections
import re
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup, escape

import templates

_UNBREAKABLE = re.compile(
    # a/b/c.jsonl (a file path, not texts/s): break only after a slash
    r"(?P<path>[\w.\-‹›]+(?:/[\w.\-‹›]+)*/[\w\-‹›]+\.[\w‹›]+"
    r"|[\w.\-‹›]+(?:/[\w.\-‹›]+){2,})"
    r"|(?P<word>\b(?:[A-Z]\d{4}|[AB]\d{1,2}(?:\.\d{1,2})?|RUN_DIR)\b"  # A0201, A2.1, B7
    r"|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"  # a column name: corpus_accepted
    r"|\b[\w-]+\.(?:csv|json|jsonl|txt|sha256|pdf|html)\b)"
)  # a file name


MAX_TEXT = 4000
"""The most characters of one value from a run the page shows (a note, an ID, a message)."""


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """TEXT, cut to LIMIT characters with a word saying so."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (cut here: {len(text):,} characters in all, whole in the run)"


def _finalize(value: Any) -> Any:
    """Every `{{ value }}` of the templates: a plain string is clipped (`clip`); what the
    auditor composed itself (Markup, a figure's data URI) is left whole."""
    if (
        isinstance(value, str)
        and not isinstance(value, Markup)
        and not value.startswith("data:image/")
    ):
        return clip(value)
    return value


def _nb(text: str) -> str:
    return f'<span class="nb">{escape(text)}</span>'


def nobreak(value: Any) -> Markup:
    """VALUE escaped, with codes, column names and file names kept on one line and paths
    breakable only after a slash."""
    text = "" if value is None else clip(str(value))
    out, last = [], 0
    for m in _UNBREAKABLE.finditer(text):
        out.append(str(escape(text[last : m.start()])))
        if m["path"]:
            out.append("/<wbr>".join(_nb(part) for part in m["path"].split("/")))
        else:
            out.append(_nb(m["word"]))
        last = m.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def words(value: Any) -> Markup:
    """VALUE escaped, breakable only between words (a header never splits `min–max`)."""
    return Markup(" ".join(_nb(w) for w in clip(str(value)).split(" ")))


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates.directory())),
        autoescape=True,  # every template, whatever its extension
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    env.filters["nb"] = nobreak
    env.filters["words"] = words
    return env


def svg_data_uri(svg: str | None) -> str | None:
    if not svg:
        return None
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def render(vm: dict[str, Any], plots: dict[str, str | None]) -> str:
    """The page of view model VM with its figures PLOTS (name -> SVG text); the run's
    protocol supplies the template of its own sections."""
    from auditor.report.viewmodel import protocol_report

    part = protocol_report(vm.get("protocol"))
    return render_page(
        "report.html.j2", vm, plots, protocol_template=part.template if part is not None else None
    )


def render_page(
    template: str, vm: dict[str, Any], plots: dict[str, str | None], **extra: Any
) -> str:
    """TEMPLATE rendered with VM, its figures PLOTS as data URIs and the report's CSS."""
    css = (templates.directory() / "report.css").read_text(encoding="utf-8")
    # A figure that was not drawn is simply absent from the page.
    uris = collections.defaultdict(lambda: None, {k: svg_data_uri(v) for k, v in plots.items()})
    return _env().get_template(template).render(vm=vm, plots=uris, css=css, **extra)
