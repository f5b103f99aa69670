"""`runner`: the commands that produce protocol A and protocol B evidence. Thin: parses
arguments, calls the core, prints progress; the only module that exits the process. Known
errors (`RunnerError`) become one message on stderr and exit 2, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from runner.errors import RunInterrupted, RunnerError
from runner.quiet import quiet_libraries


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gpubench-audit")
def cli() -> None:
    """Run protocol A (an accepted corpus before cost) or protocol B (energy and accelerator
    residency) into a checkable run directory."""


@cli.command()
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML run configuration; default: the embedded demo run.",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Run directory to create; never overwritten.",
)
@click.option("--quiet", is_flag=True, help="No progress lines (for CI).")
@click.option(
    "--off-protocol",
    is_flag=True,
    help="Run a configuration that breaks protocol A (warm passes other than 5, no "
    "warm-up) as a diagnostic; the manifest records it. Without it such a "
    "configuration is refused before anything runs.",
)
def execute(config_path: Path | None, out_dir: Path, quiet: bool, off_protocol: bool) -> None:
    """Run protocol A and write the run directory OUT (docs/run-dir.md)."""
    from runner.a.config import load_config
    from runner.a.execute import execute as run

    _run_command(
        lambda say: run(replace(load_config(config_path), off_protocol=off_protocol), out_dir, say),
        out_dir,
        quiet,
    )


@cli.command()
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML protocol B configuration; default: the embedded run "
    "(runner/defaults/residency.toml).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Run directory to create; never overwritten.",
)
@click.option("--quiet", is_flag=True, help="No progress lines (for CI).")
@click.option(
    "--off-protocol",
    is_flag=True,
    help="Run a configuration that breaks protocol B (a sequence other than 1,000 "
    "prompts, fewer than 5 trials or 100 warm-up classifications, fewer than "
    "10 power samples a window) as a diagnostic; the manifest records it. "
    "Without it such a configuration is refused before anything runs.",
)
@click.option(
    "--powermetrics-log",
    type=click.Path(path_type=Path),
    default=None,
    help="macOS: a capture you started yourself (sudo powermetrics --samplers "
    "cpu_power,gpu_power,ane_power -i 1000 -o FILE), read instead of starting "
    "powermetrics as root; implies the powermetrics instrument.",
)
def residency(
    config_path: Path | None,
    out_dir: Path,
    quiet: bool,
    off_protocol: bool,
    powermetrics_log: Path | None,
) -> None:
    """Run protocol B and write the run directory OUT (docs/run-dir-residency.md)."""
    from runner.b.config import load_residency_config
    from runner.b.run import residency as run

    def configured() -> Any:
        cfg = replace(load_residency_config(config_path), off_protocol=off_protocol)
        if powermetrics_log is not None:
            cfg = replace(
                cfg,
                energy=replace(
                    cfg.energy,
                    instruments=("powermetrics",),
                    powermetrics_log=powermetrics_log.resolve(),
                ),
            )
        return cfg

    _run_command(lambda say: run(configured(), out_dir, say), out_dir, quiet)


def _run_command(
    run: Callable[[Callable[[str], None] | None], Path], out_dir: Path, quiet: bool
) -> None:
    """Progress on stderr, the run dir's path on stdout; known errors exit 2."""

    def progress(msg: str) -> None:
        click.echo(msg, err=True)

    try:
        out = run(None if quiet else progress)
    except RunnerError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except RunInterrupted as exc:
        click.echo(str(exc), err=True)
        sys.exit(130)
    except KeyboardInterrupt:  # before the run dir was staged: nothing was written
        click.echo(f"interrupted: no run dir written at {out_dir}", err=True)
        sys.exit(130)
    if quiet:
        _warn_if_busy(out)
    click.echo(str(out))


def _warn_if_busy(out: Path) -> None:
    """--quiet drops the progress lines, not this: timings taken on a busy machine are said
    to be so on stderr (the run's environment.json and notes keep it too)."""
    import json

    from runner.loadwatch import sentence

    try:
        env = json.loads((out / "environment.json").read_text(encoding="utf-8"))
        rec = env["concurrent_load"]["while_measuring"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    if rec.get("busy"):
        click.echo(f"warning: {sentence(rec)}", err=True)


@cli.command("memory-probe")
@click.option("--device", default="auto", help="auto, cpu, cuda or cuda:N.")
def memory_probe(device: str) -> None:
    """The seed's exercise: record A7 memory around a small synthetic MLP."""
    from runner.a.probe import probe

    try:
        for line in probe(device):
            click.echo(line)
    except RunnerError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


def main() -> None:
    quiet_libraries()
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except RunnerError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except SystemExit:
        raise
    except Exception as exc:  # an internal failure is a bug: say so, exit 2, no bare traceback
        click.echo(f"internal error ({type(exc).__name__}): {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
