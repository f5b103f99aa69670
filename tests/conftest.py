"""Test-suite setup: the shared helpers at the top of tests/ (`runfactory`, the runner's test
workloads) are importable from every folder of the suite, which mirrors the code's layout
(tests/readers/, tests/protocols/a/, tests/output/)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
