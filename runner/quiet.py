"""No library's warning or log message reaches the user's terminal: the runner's own progress
lines and errors say what matters, and a new release of torch, ONNX Runtime or onnxscript must
not change what a run prints. `RUNNER_DEBUG=1` shows them again.

Called first by every process the runner starts (`runner`, a cold pass's worker, the ONNX
export), before the libraries that warn are imported; it overrides `PYTHONWARNINGS` and `-W`,
which would otherwise turn a library's warning into a failed pass. (The auditor has its own
copy, `auditor.quiet`: the two packages never import each other.)"""

from __future__ import annotations

import logging
import os
import warnings

DEBUG_ENV = "RUNNER_DEBUG"
"""Set to a non-empty value: libraries' warnings and logs shown."""


def quiet_libraries() -> None:
    """Silence third-party warnings and logs for this process unless RUNNER_DEBUG is set."""
    if os.environ.get(DEBUG_ENV):
        warnings.simplefilter("default")
        logging.basicConfig(level=logging.DEBUG)
        return
    warnings.simplefilter("ignore")
    logging.getLogger().addHandler(logging.NullHandler())  # no lastResort to stderr
