"""`audit report`, `audit replay` and `audit verify`: the signed report of a run, the
replay of its archived model, and the check of a report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from auditor import output
from auditor.cli.app import cli
from auditor.cli.options import (
    PathArg,
    _color_option,
    _emit,
    _format_option,
    _formats_option,
    _json,
    _output_option,
    _signing_options,
)
from auditor.errors import AuditorError, VerificationFailed
from auditor.output import style
from auditor.replay import DEFAULT_SAMPLE


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="The report directory to write (replaced if it already holds a report).",
)
@_signing_options
@click.option(
    "--offers",
    type=PathArg(exists=True, dir_okay=False),
    help="Offers to compare in the economics section; default: the run's own.",
)
@click.option(
    "--replay",
    "replay_sample",
    type=click.IntRange(min=1),
    default=None,
    help="Also replay N sampled IDs of the archived model (as `audit replay`) and "
    "put the result in the signed report (section and replay.json).",
)
def report(
    run_dir: Path,
    out_dir: Path,
    key: Path | None,
    cert: Path | None,
    chain: Path | None,
    tsa: str | None,
    offers: Path | None,
    replay_sample: int | None,
) -> None:
    """Render RUN_DIR's audit as a signed HTML/PDF report in OUT."""
    from auditor.report.build import build_report
    from auditor.report.tuning import report_process

    if (key is None) != (cert is None):
        raise AuditorError("--key and --cert go together")
    with report_process():
        result = build_report(
            run_dir,
            out_dir,
            key=key,
            cert=cert,
            chain=chain,
            offers=offers,
            replay_sample=replay_sample,
            tsa=tsa,
            in_worker=not getattr(sys, "frozen", False),
        )
    signed = (
        ("signed and timestamped" if tsa else "signed")
        if key is not None
        else "UNSIGNED (no --key): `audit verify` will refuse it"
    )
    click.echo(f"{result.verdict}: {out_dir / 'report.pdf'} ({signed})")
    if replay_sample is not None:
        replayed = json.loads((out_dir / "replay.json").read_text(encoding="utf-8"))
        click.echo(f"replay {replayed['verdict']}: {out_dir / 'replay.json'}")


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option(
    "--sample",
    "sample_size",
    type=click.IntRange(min=1),
    default=DEFAULT_SAMPLE,
    show_default=True,
    help="How many input IDs to replay (all of them when the run has fewer).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the draw (recorded in the result); default: a fixed value mixed "
    "with the manifest's SHA-256, so every reviewer draws the same IDs.",
)
@_formats_option(output.REPLAY)
@_output_option
@_color_option
def replay(
    run_dir: Path,
    sample_size: int,
    seed: int | None,
    fmt: str,
    output_file: Path | None,
    color_choice: str,
) -> None:
    """Re-run a sample of the run's archived model and compare its labels with the answers.

    Draws the IDs, tokenizes their texts with the archived tokenizer data, runs the archived
    ONNX model with ONNX Runtime on the CPU, and compares the labels with every pass's
    (protocol A) or trial's, gate's and reference's (protocol B) answers; nothing from the
    run dir is imported or executed but that ONNX graph (docs/replay.md). The run's own
    `audit check` verdict is not replay's business: run both.

    Exit 0 when the agreement is met, 1 for a replay error finding (a run that is not
    replayable included), 2 for bad usage."""
    from auditor.replay.core import replay as run_replay

    result = run_replay(run_dir, sample_size=sample_size, seed=seed)
    color = fmt == "text" and output_file is None and style.use_color(color_choice)
    text = output.render(output.REPLAY, fmt, result, color=color)
    _emit(text if text.endswith("\n") else text + "\n", output_file, color=color)
    sys.exit(result.exit_code)


@cli.command()
@click.argument("report_dir", type=PathArg(exists=True, file_okay=False))
@click.option(
    "--ca",
    required=True,
    type=PathArg(exists=True, dir_okay=False),
    help="PEM certificate(s) of the CA the signer must chain to.",
)
@click.option(
    "--tsa-ca",
    type=PathArg(exists=True, dir_okay=False),
    help="PEM certificate(s) a timestamp authority must chain to for the PDF's "
    "RFC 3161 timestamp to be trusted (default: --ca).",
)
@_format_option(
    "text",
    "json",
    help_text="text: one line per check; json: the checks and "
    "any failure (schemas/verify-result.schema.json).",
)
@_output_option
@_color_option
def verify(
    report_dir: Path,
    ca: Path,
    tsa_ca: Path | None,
    fmt: str,
    output_file: Path | None,
    color_choice: str,
) -> None:
    """Check a report's PDF signature (its chain to CA, the signer's validity and usage, a
    trusted RFC 3161 timestamp if any), its DSSE bundle and every bundled file's hash.

    Exit 0 when every check passes, 1 when one fails, 2 for bad usage (REPORT_DIR not a
    report: a run directory, an archive)."""
    from auditor.report.verify import verify_report, verify_result

    if fmt == "json":
        doc = verify_result(report_dir, ca, tsa_ca)
        _emit(_json(doc) + "\n", output_file)
        sys.exit(0 if doc["ok"] else 1)
    try:
        lines = verify_report(report_dir, ca, tsa_ca)
    except VerificationFailed as exc:
        color = style.use_color(color_choice, sys.stderr)
        for line in str(exc).splitlines() or [""]:
            click.echo(f"{style.paint('FAILED', 'failed', color)}: {line}", err=True, color=color)
        sys.exit(1)
    color = output_file is None and style.use_color(color_choice)
    painted = [
        style.paint(line, "accepted", color)
        if line.startswith("OK:")
        else style.paint(line, "warning", color)
        if line.startswith("note:") or "no trusted timestamp" in line or "not trusted" in line
        else line
        for line in lines
    ]
    _emit("\n".join(painted) + "\n", output_file, color=color)
