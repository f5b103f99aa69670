"""What a command was pointed at, when it is not what the command takes: a run directory
given to `audit verify`, a report directory given to `audit replay`, an archive file given to
`audit check`. Each command asks `wrong_kind(path, wanted)` before its own work and, when
the path is another kind the tools know, says which and the command that takes it, instead
of a message about what the path lacks ("unsigned", "not a run directory").

Recognised by the names the tools write (cheap: a few `stat` calls, nothing parsed), so a
damaged directory of the right kind still reaches its command and gets its findings there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

Kind = Literal["run", "report", "comparison report", "archive", "archive file"]

MANIFEST = "manifest.json"
REPORT_FILES = ("report.html", "report.pdf", "bundle.dsse.json")
ARCHIVE_INDEX = "index.parquet"
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".zip")
"""What `audit archive` takes besides folders (`auditor.archive.sources`)."""


def _is_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def kind(path: Path) -> Kind | None:
    """What PATH is, among what the tools write or read; None for anything else."""
    path = Path(path)
    if path.is_file():
        return "archive file" if path.name.lower().endswith(ARCHIVE_SUFFIXES) else None
    if not path.is_dir():
        return None
    if _is_file(path / "report.html") and any(_is_file(path / n) for n in REPORT_FILES[1:]):
        return "comparison report" if _is_file(path / "comparison.json") else "report"
    if _is_file(path / MANIFEST):
        return "run"
    if _is_file(path / ARCHIVE_INDEX):
        return "archive"
    return None


def wrong_kind(
    path: Path, wanted: Literal["run", "report", "archive"], command: str = ""
) -> str | None:
    """The message for PATH given to COMMAND (`audit replay`) where a WANTED is expected,
    when PATH is another kind this tool knows (naming that kind and the command that takes
    it); None otherwise."""
    found = kind(path)
    if found is None or found == wanted or (wanted == "report" and found.endswith("report")):
        return None
    if wanted == "archive":
        what = {
            "run": "a run directory",
            "report": "a report directory",
            "comparison report": "a comparison report (audit compare --out)",
            "archive file": "an archive file",
        }[found]
        fix = (
            f"`audit archive {path} --out DIR` audits its runs into an archive DIR, which "
            "`audit compare DIR` compares"
            if found in ("run", "archive file")
            else "`audit verify` checks it"
            if found == "comparison report"
            else "`audit compare` takes the folder `audit archive SOURCES --out DIR` wrote"
        )
        return f"{path}: this is {what}, not an archive; {fix}"
    run_inside = Path(path) / "run"
    if found == "report" and wanted == "run":
        again = f" ({command} {run_inside})" if command else ""
        inside = (
            f"; the run it covers is in {run_inside}{again}"
            if _is_file(run_inside / MANIFEST)
            else ""
        )
        return f"{path}: this is a report directory, not a run directory{inside}"
    if found == "comparison report" and wanted == "run":
        return (
            f"{path}: this is a comparison report (audit compare --out), not a run "
            "directory; `audit verify` checks it"
        )
    if found == "run":
        return (
            f"{path}: this is a run directory, not a report; `audit report {path} --out "
            "DIR` makes its signed report, which `audit verify DIR --ca CA` checks"
        )
    if found == "archive":
        return (
            f"{path}: this is an archive directory (audit archive --out), not a "
            f"{'run directory' if wanted == 'run' else 'report'}; `audit compare {path}` "
            "compares its runs"
        )
    return (
        f"{path}: this is an archive file, not a "
        f"{'run directory' if wanted == 'run' else 'report directory'}; "
        f"`audit archive {path} --out DIR` audits the runs inside it"
    )


def absent(path: Path) -> str | None:
    """The message for a PATH that is not there, or not a directory; None for a
    directory."""
    path = Path(path)
    if path.is_dir():
        return None
    if not path.exists():
        return f"{path}: no such file or directory"
    return f"{path}: a file, not a directory"
