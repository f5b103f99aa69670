"""`audit keygen`, `audit cost` and `audit evidence`: a test signing key, the package
calculation, and what the auditor makes of one evidence file."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor import output
from auditor.cli.app import cli
from auditor.cli.options import (
    PathArg,
    WholeNumber,
    _emit,
    _format_option,
    _formats_option,
    _output_option,
)


@cli.command()
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Directory for ca.pem, signer.pem and signer.key (never overwritten).",
)
def keygen(out_dir: Path) -> None:
    """Write a local test CA and signer: ca.pem, signer.pem, signer.key (not for procurement)."""
    from auditor.report.keygen import keygen as make_keys

    for path in make_keys(out_dir):
        click.echo(path)


@cli.command()
@click.option(
    "--offers",
    "offers_file",
    required=True,
    type=PathArg(exists=True, dir_okay=False),
    help="Offers file (schemas/offers.schema.json), e.g. examples/offers.example.json.",
)
@click.option(
    "--offer",
    "offer_id",
    default=None,
    help="One offer's ID: its calculation line by line; default: every offer of the "
    "file in one table.",
)
@click.option(
    "--lots",
    type=WholeNumber(1),
    default=1,
    show_default=True,
    help="Lots rented (A9.1), a positive whole number.",
)
@click.option(
    "--accepted-results",
    type=WholeNumber(0),
    default=None,
    help="Distinct accepted corpora in the period (A9.3), a whole number; absent: "
    "only the package cost.",
)
@_format_option(
    "text",
    "json",
    help_text="text for a person; json: money in integer USD "
    "cents (schemas/cost-result.schema.json).",
)
@_output_option
def cost(
    offers_file: Path,
    offer_id: str | None,
    lots: int,
    accepted_results: int | None,
    fmt: str,
    output_file: Path | None,
) -> None:
    """The package calculation (A9): whole package price x lots, and per accepted corpus."""
    from auditor.cost import cost_command

    _emit(cost_command(offers_file, offer_id, lots, accepted_results, fmt) + "\n", output_file)


@cli.command()
@click.argument("file", type=PathArg(exists=True, dir_okay=False))
@_formats_option(output.EVIDENCE)
@click.option(
    "--local-utc-offset",
    help="UTC offset of a log written in local time, e.g. +01:00 (HWiNFO, nvidia-smi).",
)
@click.option(
    "--reader",
    "reader_name",
    help="Read with this reader instead of guessing from the content (a wrong name "
    "lists the readers).",
)
@_output_option
def evidence(
    file: Path,
    fmt: str,
    local_utc_offset: str | None,
    reader_name: str | None,
    output_file: Path | None,
) -> None:
    """What the auditor makes of one power or placement evidence FILE, before submitting.

    Exit 0 when the file is usable, 1 when it is not, 2 for bad usage."""
    from auditor.evidence import option_problem, summarise_file

    if problem := option_problem(reader=reader_name, local_utc_offset=local_utc_offset):
        raise click.UsageError(problem)
    summary = summarise_file(file, reader=reader_name, local_utc_offset=local_utc_offset)
    text = output.render(output.EVIDENCE, fmt, summary)
    _emit(text if text.endswith("\n") else text + "\n", output_file)
    sys.exit(summary.exit_code)
