"""Stand-ins for the power tools a Mac or Windows user runs, fed by the real logs of
tests/readers/fixtures: they write (or print) the log's own bytes at its own pace, sped up
by `speed` so a test takes seconds. The one thing they change is the time each sample is
stamped with: the moment the stand-in writes it (HWiNFO's `Date,Time` cells, in its own
format, local time), since the runner's windows are in this machine's present; every other
byte (the header, each sensor's value, the column layout, line ends) is the real log's. The
rows are replayed pass after pass, each pass in a new seeded order: a live machine never
repeats its readings with the log's period, and the auditor (B0607) rightly reads two
trials holding the same sequence as a copied trace. The runner's real code starts, reads,
windows and keeps them."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path


def hwinfo_stamp(moment: datetime) -> bytes:
    """`D.M.YYYY,H:M:S.mmm` as HWiNFO writes it (not zero-padded, milliseconds)."""
    return (
        f"{moment.day}.{moment.month}.{moment.year},{moment.hour}:{moment.minute}:"
        f"{moment.second}.{moment.microsecond // 1000:03d}"
    ).encode("ascii")


def _hwinfo_rows(source: Path) -> tuple[bytes, list[tuple[float, bytes]]]:
    """The header and (seconds since the previous row, the row after its date and time)."""
    lines = source.read_bytes().splitlines(keepends=True)
    header, rows, prev = lines[0], [], None
    for line in lines[1:]:
        if line.startswith(b"Date,Time"):
            break  # the footer
        date, clock, rest = line.split(b",", 2)
        d, m, y = (int(x) for x in date.split(b"."))
        hh, mm, ss = clock.split(b":")
        s, _, ms = ss.partition(b".")
        t = datetime(y, m, d, int(hh), int(mm), int(s), int(ms or 0) * 1000).timestamp()
        rows.append((0.0 if prev is None else t - prev, rest))
        prev = t
    return header, rows


class HwinfoReplay:
    """Appends a real HWiNFO log's rows to `dest`, as HWiNFO's logging does, from a process
    of its own (as HWiNFO is: the runner's inference loop never delays it)."""

    def __init__(self, source: Path, dest: Path, speed: float) -> None:
        self.source, self.dest, self.speed = source, dest, speed
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> HwinfoReplay:
        self.process = subprocess.Popen(
            [sys.executable, __file__, str(self.source), str(self.dest), str(self.speed)]
        )
        deadline = time.monotonic() + 10
        while not self.dest.is_file() and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait()


def replay_hwinfo(source: Path, dest: Path, speed: float) -> None:
    header, rows = _hwinfo_rows(source)
    rng = random.Random(7)
    order: list[int] = []
    typical = rows[1][0] if len(rows) > 1 else 1.0
    with open(dest, "wb", buffering=0) as f:
        f.write(header)
        due = time.monotonic()
        while True:
            if not order:  # each pass over the log's rows in a new seeded order
                order = rng.sample(range(len(rows)), len(rows))
            i = order.pop()
            step, rest = rows[i]
            due += (step if i else typical) / speed
            time.sleep(max(0.0, due - time.monotonic()))
            f.write(hwinfo_stamp(datetime.now()) + b"," + rest)


def battery_sysfs(root: Path) -> Path:
    """A /sys/class/power_supply tree of a laptop unplugged: AC offline, BAT0 discharging."""
    for name, files in {
        "AC": {"type": "Mains", "online": "0"},
        "BAT0": {"type": "Battery", "status": "Discharging"},
    }.items():
        (root / name).mkdir(parents=True)
        for k, v in files.items():
            (root / name / k).write_text(v + "\n")
    return root


def record_as_ac(run: Path, policy: str, n: int) -> None:
    """The lie: trial N of POLICY recorded on AC in trials.csv, the manifest's hashes
    rewritten to match (so only the evidence can tell)."""
    import csv
    import hashlib
    import json

    path = run / "trials.csv"
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    fields = list(rows[0])
    for r in rows:
        if r["policy_id"] == policy and r["trial_index"] == str(n):
            r["power_source"] = "ac"
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fields, lineterminator="\r\n")
        w.writeheader()
        w.writerows(rows)
    m = json.loads((run / "manifest.json").read_text())
    m["artifacts"]["trials.csv"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (run / "manifest.json").write_text(json.dumps(m, indent=1))


if __name__ == "__main__":
    replay_hwinfo(Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3]))
