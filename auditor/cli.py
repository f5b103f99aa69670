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
report it. Libraries' log messages are not shown (what matters reaches the user as our own
message); `AUDIT_DEBUG=1` shows them and the traceback."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import tempfile
import textwrap
import traceback
from pathlib import Path
from typing import Any

import click

from auditor import __version__, output
from auditor.errors import AuditorError, VerificationFailed
from auditor.fsutil import atomic_write
from auditor.output import style
from auditor.replay import DEFAULT_SAMPLE

SCHEMA_VERSION = "1"
_REF = re.compile(r"[A-Z]\d{1,2}\.\d{1,2}|B\d{1,2}|RUN_DIR")
"""A protocol rule's name (`A2.1`, `B7`, `RUN_DIR`), as opposed to a rule code (`A0201`)."""
_SECTION = re.compile(r"[A-Z]\d{1,2}")
"""A protocol section's name (`A9`: the rules A9.1, A9.2...)."""
DEBUG_ENV = "AUDIT_DEBUG"
"""Set to 1: show the libraries' log messages and an internal error's traceback."""


def _codes(value: str | None) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in value.split(",") if c.strip()) if value else ()


def _json(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _format_option(*choices: str, help_text: str = "") -> Any:
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default="text",
                        show_default=True,
                        help=help_text or "text for a person; json for a tool (schema in "
                                          "schemas/).")


class WholeNumber(click.ParamType):
    """A count typed on the command line: `--lots INTEGER` in `--help`, and a message that
    says what is expected ("a positive whole number, got '1.5'")."""

    name = "integer"

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and value >= self.minimum:
            return value
        text = str(value).strip()
        if not re.fullmatch(r"[0-9]+", text) or int(text) < self.minimum:
            what = "positive" if self.minimum > 0 else "non-negative"
            self.fail(f"must be a {what} whole number, got {value!r}", param, ctx)
        return int(text)


def _output_option(command: Any) -> Any:
    """`--output FILE`: what the command prints on standard output goes to FILE instead."""
    return click.option(
        "--output", "output_file", type=click.Path(dir_okay=False, path_type=Path),
        help="Write the result (what would go to standard output) to FILE instead, "
             "atomically: the file is whole or absent, never half-written.")(command)


def _color_option(command: Any) -> Any:
    """`--color auto|always|never` (auditor.output.style)."""
    return click.option(
        "--color", "color_choice", type=click.Choice(style.CHOICES), default="auto",
        show_default=True,
        help="Colour the output: auto colours a terminal unless NO_COLOR is set (or when "
             "FORCE_COLOR is); always and never override both.")(command)


def _emit(text: str, output_file: Path | None, *, color: bool = False) -> None:
    """TEXT to standard output, or atomically to OUTPUT_FILE (never coloured)."""
    if output_file is not None:
        if output_file.is_dir():
            raise AuditorError(f"--output {output_file}: is a directory")
        if not output_file.absolute().parent.is_dir():
            raise AuditorError(f"--output {output_file}: its folder "
                               f"{output_file.absolute().parent} does not exist")
        try:
            atomic_write(output_file, click.unstyle(text).encode("utf-8"))
        except OSError as exc:
            raise AuditorError(f"--output {output_file}: cannot be written "
                               f"({exc.strerror or exc})") from None
        return
    click.echo(text, nl=False, color=color)


def _signing_options(command: Any) -> Any:
    """--key, --cert and --chain: how a report (of a run or of an archive) is signed."""
    file = click.Path(exists=True, dir_okay=False, path_type=Path)
    for option in reversed((
            click.option("--key", type=file, help="PEM private key (ECDSA P-256) that signs "
                         "the PDF and the bundle; without it the report is unsigned and "
                         "`audit verify` refuses it."),
            click.option("--cert", type=file, help="PEM certificate of --key (required with "
                         "--key)."),
            click.option("--chain", type=file, help="PEM certificates between --cert and the "
                         "root, embedded in the PDF."),
            click.option("--tsa", metavar="URL", help="RFC 3161 timestamp authority (http:// "
                         "or https://) asked to timestamp the PDF's signature, so its time is "
                         "not only the signer's claim (needs --key)."))):
        command = option(command)
    return command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gpubench-audit")
def cli() -> None:
    """Audit GPU benchmark run directories and sign the reports that rest on them."""


