"""Page 1 and the findings of the report: the executive summary a buyer decides from (per
variant accepted or not, median and range, throughput, cost per accepted corpus; per offer
the cost or why not; what to buy; how sure to be), findings grouped by cause with their
evidence, consequences and what to do, and the numbers printed so that their arithmetic
adds up.

`UPDATE_GOLDEN=1` rewrites tests/protocols/a/golden/rejected_findings.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import runfactory as rf

from auditor import protocol_text
from auditor.engine import audit
from auditor.protocols import get
from auditor.protocols.a.report.measured import quality_rule
from auditor.protocols.a.report.text import corpus_name, decimals_for
from auditor.protocols.a.summary import LOAD_SHARE, SPREAD_SHARE
from auditor.report import html, viewmodel

GOLDEN_REJECTED = Path(__file__).parent / "golden" / "rejected_findings.json"
CPU_OFFER = {
    "offer_id": "cpu-7d",
    "provider": "example",
    "gpu_model": "none (CPU only)",
    "device_class": "cpu",
    "machine": "16 vCPU",
    "duration_days": 7,
    "price_per_lot_usd_minor": 1500,
    "gpus_per_lot": 0,
    "price_basis": "lot",
    "example": True,
}


A_RULES = get("accepted-corpus-cost").rules
"""Protocol A's rules: its report lists them (other protocols' are their tests')."""


