"""The report: its view model against a golden file, the HTML's structure and escaping, the
PDF's literal text, and the sections a procurement reader relies on (timings without p95,
memory with its source, economics that never rank a configuration that is not accepted).

`UPDATE_GOLDEN=1 pytest tests/test_report.py` rewrites tests/golden/report_viewmodel.json.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from runfactory import make_clean_run, read_json, read_rows, rehash, write_json, write_rows

from auditor.engine import audit
from auditor.model import Finding
from auditor.protocols import get
from auditor.report import html, plots, viewmodel
from auditor.report.build import StepTimer, build_report, render_report

GOLDEN = Path(__file__).parent / "golden" / "report_viewmodel.json"
GOLDEN_HTML = Path(__file__).parent / "golden" / "report.html"
HOSTILE = ("</td><script>alert(1)</script>", "<img src=x onerror=alert(1)>")
SECTIONS = ["summary", "findings", "measured", "timings", "memory", "economics", "appendix"]


A_RULES = get("accepted-corpus-cost").rules
"""Protocol A's rules: its report lists them (other protocols' are their tests')."""


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    return make_clean_run(tmp_path_factory.mktemp("clean") / "run")


@pytest.fixture(scope="module")
def clean_vm(clean) -> dict:
    view, result = audit(clean)
    return viewmodel.build_viewmodel(
        view, result, A_RULES, tool_version="0.0.0", generated_at="2026-01-01T00:00:00Z"
    )


def normalise(vm: dict) -> dict:
    """Drop what changes without the run changing: the rule set (as other rules land) and
    the number of rules run; timestamps and versions are fixed by the caller."""
    out = json.loads(json.dumps(vm))
    out.pop("rules")
    out["verdict"]["why"] = [
        re.sub(r"^\d+ rules run", "N rules run", w) for w in out["verdict"]["why"]
    ]
    return out


def test_viewmodel_matches_golden(clean_vm):
    got = normalise(clean_vm)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    assert GOLDEN.is_file(), "no golden file: run with UPDATE_GOLDEN=1 once"
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert got == want, (
        "view model differs from tests/golden/report_viewmodel.json "
        "(UPDATE_GOLDEN=1 to accept a deliberate change)"
    )


def normalise_html(page: str) -> str:
    """The rendered page minus what changes without the template or the run changing."""
    page = re.sub(r"data:image/svg\+xml;base64,[A-Za-z0-9+/=]+", "data:image/svg+xml;...", page)
    return re.sub(r"\b\d+ rules run", "N rules run", page)


def test_html_matches_golden_after_normalisation(clean_vm):
    vm = {**clean_vm, "rules": []}  # the appendix follows the rule set: tested apart
    page = normalise_html(html.render(vm, {"durations": "<svg/>"}))
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN_HTML.write_text(page, encoding="utf-8")
    assert GOLDEN_HTML.is_file(), "no golden file: run with UPDATE_GOLDEN=1 once"
    assert page == GOLDEN_HTML.read_text(encoding="utf-8"), (
        "HTML differs from tests/golden/report.html (UPDATE_GOLDEN=1 to accept)"
    )


def test_viewmodel_is_json_and_in_the_issue_order(clean_vm):
    json.dumps(clean_vm, allow_nan=False)
    keys = [k for k in clean_vm if k in SECTIONS]
    assert keys == SECTIONS
    assert [r["code"] for r in clean_vm["rules"]] == [r.code for r in A_RULES]
    assert all(r["doc"] and r["fix"] for r in clean_vm["rules"])


