"""A small, safe XML reader for evidence files: expat with entity declarations refused (no
billion laughs, no external entities: the DTD a file names is never fetched), a size limit,
and the line of every element, which `xml.etree` does not keep.

A document that breaks off is returned as far as it was read, with a `syntax` fault at the
line where it broke: the readings before the break stay usable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.parsers import expat

from auditor.readers._common import MAX_DOCUMENT_BYTES, FaultLog, too_large


@dataclass
class Element:
    tag: str
    attrib: dict[str, str]
    line: int
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def find(self, tag: str) -> Element | None:
        return next((c for c in self.children if c.tag == tag), None)

    def findall(self, tag: str) -> list[Element]:
        return [c for c in self.children if c.tag == tag]

    def findtext(self, tag: str) -> str | None:
        child = self.find(tag)
        return child.text.strip() if child is not None else None


class _Refused(Exception):
    pass


def parse(
    data: bytes, log: FaultLog, *, first_line: int = 1, what: str = "The XML document"
) -> Element | None:
    """The root element of one XML document (lines counted from `first_line`), or None."""
    if too_large(data, MAX_DOCUMENT_BYTES, log, what):
        return None
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[Element] = []
    root: list[Element] = []
    text: list[list[str]] = []

    def start(tag: str, attrib: dict[str, str]) -> None:
        el = Element(tag, attrib, parser.CurrentLineNumber + first_line - 1)
        (stack[-1].children if stack else root).append(el)
        stack.append(el)
        text.append([])

    def end(_: str) -> None:
        stack.pop().text = "".join(text.pop())

    def chars(data: str) -> None:
        if text:
            text[-1].append(data)

    def refuse(*_: object) -> None:
        raise _Refused

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse  # type: ignore[assignment]
    try:
        parser.Parse(data, True)
    except _Refused:
        log.error(
            f"{what} declares or references entities: refused (entities are never expanded).",
            kind="limit",
            line=parser.CurrentLineNumber + first_line - 1,
        )
        return None
    except expat.ExpatError as exc:
        line = (exc.lineno or 1) + first_line - 1
        log.error(
            f"{what} is not well-formed XML ({expat.ErrorString(exc.code)}); what "
            "came before is read.",
            kind="syntax",
            line=line,
            column=exc.offset + 1,
        )
    except (LookupError, ValueError) as exc:  # an unknown encoding in the XML declaration
        log.error(f"{what} cannot be decoded ({exc}).", kind="encoding", line=first_line)
        while stack:  # close what was open, keeping the text read so far
            stack.pop().text = "".join(text.pop())
    return root[0] if root else None