def _vm(root: Path, **kw) -> dict:
    view, result = audit(root)
    return viewmodel.build_viewmodel(view, result, A_RULES, **kw)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean CPU run whose offers include one for a CPU machine."""
    root = rf.make_clean_run(tmp_path_factory.mktemp("clean") / "run", eval_size=20)
    offers = rf.read_json(root, "economics/offers.json")
    offers["offers"].append(CPU_OFFER)
    rf.write_json(root, "economics/offers.json", offers)
    rf.rehash(root)
    return root


@pytest.fixture(scope="module")
def rejected(tmp_path_factory: pytest.TempPathFactory, clean: Path) -> Path:
    """The clean run with one ID of one output file answered twice (so one is missing), the
    row and the archived set check still claiming the pass accepted."""
    root = tmp_path_factory.mktemp("rejected") / "run"
    shutil.copytree(clean, root)
    lines = rf.read_jsonl(root, "outputs/batch-4/warm-2.jsonl")
    lines[3] = {**lines[3], "id": lines[2]["id"]}
    rf.write_jsonl(root, "outputs/batch-4/warm-2.jsonl", lines)
    rf.rehash(root)
    return root


def test_page_one_says_what_is_accepted_how_fast_and_what_it_costs(clean: Path) -> None:
    vm = _vm(clean)
    s = vm["summary"]
    assert vm["verdict"]["value"] == "accepted" and len(vm["verdict"]["why"]) == 2
    assert s["headline"] == "2 of 2 configuration(s) accepted"
    assert [c["key"] for c in s["columns"]] == [
        "config",
        "accepted",
        "median",
        "throughput",
        "cost",
    ]
    by = {r["cells"]["config"]: r for r in s["rows"]}
    for t in vm["timings"]:
        row = by[t["variant_id"]]
        w = t["warm"]
        assert row["cells"]["accepted"] == "accepted" and row["tone"] == "ok"
        assert (
            row["cells"]["median"] == f"{w['median_s']:.3f} s ({w['min_s']:.3f}–{w['max_s']:.3f})"
        )
        assert row["values"]["throughput_per_s"] == pytest.approx(20 / w["median_s"])
        assert row["cells"]["cost"] == "$15.00 (cpu-7d)"  # 1500 cents / 1 accepted corpus
    offers = {r["cells"]["offer"]: r["cells"] for r in s["offers"]["rows"]}
    assert offers["cpu-7d (example)"]["per_corpus"] == "$15.00"
    assert offers["h100-7d (example)"]["per_corpus"] == "other hardware"
    assert offers["h100-7d (example)"]["total"] == "$1,234.56"
    assert s["decision"][0].startswith(
        "Cheapest per accepted corpus: offer cpu-7d, CPU only (16 vCPU): $15.00 per accepted corpus"
    )
    assert "an example price, not a quote" in s["decision"][0]
    assert s["decision"][1].startswith("Fastest accepted configuration: batch-4")
    assert [c["kind"] for c in s["cautions"]] == ["prices"]  # a steady, idle clean run
    page = html.render(vm, {})
    first = page.split('<section id="findings">')[0]
    for text in ("Verdict: ACCEPTED", "$15.00 (cpu-7d)", "texts/s", "How sure to be"):
        assert text in first


def test_the_summary_and_the_archive_s_run_summary_are_one_derivation(clean: Path) -> None:
    view, result = audit(clean)
    summary = get(result.protocol).summarize(view, result)
    vm = viewmodel.build_viewmodel(view, result, [])
    rows = {r["cells"]["config"]: r["values"] for r in vm["summary"]["rows"]}
    for c in summary.configurations:
        v = rows[c.config_id]
        assert (v["median_s"], v["min_s"], v["max_s"], v["throughput_per_s"]) == (
            c.median_s,
            c.min_s,
            c.max_s,
            c.throughput_per_s,
        )
        best = min(
            (o for o in c.costs if o.cost_per_accepted_corpus_usd_minor is not None),
            key=lambda o: o.cost_per_accepted_corpus_usd_minor,
        )
        assert (v["best_offer"], v["best_cost_per_corpus_usd_minor"]) == (
            best.offer_id,
            best.cost_per_accepted_corpus_usd_minor,
        )
        why = {o.offer_id: o.why_not for o in c.costs}
        assert why == {"h100-7d": "other hardware", "cpu-7d": None}


def test_a_cpu_offer_is_not_matched_against_a_gpu_run(tmp_path: Path) -> None:
    root = rf.make_clean_run(tmp_path / "run", device="cuda:0", eval_size=10)
    offers = rf.read_json(root, "economics/offers.json")
    offers["offers"].append(CPU_OFFER)
    rf.write_json(root, "economics/offers.json", offers)
    rf.rehash(root)
    by = {o["offer_id"]: o for o in _vm(root)["economics"]["offers"]}
    assert by["cpu-7d"]["per_corpus_usd_minor"] is None
    assert by["cpu-7d"]["why_not"] == "other hardware"
    assert by["h100-7d"]["per_corpus_usd_minor"] == 123456.0


def test_a_rejected_run_groups_its_findings_by_cause(rejected: Path) -> None:
    vm = _vm(rejected)
    f = vm["findings"]
    got = {
        "verdict": vm["verdict"],
        "causes": f["causes"],
        "summary_rows": [r["cells"] for r in vm["summary"]["rows"]],
        "decision": vm["summary"]["decision"],
    }
    got["verdict"]["why"][1] = re.sub(r"^\d+ rules run", "N rules run", got["verdict"]["why"][1])
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN_REJECTED.write_text(
            json.dumps(got, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    assert json.loads(GOLDEN_REJECTED.read_text(encoding="utf-8")) == got, (
        "differs from golden/rejected_findings.json (UPDATE_GOLDEN=1 to accept)"
    )
    # one duplicated ID: one cause, whatever it breaks listed under it
    (cause,) = f["causes"]
    assert f["total"] > 2 and cause["findings"] == f["total"]
    assert cause["code"] == "A0201" and cause["artifacts"] == ["outputs/batch-4/warm-2.jsonl"]
    assert cause["affects"] == ["batch-4 warm pass 2"]
    lines = rf.read_jsonl(rejected, "outputs/batch-4/warm-2.jsonl")
    evidence = " ".join(i["evidence"] for i in cause["items"])
    assert lines[2]["id"] in evidence and "ev-000003" in evidence  # repeated and missing ID
    assert {q["code"] for q in cause["consequences"]} >= {"A0206"}
    assert cause["fix"] == next(r.fix for r in A_RULES if r.code == "A0201")
    assert vm["summary"]["rows"][1]["cells"]["accepted"] == "no: a pass is not accepted"
    assert vm["summary"]["rows"][0]["cells"]["accepted"] == "no: run rejected (its own passes pass)"
    assert vm["verdict"]["why"][0].startswith(
        "A0201 (each expected ID exactly once, protocol A2.1) fails in "
        "outputs/batch-4/warm-2.jsonl (batch-4 warm pass 2)"
    )


def test_findings_of_one_rule_on_many_files_sharing_an_id_are_one_cause(
    clean: Path, tmp_path: Path
) -> None:
    root = tmp_path / "run"
    shutil.copytree(clean, root)
    for out in sorted((root / "outputs/batch-1").glob("warm-*.jsonl")):
        rel = out.relative_to(root).as_posix()
        rf.write_jsonl(root, rel, rf.read_jsonl(root, rel)[:-1])  # the same ID lost
    rf.rehash(root)
    causes = _vm(root)["findings"]["causes"]
    a0201 = [c for c in causes if c["code"] == "A0201"]
    assert len(a0201) == 1 and len(a0201[0]["artifacts"]) == 5
    assert len(a0201[0]["affects"]) == 5


def test_unstable_timings_and_concurrent_load_are_pointed_out(clean: Path, tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(clean, root)
    rows = rf.read_rows(root)
    timeline = rf.read_jsonl(root, "timeline.jsonl")
    for r in rows:
        if r["variant_id"] == "batch-1" and r["phase"] == "warm" and r["run_index"] == "5":
            r["elapsed_seconds"] = "1.5"
    for e in timeline:
        if e["variant_id"] == "batch-1" and e["phase"] == "warm" and e["run_index"] == 5:
            e["elapsed_seconds"] = 1.5
    rf.write_rows(root, rows)
    rf.write_jsonl(root, "timeline.jsonl", timeline)
    env = rf.read_json(root, "environment.json")
    env["concurrent_load"]["loadavg"] = [1 + LOAD_SHARE * 16 + 0.5, 1.0, 1.0]
    rf.write_json(root, "environment.json", env)
    rf.rehash(root)
    view, result = audit(root)
    cautions = viewmodel.build_viewmodel(view, result, [])["summary"]["cautions"]
    kinds = [c["kind"] for c in cautions]
    assert kinds == ["unstable", "load", "prices"]
    assert "batch-1" in cautions[0]["text"] and "batch-4" not in cautions[0]["text"]
    assert f"{100 * SPREAD_SHARE:.0f} %" in cautions[0]["text"]
    assert "on 16 CPUs" in cautions[1]["text"]


def test_the_quality_rule_is_printed_so_that_its_arithmetic_adds_up() -> None:
    manifest = {
        "quality_rule": {
            "metric": "macro_f1",
            "threshold": 0.6241,
            "tolerance": 0.1,
            "tolerance_direction": "max_decrease",
            "reference": {"name": "tune", "value": 0.7241608828108811},
        }
    }
    qr = quality_rule(manifest, [0.7397])
    m = re.search(r"reference ([\d.]+) - tolerance ([\d.]+) = ([\d.]+)", qr["text"])
    from decimal import Decimal

    assert Decimal(m[1]) - Decimal(m[2]) == Decimal(m[3])
    assert "macro_f1 >= 0.6241 and" in qr["text"]
    # a value just under the floor must not print as equal to it
    near = quality_rule(manifest, [0.62415])
    assert near["decimals"] >= 5
    assert f"{0.62415:.{near['decimals']}f}" != f"{near['floor']:.{near['decimals']}f}"
    assert decimals_for([0.5, 0.25]) == 4


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("/home/alice/data/my corpus.jsonl", "my corpus.jsonl"),
        ("C:\\Users\\bob\\corpus.csv", "corpus.csv"),
        ("data/eval.parquet", "eval.parquet"),
        ("embedded default: first paragraphs of Python 3.11 docstrings", None),
    ],
)
def test_a_local_corpus_path_is_shown_as_its_file_name(source: str, shown: str | None) -> None:
    assert corpus_name(source) == (shown or source)


def test_the_appendix_quotes_exactly_the_rules_the_report_cites(
    clean: Path, rejected: Path
) -> None:
    for root in (clean, rejected):
        vm = _vm(root)
        page = html.render(vm, {})
        body = page.split('<section id="appendix"')[0]
        cited = set(viewmodel.REF.findall(re.sub(r"<[^>]+>", "", body)))
        refs = [a["ref"] for a in vm["appendix"]]
        assert set(refs) == cited
        order = list(protocol_text.rules())
        assert refs == sorted(refs, key=order.index)  # in the protocol text's order
        assert all(a["segments"] and a["group"] for a in vm["appendix"])
        assert "**" not in page and "`" not in page and "<a id=" not in page  # no Markdown
    assert "A2.1" in {a["ref"] for a in _vm(rejected)["appendix"]}


def test_rule_codes_and_column_names_never_break() -> None:
    text = html.nobreak("A0205: corpus_accepted in outputs/batch-4/warm-2.jsonl (A2.5) <x>")
    assert '<span class="nb">A0205</span>' in text
    assert '<span class="nb">corpus_accepted</span>' in text
    assert '<span class="nb">A2.5</span>' in text
    assert '<span class="nb">outputs</span>/<wbr><span class="nb">batch-4</span>' in text
    assert "&lt;x&gt;" in text


def test_a_missing_file_is_one_cause_and_skipped_rules_are_grouped_by_reason(
    clean: Path, tmp_path: Path
) -> None:
    root = tmp_path / "run"
    shutil.copytree(clean, root)
    (root / "environment.json").unlink()
    vm = _vm(root)
    (cause,) = [c for c in vm["findings"]["causes"] if "environment.json" in c["artifacts"]]
    assert {i["code"] for i in cause["items"]} == {"A0005", "A0006"}
    reasons = [s["reason"] for s in vm["findings"]["skipped"]]
    assert len(reasons) == len(set(reasons)) and vm["findings"]["skipped"][0]["codes"]
    assert vm["verdict"]["value"] == "incomplete"


def test_variants_read_in_natural_order_everywhere(tmp_path: Path) -> None:
    """batch-1, batch-8, batch-32: page 1, the timings and the memory section sort the
    batch sizes as numbers, never as text (batch-1, batch-32, batch-8)."""
    from auditor.present import natural_key

    assert sorted(["batch-32", "batch-1", "batch-8"], key=natural_key) == [
        "batch-1",
        "batch-8",
        "batch-32",
    ]
    root = rf.make_clean_run(
        tmp_path / "run", eval_size=10, variants=("batch-32", "batch-1", "batch-8")
    )
    vm = _vm(root)
    want = ["batch-1", "batch-8", "batch-32"]
    assert [r["cells"]["config"] for r in vm["summary"]["rows"]] == want
    assert [t["variant_id"] for t in vm["timings"]] == want
    text = html.render(vm, {})
    at = [text.find(f">{v}<") for v in want]
    assert min(at) >= 0 and at == sorted(at)
