"""What the `audit` commands share: option decorators (`--format` from a format family,
`--output`, `--color`, signing keys), typed parameters, and writing a result to standard
output or a file."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from auditor.errors import AuditorError
from auditor.fsutil import atomic_write
from auditor.output import style
from auditor.protocols.names import REF

SCHEMA_VERSION = "1"
_REF = REF
"""A protocol rule's name (`A2.1`, `B7`, `RUN_DIR`), as opposed to a rule code (`A0201`): the
one pattern of `auditor.protocols.names`."""
_SECTION = re.compile(r"[A-Z]\d{1,2}")
"""A protocol section's name (`A9`: the rules A9.1, A9.2...)."""


def _codes(value: str | None) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in value.split(",") if c.strip()) if value else ()


def _json(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _format_option(*choices: str, help_text: str = "") -> Any:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default="text",
        show_default=True,
        help=help_text or "text for a person; json for a tool (schema in schemas/).",
    )


class WholeNumber(click.ParamType):
    """A count typed on the command line: `--lots INTEGER` in `--help`, and a message that
    says what is expected ("a positive whole number, got '1.5'")."""

    name = "integer"

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and value >= self.minimum:
            return value
        text = str(value).strip()
        if not re.fullmatch(r"[0-9]+", text) or int(text) < self.minimum:
            what = "positive" if self.minimum > 0 else "non-negative"
            self.fail(f"must be a {what} whole number, got {value!r}", param, ctx)
        return int(text)


class PathArg(click.Path):
    """A path argument or option whose faults (not there, a file where a folder is wanted,
    or the reverse) are the tool's own `error: PATH: ...` (exit 2, or the JSON error under
    `--format json`), as for every other bad input, not click's "Error: Invalid value"."""

    def __init__(
        self, *, exists: bool = False, file_okay: bool = True, dir_okay: bool = True
    ) -> None:
        super().__init__(exists=exists, file_okay=file_okay, dir_okay=dir_okay, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        where = (
            f"{param.opts[0]} {value}"
            if isinstance(param, click.Option) and param.opts
            else str(value)
        )
        path = Path(value)
        if self.exists and not path.exists():
            raise AuditorError(f"{where}: no such file or directory")
        if path.is_dir() and not self.dir_okay:
            raise AuditorError(f"{where}: is a directory, not a file")
        if path.exists() and not path.is_dir() and not self.file_okay:
            raise AuditorError(f"{where}: is a file, not a directory")
        return super().convert(value, param, ctx)


def _output_option(command: Any) -> Any:
    """`--output FILE`: what the command prints on standard output goes to FILE instead."""
    return click.option(
        "--output",
        "output_file",
        type=PathArg(dir_okay=False),
        help="Write the result (what would go to standard output) to FILE instead, "
        "atomically: the file is whole or absent, never half-written.",
    )(command)


def _color_option(command: Any) -> Any:
    """`--color auto|always|never` (auditor.output.style)."""
    return click.option(
        "--color",
        "color_choice",
        type=click.Choice(style.CHOICES),
        default="auto",
        show_default=True,
        help="Colour the output: auto colours a terminal unless NO_COLOR is set (or when "
        "FORCE_COLOR is); always and never override both.",
    )(command)


def _emit(text: str, output_file: Path | None, *, color: bool = False) -> None:
    """TEXT to standard output, or atomically to OUTPUT_FILE (never coloured)."""
    if output_file is not None:
        if output_file.is_dir():
            raise AuditorError(f"--output {output_file}: is a directory")
        if not output_file.absolute().parent.is_dir():
            raise AuditorError(
                f"--output {output_file}: its folder {output_file.absolute().parent} does not exist"
            )
        try:
            atomic_write(output_file, click.unstyle(text).encode("utf-8"))
        except OSError as exc:
            raise AuditorError(
                f"--output {output_file}: cannot be written ({exc.strerror or exc})"
            ) from None
        return
    click.echo(text, nl=False, color=color)


def _signing_options(command: Any) -> Any:
    """--key, --cert and --chain: how a report (of a run or of an archive) is signed."""
    file = PathArg(exists=True, dir_okay=False)
    for option in reversed(
        (
            click.option(
                "--key",
                type=file,
                help="PEM private key (ECDSA P-256) that signs "
                "the PDF and the bundle; without it the report is unsigned and "
                "`audit verify` refuses it.",
            ),
            click.option(
                "--cert", type=file, help="PEM certificate of --key (required with --key)."
            ),
            click.option(
                "--chain",
                type=file,
                help="PEM certificates between --cert and the root, embedded in the PDF.",
            ),
            click.option(
                "--tsa",
                metavar="URL",
                help="RFC 3161 timestamp authority (http:// "
                "or https://) asked to timestamp the PDF's signature, so its time is "
                "not only the signer's claim (needs --key).",
            ),
        )
    ):
        command = option(command)
    return command


class _LazyHelpOption(click.Option):
    """An option whose help text is built when first read (`--help`), not at import: the
    `--format` of a family describes every format, which imports every format's module
    (and what each imports), a cost `audit check` would otherwise pay on every run."""

    def __init__(self, *args: Any, help_text: Callable[[], str], **kwargs: Any) -> None:
        self._help_text: Callable[[], str] | None = help_text
        self._help: str | None = None
        super().__init__(*args, **kwargs)

    @property
    def help(self) -> str | None:
        if self._help is None and self._help_text is not None:
            self._help, self._help_text = self._help_text(), None
        return self._help

    @help.setter
    def help(self, value: str | None) -> None:
        self._help = value


def _formats_option(family: Any, help_head: str = "") -> Any:
    """`--format` of a command whose output has a format family (`auditor.output`): its
    choices (module names, found without importing any) and their descriptions (read from
    the modules when `--help` asks) come from the family's registry."""
    names = family.names()

    def described() -> str:
        return help_head + "; ".join(f"{f.name}: {f.description}" for f in family.all()) + "."

    return click.option(
        "--format",
        "fmt",
        cls=_LazyHelpOption,
        type=click.Choice(names),
        default=names[0],
        show_default=True,
        help_text=described,
    )
