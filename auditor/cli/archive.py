"""`audit archive` and `audit compare`: every run of an archive into one index, and the
comparison a purchase rests on."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor import output
from auditor.cli.app import cli
from auditor.cli.options import (
    PathArg,
    _color_option,
    _emit,
    _formats_option,
    _output_option,
    _signing_options,
)
from auditor.errors import AuditorError
from auditor.output import style


@cli.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="The archive's folder: index.parquet, findings.parquet and the extracted "
    "archives go here, nothing anywhere else.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (local), or the CPUs of the local Ray instance started "
    "when no cluster is given (ray); default: the cores this process may use.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: a pool of worker processes; ray: Ray tasks on "
    "a cluster (needs the [cluster] extra).",
)
@click.option(
    "--address",
    default=None,
    help="With --executor ray: the cluster's address (default: RAY_ADDRESS, else a "
    "local Ray instance).",
)
@click.option(
    "--ship",
    is_flag=True,
    help="With --executor ray: send each run's files with its task, for nodes that "
    "do not see the sources on shared storage.",
)
@click.option("--force", is_flag=True, help="Audit every run again, even those the index holds.")
@click.option("--quiet", is_flag=True, help="No progress and no per-failure lines.")
@_formats_option(output.ARCHIVE, "What to print at the end: ")
@_output_option
@_color_option
def archive(
    sources: tuple[Path, ...],
    out_dir: Path,
    jobs: int | None,
    executor: str,
    address: str | None,
    ship: bool,
    force: bool,
    quiet: bool,
    fmt: str,
    output_file: Path | None,
    color_choice: str,
) -> None:
    """Audit every run of SOURCES (run dirs, folders of runs, .tar, .tar.gz, .zip) into
    OUT/index.parquet and OUT/findings.parquet, each run once, incrementally.

    Exit 0 when every source was audited (whatever the verdicts), 1 when some could not be
    (not a run, refused for safety, a crash; one line each), 2 for bad usage."""
    from auditor.archive.core import audit_archive
    from auditor.archive.progress import Progress

    progress = Progress(sys.stderr, quiet=quiet, color=style.use_color(color_choice, sys.stderr))
    outcome = audit_archive(
        sources,
        out_dir,
        jobs=jobs,
        executor=executor,
        address=address,
        force=force,
        ship=ship,
        progress=progress,
    )
    color = fmt == "text" and output_file is None and style.use_color(color_choice)
    _emit(output.render(output.ARCHIVE, fmt, outcome, color=color), output_file, color=color)
    sys.exit(1 if outcome.failed else 0)


@cli.command()
@click.argument("archive_dir", type=PathArg(exists=True, file_okay=False))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    help="Write the signed comparison report (HTML, PDF, JSON, CSV, the index it "
    "rests on) here; without it, only print the table.",
)
@_signing_options
@_formats_option(output.COMPARISON, "The table printed: ")
@_output_option
def compare(
    archive_dir: Path,
    out_dir: Path | None,
    key: Path | None,
    cert: Path | None,
    chain: Path | None,
    tsa: str | None,
    fmt: str,
    output_file: Path | None,
) -> None:
    """Compare the configurations of the archive index in ARCHIVE_DIR (audit archive's
    --out): only accepted ones are ranked (A10.2), the others listed apart with their main
    reason. With --out, also write a signed report that audit verify checks."""
    from auditor.archive.compare import compare as make_comparison
    from auditor.archive.compare_report import build_comparison_report

    if out_dir is None:
        if key is not None or cert is not None or tsa is not None:
            raise AuditorError("--key, --cert and --tsa sign a report: give --out too")
        cmp = make_comparison(archive_dir)
    else:
        from auditor.report.tuning import report_process

        with report_process():
            cmp = build_comparison_report(
                archive_dir, out_dir, key=key, cert=cert, chain=chain, tsa=tsa
            )
    _emit(output.render(output.COMPARISON, fmt, cmp), output_file)
    if out_dir is not None:
        signed = (
            "signed" if key is not None else "UNSIGNED (no --key): `audit verify` will refuse it"
        )
        click.echo(f"comparison report: {out_dir / 'report.pdf'} ({signed})", err=True)
