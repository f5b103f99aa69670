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
def check(run_dir: Path, fmt: str, select: str | None, ignore: str | None) -> None:
    """Re-validate RUN_DIR against the schemas and every rule of its protocol.

    Exit 0 when no error finding, 1 when there is one, 2 for bad usage."""
    from auditor.engine import run_check
    from auditor.output import renderer

    result = run_check(run_dir, select=_codes(select), ignore=_codes(ignore))
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
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path),
              help="The archive's folder: index.parquet, findings.parquet and the extracted "
                   "archives go here, nothing anywhere else.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (local), or the CPUs of the local Ray instance started "
                   "when no cluster is given (ray); default: the cores this process may use.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local",
              show_default=True, help="local: a pool of worker processes; ray: Ray tasks on "
              "a cluster (needs the [cluster] extra).")
@click.option("--address", default=None,
              help="With --executor ray: the cluster's address (default: RAY_ADDRESS, else a "
                   "local Ray instance).")
@click.option("--force", is_flag=True, help="Audit every run again, even those the index holds.")
@click.option("--quiet", is_flag=True, help="No progress and no per-failure lines.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="What to print at the end: a summary, or one JSON object.")
def archive(sources: tuple[Path, ...], out_dir: Path, jobs: int | None, executor: str,
            address: str | None, force: bool, quiet: bool, fmt: str) -> None:
    """Audit every run of SOURCES (run dirs, folders of runs, .tar, .tar.gz, .zip) into
    OUT/index.parquet and OUT/findings.parquet, each run once, incrementally.

    Exit 0 when every source was audited (whatever the verdicts), 1 when some could not be
    (not a run, refused for safety, a crash; one line each), 2 for bad usage."""
    from auditor.archive.core import audit_archive
    from auditor.archive.output import renderer
    from auditor.archive.progress import Progress

    outcome = audit_archive(sources, out_dir, jobs=jobs, executor=executor, address=address,
                            force=force, progress=Progress(sys.stderr, quiet=quiet))
    click.echo(renderer(fmt, "archive")(outcome), nl=False)
    sys.exit(1 if outcome.failed else 0)


@cli.command()
@click.argument("archive_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              help="Write the signed comparison report (HTML, PDF, JSON, CSV, the index it "
                   "rests on) here; without it, only print the table.")
@click.option("--key", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Signing key (PEM, ECDSA P-256), with --cert.")
@click.option("--cert", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The signing key's certificate (PEM).")
@click.option("--chain", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Certificates between the signer and the root (PEM), embedded in the PDF.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text",
              show_default=True, help="The table printed: text for a terminal; json "
              "(schemas/comparison.schema.json) or csv for tools.")
def compare(archive_dir: Path, out_dir: Path | None, key: Path | None, cert: Path | None,
            chain: Path | None, fmt: str) -> None:
    """Compare the configurations of the archive index in ARCHIVE_DIR (audit archive's
    --out): only accepted ones are ranked (A10.2), the others listed apart with their main
    reason. With --out, also write a signed report that audit verify checks."""
    from auditor.archive.compare import build_comparison_report
    from auditor.archive.compare import compare as make_comparison
    from auditor.archive.output import renderer

    if out_dir is None:
        if key is not None or cert is not None:
            raise AuditorError("--key and --cert sign a report: give --out too")
        cmp = make_comparison(archive_dir)
    else:
        cmp = build_comparison_report(archive_dir, out_dir, key=key, cert=cert, chain=chain)
    click.echo(renderer(fmt, "comparison")(cmp), nl=False)
    if out_dir is not None:
        signed = ("signed" if key is not None else
                  "UNSIGNED (no --key): `audit verify` will refuse it")
        click.echo(f"comparison report: {out_dir / 'report.pdf'} ({signed})", err=True)


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
        click.echo(f"FAILED: {exc}", err=True)
        sys.exit(1)
    except SystemExit:
        raise
    except Exception as exc:  # an internal failure is a bug: say so, exit 2, never a bare traceback
        click.echo(f"internal error ({type(exc).__name__}): {exc}", err=True)
        sys.exit(2)
