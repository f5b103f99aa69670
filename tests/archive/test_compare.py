"""`audit compare`: a signed comparison over an archive index that says what to buy, ranks only
accepted configurations (A10.2), lists the others apart with their reason and the deciding
finding, counts every index row once (copies, conflicts, runs), verifies with `audit verify`,
and prints the same table as JSON and CSV."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import archfactory
import polars as pl
import pytest
import runfactory
from click.testing import CliRunner
from jsonschema import Draft202012Validator

import schemas
from auditor.archive import index
from auditor.archive.compare import CSV_COLUMNS, compare
from auditor.archive.compare_report import build_comparison_report
from auditor.archive.core import audit_archive
from auditor.cli import cli
from auditor.errors import AuditorError, VerificationFailed
from auditor.report.keygen import keygen
from auditor.report.verify import verify_report, verify_result


def _protocol_b_builders():
    """tests/protocols/b's run builders (not a package of the suite's shared helpers)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "protocols" / "b"))
    import b_fixtures
    import b_runs

    return b_fixtures, b_runs


def _tampered_copy(run: Path, dest: Path) -> Path:
    """A copy of RUN with one output line's label changed and its manifest kept as it was:
    the copy claims to be RUN, and its bytes say otherwise."""
    shutil.copytree(run, dest)
    lines = runfactory.read_jsonl(dest, "outputs/batch-1/warm-2.jsonl")
    lines[3]["label"] = "not-" + lines[3]["label"]
    runfactory.write_jsonl(dest, "outputs/batch-1/warm-2.jsonl", lines)
    return dest


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("cmp")
    src = archfactory.mixed(base)
    shutil.copytree(src / "team-a" / "acc-1", src / "team-d" / "copy-of-acc-1")
    out = base / "out"
    audit_archive([src], out, jobs=2)
    return src, out


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("keys")
    keygen(d)
    return d


def test_only_accepted_configurations_are_ranked(archive) -> None:
    _, out = archive
    cmp = compare(out)
    assert cmp.copies == (("team-d/copy-of-acc-1", "team-a/acc-1"),)
    assert cmp.runs == 8 and cmp.compared == 7  # the garbage run has nothing to compare
    ranked = {(r.hardware, r.config_id, r.offer_id) for r in cmp.ranked}
    assert ranked == {
        ("NVIDIA H100 80GB HBM3", "batch-1", "h100-7d"),
        ("NVIDIA H100 80GB HBM3", "batch-4", "h100-7d"),
    }
    assert [r.rank for r in cmp.ranked] == [1, 2]
    assert all(r.status == "accepted" for r in cmp.ranked)
    first = cmp.ranked[0]
    assert first.cost_per_accepted_corpus_minor == 123456 and first.currency == "USD"
    assert first.package_total_minor == 123456
    assert first.runs == 3 and first.accepted_runs == 3 and first.all_runs == 5
    assert first.runs_agree is False  # two runs with it are incomplete
    assert first.experiments == ("exp-batch", "exp-batch-2", "exp-batch-3")
    assert first.sources == ("old-runs.tar.gz!/acc-3", "team-a/acc-1", "team-a/acc-2")
    assert first.pass_min_s <= first.median_s <= first.pass_max_s
    # The rejected batch-16 is ten times faster than anything ranked: listed apart only.
    fast = [r for r in cmp.not_accepted if r.config_id == "batch-16"]
    assert fast and all(r.rank is None and r.status == "rejected" for r in fast)
    assert fast[0].median_s < min(r.median_s for r in cmp.ranked)
    assert fast[0].runs == 2 and fast[0].reason
    assert fast[0].detail.startswith("A0205: ")  # its own finding: the claimed quality
    inc = [r for r in cmp.not_accepted if r.status == "incomplete"]
    assert {r.config_id for r in inc} == {"batch-1", "batch-4"}
    assert all(r.detail.startswith("the run is incomplete: A0006: ") for r in inc)
    others = dict(cmp.other_runs)
    assert others["broken.tar.gz"].startswith("unreadable: the archive cannot be read")
    assert others["team-c/garbage"].startswith("rejected: R0001: manifest.json")