def _formats_option(family: Any, help_head: str = "") -> Any:
    """`--format` of a command whose output has a format family (`auditor.output`): its
    choices and their descriptions come from the family's registry."""
    names = family.names()
    described = "; ".join(f"{f.name}: {f.description}" for f in family.all())
    return click.option("--format", "fmt", type=click.Choice(names), default=names[0],
                        show_default=True, help=f"{help_head}{described}.")


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@_formats_option(output.CHECK, "Output format: ")
@_output_option
@_color_option
@click.option("--select", help="Comma-separated rule codes (or prefixes) to run; default all.")
@click.option("--ignore", help="Comma-separated rule codes (or prefixes) to leave out.")
@click.option("--waivers", "waivers_file", type=click.Path(path_type=Path),
              help="JSON or TOML file mapping rule codes left out by --select/--ignore to a "
                   "written justification (schemas/waivers.schema.json). An error rule left "
                   "out without one makes the verdict incomplete.")
def check(run_dir: Path, fmt: str, output_file: Path | None, color_choice: str,
          select: str | None, ignore: str | None, waivers_file: Path | None) -> None:
    """Re-validate RUN_DIR against the schemas and every rule of its protocol.

    Exit 0 when no error finding (and no error rule left out unwaived), 1 otherwise, 2 for
    bad usage."""
    from auditor.engine import run_check
    from auditor.waivers import load_waivers

    waivers = load_waivers(waivers_file) if waivers_file is not None else ()
    result = run_check(run_dir, select=_codes(select), ignore=_codes(ignore), waivers=waivers)
    color = fmt == "text" and output_file is None and style.use_color(color_choice)
    _emit(output.render(output.CHECK, fmt, result, color=color), output_file, color=color)
    sys.exit(result.exit_code)


@cli.command("rules")
@_format_option("text", "json", help_text="text: one line per rule; json: every rule with its "
                "documentation and fix (schemas/audit-rules.schema.json).")
@_output_option
def rules_cmd(fmt: str, output_file: Path | None) -> None:
    """List every rule: code, severity, protocol rule, title; then the codes of `audit
    replay`'s findings (RA.., RB..), which `audit check` never raises."""
    from auditor.protocols import all_protocols
    from auditor.replay import codes

    replay_rules = [(p, r) for p, prefix in codes.PROTOCOL_PREFIX.items()
                    for r in codes.REPLAY_RULES if r.code.startswith(prefix)]
    if fmt == "json":
        _emit(_json({"schema_version": SCHEMA_VERSION, "rules": [
            {"code": r.code, "title": r.title, "protocol": name, "command": command,
             "protocol_ref": r.protocol_ref, "severity": r.severity,
             "requires": list(r.requires), **r.info().parts(), "fix": r.fix}
            for command, pairs in (("check", [(p.name, r) for p in all_protocols()
                                              for r in p.rules]),
                                   ("replay", replay_rules))
            for name, r in pairs]}) + "\n", output_file)
        return
    from auditor.protocols import all_rules

    lines = [f"{r.code}  {r.severity:<7}  {r.protocol_ref:<6}  {r.title}" for r in all_rules()]
    lines.append("raised by `audit replay` only:")
    lines.extend(f"{r.code:<5}  {r.severity:<7}  {r.protocol_ref:<6}  {r.title}"
                 for _, r in replay_rules)
    _emit("\n".join(lines) + "\n", output_file)


def _rule_line(r: Any) -> str:
    from auditor.replay import codes

    by = " (audit replay)" if codes.get(r.code) else ""
    return f"  {r.code:<5}  {r.severity:<7}  {r.protocol_ref:<6}  {r.title}{by}"


def _wrapped(text: str, indent: str = "  ") -> str:
    return textwrap.fill(text, 88, initial_indent=indent, subsequent_indent=indent)


def _explain_section(wanted: str) -> str | None:
    """`audit explain A9`: the section's heading, each of its rules' text, and the codes
    that enforce them; None when WANTED is no section of docs/protocol.md."""
    from auditor import protocol_text
    from auditor.protocols import rules_for_ref
    from auditor.replay import codes

    section = protocol_text.section(wanted)
    if section is None:
        return None
    lines = [f"protocol section {section.group} ({section.protocol}):", ""]
    enforcing: dict[str, Any] = {}
    for rule in section.rules:
        lines.append(f"{rule.ref}:")
        lines.append(_wrapped(rule.plain()))
        for r in rules_for_ref(rule.ref) + codes.for_ref(rule.ref):
            enforcing.setdefault(r.code, r)
    lines.append("")
    lines.append("enforced by:" if enforcing else "no rule of the auditor enforces it yet")
    lines.extend(_rule_line(enforcing[c]) for c in sorted(enforcing))
    lines.append(f"(`audit explain {section.rules[0].ref}` for one rule, `audit explain CODE` "
                 "for a code)" if section.rules else "")
    return "\n".join(lines).rstrip("\n") + "\n"


