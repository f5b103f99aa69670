"""`audit compare`: a signed comparison over an archive index that ranks only accepted
configurations (A10.2), lists the others apart with their main reason, verifies with `audit
verify`, and prints the same table as JSON and CSV."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import archfactory
import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

import schemas
from auditor.archive.compare import CSV_COLUMNS, build_comparison_report, compare
from auditor.archive.core import audit_archive
from auditor.cli import cli
from auditor.errors import AuditorError, VerificationFailed
from auditor.report.keygen import keygen
from auditor.report.verify import verify_report, verify_result


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
    src, out = archive
    cmp = compare(out)
    assert cmp.duplicates == 1  # the copy of acc-1 counts once
    assert cmp.runs == 8  # audited runs, the copy left out (the garbage one included)
    ranked = {(r.gpu_model, r.config_id, r.offer_id) for r in cmp.ranked}
    assert ranked == {("NVIDIA H100 80GB HBM3", "batch-1", "h100-7d"),
                      ("NVIDIA H100 80GB HBM3", "batch-4", "h100-7d")}
    assert [r.rank for r in cmp.ranked] == [1, 2]
    assert all(r.status == "accepted" for r in cmp.ranked)
    first = cmp.ranked[0]
    assert first.cost_per_accepted_corpus_usd_minor == 123456.0
    assert first.package_total_usd_minor == 123456
    assert first.runs == 3 and first.accepted_runs == 3 and first.all_runs == 5
    assert first.experiments == ("exp-batch", "exp-batch-2", "exp-batch-3")
    # The rejected batch-16 is ten times faster than anything ranked: listed apart only.
    fast = [r for r in cmp.not_accepted if r.config_id == "batch-16"]
    assert fast and all(r.rank is None and r.status == "rejected" for r in fast)
    assert fast[0].median_warm_s < min(r.median_warm_s for r in cmp.ranked)
    assert fast[0].reason and "A0205" not in fast[0].reason and fast[0].runs == 2
    inc = [r for r in cmp.not_accepted if r.status == "incomplete"]
    assert {r.config_id for r in inc} == {"batch-1", "batch-4"} and all(r.reason for r in inc)
    others = dict(cmp.other_runs)
    assert others[f"{src}/broken.tar.gz"].startswith("unreadable: the archive cannot be read")
    assert others[f"{src}/team-c/garbage"].startswith("rejected: manifest.json")


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
    text = CliRunner().invoke(cli, ["compare", str(out)]).output
    assert "Ranked (accepted configurations only, A10.2)" in text and "batch-16" in text


def test_signed_comparison_verifies(archive, keys: Path, tmp_path: Path) -> None:
    _, out = archive
    report = tmp_path / "report"
    cmp = build_comparison_report(out, report, key=keys / "signer.key",
                                  cert=keys / "signer.pem", chain=keys / "ca.pem")
    names = sorted(p.relative_to(report).as_posix() for p in report.rglob("*") if p.is_file())
    assert names == ["archive/findings.parquet", "archive/index.parquet", "bundle.dsse.json",
                     "comparison.csv", "comparison.json", "report.html", "report.pdf",
                     "signer.pem"]
    lines = verify_report(report, keys / "ca.pem")
    assert lines[-2].startswith(f"OK: comparison of {cmp.runs} run(s), 2 configuration(s) "
                                "ranked")
    doc = verify_result(report, keys / "ca.pem")
    Draft202012Validator(schemas.load("verify_result")).validate(doc)
    assert doc["ok"] and doc["report"] == "comparison" and doc["ranked"] == 2
    assert doc["index_sha256"] == cmp.index_sha256 and "experiment_id" not in doc
    html = (report / "report.html").read_text(encoding="utf-8")
    assert "never ranked" in html and "batch-16" in html and "data:image/svg+xml" in html
    # A changed byte of the index the comparison rests on fails verification.
    (report / "archive" / "index.parquet").write_bytes(b"tampered")
    with pytest.raises(VerificationFailed, match=r"archive/index\.parquet"):
        verify_report(report, keys / "ca.pem")


def test_compare_refuses_what_is_not_a_finished_index(tmp_path: Path) -> None:
    with pytest.raises(AuditorError, match=r"no index\.parquet"):
        compare(tmp_path)
    res = CliRunner().invoke(cli, ["compare", str(tmp_path), "--key", __file__])
    assert res.exit_code != 0


def test_protocol_b_policies_are_ranked_apart_by_energy(tmp_path: Path) -> None:
    """A trial's wall time is not a warm pass's: in an archive of protocol A and B runs,
    each protocol has its own ranking, numbered from 1, B's by joules per inference."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "protocols" / "b"))
    import b_fixtures
    import b_runs

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
    assert all(r.package_total_usd_minor is None and r.p95_ms for r in b)
    doc = json.loads(CliRunner().invoke(cli, ["compare", str(out), "--format", "json"]).output)
    Draft202012Validator(schemas.load("comparison")).validate(doc)
    assert {r["protocol"] for r in doc["ranked"]} == {"accepted-corpus-cost",
                                                      "residency-energy"}
    text = CliRunner().invoke(cli, ["compare", str(out)]).output
    assert "Protocol B policies accepted (ranked apart" in text
    assert text.index("Ranked (accepted configurations only") < text.index("Protocol B")