def test_what_to_buy_names_the_best_per_offer_and_how_sure(archive) -> None:
    _, out = archive
    cmp = compare(out)
    (choice,) = cmp.choices
    assert choice.best is cmp.ranked[0] and choice.runner_up is cmp.ranked[1]
    best, up = choice.best, choice.runner_up
    apart = best.pass_max_s < up.pass_min_s or up.pass_max_s < best.pass_min_s
    assert choice.told_apart is apart
    text = CliRunner().invoke(cli, ["compare", str(out)]).output
    head = text.split("\n\n")[1]  # right after the counts: what to buy
    assert head.startswith("What to buy") and f"{best.config_id} (float32), $1,234.56" in head
    assert ("passes apart from the next" if apart else "passes overlap the next") in head
    assert "3 of 5 runs accept it: the runs do not agree" in head
    assert "rests on: old-runs.tar.gz!/acc-3, team-a/acc-1" in head


def test_every_index_row_is_counted_once(archive) -> None:
    _, out = archive
    cmp = compare(out)
    rows = pl.read_parquet(out / index.INDEX).height
    assert cmp.index_rows == rows == 10
    assert cmp.runs + len(cmp.copies) + cmp.set_aside + cmp.not_audited == rows
    assert cmp.headline() == (
        "7 runs compared, of 10 index rows: 8 distinct runs, 1 identical "
        "copy counted once, 0 conflicting copies set aside, 1 run with "
        "nothing to compare, 1 source not audited"
    )
    doc = cmp.to_json()
    assert doc["counts"] == {
        "index_rows": 10,
        "runs": 8,
        "compared": 7,
        "copies": 1,
        "set_aside": 0,
        "not_audited": 1,
    }


def test_a_tampered_copy_never_displaces_the_genuine_run(tmp_path: Path) -> None:
    """`a-copy/` sorts first and shares the genuine run's manifest, with one output line
    edited: it is a conflict, both are listed, and the genuine run is the one ranked."""
    src = tmp_path / "src"
    genuine = archfactory.accepted(src / "z-genuine")
    _tampered_copy(genuine, src / "a-copy")
    shutil.copytree(genuine, src / "z2-same-bytes")
    out = tmp_path / "out"
    audit_archive([src], out, jobs=2)
    cmp = compare(out)
    (conflict,) = cmp.conflicts
    assert conflict.genuine == "z-genuine"
    members = {m.source: (m.matches_manifest, m.verdict) for m in conflict.members}
    assert members == {
        "a-copy": (False, "rejected"),
        "z2-same-bytes": (True, "accepted"),
        "z-genuine": (True, "accepted"),
    }
    assert cmp.copies == (("z2-same-bytes", "z-genuine"),)
    assert cmp.runs == 1 and cmp.set_aside == 1 and cmp.not_accepted == ()
    assert {r.sources for r in cmp.ranked} == {("z-genuine",)}
    assert [r.config_id for r in cmp.ranked] and cmp.choices
    text = CliRunner().invoke(cli, ["compare", str(out)]).output
    assert "counted: z-genuine" in text
    assert "a-copy: rejected, does not match its manifest" in text
    assert "z-genuine: accepted, matches its manifest" in text
    doc = json.loads(CliRunner().invoke(cli, ["compare", str(out), "--format", "json"]).output)
    Draft202012Validator(schemas.load("comparison")).validate(doc)
    assert doc["conflicts"][0]["genuine"] == "z-genuine"


def test_copies_that_all_differ_from_their_manifest_count_for_nothing(tmp_path: Path) -> None:
    src = tmp_path / "src"
    run = archfactory.accepted(tmp_path / "orig")
    _tampered_copy(run, src / "one")
    two = _tampered_copy(run, src / "two")
    (two / "notes.txt").write_text("an unlisted file\n", encoding="utf-8")
    out = tmp_path / "out"
    audit_archive([src], out, jobs=1)
    cmp = compare(out)
    (conflict,) = cmp.conflicts
    assert conflict.genuine is None and cmp.runs == 0 and cmp.set_aside == 2
    assert cmp.ranked == () and cmp.choices == () and cmp.not_accepted == ()
    assert "none counted" in CliRunner().invoke(cli, ["compare", str(out)]).output


