"""`audit`: the reviewer's commands. Thin: parses arguments, calls the core, prints, and is
the only module that exits the process. Heavy imports (weasyprint, pyhanko, matplotlib) live
in the modules of the commands that need them, so `audit check` stays light.

A command asked for `--format json` prints one JSON document (each has its schema in
`schemas/`), and its errors go to stderr as one JSON object too
(`schemas/error.schema.json`), with the same exit status as in text.

Every command that prints a result takes `--output FILE` (what would go to standard output,
written atomically), and every command that colours takes `--color auto|always|never`
(`auditor.output.style`: NO_COLOR and FORCE_COLOR honoured). No command prints a traceback:
bad input is a message naming the file and the fault (exit 2, or 1 for a failed check); a
crash of the tool itself says it is a bug, writes the traceback to a file and says how to
report it. Libraries' warnings and log messages are not shown (`auditor.quiet`: what matters
reaches the user as our own message); `AUDIT_DEBUG=1` shows them and the traceback."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback

import click

from auditor import __version__
from auditor.cli import archive, check, report, tools  # noqa: F401  (register the commands)
from auditor.cli.app import cli
from auditor.cli.options import SCHEMA_VERSION
from auditor.errors import AuditorError, VerificationFailed
from auditor.quiet import DEBUG_ENV, quiet_libraries


def _wants_json(argv: list[str]) -> bool:
    """Whether the command line asks for `--format json` (errors then go out as JSON too)."""
    return any(
        a == "--format=json" or (a == "--format" and nxt == "json")
        for a, nxt in zip(argv, [*argv[1:], ""], strict=True)
    )


def _fail(kind: str, message: str, status: int, as_json: bool, prefix: str = "error") -> None:
    if as_json:
        click.echo(
            json.dumps(
                {
                    "schema_version": SCHEMA_VERSION,
                    "error": {"kind": kind, "message": message, "exit_status": status},
                }
            ),
            err=True,
        )
    else:
        click.echo(f"{prefix}: {message}" if prefix else message, err=True)
    sys.exit(status)


ISSUES = "the gpubench-audit issue tracker (the project's repository)"
"""Where a bug is reported."""


def _report_bug(exc: BaseException, as_json: bool) -> None:
    """A crash of the tool itself: say it is a bug, keep the traceback in a file (shown too
    with AUDIT_DEBUG=1) and say how to report it; exit 2."""
    trace = "".join(traceback.format_exception(exc))
    where = ""
    try:
        fd, path = tempfile.mkstemp(prefix="gpubench-audit-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(
                f"gpubench-audit {__version__}, Python {sys.version.split()[0]}\n"
                f"command: audit {' '.join(sys.argv[1:])}\n\n{trace}"
            )
        where = f"; the traceback is in {path}"
    except OSError:
        pass
    if os.environ.get(DEBUG_ENV):
        click.echo(trace, err=True, nl=False)
    _fail(
        "internal",
        f"internal error ({type(exc).__name__}: {exc}). This is a bug of "
        f"gpubench-audit {__version__}, not of your input{where}. Please report it to "
        f"{ISSUES} with the command line and that file.",
        2,
        as_json,
    )


def main() -> None:
    quiet_libraries()
    as_json = _wants_json(sys.argv[1:])
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        _fail("aborted", "aborted", 2, as_json, prefix="")
    except click.ClickException as exc:
        if not as_json:
            exc.show()
            sys.exit(2)
        _fail("usage", exc.format_message(), 2, True)
    except AuditorError as exc:
        _fail("usage", str(exc), 2, as_json)
    except VerificationFailed as exc:
        if as_json:
            _fail("verification", str(exc), 1, True)
        for line in str(exc).splitlines() or [""]:
            click.echo(f"FAILED: {line}", err=True)
        sys.exit(1)
    except SystemExit:
        raise
    except Exception as exc:  # a crash of the tool is a bug: say so, never a bare traceback
        _report_bug(exc, as_json)