def test_timings_are_median_and_range_of_warm_passes_cold_apart(clean_vm, clean):
    rows = read_rows(clean)
    for t in clean_vm["timings"]:
        warm = sorted(
            float(r["elapsed_seconds"])
            for r in rows
            if r["variant_id"] == t["variant_id"] and r["phase"] == "warm"
        )
        cold = [
            float(r["elapsed_seconds"])
            for r in rows
            if r["variant_id"] == t["variant_id"] and r["phase"] == "cold"
        ]
        assert t["warm"]["median_s"] == pytest.approx(warm[len(warm) // 2])
        assert (t["warm"]["min_s"], t["warm"]["max_s"]) == (warm[0], warm[-1])
        assert t["cold"]["median_s"] == pytest.approx(cold[0])
        assert len(t["passes"]) == len(warm) + len(cold)
    assert "p95" not in json.dumps(clean_vm["timings"])


def test_cpu_memory_is_one_sentence_and_rss_is_per_process_never_per_variant(clean_vm):
    mem = clean_vm["memory"]
    assert mem["variants"] == []  # no table of "not recorded" rows
    assert mem["not_recorded"] == (
        "PyTorch allocator memory: not recorded for every pass (the "
        "passes ran on the CPU, where the allocator is not "
        "measured)."
    )
    (rss,) = mem["other"]
    assert (rss["name"], rss["source"]) == ("peak_rss", "resource.getrusage")
    # the warm passes of both variants ran in one process: one row, not one per variant
    cold, warm = rss["rows"]
    assert warm["process"] == "pid 5000" and warm["passes_text"] == "warm 1–5 of batch-1, batch-4"
    assert cold["process"] == "2 processes, one per pass"
    assert cold["passes_text"] == "cold 1 of batch-1, batch-4"
    assert " to " in cold["value_text"] and "MiB" in warm["value_text"]


def test_cuda_memory_comes_from_the_allocator(tmp_path):
    run = make_clean_run(tmp_path / "run", device="cuda:0", eval_size=10, warm_passes=3)
    view, result = audit(run)
    vm = viewmodel.build_viewmodel(view, result, [])
    rows = [r for m in vm["memory"]["variants"] for r in m["rows"]]
    assert rows and all(r["source"].startswith("torch.cuda allocator") for r in rows)
    assert vm["memory"]["not_recorded"] is None and vm["memory"]["other"] == []
    csv_peaks = [
        int(r["peak_reserved_bytes"])
        for r in read_rows(run)
        if r["variant_id"] == "batch-4" and r["phase"] == "warm"
    ]
    b4 = next(m for m in vm["memory"]["variants"] if m["variant_id"] == "batch-4")
    assert next(r for r in b4["rows"] if r["phase"] == "warm")["peak_reserved_bytes"] == max(
        csv_peaks
    )
    assert plots.memory(vm["memory"]["variants"]) is not None


def test_economics_of_an_accepted_run(clean_vm):
    e = clean_vm["economics"]
    assert e["accepted_corpora"] == 1
    (offer,) = e["offers"]
    assert offer["total_usd_minor"] == 123456  # price x 1 lot, never x passes
    # measured on the CPU: the accepted count says nothing of the offer's H100 (A9.5)
    assert offer["per_corpus_usd_minor"] is None
    assert offer["per_corpus_text"] == "not computed: the run measured CPU"
    assert offer["why_not"] == "other hardware"
    assert [c["variant_id"] for c in e["accepted_configurations"]] == ["batch-4", "batch-1"]
    assert plots.cost(e) is None  # no cost per corpus: said in words, never a price chart
    assert e["no_cost_per_corpus"] == "No offer is for the hardware the run measured (CPU)."
    assert e["not_accepted_configurations"] == []


def test_cost_per_accepted_corpus_only_for_the_gpu_measured(tmp_path):
    run = make_clean_run(tmp_path / "run", device="cuda:0", eval_size=10, warm_passes=5)
    offers = read_json(run, "economics/offers.json")
    other = {
        **offers["offers"][0],
        "offer_id": "b200-7d",
        "gpu_model": "NVIDIA B200",
        "gpus_per_lot": 2,
    }
    offers["offers"].append(other)
    write_json(run, "economics/offers.json", offers)
    rehash(run)
    view, result = audit(run)
    e = viewmodel.build_viewmodel(view, result, [])["economics"]
    by_id = {o["offer_id"]: o for o in e["offers"]}
    assert (
        by_id["h100-7d"]["measured_here"]
        and by_id["h100-7d"]["per_corpus_usd_minor"]
        == by_id["h100-7d"]["total_usd_minor"] / e["accepted_corpora"]
    )
    assert by_id["b200-7d"]["per_corpus_usd_minor"] is None
    assert "NVIDIA H100 80GB HBM3" in by_id["b200-7d"]["per_corpus_text"]
    assert plots.cost(e) is not None
    assert by_id["h100-7d"]["lot_use"] is None  # a one-GPU lot, one GPU used


def test_a_two_gpu_lot_with_one_gpu_used_is_pointed_out(tmp_path):
    run = make_clean_run(tmp_path / "run", device="cuda:0", eval_size=10, warm_passes=5)
    offers = read_json(run, "economics/offers.json")
    offers["offers"][0]["gpus_per_lot"] = 2
    write_json(run, "economics/offers.json", offers)
    rehash(run)
    view, result = audit(run)
    (offer,) = viewmodel.build_viewmodel(view, result, [])["economics"]["offers"]
    assert "used 1 GPU(s)" in offer["lot_use"] and "holds 2" in offer["lot_use"]


def test_a_rejected_run_ranks_nothing_and_gives_only_package_cost(clean):
    view, result = audit(clean)
    bad = dataclasses.replace(
        result,
        findings=(
            Finding("A0201", "error", "A2.1", "an ID is missing", "outputs/batch-1/warm-1.jsonl"),
        ),
    )
    vm = viewmodel.build_viewmodel(view, bad, [])
    e = vm["economics"]
    assert e["accepted_configurations"] == []
    assert {c["variant_id"] for c in e["not_accepted_configurations"]} == {"batch-1", "batch-4"}
    assert e["accepted_corpora"] is None
    assert e["offers"][0]["per_corpus_usd_minor"] is None
    assert e["offers"][0]["total_usd_minor"] == 123456
    assert vm["verdict"]["value"] == "rejected"
    assert any("A0201" in w for w in vm["verdict"]["why"])


def test_offers_override_and_per_gpu_quotes_are_not_costed(clean):
    view, result = audit(clean)
    offers = {
        "schema_version": "1",
        "offers": [
            {
                "offer_id": "b200-gpu",
                "gpu_model": "B200",
                "duration_days": 30,
                "price_per_lot_usd_minor": 1000,
                "gpus_per_lot": 2,
                "price_basis": "gpu",
            },
            {
                "offer_id": "b200-lot",
                "gpu_model": "B200",
                "duration_days": 30,
                "price_per_lot_usd_minor": 900_000,
                "gpus_per_lot": 2,
                "price_basis": "lot",
            },
        ],
    }
    vm = viewmodel.build_viewmodel(view, result, [], inputs={"offers": (offers, "mine.json")})
    by_id = {o["offer_id"]: o for o in vm["economics"]["offers"]}
    assert by_id["b200-gpu"]["total_usd_minor"] is None
    assert "priced per GPU" in by_id["b200-gpu"]["problem"]
    assert by_id["b200-lot"]["total_usd_minor"] == 900_000
    assert vm["economics"]["offers_source"] == "mine.json"


def test_html_sections_in_order_and_verdict_banner(clean_vm):
    page = html.render(clean_vm, {})
    ids = re.findall(r'<section id="([a-z]+)"', page)
    assert ids == SECTIONS
    assert 'class="verdict verdict-accepted"' in page
    assert "Verdict: ACCEPTED" in page
    assert not re.search(r"<th>[^<]*p95", page)  # no p95 column, ever
    assert "<script" not in page


def test_plots_are_deterministic_svg(clean_vm):
    a = plots.durations(clean_vm["timings"])
    b = plots.durations(clean_vm["timings"])
    assert a == b and a.startswith("<svg")
    assert "batch-1" in a  # text kept as text (svg.fonttype none)
    assert plots.cost(clean_vm["economics"]) == plots.cost(clean_vm["economics"])


def test_html_normalised_is_stable(clean):
    """Two renders of one run differ only in the timestamp we pass in."""
    view, result = audit(clean)
    pages = [
        render_report(view, result, generated_at=ts, timer=StepTimer())[1] for ts in ("T1", "T2")
    ]
    assert pages[0] != pages[1]
    assert pages[0].replace("generated T1", "") == pages[1].replace("generated T2", "")


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("hostile")
    run = make_clean_run(base / "run", eval_size=10, warm_passes=2)
    rows = read_rows(run)
    for i, r in enumerate(rows):  # one note per row, so none is factored out as common
        r["notes"] = f"row {i}: {HOSTILE[0]}\n{HOSTILE[1]}"
    write_rows(run, rows)
    m = read_json(run, "manifest.json")
    m["notes"] = "\n".join(HOSTILE)
    m["experiment_id"] = HOSTILE[0]  # breaks the schema: shown in a finding, still escaped
    m["task"]["unit_of_work"] = HOSTILE[1]
    m["timer_scope_description"] = HOSTILE[0]
    m["corpus"]["source"] = HOSTILE[1]
    m["quality_rule"]["reference"]["name"] = HOSTILE[0]
    m["pass_order_method"] = HOSTILE[1]
    write_json(run, "manifest.json", m)
    env = read_json(run, "environment.json")
    env["code_version"] = HOSTILE[0]
    env["host"]["platform"] = HOSTILE[1]
    write_json(run, "environment.json", env)
    offers = read_json(run, "economics/offers.json")
    offers["offers"][0]["provider"] = HOSTILE[1]
    write_json(run, "economics/offers.json", offers)
    rehash(run)
    out = base / "report"
    build_report(run, out)
    return out


def test_hostile_text_is_escaped_in_html(hostile_report):
    page = (hostile_report / "report.html").read_text(encoding="utf-8")
    # notes x rows, manifest notes/id/scope/reference, environment code version: 9 or more
    assert page.count("&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;") >= 9
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") >= 9
    assert "<script" not in page
    assert "<img src=x" not in page
    assert "onerror=alert(1)>" not in page


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="pdftotext (poppler-utils) absent")
def test_hostile_text_is_literal_in_pdf(hostile_report):
    text = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(hostile_report / "report.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert HOSTILE[0] in text
    assert HOSTILE[1] in text


def test_a_broken_run_still_renders(tmp_path):
    run = make_clean_run(tmp_path / "run", eval_size=10, warm_passes=2)
    (run / "resultats-bruts.csv").unlink()
    (run / "timeline.jsonl").write_text("{not json\n")
    (run / "environment.json").unlink()
    out = tmp_path / "report"
    result = build_report(run, out)
    assert result.verdict in ("rejected", "incomplete")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "No results table could be read" in page
    assert f"verdict-{result.verdict}" in page
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF-")
    assert json.loads((out / "audit.json").read_text())["verdict"] == result.verdict


def test_report_dir_replaced_atomically_and_foreign_dirs_refused(tmp_path):
    clean = make_clean_run(tmp_path.parent / f"{tmp_path.name}-run", eval_size=10, warm_passes=2)
    out = tmp_path / "report"
    build_report(clean, out)
    first = (out / "report.html").read_text()
    build_report(clean, out)  # a previous report is replaced
    assert (out / "report.html").read_text().split("generated")[0] == first.split("generated")[0]
    assert [p.name for p in tmp_path.iterdir()] == ["report"]  # no temp dir left behind
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep me")
    from auditor.errors import AuditorError

    with pytest.raises(AuditorError, match="not a report"):
        build_report(clean, foreign)
    assert (foreign / "mine.txt").read_text() == "keep me"


def test_a_failed_pass_keeps_its_row_but_never_enters_a_summary(tmp_path):
    from runfactory import read_jsonl, write_jsonl

    run = make_clean_run(tmp_path / "run", eval_size=10, warm_passes=5)
    timeline = read_jsonl(run, "timeline.jsonl")
    oom = next(
        e
        for e in timeline
        if e["variant_id"] == "batch-4" and e["phase"] == "warm" and e["run_index"] == 2
    )
    oom["status"] = "oom"
    oom["incident"] = {"kind": "oom", "message": "CUDA out of memory"}
    write_jsonl(run, "timeline.jsonl", timeline)
    rehash(run)
    view, result = audit(run)
    vm = viewmodel.build_viewmodel(view, result, [])
    b4 = next(t for t in vm["timings"] if t["variant_id"] == "batch-4")
    assert (b4["warm"]["ok"], b4["warm"]["passes"], b4["failed"]) == (4, 5, 1)
    ok_times = sorted(
        p["elapsed_seconds"] for p in b4["passes"] if p["phase"] == "warm" and p["status"] == "ok"
    )
    assert len(ok_times) == 4
    assert b4["warm"]["median_s"] == pytest.approx((ok_times[1] + ok_times[2]) / 2)
    failed = next(p for p in b4["passes"] if p["status"] == "oom")
    assert failed["elapsed_seconds"] > 0  # time to failure kept, never replaced by zero
    page = html.render(vm, {})
    assert re.search(r'<td class="r bad">oom after \d\.\d{3} s</td>', page)
