"""Every rule, one mutation: the clean run passes; each mutation of it (manifest rehashed, so
only the rule itself can catch it) raises that rule and no other error. A meta-test keeps the
registry honest: unique codes, protocol refs, three-part docstrings, a mutation per rule."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import runfactory as rf
from paths import SHARED

from auditor.engine import audit, run_check
from auditor.protocols import get, get_rule
from auditor.protocols.a.rules.a0709_memory_stats_agree import COUNTERS as A0709_COUNTERS

Mutation = Callable[[Path], None]


def all_rules() -> list:
    """Protocol A's rules (other protocols' are their own tests')."""
    return list(get("accepted-corpus-cost").rules)

_TEMPLATES: dict[str, Path] = {}


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("templates")
    _TEMPLATES["cpu"] = rf.make_clean_run(base / "cpu")
    _TEMPLATES["cuda"] = rf.make_clean_run(base / "cuda", device="cuda:0")
    _TEMPLATES["b200"] = rf.make_clean_run(base / "b200", device="cuda:0", gpus_per_lot=2)
    _TEMPLATES["cpu+claims"] = rf.make_clean_run(base / "cpu-claims", claims=True)
    _TEMPLATES["cuda+claims"] = rf.make_clean_run(base / "cuda-claims", device="cuda:0",
                                                  claims=True)
    return _TEMPLATES


def _row(rows: list[dict], variant: str, phase: str, run: int) -> dict:
    return next(r for r in rows if (r["variant_id"], r["phase"], r["run_index"])
                == (variant, phase, str(run)))


def _row_no(rows: list[dict], variant: str, phase: str, run: int) -> int:
    return rows.index(_row(rows, variant, phase, run)) + 1


def edit_rows(root: Path, fn: Callable[[list[dict]], None]) -> None:
    rows = rf.read_rows(root)
    fn(rows)
    rf.write_rows(root, rows)
    rf.rehash(root)


def edit_json(root: Path, rel: str, fn: Callable[[dict], None], rehash: bool = True) -> None:
    doc = rf.read_json(root, rel)
    fn(doc)
    rf.write_json(root, rel, doc)
    if rehash:
        rf.rehash(root)


def edit_timeline(root: Path, fn: Callable[[list[dict]], None]) -> None:
    entries = rf.read_jsonl(root, "timeline.jsonl")
    fn(entries)
    rf.write_jsonl(root, "timeline.jsonl", entries)
    rf.rehash(root)


def edit_output(root: Path, rel: str, fn: Callable[[list[dict]], list[dict] | None]) -> None:
    lines = rf.read_jsonl(root, rel)
    out = fn(lines)
    rf.write_jsonl(root, rel, lines if out is None else out)


def _set(d: dict, path: str, value: object) -> None:
    *head, last = path.split("/")
    for k in head:
        d = d[int(k)] if isinstance(d, list) else d[k]
    d[last] = value


