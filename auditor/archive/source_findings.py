"""The findings about a source (an archive member, a folder entry) rather than about a run's
evidence: their codes and titles, shared by discovery, extraction and the workers."""

from __future__ import annotations

from auditor.model import Finding

# Codes of the findings about a source rather than about a run's evidence.
NOT_A_RUN = "R0002"
INTERNAL = "R0003"
LINK_NOT_FOLLOWED = "R0004"
PATH_OUTSIDE = "R0101"
LINK_REFUSED = "R0102"
SPECIAL_FILE = "R0103"
LIMIT_EXCEEDED = "R0104"
UNREADABLE_ARCHIVE = "R0105"
NAME_CLASH = "R0106"
BAD_NAME = "R0107"

_TITLES = {
    NOT_A_RUN: "not a run",
    INTERNAL: "internal error",
    LINK_NOT_FOLLOWED: "link not followed",
    PATH_OUTSIDE: "path outside the extraction root",
    LINK_REFUSED: "link refused",
    SPECIAL_FILE: "special file refused",
    LIMIT_EXCEEDED: "archive over a safety limit",
    UNREADABLE_ARCHIVE: "archive unreadable",
    NAME_CLASH: "member name clash",
    BAD_NAME: "member name refused",
}


def source_finding(
    code: str, message: str, member: str | None = None, **evidence: object
) -> Finding:
    """A finding about a source (an archive member, a folder entry), not a run's evidence."""
    return Finding(
        code=code,
        severity="error",
        protocol_ref="ARCHIVE",
        title=_TITLES[code],
        message=message,
        artifact=member,
        evidence=dict(evidence),
    )
