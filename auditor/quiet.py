"""No library's warning or log message reaches a user's terminal: what matters reaches the
user as the tool's own message. A new release of a dependency must not change what a command
prints (cryptography 51 made pyHanko's import print a DSA deprecation warning on every
`audit verify`). `AUDIT_DEBUG=1` shows them again, with the libraries' logs.

Called first by every process the tool starts (`audit`, the report worker), before any
library that might warn is imported; it overrides `PYTHONWARNINGS` and `-W`, which would
otherwise turn a library's warning into a crash of the command."""

from __future__ import annotations

import logging
import os
import warnings

DEBUG_ENV = "AUDIT_DEBUG"
"""Set to a non-empty value: libraries' warnings and logs shown, crash tracebacks printed."""


def quiet_libraries() -> None:
    """Silence third-party warnings and logs for this process unless AUDIT_DEBUG is set."""
    if os.environ.get(DEBUG_ENV):
        warnings.simplefilter("default")
        logging.basicConfig(level=logging.DEBUG)
        return
    warnings.simplefilter("ignore")
    logging.getLogger().addHandler(logging.NullHandler())  # no lastResort to stderr
