"""Exceptions the runner raises for the CLI to turn into a message and exit status 2."""


class RunnerError(Exception):
    """Bad input or usage that stops the run (exit 2). The message names the file and the
    problem; when raised before measuring, nothing has been measured or written."""


class RunInterrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C); the message says what was removed or left."""
