"""Time `audit replay` of 200 IDs (the default sample) on the default protocol A run (1,000
texts, 18 pass files of 1,000 answers) and the default protocol B run (13 answers files,
trials of 20,000 answers), against a bare baseline: an ONNX Runtime session of the same file
scoring the same 200 texts, tokenized by the same code. Aim: under 3 s for the whole command
(a fresh process: interpreter start and imports included) on the 2-core dev machine.

    .venv/bin/python bench/replay_bench.py [RUN_DIR ...] [--repeat N]

Without RUN_DIR, makes both default runs first (`runner execute`, `runner residency`: about a
minute). Prints, per run and median over the repeats: the command in a fresh process, the
replay call in a warm process, and the bare baseline, with the ratio of each to it."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from auditor.replay import DEFAULT_SAMPLE, tokenizers  # noqa: E402
from auditor.replay.core import replay  # noqa: E402

AIM_S = 3.0


def bare(run: Path, ids: list[str]) -> float:
    """Seconds for the minimum replay needs: read the texts, tokenize, one session, score."""
    import numpy as np
    import onnxruntime as ort

    t0 = time.perf_counter()
    section = json.loads((run / "manifest.json").read_text())["replay"]
    texts = {}
    for line in (run / section["inputs"]).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        texts[record["id"]] = record["text"]
    tok, _ = tokenizers.load(
        (run / section["tokenizer"]["file"]).read_bytes(),
        name="t",
        kind=section["tokenizer"]["kind"],
        context=section["context"],
    )
    assert tok is not None
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        str(run / section["model"]["file"]), options, providers=["CPUExecutionProvider"]
    )
    feed = tok.encode([texts[i] for i in ids])
    (scores,) = session.run(["scores"], feed)
    np.argmax(scores, axis=1)
    return time.perf_counter() - t0


def command(run: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from auditor.cli import main; main()",
            "replay",
            str(run),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"audit replay {run} exited {proc.returncode}: {proc.stderr}")
    return took


def make_default_runs(base: Path) -> list[Path]:
    runner = [sys.executable, "-c", "from runner.cli import main; main()"]
    runs = []
    for cmd in ("execute", "residency"):
        out = base / cmd
        print(f"making the default run: runner {cmd} ...", flush=True)
        subprocess.run(
            [*runner, cmd, "--out", str(out), "--quiet"], check=True, capture_output=True
        )
        runs.append(out)
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dirs", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = args.run_dirs or make_default_runs(Path(tmp))
        print(
            f"replay bench: {DEFAULT_SAMPLE} IDs, median of {args.repeat} repeat(s), "
            f"seconds; aim < {AIM_S:g} s for the command"
        )
        print(f"{'run':<28}{'what':<26}{'median s':>10}{'x bare':>8}")
        worst = 0.0
        for run in runs:
            result = replay(run)  # warms the imports; the verdict must be clean
            assert result.verdict == "accepted", result.to_json()["findings"]
            assert result.sample is not None
            ids = list(result.sample.ids)
            rows = {
                "audit replay (fresh proc)": [command(run) for _ in range(args.repeat)],
                "replay() (warm process)": [_timed(replay, run) for _ in range(args.repeat)],
                "bare ORT baseline": [bare(run, ids) for _ in range(args.repeat)],
            }
            base_s = statistics.median(rows["bare ORT baseline"])
            name = f"{run.name} ({result.protocol[:12]})"
            for what, times in rows.items():
                med = statistics.median(times)
                print(f"{name:<28}{what:<26}{med:>10.3f}{med / base_s:>8.1f}")
            worst = max(worst, statistics.median(rows["audit replay (fresh proc)"]))
            print(
                f"{'':<28}{len(result.files)} answers files compared, "
                f"{sum(a.answers for a in result.files):,} answers"
            )
    print(
        f"slowest command: {worst:.2f} s ({'within' if worst < AIM_S else 'OVER'} the "
        f"{AIM_S:g} s aim)"
    )
    return 0 if worst < AIM_S else 1


def _timed(fn: object, run: Path) -> float:
    t0 = time.perf_counter()
    fn(run)  # type: ignore[operator]
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
