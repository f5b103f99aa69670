"""`audit report --replay N`: the replay result is a section of the report, `replay.json` is in
the signed bundle and attached to the PDF, the signed predicate records the replay verdict,
and `audit verify` passes and names it."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

import runfactory as rf
from replay_helpers import copy
from test_replay_a import forge

import schemas
from auditor.report.build import build_report
from auditor.report.keygen import keygen
from auditor.report.verify import verify_report, verify_result


def test_report_carries_a_signed_replay(run_a: Path, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keygen(keys)
    root = copy(run_a, tmp_path)
    forge(root)
    out = tmp_path / "report"
    result = build_report(
        root,
        out,
        key=keys / "signer.key",
        cert=keys / "signer.pem",
        chain=keys / "ca.pem",
        replay_sample=40,
    )
    assert result.verdict == "accepted"  # the audit's own verdict: the forgery passes it
    replayed = json.loads((out / "replay.json").read_text())
    assert list(schemas.validator("replay_result").iter_errors(replayed)) == []
    assert replayed["verdict"] == "rejected" and replayed["sample"]["drawn"] == 40
    page = (out / "report.html").read_text()
    assert '<section id="replay">' in page and "REPLAY REJECTED" in page
    assert "RA06" in page and "RA06" in (out / "rules.txt").read_text()
    lines = verify_report(out, keys / "ca.pem")
    assert lines[-2].endswith("verdict accepted, replay rejected")
    doc = verify_result(out, keys / "ca.pem")
    assert doc["ok"] and doc["replay_verdict"] == "rejected"
    assert list(schemas.validator("verify_result").iter_errors(doc)) == []
    envelope = json.loads((out / "bundle.dsse.json").read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["predicate"]["replay"]["verdict"] == "rejected"
    assert "replay.json" in {s["name"] for s in statement["subject"]}
    if shutil.which("pdfdetach"):
        listed = subprocess.run(
            ["pdfdetach", "-list", str(out / "report.pdf")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "replay.json" in listed


def test_report_without_replay_has_none(run_a: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    build_report(run_a, out)
    assert not (out / "replay.json").exists()
    assert '<section id="replay">' not in (out / "report.html").read_text()


def test_the_section_is_one_line_when_every_file_agrees(run_a: Path, tmp_path: Path) -> None:
    from auditor.replay.core import replay
    from auditor.report.replay_section import section

    agreed = replay(run_a, sample_size=20)
    s = section(agreed)
    assert agreed.verdict == "accepted" and s["rows"] == []
    n = len(agreed.files)
    assert s["agreed"].startswith(f"{n} answers file(s) agree with the archived model")
    assert "each 20/20 (100.0%)" in s["agreed"]
    # one file forged: the table holds that file only, the others stay one line
    root = copy(run_a, tmp_path)
    rel = "outputs/batch-1/warm-2.jsonl"
    labels = sorted({line["label"] for line in rf.read_jsonl(root, rel)})
    lines = rf.read_jsonl(root, rel)
    for line in lines:
        line["label"] = labels[(labels.index(line["label"]) + 1) % len(labels)]
    rf.write_jsonl(root, rel, lines)
    s = section(replay(root, sample_size=20))
    assert [r["cells"]["file"] for r in s["rows"]] == [rel]
    assert s["agreed"].startswith(f"{n - 1} answers file(s) agree")
    out = tmp_path / "report"
    build_report(root, out, replay_sample=20)
    page = (out / "report.html").read_text()
    replay_part = page.split('<section id="replay">')[1].split("</section>")[0]
    assert replay_part.count("</tr>") == 2  # the header and the one forged file


def test_the_replay_method_is_said_after_the_findings_not_on_page_1(
    run_a: Path, tmp_path: Path
) -> None:
    """Page 1 keeps the replay's verdict; how it was done (sample, tokenizer, model hash) is
    its own section after the findings, so it never spills a few lines onto a page of its
    own between the summary and the findings."""
    out = tmp_path / "report"
    build_report(run_a, out, replay_sample=20)
    page = (out / "report.html").read_text()
    summary = page.split('<section id="replay">')[1].split("</section>")[0]
    method = page.split('<section id="replay-method">')[1].split("</section>")[0]
    sha = json.loads((out / "replay.json").read_text())["model"]["sha256"]
    assert sha in method and sha not in summary
    assert "How the replay was done" in summary  # the pointer
    assert page.index('<section id="findings">') < page.index('<section id="replay-method">')
