"""Where the suite finds things outside tests/: the repository root, and `../shared` (the
project's shared protocol texts and real external fixtures) beside the checkout."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SHARED = REPO.parent / "shared"
EXTERNAL = SHARED / "fixtures" / "external"