def test_json_and_csv_give_the_same_table(archive) -> None:
    _, out = archive
    res = CliRunner().invoke(cli, ["compare", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    Draft202012Validator(schemas.load("comparison")).validate(doc)
    res = CliRunner().invoke(cli, ["compare", str(out), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(res.output)))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == len(doc["ranked"]) + len(doc["not_accepted"])
    for row, want in zip(rows, doc["ranked"] + doc["not_accepted"], strict=True):
        assert row["config_id"] == want["config_id"] and row["status"] == want["status"]
        assert row["rank"] == ("" if want["rank"] is None else str(want["rank"]))
        assert row["cost_per_accepted_corpus_minor"] == (
            ""
            if want["cost_per_accepted_corpus_minor"] is None
            else str(want["cost_per_accepted_corpus_minor"])
        )  # an integer, never `1234.0`
    text = CliRunner().invoke(cli, ["compare", str(out)]).output
    assert "Ranked (accepted configurations only, A10.2)" in text and "batch-16" in text


def test_numbers_are_written_as_the_run_report_writes_them(tmp_path: Path) -> None:
    """One way everywhere (auditor.present): `15,575 texts/s`, `$1,234.56`, `0.512 s`,
    never `15575.0` or `$346.6667`."""
    src = tmp_path / "src"
    archfactory.accepted(src / "fast", eval_size=2000)
    out = tmp_path / "out"
    audit_archive([src], out, jobs=1)
    cmp = compare(out)
    r = cmp.ranked[0]
    text = CliRunner().invoke(cli, ["compare", str(out)]).output
    assert f"{r.throughput_per_s:,.0f} texts/s" in text and f"{r.throughput_per_s}" not in text
    assert "$1,234.56" in text and "1234.56" not in text.replace("$1,234.56", "")
    assert f"{r.median_s:.3f} s" in text


def test_signed_comparison_verifies(archive, keys: Path, tmp_path: Path) -> None:
    _, out = archive
    report = tmp_path / "report"
    cmp = build_comparison_report(
        out, report, key=keys / "signer.key", cert=keys / "signer.pem", chain=keys / "ca.pem"
    )
    names = sorted(p.relative_to(report).as_posix() for p in report.rglob("*") if p.is_file())
    assert names == [
        "archive/findings.parquet",
        "archive/index.parquet",
        "bundle.dsse.json",
        "comparison.csv",
        "comparison.json",
        "report.html",
        "report.pdf",
        "signer.pem",
    ]
    lines = verify_report(report, keys / "ca.pem")
    assert lines[-2].startswith(
        f"OK: comparison of {cmp.compared} run(s), 2 configuration(s) ranked"
    )
    doc = verify_result(report, keys / "ca.pem")
    Draft202012Validator(schemas.load("verify_result")).validate(doc)
    assert doc["ok"] and doc["report"] == "comparison" and doc["ranked"] == 2
    assert doc["index_sha256"] == cmp.index_sha256 and "experiment_id" not in doc
    html = (report / "report.html").read_text(encoding="utf-8")
    assert "never ranked" in html and "batch-16" in html and "data:image/svg+xml" in html
    # Page 1 is what to buy, with the counts that add up and the runs it rests on.
    buy = html[html.index('id="buy"') : html.index('id="basis"')]
    assert "What to buy" in buy and cmp.headline() in buy and "$1,234.56" in buy
    assert "The runs each choice rests on" in buy and "team-a/acc-1" in buy
    assert "123456" not in html and "1234.56<" not in html
    # A changed byte of the index the comparison rests on fails verification.
    (report / "archive" / "index.parquet").write_bytes(b"tampered")
    with pytest.raises(VerificationFailed, match=r"archive/index\.parquet"):
        verify_report(report, keys / "ca.pem")


def test_compare_refuses_what_is_not_a_finished_index(tmp_path: Path) -> None:
    with pytest.raises(AuditorError, match=r"no index\.parquet"):
        compare(tmp_path)
    res = CliRunner().invoke(cli, ["compare", str(tmp_path), "--key", __file__])
    assert res.exit_code != 0
    old = tmp_path / "old"
    old.mkdir()
    pl.DataFrame({"source": ["x"], "cost": [1200.0]}).write_parquet(old / index.INDEX)
    with pytest.raises(AuditorError, match="another version of the auditor"):
        compare(old)


def test_protocol_b_policies_are_ranked_apart_by_energy(tmp_path: Path) -> None:
    """A trial's wall time is not a warm pass's: in an archive of protocol A and B runs,
    each protocol has its own ranking, numbered from 1, B's by joules per inference."""
    b_fixtures, b_runs = _protocol_b_builders()
    src = tmp_path / "src"
    archfactory.accepted(src / "a-run")
    b_runs.synthetic(src / "b-synthetic")
    b_fixtures.macos_clean(src / "b-macos")
    out = tmp_path / "out"
    audit_archive([src], out, jobs=1)
    cmp = compare(out)
    a = [r for r in cmp.ranked if r.protocol == "accepted-corpus-cost"]
    b = [r for r in cmp.ranked if r.protocol == "residency-energy"]
    assert a and b and [r.rank for r in a] == list(range(1, len(a) + 1))
    assert [r.rank for r in b] == list(range(1, len(b) + 1))
    assert all(r.joules_per_inference is None for r in a)
    energies = [r.joules_per_inference for r in b]
    assert all(e is not None and e > 0 for e in energies) and energies == sorted(energies)
    assert all(r.package_total_minor is None and r.p95_ms and r.reason is None for r in b)
    baseline = [r for r in cmp.not_accepted if r.status == "baseline"]
    assert baseline and all(r.reason == "the CPU-only baseline (B7)" for r in baseline)
    b_choices = [c for c in cmp.choices if c.best.protocol == "residency-energy"]
    assert b_choices and all(c.told_apart is None for c in b_choices)
    doc = json.loads(CliRunner().invoke(cli, ["compare", str(out), "--format", "json"]).output)
    Draft202012Validator(schemas.load("comparison")).validate(doc)
    assert {r["protocol"] for r in doc["ranked"]} == {"accepted-corpus-cost", "residency-energy"}
    text = CliRunner().invoke(cli, ["compare", str(out)]).output
    assert "Protocol B policies accepted (ranked apart" in text
    assert text.index("Ranked (accepted configurations only") < text.index("Protocol B")


def test_a_protocol_b_reason_is_its_own_finding(tmp_path: Path) -> None:
    """A policy below the agreement floor in a run that also lacks its machine model: the
    policy's reason names B0801 and its detail is B0801's own message (agreement against
    the floor), never B0801's title joined to B0101's message."""
    _, b_runs = _protocol_b_builders()
    spec = b_runs.with_policy(b_runs.synthetic_spec(), "torch-cuda", wrong_every=55)
    spec = replace(spec, environment={"machine": {"value": "", "source": "test builder"}})
    b_runs.build(tmp_path / "src" / "b-run", spec)
    out = tmp_path / "out"
    audit_archive([tmp_path / "src"], out, jobs=1)
    cmp = compare(out)
    row = next(r for r in cmp.not_accepted if r.config_id == "torch-cuda")
    assert row.status == "rejected" and row.reason == "B0801 accuracy and parity gates"
    assert row.detail.startswith("B0801: candidate torch-cuda fails the gates: agreement ")
    assert "(floor 99.00%)" in row.detail and "machine model" not in row.detail
    other = next(r for r in cmp.not_accepted if r.config_id == "ort-cuda")
    assert other.detail == f"the run is rejected: {row.detail}"
    idx = pl.read_parquet(out / index.INDEX).row(0, named=True)
    assert idx["reason"] == row.detail  # the run's deciding finding, not its first error
    text = CliRunner().invoke(cli, ["compare", str(out)]).output
    assert "B0801 accuracy and parity gates: the machine model" not in text
    assert row.detail in text
