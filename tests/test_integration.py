"""The two tools meet only in the run directory: what `runner execute` writes, `audit check`
must accept, failures included, and a mutation of it must be caught. (The tests may import
both packages; `auditor` itself never imports `runner`.)"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_workloads import tiny_rows, write_jsonl
from test_runner_e2e import FAILS, shared_run, write_config

from auditor.engine import run_check
from runner.cli import cli as runner_cli


def _execute(tmp: Path, fail: str = "", sleep_per_batch: float = 0.0) -> Path:
    corpus = write_jsonl(tmp / "corpus.jsonl", tiny_rows(n_eval=40))
    cfg = write_config(tmp, corpus, fail=fail, sleep_per_batch=sleep_per_batch)
    out = tmp / "run"
    result = CliRunner().invoke(
        runner_cli, ["execute", "--config", str(cfg), "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_run(tmp_path_factory)[0]  # the replay tests' run_a too


@pytest.fixture(scope="module")
def paced_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose batch variants are told apart by their durations whatever the load: each
    classify call sleeps 2 ms, so over 40 texts batch 1 takes at least 80 ms, batch 4 20 ms
    and batch 8 10 ms (a sleep is a lower bound; a ranking's tie slack is 1 ms)."""
    return _execute(tmp_path_factory.mktemp("paced"), sleep_per_batch=0.002)


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_run(tmp_path_factory, fail=FAILS)[0]  # test_runner_e2e's run


def test_runner_output_is_accepted_with_no_finding(clean_run: Path) -> None:
    """No finding, but the one the machine itself may give: a test machine shared with other
    work is busy, and the run says so (A0407, a warning, exactly when its record shows it)."""
    import json

    result = run_check(clean_run)
    env = json.loads((clean_run / "environment.json").read_text(encoding="utf-8"))
    busy = env["concurrent_load"]["while_measuring"]["busy"]
    assert [f.code for f in result.findings if f.code == "A0407"] == (["A0407"] if busy else [])
    assert [f.to_json() for f in result.findings if f.code != "A0407"] == []
    assert result.skipped == ()
    assert result.verdict == "accepted"


def test_honest_failures_are_not_errors(failing_run: Path) -> None:
    """OOM, error and a dead cold process keep their rows (A6.4, A10.3): the audit sees the
    failures as such (warnings on the partial outputs) but finds nothing wrong in the record."""
    result = run_check(failing_run)
    errors = [f.to_json() for f in result.findings if f.severity == "error"]
    assert errors == []
    assert result.verdict == "accepted"
    flagged = {f.artifact for f in result.findings}
    assert "outputs/batch-4/warm-2.jsonl" in flagged


def test_failed_pass_recorded_as_zero_seconds_is_caught(failing_run: Path, tmp_path: Path) -> None:
    """The forgery the protocol names (A10.3): an OOM pass rewritten to 0 s."""
    import shutil

    from runfactory import rehash

    run = tmp_path / "run"
    shutil.copytree(failing_run, run)
    csv_path = run / "resultats-bruts.csv"
    with csv_path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    key = (header.index("variant_id"), header.index("phase"), header.index("run_index"))
    for row in rows[1:]:
        if (row[key[0]], row[key[1]], row[key[2]]) == ("batch-4", "warm", "2"):
            row[header.index("elapsed_seconds")] = "0"
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    rehash(run)
    result = run_check(run)
    assert result.verdict == "rejected"
    assert "A1001" in {f.code for f in result.findings if f.severity == "error"}
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"


def test_the_runner_states_its_claims_as_typed_fields(
    clean_run: Path, failing_run: Path, tmp_path: Path
) -> None:
    """claims.json: summaries of the completed passes only, a ranking of accepted variants
    only; the auditor recomputes both, so a lie in them is rejected."""
    import shutil

    from runfactory import rehash

    doc = json.loads((failing_run / "claims.json").read_text())
    warm4 = [s for s in doc["summaries"] if (s["variant_id"], s["phase"]) == ("batch-4", "warm")]
    assert {s["statistic"] for s in warm4} == {"median", "min", "max"}
    assert all(s["passes"] < 5 for s in warm4)  # the OOM pass is not summarised
    for r in doc["rankings"]:
        assert "batch-4" not in r["variants"]  # a variant with a failed pass is never ranked
    assert doc["projections"] == []
    run = tmp_path / "run"
    shutil.copytree(clean_run, run)
    claims = json.loads((run / "claims.json").read_text())
    claims["summaries"].append({**claims["summaries"][0], "statistic": "p95"})
    (run / "claims.json").write_text(json.dumps(claims))
    rehash(run)
    result = run_check(run)
    assert "A0604" in {f.code for f in result.findings if f.severity == "error"}


def test_the_runners_ranking_has_a_typed_basis_the_auditor_recomputes(
    paced_run: Path, tmp_path: Path
) -> None:
    """The ranking states its basis as typed fields and each variant's median; the order
    reversed with its figures is caught by A1003."""
    import shutil

    from runfactory import rehash

    doc = json.loads((paced_run / "claims.json").read_text())
    assert doc["schema_version"] == "2"
    (r,) = doc["rankings"]
    assert r["basis"] == {
        "measure": "elapsed_seconds",
        "phase": "warm",
        "statistic": "median",
        "unit": "s",
        "order": "ascending",
    }
    medians = {
        s["variant_id"]: s["value"]
        for s in doc["summaries"]
        if (s["phase"], s["statistic"]) == ("warm", "median")
    }
    assert r["values"] == [medians[v] for v in r["variants"]] == sorted(r["values"])
    assert len(r["variants"]) >= 2
    run = tmp_path / "run"
    shutil.copytree(paced_run, run)
    r["variants"], r["values"] = r["variants"][::-1], r["values"][::-1]
    (run / "claims.json").write_text(json.dumps(doc))
    rehash(run)
    result = run_check(run)
    assert {f.code for f in result.findings if f.severity == "error"} == {"A1003"}
