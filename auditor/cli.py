"""`audit`: the reviewer's commands. Thin: parses arguments, calls the core, prints, and is
the only module that exits the process. Heavy imports (weasyprint, pyhanko, matplotlib) live
in the modules of the commands that need them, so `audit check` stays light."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from auditor.errors import AuditorError, VerificationFailed
from auditor.output import FORMATS


def _codes(value: str | None) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in value.split(",") if c.strip()) if value else ()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gpubench-audit")
def cli() -> None:
    """Audit GPU benchmark run directories and sign the reports that rest on them."""


_FORMAT_HELP = "Output format: " + "; ".join(
    f"{name}: {what}" for name, (_, what) in FORMATS.items()) + "."


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="text",
              show_default=True, help=_FORMAT_HELP)
@click.option("--select", help="Comma-separated rule codes (or prefixes) to run; default all.")
@click.option("--ignore", help="Comma-separated rule codes (or prefixes) to leave out.")
@click.option("--waivers", "waivers_file", type=click.Path(path_type=Path),
              help="JSON or TOML file mapping rule codes left out by --select/--ignore to a "
                   "written justification (schemas/waivers.schema.json). An error rule left "
                   "out without one makes the verdict incomplete.")
def check(run_dir: Path, fmt: str, select: str | None, ignore: str | None,
          waivers_file: Path | None) -> None:
    """Re-validate RUN_DIR against the schemas and every rule of its protocol.

    Exit 0 when no error finding (and no error rule left out unwaived), 1 otherwise, 2 for
    bad usage."""
    from auditor.engine import run_check
    from auditor.output import renderer
    from auditor.waivers import load_waivers

    waivers = load_waivers(waivers_file) if waivers_file is not None else ()
    result = run_check(run_dir, select=_codes(select), ignore=_codes(ignore), waivers=waivers)
    click.echo(renderer(fmt)(result, color=fmt == "text" and sys.stdout.isatty()), nl=False)
    sys.exit(result.exit_code)


@cli.command("rules")
def rules_cmd() -> None:
    """List every rule: code, severity, protocol ref, title."""
    from auditor.protocols import all_rules

    for r in all_rules():
        click.echo(f"{r.code}  {r.severity:<7}  {r.protocol_ref:<6}  {r.title}")


@cli.command()
@click.argument("code")
def explain(code: str) -> None:
    """Print what rule CODE checks, why it matters, and an example; given a protocol rule
    (A2.1), list the codes that enforce it."""
    import re

    from auditor.protocols import get_rule, rules_for_ref

    wanted = code.strip().upper()
    if re.fullmatch(r"[A-Z]\d+\.\d+|B\d+", wanted) and not get_rule(wanted):
        enforcing = rules_for_ref(wanted)
        if not enforcing:
            raise AuditorError(f"no rule enforces protocol rule {code!r}; `audit rules` lists "
                               "them")
        click.echo(f"protocol rule {wanted} is enforced by:")
        for r in enforcing:
            click.echo(f"  {r.code}  {r.severity:<7}  {r.protocol_ref:<6}  {r.title}")
        return
    r = get_rule(wanted)
    if r is None:
        raise AuditorError(f"unknown rule code {code!r}; `audit rules` lists them")
    click.echo(f"{r.code}: {r.title}\nprotocol rule {r.protocol_ref}, severity {r.severity}\n")
    click.echo(r.doc)


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path))
@click.option("--key", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--cert", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--chain", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--offers", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Offers to compare in the economics section; default: the run's own.")
def report(run_dir: Path, out_dir: Path, key: Path | None, cert: Path | None,
           chain: Path | None, offers: Path | None) -> None:
    """Render RUN_DIR's audit as a signed HTML/PDF report in OUT."""
    from auditor.report.build import build_report

    if (key is None) != (cert is None):
        raise AuditorError("--key and --cert go together")
    result = build_report(run_dir, out_dir, key=key, cert=cert, chain=chain, offers=offers)
    signed = "signed" if key is not None else "UNSIGNED (no --key): `audit verify` will refuse it"
    click.echo(f"{result.verdict}: {out_dir / 'report.pdf'} ({signed})")


@cli.command()
@click.argument("report_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--ca", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def verify(report_dir: Path, ca: Path) -> None:
    """Check a report's PDF signature, its DSSE bundle and every bundled file's hash."""
    from auditor.report.verify import verify_report

    for line in verify_report(report_dir, ca):
        click.echo(line)


@cli.command()
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path))
def keygen(out_dir: Path) -> None:
    """Write a local test CA and signer: ca.pem, signer.pem, signer.key (not for procurement)."""
    from auditor.report.keygen import keygen as make_keys

    for path in make_keys(out_dir):
        click.echo(path)


@cli.command()
@click.option("--offers", "offers_file", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--offer", "offer_id", required=True)
@click.option("--lots", required=True)
@click.option("--accepted-results", default=None,
              help="Distinct accepted corpora in the period; absent: only the package cost.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def cost(offers_file: Path, offer_id: str, lots: str, accepted_results: str | None,
         fmt: str) -> None:
    """The package calculation (A9): whole package price x lots, and per accepted corpus."""
    from auditor.cost import cost_command

    click.echo(cost_command(offers_file, offer_id, lots, accepted_results, fmt))


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("--local-utc-offset", help="UTC offset of a log written in local time, e.g. +01:00.")
@click.option("--reader", "reader_name", help="Read with this reader instead of guessing.")
def evidence(file: Path, fmt: str, local_utc_offset: str | None,
             reader_name: str | None) -> None:
    """What the auditor makes of one power or placement evidence FILE, before submitting.

    Exit 0 when the file is usable, 1 when it is not, 2 for bad usage."""
    from auditor.evidence import option_problem, summarise_file
    from auditor.output import evidence_json, evidence_text

    if problem := option_problem(reader=reader_name, local_utc_offset=local_utc_offset):
        raise click.UsageError(problem)
    summary = summarise_file(file, reader=reader_name, local_utc_offset=local_utc_offset)
    renderer = evidence_json if fmt == "json" else evidence_text
    click.echo(renderer.render(summary), nl=fmt == "json")
    sys.exit(summary.exit_code)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except AuditorError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except VerificationFailed as exc:
        for line in str(exc).splitlines() or [""]:
            click.echo(f"FAILED: {line}", err=True)
        sys.exit(1)
    except SystemExit:
        raise
    except Exception as exc:  # an internal failure is a bug: say so, exit 2, never a bare traceback
        click.echo(f"internal error ({type(exc).__name__}): {exc}", err=True)
        sys.exit(2)
