"""The `audit` command group every command module registers with."""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gpubench-audit")
def cli() -> None:
    """Audit GPU benchmark run directories and sign the reports that rest on them."""