@cli.command()
@click.argument("code")
@_output_option
def explain(code: str, output_file: Path | None) -> None:
    """Print what rule CODE (A0201) checks, why it matters, an example and what to do; given
    a protocol rule (A2.1), print its text and the codes that enforce it; given a protocol
    section (A9), each of its rules and the codes that enforce them."""
    from auditor import protocol_text
    from auditor.engine import UNKNOWN_PROTOCOL
    from auditor.protocols import get_rule, rules_for_ref
    from auditor.replay import codes

    wanted = code.strip().upper()
    if _SECTION.fullmatch(wanted) and not _REF.fullmatch(wanted):
        text = _explain_section(wanted)
        if text is None:
            raise AuditorError(f"unknown rule code or protocol section {code!r}; `audit rules` "
                               "lists the codes, docs/protocol.md the sections (A1-A10)")
        _emit(text, output_file)
        return
    if _REF.fullmatch(wanted) and not get_rule(wanted):
        text = protocol_text.get(wanted)
        enforcing = rules_for_ref(wanted) + codes.for_ref(wanted)
        if text is None and not enforcing:
            raise AuditorError(f"no protocol rule {code!r} (docs/protocol.md lists them) and "
                               "no rule enforces it; `audit rules` lists the rules")
        lines = []
        if text is not None:
            lines.append(f"protocol rule {wanted} ({text.group or text.protocol}):\n"
                         + _wrapped(text.plain()) + "\n")
        if wanted == "RUN_DIR":
            lines.append(f"enforced by:\n  {UNKNOWN_PROTOCOL}  error    RUN_DIR  unknown "
                         "protocol (the engine, before any protocol's rules)")
        else:
            lines.append("enforced by:" if enforcing else
                         "no rule of the auditor enforces it yet")
        lines.extend(_rule_line(r) for r in enforcing)
        _emit("\n".join(lines) + "\n", output_file)
        return
    r = get_rule(wanted) or codes.get(wanted)
    if r is None:
        hint = (" (a protocol section or rule is written like A9 or A2.1, a code like A0201)"
                if re.fullmatch(r"[A-Z]\d+(\.\d+)?", wanted) else "")
        raise AuditorError(f"unknown rule code {code!r}{hint}; `audit rules` lists them")
    by = "; raised by `audit replay`, never by `audit check`" if codes.get(r.code) else ""
    _emit(f"{r.code}: {r.title}\nprotocol rule {r.protocol_ref}, severity {r.severity}{by}\n"
          f"\n{r.doc}\n\nWhat to do: {r.fix}\n", output_file)


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path),
              help="The report directory to write (replaced if it already holds a report).")
@_signing_options
@click.option("--offers", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Offers to compare in the economics section; default: the run's own.")
@click.option("--replay", "replay_sample", type=click.IntRange(min=1), default=None,
              help="Also replay N sampled IDs of the archived model (as `audit replay`) and "
                   "put the result in the signed report (section and replay.json).")
def report(run_dir: Path, out_dir: Path, key: Path | None, cert: Path | None,
           chain: Path | None, tsa: str | None, offers: Path | None,
           replay_sample: int | None) -> None:
    """Render RUN_DIR's audit as a signed HTML/PDF report in OUT."""
    from auditor.report.build import build_report

    if (key is None) != (cert is None):
        raise AuditorError("--key and --cert go together")
    result = build_report(run_dir, out_dir, key=key, cert=cert, chain=chain, offers=offers,
                          replay_sample=replay_sample, tsa=tsa)
    signed = (("signed and timestamped" if tsa else "signed") if key is not None
              else "UNSIGNED (no --key): `audit verify` will refuse it")
    click.echo(f"{result.verdict}: {out_dir / 'report.pdf'} ({signed})")
    if replay_sample is not None:
        replayed = json.loads((out_dir / "replay.json").read_text(encoding="utf-8"))
        click.echo(f"replay {replayed['verdict']}: {out_dir / 'replay.json'}")


@cli.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--sample", "sample_size", type=click.IntRange(min=1), default=DEFAULT_SAMPLE,
              show_default=True, help="How many input IDs to replay (all of them when the run "
                                      "has fewer).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the draw (recorded in the result); default: a fixed value mixed "
                   "with the manifest's SHA-256, so every reviewer draws the same IDs.")