def _shift(ts: str, seconds: float) -> str:
    t = datetime.fromisoformat(ts.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    return t.isoformat().replace("+00:00", "Z")


# -- mutations, one per rule -------------------------------------------------------------

def m_a0001(root: Path) -> None:
    edit_json(root, "manifest.json", lambda m: _set(m, "quality_rule/threshold", "0.6"),
              rehash=False)


def m_a0002(root: Path) -> None:
    edit_json(root, "environment.json", lambda e: _set(e, "gpu_count", "one"))


def m_a0003(root: Path) -> None:
    with open(root / "environment.json", "a", encoding="utf-8") as fh:
        fh.write("\n")


def m_a0004(root: Path) -> None:
    (root / "notes.txt").write_text("added after the run\n")


def m_a0005(root: Path) -> None:
    edit_json(root, "manifest.json", lambda m: m["artifacts"].update({"model/w.bin": "0" * 64}),
              rehash=False)


def m_a0006(root: Path) -> None:
    (root / "checks/set-check.json").unlink()
    rf.rehash(root)


def m_a0007(root: Path) -> None:
    edit_json(root, "manifest.json", lambda m: _set(m, "status", "aborted"), rehash=False)


def m_a0101(root: Path) -> None:
    edit_rows(root, lambda rows: rows[2].update(quality_threshold="0.5"))


def m_a0102(root: Path) -> None:
    edit_rows(root, lambda rows: rows[1].update(model_revision="sha256:another"))


def m_a0103(root: Path) -> None:
    with open(root / "corpus/splits/tune_ids.txt", "a", encoding="utf-8") as fh:
        fh.write("ev-000003\n")
    rf.rehash(root)


def m_a0104(root: Path) -> None:
    (root / "outputs/batch-4/warm-5.jsonl").unlink()
    rf.rehash(root)


def _keep_claims(root: Path, variant: str, phase: str, run: int, *cols: str) -> None:
    n = _row_no(rf.read_rows(root), variant, phase, run)
    rf.recompute_claims(root, keep=[(n, c) for c in cols])


def m_a0201(root: Path) -> None:
    def dup(lines: list[dict]) -> None:
        lines[5]["id"] = lines[4]["id"]
    edit_output(root, "outputs/batch-1/warm-2.jsonl", dup)
    _keep_claims(root, "batch-1", "warm", 2, "ids_match", "corpus_accepted")


def m_a0202(root: Path) -> None:
    edit_output(root, "outputs/batch-1/warm-2.jsonl",
                lambda lines: [*lines, {"id": "tu-00001", "label": "neutral"}])
    _keep_claims(root, "batch-1", "warm", 2, "ids_match", "corpus_accepted")


def m_a0203(root: Path) -> None:
    edit_output(root, "outputs/batch-1/warm-2.jsonl",
                lambda lines: lines[7].update(label="Positive"))
    _keep_claims(root, "batch-1", "warm", 2, "format_valid", "corpus_accepted")


def m_a0204(root: Path) -> None:
    edit_output(root, "outputs/batch-1/warm-2.jsonl",
                lambda lines: [dict(x, label="negative") for x in lines])
    _keep_claims(root, "batch-1", "warm", 2, "corpus_accepted")


def m_a0205(root: Path) -> None:
    edit_rows(root, lambda rows: rows[3].update(quality_value="0.99"))


def m_a0206(root: Path) -> None:
    edit_json(root, "checks/set-check.json",
              lambda s: _set(s, "passes/0/missing_ids", ["ev-000001"]))


def m_a0207(root: Path) -> None:
    with open(root / "corpus/expected_ids.txt", "a", encoding="utf-8") as fh:
        fh.write("ev-000002\n")
    rf.recompute_claims(root)


def m_a0208(root: Path) -> None:
    rf.write_jsonl(root, "corpus/references.jsonl",
                   rf.read_jsonl(root, "corpus/references.jsonl")[1:])
    rf.recompute_claims(root)


def m_a0301(root: Path) -> None:
    doc = rf.read_json(root, "manifest.json")
    doc["variants"][1]["precision"] = "float16"
    rf.write_json(root, "manifest.json", doc)
    edit_rows(root, lambda rows: [r.update(precision="float16") for r in rows
                                  if r["variant_id"] == "batch-4"])


def m_a0302(root: Path) -> None:
    edit_rows(root, lambda rows: _row(rows, "batch-4", "warm", 2).update(batch="8"))


def m_a0303(root: Path) -> None:
    for p in sorted((root / "outputs/batch-4").glob("*.jsonl")):
        rel = p.relative_to(root).as_posix()
        edit_output(root, rel, lambda lines: lines[::-1])
    rf.recompute_claims(root)


def m_a0304(root: Path) -> None:
    edit_json(root, "manifest.json", lambda m: _set(m, "corpus/truncation/context_tokens", 256),
              rehash=False)


def m_a0401(root: Path) -> None:
    edit_rows(root, lambda rows: rows[0].update(torch_version="2.3.0"))


def m_a0402(root: Path) -> None:
    edit_rows(root, lambda rows: rows[4].update(gpu_count="2"))


def m_a0403(root: Path) -> None:
    pass  # the b200 template: a lot of two GPUs, one used


def m_a0501(root: Path) -> None:
    def shorten(t: list[dict]) -> None:
        t[6]["ended_at"] = _shift(t[6]["started_at"], 0.5)
    edit_timeline(root, shorten)


def m_a0502(root: Path) -> None:
    rows = rf.read_rows(root)
    r = _row(rows, "batch-1", "cold", 1)
    r["elapsed_seconds"] = str(round(float(r["elapsed_seconds"]) + 1.25, 6))
    rf.write_rows(root, rows)

    def widen(t: list[dict]) -> None:
        t[0]["started_at"] = _shift(t[0]["started_at"], -1.25)
    edit_timeline(root, widen)


def m_a0601(root: Path) -> None:
    edit_timeline(root, lambda t: t[2].update(iterations=2))


def m_a0602(root: Path) -> None:
    edit_timeline(root, lambda t: t[7].update(started_at=_shift(t[7]["started_at"], -5),
                                              ended_at=_shift(t[7]["ended_at"], -5)))


def m_a0603(root: Path) -> None:  # 5 ms: within the full-chain window's slack (A0501)
    edit_rows(root, lambda rows: rows[5].update(
        elapsed_seconds=str(round(float(rows[5]["elapsed_seconds"]) - 0.005, 6))))


def edit_claims(root: Path, fn: Callable[[dict], None]) -> None:
    edit_json(root, "claims.json", fn)


def m_a0604(root: Path) -> None:
    edit_claims(root, lambda c: c["summaries"][0].update(statistic="p95"))


def m_a0605(root: Path) -> None:
    rows = rf.read_rows(root)
    rows.remove(_row(rows, "batch-4", "cold", 1))
    rf.write_rows(root, rows)
    for rel in ("outputs/batch-4/cold-1.jsonl", "traces/memory/batch-4/cold-1.json",
                "evidence/placement/batch-4/cold-1.json"):
        (root / rel).unlink()
    rf.recompute_claims(root)


def m_a0606(root: Path) -> None:
    edit_timeline(root, lambda t: t[1].update(fresh_process=False))


def m_a0701(root: Path) -> None:
    edit_json(root, "traces/memory/batch-1/warm-2.json", lambda d: _set(d, "synchronized", False))


def set_trace_figure(d: dict, figure: str, value: int | None) -> None:
    """Set a memory trace's FIGURE and the memory_stats counter behind it (A0709), as a
    run that lies consistently would."""
    d[figure] = value
    for fig, snapshot, counter in A0709_COUNTERS:
        if fig == figure and value is not None:
            d[snapshot][counter] = value


def m_a0702(root: Path) -> None:
    edit_json(root, "traces/memory/batch-1/warm-2.json", lambda d: set_trace_figure(
        d, "peak_reserved_bytes", d["peak_reserved_bytes"] + 1))


def m_a0703(root: Path) -> None:
    def swap(d: dict) -> None:
        d["peak_allocated_bytes"], d["peak_reserved_bytes"] = (d["peak_reserved_bytes"],
                                                               d["peak_allocated_bytes"])
    edit_json(root, "traces/memory/batch-1/warm-2.json", lambda d: (
        swap(d), [set_trace_figure(d, k, d[k]) for k in ("peak_allocated_bytes",
                                                           "peak_reserved_bytes")]))
    edit_rows(root, lambda rows: swap(_row(rows, "batch-1", "warm", 2)))


def _pass_figures(root: Path) -> dict:
    return rf.read_json(root, "traces/memory/batch-1/warm-2.json")


def m_a0704(root: Path) -> None:
    t = _pass_figures(root)
    total = t["peak_allocated_bytes"] + t["peak_reserved_bytes"]
    edit_claims(root, lambda c: c["memory_figures"].append(
        {"name": "gpu_memory_used", "value": round(total / 1e9, 2), "unit": "GB",
         "source": "torch.cuda", "variant_id": "batch-1", "phase": "warm", "run_index": 2}))


def m_a0705(root: Path) -> None:
    t = _pass_figures(root)
    cache = (t["peak_reserved_bytes"] - t["peak_allocated_bytes"]) / 2**20
    edit_claims(root, lambda c: c["memory_figures"].append(
        {"name": "allocator_cache", "value": round(cache), "unit": "MiB",
         "source": "torch.cuda", "variant_id": "batch-1", "phase": "warm", "run_index": 2}))


def m_a0706(root: Path) -> None:
    edit_json(root, "traces/memory/batch-1/warm-2.json",
              lambda d: set_trace_figure(d, "baseline_allocated_bytes", 0))
    edit_rows(root, lambda rows: _row(rows, "batch-1", "warm", 2).update(
        baseline_allocated_bytes="0"))


def m_a0707(root: Path) -> None:
    edit_json(root, "traces/memory/batch-1/warm-2.json",
              lambda d: _set(d, "peak_reserved_bytes", None))
    edit_rows(root, lambda rows: _row(rows, "batch-1", "warm", 2).update(peak_reserved_bytes=""))


def m_a0708(root: Path) -> None:
    edit_json(root, "traces/memory/batch-1/warm-2.json",
              lambda d: _set(d, "other_sources/0/source", "torch.cuda.memory_reserved"))


def _csv_bytes(root: Path, fn: Callable[[bytes], bytes]) -> None:
    p = root / "resultats-bruts.csv"
    p.write_bytes(fn(p.read_bytes()))
    rf.rehash(root)


def m_a0801(root: Path) -> None:
    _csv_bytes(root, lambda b: b.replace(b"elapsed_seconds", b"elapsed_s", 1))


def m_a0802(root: Path) -> None:
    def extra(b: bytes) -> bytes:
        lines = b.split(b"\r\n")
        lines[3] += b",extra"
        return b"\r\n".join(lines)
    _csv_bytes(root, extra)


def m_a0803(root: Path) -> None:
    edit_rows(root, lambda rows: rows[1].update(ids_match="yes"))


def m_a0804(root: Path) -> None:
    edit_rows(root, lambda rows: rows[1].update(
        elapsed_seconds=rows[1]["elapsed_seconds"].replace(".", ",")))


def m_a0805(root: Path) -> None:
    edit_rows(root, lambda rows: rows[1].update(observed_ids=""))


def m_a0806(root: Path) -> None:
    edit_rows(root, lambda rows: rows.append(dict(rows[-1])))


def m_a0807(root: Path) -> None:
    _csv_bytes(root, lambda b: b.replace(b"\r\n", b"\n"))


def m_a0901(root: Path) -> None:
    edit_json(root, "economics/offers.json",
              lambda o: _set(o, "offers/0/price_per_lot_usd_minor", 99999))


def m_a0902(root: Path) -> None:
    edit_rows(root, lambda rows: rows[2].update(
        package_total_usd_minor=str(5 * int(rows[2]["package_total_usd_minor"]))))


def m_a0903(root: Path) -> None:
    edit_rows(root, lambda rows: [r.update(accepted_unique_corpora="5") for r in rows
                                  if r["variant_id"] == "batch-1"])


def m_a0904(root: Path) -> None:
    edit_claims(root, lambda c: c["projections"].append(
        {"figure": "corpora_per_period", "variant_id": "batch-1", "value": 4000,
         "unit": "corpora", "period_days": 7, "accepted_corpora": 1}))


def m_a0905(root: Path) -> None:
    edit_rows(root, lambda rows: [r.update(expected_ids="29") for r in rows
                                  if r["variant_id"] == "batch-4"])


def m_a1001(root: Path) -> None:
    def oom(t: list[dict]) -> None:
        e = next(x for x in t if (x["variant_id"], x["phase"], x["run_index"])
                 == ("batch-4", "warm", 3))
        e.update(status="oom", elapsed_seconds=0, ended_at=e["started_at"],
                 incident={"kind": "oom", "message": "CUDA out of memory"})
    edit_timeline(root, oom)
    edit_rows(root, lambda rows: _row(rows, "batch-4", "warm", 3).update(
        elapsed_seconds="0", notes="oom: out of memory, pass failed"))


def m_a1002(root: Path) -> None:
    for p in sorted((root / "outputs/batch-4").glob("*.jsonl")):
        edit_output(root, p.relative_to(root).as_posix(),
                    lambda lines: [dict(x, label="negative") for x in lines])
    rf.recompute_claims(root)  # the CSV says honestly that batch-4 is not accepted...
    edit_claims(root, lambda c: c["rankings"][0].update(  # ... and the ranking lists it
        variants=["batch-4", "batch-1"]))


def m_a1003(root: Path) -> None:  # the accepted variants ranked slowest first, with figures
    edit_claims(root, lambda c: c["rankings"][0].update(  # true to each variant
        variants=c["rankings"][0]["variants"][::-1], values=c["rankings"][0]["values"][::-1]))


def m_a0105(root: Path) -> None:  # a cold pass's evidence copied from another process
    edit_json(root, "evidence/placement/batch-4/cold-1.json",
              lambda d: _set(d, "pid", rf.read_json(
                  root, "evidence/placement/batch-1/cold-1.json")["pid"]))


def m_a0305(root: Path) -> None:
    rf.write_jsonl(root, "corpus/eval-inputs.jsonl",
                   rf.read_jsonl(root, "corpus/eval-inputs.jsonl")[:-1])
    rf.rehash(root)


def m_a0306(root: Path) -> None:
    edit_rows(root, lambda rows: rows[3].update(experiment_id="exp-precision"))


def m_a0404(root: Path) -> None:  # a CPU run dressed as an H100 run
    h100 = "NVIDIA H100 80GB HBM3"
    edit_json(root, "environment.json", lambda e: _set(e, "gpu_model", h100))
    edit_rows(root, lambda rows: [r.update(gpu_model=h100) for r in rows])


def m_a0405(root: Path) -> None:
    """Two GPUs used under one lot of a one-GPU offer, every file consistent."""
    name = rf.read_json(root, "environment.json")["gpu_model"]
    for p in sorted((root / "evidence/placement").rglob("*.json")):
        edit_json(root, p.relative_to(root).as_posix(), lambda d: d.update(
            input_devices={"cuda:0": 4, "cuda:1": 4}, gpus_visible=2,
            gpus_used=[{"index": 0, "name": name}, {"index": 1, "name": name}]), rehash=False)
    edit_json(root, "environment.json", lambda e: e.update(gpu_count=2, gpus_visible=2),
              rehash=False)
    edit_rows(root, lambda rows: [r.update(gpu_count="2") for r in rows])


def m_a0607(root: Path) -> None:
    edit_timeline(root, lambda t: t.remove(next(
        x for x in t if (x["variant_id"], x["phase"], x["run_index"]) == ("batch-4", "warm", 2))))


def m_a0608(root: Path) -> None:  # batch-4's warm-3 ran in a process no warm-up warmed
    edit_timeline(root, lambda t: next(
        x for x in t if (x["variant_id"], x["phase"], x["run_index"]) == ("batch-4", "warm", 3)
    ).update(pid=5123))
    edit_json(root, "evidence/placement/batch-4/warm-3.json", lambda d: _set(d, "pid", 5123))


def m_a0610(root: Path) -> None:
    edit_claims(root, lambda c: c["summaries"][0].update(value=c["summaries"][0]["value"] - 0.1))


def m_a0709(root: Path) -> None:
    def stats(d: dict) -> None:
        d["memory_stats_after"]["allocated_bytes.all.peak"] += 4096
    edit_json(root, "traces/memory/batch-1/warm-2.json", stats)


#: code -> (template, mutation). The template is the flavour of clean run mutated.
MUTATIONS: dict[str, tuple[str, Mutation]] = {
    "A0001": ("cpu", m_a0001), "A0002": ("cpu", m_a0002), "A0003": ("cpu", m_a0003),
    "A0004": ("cpu", m_a0004), "A0005": ("cpu", m_a0005), "A0006": ("cpu", m_a0006),
    "A0007": ("cpu", m_a0007), "A0101": ("cpu", m_a0101), "A0102": ("cpu", m_a0102),
    "A0103": ("cpu", m_a0103), "A0104": ("cpu", m_a0104), "A0105": ("cpu", m_a0105),
    "A0201": ("cpu", m_a0201), "A0202": ("cpu", m_a0202), "A0203": ("cpu", m_a0203),
    "A0204": ("cpu", m_a0204), "A0205": ("cpu", m_a0205), "A0206": ("cpu", m_a0206),
    "A0207": ("cpu", m_a0207), "A0208": ("cpu", m_a0208), "A0301": ("cpu", m_a0301),
    "A0302": ("cpu", m_a0302), "A0303": ("cpu", m_a0303), "A0304": ("cpu", m_a0304),
    "A0305": ("cpu", m_a0305), "A0306": ("cpu", m_a0306), "A0401": ("cpu", m_a0401),
    "A0402": ("cuda", m_a0402), "A0403": ("b200", m_a0403), "A0404": ("cpu", m_a0404),
    "A0405": ("cuda", m_a0405), "A0501": ("cpu", m_a0501), "A0502": ("cpu", m_a0502),
    "A0601": ("cpu", m_a0601), "A0602": ("cpu", m_a0602), "A0603": ("cpu", m_a0603),
    "A0604": ("cpu+claims", m_a0604), "A0605": ("cpu", m_a0605), "A0606": ("cpu", m_a0606),
    "A0607": ("cpu", m_a0607), "A0608": ("cpu", m_a0608), "A0610": ("cpu+claims", m_a0610),
    "A0701": ("cuda", m_a0701), "A0702": ("cuda", m_a0702), "A0703": ("cuda", m_a0703),
    "A0704": ("cuda+claims", m_a0704), "A0705": ("cuda+claims", m_a0705),
    "A0706": ("cuda", m_a0706), "A0707": ("cuda", m_a0707), "A0708": ("cpu", m_a0708),
    "A0709": ("cuda", m_a0709),
    "A0801": ("cpu", m_a0801), "A0802": ("cpu", m_a0802), "A0803": ("cpu", m_a0803),
    "A0804": ("cpu", m_a0804), "A0805": ("cpu", m_a0805), "A0806": ("cpu", m_a0806),
    "A0807": ("cpu", m_a0807), "A0901": ("cpu", m_a0901), "A0902": ("cpu", m_a0902),
    "A0903": ("cpu", m_a0903), "A0904": ("cpu+claims", m_a0904), "A0905": ("cpu", m_a0905),
    "A1001": ("cpu", m_a1001), "A1002": ("cpu+claims", m_a1002),
    "A1003": ("cpu+claims", m_a1003),
}


@pytest.mark.parametrize("flavour", ["cpu", "cuda", "cpu+claims", "cuda+claims"])
def test_clean_run_is_accepted(templates: dict[str, Path], flavour: str) -> None:
    result = run_check(templates[flavour])
    assert [f.to_json() for f in result.findings] == []
    assert result.skipped == ()
    assert result.verdict == "accepted" and result.exit_code == 0
    assert len(result.rules_run) == len(all_rules())


def test_b200_lot_with_one_gpu_is_pointed_out(templates: dict[str, Path]) -> None:
    result = run_check(templates["b200"])
    assert [(f.code, f.severity) for f in result.findings] == [("A0403", "warning")]
    assert result.verdict == "accepted"
    assert result.findings[0].evidence == {"observed": 1, "expected": 2, "offer_id": "h100-7d"}


@pytest.mark.parametrize("code", sorted(MUTATIONS))
def test_mutation_raises_its_rule_only(templates: dict[str, Path], tmp_path: Path,
                                       code: str) -> None:
    flavour, mutate = MUTATIONS[code]
    root = tmp_path / "run"
    shutil.copytree(templates[flavour], root)
    mutate(root)
    result = run_check(root)
    rule = get_rule(code)
    assert rule is not None
    own = [f for f in result.findings if f.code == code]
    assert own, f"{code} not raised; got {[(f.code, f.message) for f in result.findings]}"
    assert any(f.severity == rule.severity for f in own)
    others = [(f.code, f.message) for f in result.findings
              if f.code != code and f.severity == "error"]
    assert others == []
    if rule.severity == "error":
        assert result.exit_code == 1
        assert result.verdict in ("rejected", "incomplete")
        if all(not f.missing_evidence for f in own):
            assert result.verdict == "rejected"
    else:
        assert result.exit_code == 0
    for f in own:  # a finding names its file, and its rule's protocol rule or a more
        assert f.artifact is not None and f.message  # specific one (A1.2 for a revision)
        assert f.protocol_ref == rule.protocol_ref or f.protocol_ref in PROTOCOL_A_RULES


def test_every_rule_is_documented_and_has_a_mutation() -> None:
    rules = all_rules()
    codes = [r.code for r in rules]
    assert len(codes) == len(set(codes)) and codes == sorted(codes)
    assert set(codes) == set(MUTATIONS)
    for r in rules:
        assert re.fullmatch(r"A\d{4}", r.code)
        assert re.fullmatch(r"A\d+\.\d+", r.protocol_ref)
        section = int(r.code[1:3])
        assert section == 0 or r.protocol_ref.startswith(f"A{section}."), r.code
        assert r.severity in ("error", "warning", "info")
        assert r.title and r.title == r.title.strip()
        for part in ("What it checks", "Reads:", "Why it matters", "Example"):
            assert part in r.doc, (r.code, part)
        assert r.doc.startswith(f"{r.code}:")
        assert get_rule(r.code) is r
    assert get_rule("A9999") is None


# The numbered rules of protocol A in ../shared/PROTOCOL.md.
PROTOCOL_A_RULES = (
    "A1.1", "A1.2", "A1.3", "A1.4", "A2.1", "A2.2", "A2.3", "A2.4", "A2.5", "A2.6",
    "A3.1", "A3.2", "A3.3", "A4.1", "A4.2", "A5.1", "A5.2", "A6.1", "A6.2", "A6.3", "A6.4",
    "A6.5", "A7.1", "A7.2", "A7.3", "A7.4", "A7.5", "A8.1", "A8.2", "A8.3", "A8.4", "A9.1",
    "A9.2", "A9.3", "A9.4", "A9.5", "A10.1", "A10.2", "A10.3",
)


def test_protocol_a_is_covered_rule_by_rule() -> None:
    """Every numbered rule of protocol A (PROTOCOL.md) is enforced by at least one rule."""
    numbered = set(PROTOCOL_A_RULES)
    protocol_md = SHARED / "PROTOCOL.md"
    if protocol_md.is_file():  # beside a checkout of the project; keep the list in step with it
        text = protocol_md.read_text(encoding="utf-8")
        assert set(re.findall(r"^- (A\d+\.\d+) ", text, flags=re.MULTILINE)) == numbered
    enforced = {r.protocol_ref for r in all_rules()}
    enforced |= set(re.findall(r"\bA\d+\.\d+\b", " ".join(r.doc for r in all_rules())))
    assert numbered - enforced == set()


def test_a_crash_inside_a_rule_is_an_internal_error_finding(
        templates: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from auditor.protocols.a import PROTOCOL

    rule = get_rule("A0604")
    assert rule is not None

    def boom(view: object) -> list:
        raise KeyError("no such column")

    broken = type(rule)(rule.code, rule.title, rule.protocol_ref, rule.severity, rule.requires,
                        boom, rule.doc)
    monkeypatch.setitem(PROTOCOL.__dict__, "rules",
                        tuple(broken if r.code == "A0604" else r for r in all_rules()))
    _, result = audit(templates["cpu"])
    assert [f.code for f in result.findings] == ["A0000"]
    f = result.findings[0]
    assert "A0604" in f.message and "bug" in f.message and f.evidence["exception"] == "KeyError"
    assert result.exit_code == 1


def test_select_and_ignore(templates: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(templates["cpu+claims"], root)
    m_a0604(root)
    assert [f.code for f in run_check(root, select=("A06",)).findings] == ["A0604"]
    only = run_check(root, select=("A0101",))
    assert only.rules_run == ("A0101",) and only.findings == ()
    assert run_check(root, ignore=("A0604",)).findings == ()


def test_missing_artifact_skips_rules_with_reason(templates: dict[str, Path],
                                                  tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(templates["cpu"], root)
    (root / "timeline.jsonl").write_text('{"order_index": 0, "variant_id": "batch-1"\n')
    rf.rehash(root)
    result = run_check(root)
    a0002 = [f for f in result.findings if f.code == "A0002"]
    assert a0002 and a0002[0].artifact == "timeline.jsonl" and a0002[0].location == "line 1"
    skipped = {s.code: s.reason for s in result.skipped}
    assert "A0606" in skipped and "timeline.jsonl" in skipped["A0606"]
    assert result.verdict == "rejected"


def test_findings_carry_observed_and_expected(templates: dict[str, Path],
                                              tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(templates["cpu"], root)
    m_a0902(root)
    (f,) = run_check(root).findings
    assert f.artifact == "resultats-bruts.csv" and f.location == "row 3"
    assert f.evidence["observed"] == 5 * f.evidence["expected"]
    assert json.loads(json.dumps(f.to_json()))["code"] == "A0902"
