"""Colour on a terminal, for every command that colours: whether to (`--color`, the
`NO_COLOR` and `FORCE_COLOR` conventions, the stream) and the one palette, styled by
`click.style` (no hand-written escape codes anywhere).

`--color auto` (the default) colours only a terminal, as click detects it, unless
`NO_COLOR` is set to anything but the empty string (no-color.org), or else `FORCE_COLOR` is
(force-color.org): the user's opt-out wins when both are set. `--color always` and
`--color never` override both, as a command-line flag overrides the environment.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any, Literal

import click

Choice = Literal["auto", "always", "never"]
CHOICES: tuple[Choice, ...] = ("auto", "always", "never")

PALETTE: dict[str, dict[str, Any]] = {
    "error": {"fg": "red", "bold": True},
    "warning": {"fg": "yellow"},
    "info": {"fg": "cyan"},
    "accepted": {"fg": "green", "bold": True},
    "rejected": {"fg": "red", "bold": True},
    "incomplete": {"fg": "yellow", "bold": True},
    "ok": {"fg": "green"},
    "failed": {"fg": "red", "bold": True},
    "muted": {"dim": True},
}
"""What each kind of word looks like: severities, verdicts, a check passed or failed."""


def use_color(choice: str = "auto", stream: IO[Any] | None = None) -> bool:
    """Whether output to STREAM (stdout by default) is coloured under `--color CHOICE`."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return not click.utils.should_strip_ansi(stream or sys.stdout)


def paint(text: str, key: str, color: bool) -> str:
    """TEXT styled as KEY of the palette when COLOR, else TEXT unchanged."""
    return click.style(text, **PALETTE[key]) if color and key in PALETTE else text