@_formats_option(output.REPLAY)
@_output_option
@_color_option
def replay(run_dir: Path, sample_size: int, seed: int | None, fmt: str,
           output_file: Path | None, color_choice: str) -> None:
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
@click.argument("report_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--ca", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="PEM certificate(s) of the CA the signer must chain to.")
@click.option("--tsa-ca", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="PEM certificate(s) a timestamp authority must chain to for the PDF's "
                   "RFC 3161 timestamp to be trusted (default: --ca).")
@_format_option("text", "json", help_text="text: one line per check; json: the checks and "
                "any failure (schemas/verify-result.schema.json).")
@_output_option
@_color_option
def verify(report_dir: Path, ca: Path, tsa_ca: Path | None, fmt: str,
           output_file: Path | None, color_choice: str) -> None:
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
            click.echo(f"{style.paint('FAILED', 'failed', color)}: {line}", err=True,
                       color=color)
        sys.exit(1)
    color = output_file is None and style.use_color(color_choice)
    painted = [style.paint(line, "accepted", color) if line.startswith("OK:") else
               style.paint(line, "warning", color)
               if line.startswith("note:") or "no trusted timestamp" in line
               or "not trusted" in line else line
               for line in lines]
    _emit("\n".join(painted) + "\n", output_file, color=color)


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
@_formats_option(output.ARCHIVE, "What to print at the end: ")
@_output_option
@_color_option
def archive(sources: tuple[Path, ...], out_dir: Path, jobs: int | None, executor: str,
            address: str | None, force: bool, quiet: bool, fmt: str, output_file: Path | None,
            color_choice: str) -> None:
    """Audit every run of SOURCES (run dirs, folders of runs, .tar, .tar.gz, .zip) into
    OUT/index.parquet and OUT/findings.parquet, each run once, incrementally.

    Exit 0 when every source was audited (whatever the verdicts), 1 when some could not be
    (not a run, refused for safety, a crash; one line each), 2 for bad usage."""
    from auditor.archive.core import audit_archive
    from auditor.archive.progress import Progress

    progress = Progress(sys.stderr, quiet=quiet,
                        color=style.use_color(color_choice, sys.stderr))
    outcome = audit_archive(sources, out_dir, jobs=jobs, executor=executor, address=address,
                            force=force, progress=progress)
    color = fmt == "text" and output_file is None and style.use_color(color_choice)
    _emit(output.render(output.ARCHIVE, fmt, outcome, color=color), output_file, color=color)
    sys.exit(1 if outcome.failed else 0)


