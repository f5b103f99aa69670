"""Exceptions the core raises for the CLI to turn into a message and an exit status.
Only `auditor.cli` exits the process."""


class AuditorError(Exception):
    """Bad usage or input that stops a command (exit 2).

    The message names the file and the fault."""


class VerificationFailed(Exception):
    """`audit verify` found the report not trustworthy (exit 1).

    The message says which file and why."""
