"""Atomic run directories, for both protocols.

A run is built in `<RUN_DIR>.partial-<pid>` and only renamed to RUN_DIR after every file has
been validated against its schema and `manifest.json` (written last) lists their SHA-256. A
runner killed at any point leaves at most a `.partial-*` directory without a manifest, never
something that looks like a finished run.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner import artifacts
from runner.errors import RunInterrupted, RunnerError

if TYPE_CHECKING:
    from runner.loadwatch import LoadWatch

Progress = Callable[[str], None]


def refuse_existing(out: Path) -> None:
    """A run is never overwritten; checked before anything is measured."""
    if out.exists():
        raise RunnerError(
            f"run dir {out}: already exists; the runner never overwrites a run "
            "(choose another --out or remove it)"
        )


@dataclass(frozen=True)
class StagedRunDir:
    """The `.partial-<pid>` folder a run is written into, and where it will be published."""

    out: Path
    root: Path

    @classmethod
    def create(cls, out: Path, say: Progress) -> StagedRunDir:
        refuse_existing(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        root = out.parent / f"{out.name}.partial-{os.getpid()}"
        root.mkdir()
        say(f"building {out} in {root.name}")
        return cls(out, root)

    @contextmanager
    def unfinished(self) -> Iterator[None]:
        """A known error inside the run says where its unfinished files are (kept, for the
        diagnosis). An interruption (Ctrl-C) removes them: nothing was asked to be kept, and
        a half-written folder only misleads; if it cannot be removed, its exact path is
        named."""
        try:
            yield
        except RunnerError as exc:
            raise RunnerError(f"{exc} (unfinished files left in {self.root}: not a run)") from None
        except KeyboardInterrupt:
            shutil.rmtree(self.root, ignore_errors=True)
            where = (
                f"its unfinished files could not all be removed: {self.root} (not a run)"
                if self.root.exists()
                else f"its unfinished files ({self.root}) were removed"
            )
            raise RunInterrupted(
                f"interrupted: no run dir written at {self.out}; {where}"
            ) from None

    def publish(
        self, manifest: dict[str, Any], layout: artifacts.Layout, manifest_kind: str
    ) -> Path:
        """Validate every file, hash them into the manifest, write it last, rename."""
        artifacts.validate_run_dir(self.root, layout)  # everything but the manifest
        manifest["artifacts"] = artifacts.artifact_hashes(self.root)
        artifacts.validate(manifest_kind, manifest, "manifest.json")
        artifacts.write_json(self.root / "manifest.json", manifest)
        if self.out.exists():
            raise RunnerError(
                f"run dir {self.out}: appeared while running; the finished run "
                f"is left in {self.root}"
            )
        os.rename(self.root, self.out)
        return self.out


class Steps:
    """Numbered progress lines, one per planned step (pass, trial), with the time since the
    first step, an estimate of the time left and, given a `LoadWatch`, what other processes
    use now: `[ 3/21] batch-8 warm-2: ok, 0.412 s (12 s, ~70 s left; other processes
    1.6/2 CPUs)`. The estimate adds, for each step left, the mean time of the steps of its
    kind done so far (`kinds`: a cold pass in a fresh process takes seconds, a warm pass
    milliseconds), else of every step done."""

    def __init__(
        self,
        say: Progress,
        total: int,
        watch: LoadWatch | None = None,
        kinds: list[str] | None = None,
    ) -> None:
        self.say = say
        self.total = total
        self.watch = watch
        self.kinds = kinds or [""] * total
        self.t0 = self.last = time.monotonic()
        self.took: dict[str, list[float]] = {}

    def __call__(self, index: int, message: str) -> None:
        """`index` counts from 0 in the planned order."""
        now = time.monotonic()
        kind = self.kinds[index] if index < len(self.kinds) else ""
        self.took.setdefault(kind, []).append(now - self.last)
        self.last = now
        done = index + 1
        every = [t for ts in self.took.values() for t in ts]
        mean = {k: sum(ts) / len(ts) for k, ts in self.took.items()}
        left = sum(mean.get(k, sum(every) / len(every)) for k in self.kinds[done : self.total])
        timing = f"{now - self.t0:.0f} s" + (f", ~{left:.0f} s left" if done < self.total else "")
        others = self.watch.now() if self.watch is not None else None
        load = (
            ""
            if others is None or self.watch is None
            else (f"; other processes {others:.1f}/{self.watch.cpus} CPUs")
        )
        self.say(f"[{done:>2}/{self.total}] {message} ({timing}{load})")