@cli.command()
@click.argument("archive_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              help="Write the signed comparison report (HTML, PDF, JSON, CSV, the index it "
                   "rests on) here; without it, only print the table.")
@_signing_options
@_formats_option(output.COMPARISON, "The table printed: ")
@_output_option
def compare(archive_dir: Path, out_dir: Path | None, key: Path | None, cert: Path | None,
            chain: Path | None, tsa: str | None, fmt: str, output_file: Path | None) -> None:
    """Compare the configurations of the archive index in ARCHIVE_DIR (audit archive's
    --out): only accepted ones are ranked (A10.2), the others listed apart with their main
    reason. With --out, also write a signed report that audit verify checks."""
    from auditor.archive.compare import build_comparison_report
    from auditor.archive.compare import compare as make_comparison

    if out_dir is None:
        if key is not None or cert is not None or tsa is not None:
            raise AuditorError("--key, --cert and --tsa sign a report: give --out too")
        cmp = make_comparison(archive_dir)
    else:
        cmp = build_comparison_report(archive_dir, out_dir, key=key, cert=cert, chain=chain,
                                      tsa=tsa)
    _emit(output.render(output.COMPARISON, fmt, cmp), output_file)
    if out_dir is not None:
        signed = ("signed" if key is not None else
                  "UNSIGNED (no --key): `audit verify` will refuse it")
        click.echo(f"comparison report: {out_dir / 'report.pdf'} ({signed})", err=True)


@cli.command()
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Directory for ca.pem, signer.pem and signer.key (never overwritten).")
def keygen(out_dir: Path) -> None:
    """Write a local test CA and signer: ca.pem, signer.pem, signer.key (not for procurement)."""
    from auditor.report.keygen import keygen as make_keys

    for path in make_keys(out_dir):
        click.echo(path)


@cli.command()
@click.option("--offers", "offers_file", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Offers file (schemas/offers.schema.json), e.g. examples/offers.example.json.")
@click.option("--offer", "offer_id", default=None,
              help="One offer's ID: its calculation line by line; default: every offer of the "
                   "file in one table.")
@click.option("--lots", type=WholeNumber(1), default=1, show_default=True,
              help="Lots rented (A9.1), a positive whole number.")
@click.option("--accepted-results", type=WholeNumber(0), default=None,
              help="Distinct accepted corpora in the period (A9.3), a whole number; absent: "
                   "only the package cost.")
@_format_option("text", "json", help_text="text for a person; json: money in integer USD "
                "cents (schemas/cost-result.schema.json).")
@_output_option
def cost(offers_file: Path, offer_id: str | None, lots: int, accepted_results: int | None,
         fmt: str, output_file: Path | None) -> None:
    """The package calculation (A9): whole package price x lots, and per accepted corpus."""
    from auditor.cost import cost_command

    _emit(cost_command(offers_file, offer_id, lots, accepted_results, fmt) + "\n", output_file)


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_formats_option(output.EVIDENCE)
@click.option("--local-utc-offset",
              help="UTC offset of a log written in local time, e.g. +01:00 (HWiNFO, nvidia-smi).")
@click.option("--reader", "reader_name",
              help="Read with this reader instead of guessing from the content (a wrong name "
                   "lists the readers).")
@_output_option
def evidence(file: Path, fmt: str, local_utc_offset: str | None,
             reader_name: str | None, output_file: Path | None) -> None:
    """What the auditor makes of one power or placement evidence FILE, before submitting.

    Exit 0 when the file is usable, 1 when it is not, 2 for bad usage."""
    from auditor.evidence import option_problem, summarise_file

    if problem := option_problem(reader=reader_name, local_utc_offset=local_utc_offset):
        raise click.UsageError(problem)
    summary = summarise_file(file, reader=reader_name, local_utc_offset=local_utc_offset)
    text = output.render(output.EVIDENCE, fmt, summary)
    _emit(text if text.endswith("\n") else text + "\n", output_file)
    sys.exit(summary.exit_code)


def _wants_json(argv: list[str]) -> bool:
    """Whether the command line asks for `--format json` (errors then go out as JSON too)."""
    return any(a == "--format=json" or (a == "--format" and nxt == "json")
               for a, nxt in zip(argv, [*argv[1:], ""], strict=True))


def _fail(kind: str, message: str, status: int, as_json: bool, prefix: str = "error") -> None:
    if as_json:
        click.echo(json.dumps({"schema_version": SCHEMA_VERSION, "error": {
            "kind": kind, "message": message, "exit_status": status}}), err=True)
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
            fh.write(f"gpubench-audit {__version__}, Python {sys.version.split()[0]}\n"
                     f"command: audit {' '.join(sys.argv[1:])}\n\n{trace}")
        where = f"; the traceback is in {path}"
    except OSError:
        pass
    if os.environ.get(DEBUG_ENV):
        click.echo(trace, err=True, nl=False)
    _fail("internal", f"internal error ({type(exc).__name__}: {exc}). This is a bug of "
          f"gpubench-audit {__version__}, not of your input{where}. Please report it to "
          f"{ISSUES} with the command line and that file.", 2, as_json)


def _quiet_libraries() -> None:
    """Libraries log what they find (pyHanko logs a failed path validation with its whole
    traceback); our own messages say what matters. AUDIT_DEBUG=1 shows their logs."""
    if os.environ.get(DEBUG_ENV):
        logging.basicConfig(level=logging.DEBUG)
    else:
        logging.getLogger().addHandler(logging.NullHandler())  # no lastResort to stderr


def main() -> None:
    as_json = _wants_json(sys.argv[1:])
    _quiet_libraries()
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


if __name__ == "__main__":  # `python -m auditor.cli ...`, as the docs show
    main()
