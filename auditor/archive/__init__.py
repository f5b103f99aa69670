"""Archives of runs: `audit archive` audits every run of folders and `.tar`/`.tar.gz`/`.zip`
archives into a Parquet index, over long-lived worker processes or Ray tasks, incrementally;
`audit compare` turns that index into a signed comparison of configurations for procurement.

- `sources.py`: finding runs, and extracting archives safely under `--out`;
- `worker.py`: `audit_one`, the worker function (engine + the protocol's `summarize`);
- `local.py`, `ray_executor.py`: the executors (`--executor local|ray`);
- `frames.py`: the columns of `index.parquet` and `findings.parquet`, and their rows;
- `index.py`: the streaming, crash-safe, incremental `index.parquet` and `findings.parquet`;
- `progress.py`: progress on a terminal;
- `core.py`: `audit_archive`, what `audit archive` runs;
- `compare.py`: the comparison of an index; its parts `copies.py` (which rows are runs),
  `workloads.py` (what the runs measured) and `ranking.py` (its rows, ranked: A10.2, only
  accepted configurations); its signed report `compare_report.py`;
- `output/`: the `--format`s of both commands.

Columns, limits and codes: docs/archive.md.
"""
