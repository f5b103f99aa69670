"""Every protocol B rule, one mutation: the clean runs are accepted with no finding; each
mutation of one of them (re-sealed, so only the rule itself can catch it) raises that rule and
no other error. A mutation is an edit of a built run, or a run built from a changed spec
(a failed trial, another trial order, another placement), whose claims the harness computes
honestly from what it then holds. Meta-tests keep the registry honest: unique codes, B1-B10
refs, the docstring's parts, a mutation per rule, every numbered rule of protocol B enforced.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import b_runs as br
import pytest
from paths import SHARED

from auditor.engine import run_check
from auditor.protocols import get
from auditor.protocols.b.facts.declared import PROTOCOL_PROMPTS

B = get("residency-energy")
Mutation = Callable[[Path], None]


def _manifest(root: Path, fn: Callable[[dict], None]) -> None:
    br.edit_json(root, "manifest.json", fn, seal=False)


def _set_row(name: str, pid: str, k: int | None, **cells: str) -> Mutation:
    def m(root: Path) -> None:
        br.edit_csv(root, name, lambda rows: br.row(rows, pid, k).update(cells))
    return m


def _build(spec: br.Spec) -> Mutation:
    def m(root: Path) -> None:
        shutil.rmtree(root)
        br.build(root, spec)
    return m


def _syn(**policy_changes: dict) -> br.Spec:
    spec = br.synthetic_spec()
    for pid, changes in policy_changes.items():
        spec = br.with_policy(spec, pid, **changes)
    return spec


# -- mutations, one per rule -----------------------------------------------------------------

def m_b0002(root: Path) -> None:
    br.edit_json(root, "environment.json", lambda e: e.update(python_version=3))


def m_b0003(root: Path) -> None:
    with open(root / "environment.json", "a", encoding="utf-8") as fh:
        fh.write("\n")


def m_b0006(root: Path) -> None:
    (root / "environment.json").unlink()
    br.rehash(root)


def m_b0203(root: Path) -> None:
    def bad(lines: list[dict]) -> None:
        lines[7]["label"] = "spam"
    br.edit_jsonl(root, "outputs/cpu/trial-2.jsonl", bad)


def m_b0305(root: Path) -> None:
    """cpu trial 2's answers and latencies are trial 1's, copied (the same values, so every
    p95 and sum claimed stays right)."""
    shutil.copy(root / "outputs/cpu/trial-1.jsonl", root / "outputs/cpu/trial-2.jsonl")
    br.rehash(root)


def m_b0401(root: Path) -> None:
    (root / "placement/torch-cuda.torch.json").unlink()
    br.rehash(root)


def _energy_doc(pid: str, k: int, **fields: object) -> Callable[[Path], None]:
    def m(root: Path) -> None:
        br.edit_json(root, f"energy/{pid}/trial-{k}.json", lambda d: d.update(fields))
    return m


def m_b0601(root: Path) -> None:
    """cpu trial 1's counters read first 0.5 s into the window: 0.5 s of it unobserved."""
    def late(recs: list[dict]) -> list[dict]:
        start = next(r["t"] for r in recs if r.get("event") == "window_start")
        cut = br.iso(br.datetime.fromisoformat(start) + br.timedelta(seconds=0.5))
        return [r for r in recs if r["kind"] != "counter" or r["t"] >= cut]
    _energy_doc("cpu", 1, status="not_measured", reason="counters read late", energy_j=None,
                average_power_w=None, joules_per_inference=None)(root)
    br.edit_jsonl(root, "power/cpu/trial-1.jsonl", late)


def m_b0602(root: Path) -> None:
    """One powermetrics sample missing in the middle of cpu trial 1's window."""
    path = root / "power/cpu/trial-1.txt"
    blocks = path.read_text(encoding="utf-8").split("*** Sampled")
    del blocks[8]
    path.write_text("*** Sampled".join(blocks), encoding="utf-8")
    br.rehash(root)


def m_b0603(root: Path) -> None:
    """The declared minimum window (5 s) is longer than every window."""
    for pid, k in ((p, k) for p in ("cpu", "torch-cuda", "ort-cuda") for k in range(1, 6)):
        _energy_doc(pid, k, status="below_resolution", reason="window shorter than 5 s",
                    energy_j=None, average_power_w=None, joules_per_inference=None)(root)
    br.rehash(root)
    _manifest(root, lambda m: m["energy"]["minimums"].update(window_seconds=5.0))


def m_b0702(root: Path) -> None:
    """The Neural Engine policy becomes a `.all` GPU retry with a 50 % GPU floor; its compute
    plan puts no operation on the GPU."""
    br.edit_csv(root, "policies.csv", lambda rows: br.row(rows, "ane").update(
        compute_units="all"))
    _manifest(root, lambda m: m["policies"][1].update(compute_units="all",
                                                      gpu_operation_share_floor=0.5))


def m_b0605(root: Path) -> None:
    """The CPU baseline's NVML energy counter doubled (its claims recomputed from it, the
    accelerators the cheaper for it); its POWER_INSTANT samples in the same trace still say
    30 W."""
    def trace(spec: br.Spec, w: br.Window) -> tuple[str, bytes]:
        ext, data = br.runner_trace(spec, w)
        if w.policy_id != "cpu":
            return ext, data
        recs = [json.loads(x) for x in data.decode().splitlines()]
        nvml = [r for r in recs if r["kind"] == "counter" and r["source"] == "nvml"]
        for r in nvml:
            r["value"] *= 2
        w.energy_j = (w.energy_j or 0.0) + (nvml[-1]["value"] - nvml[0]["value"]) / 2e3
        return ext, "".join(json.dumps(r) + "\n" for r in recs).encode()
    shutil.rmtree(root)
    br.build(root, replace(br.synthetic_spec(), trace=trace))


def m_b0902(root: Path) -> None:
    br.edit_csv(root, "trials.csv", lambda rows: [r.update(power_source="battery")
                                                  for r in rows])


def m_b1001(root: Path) -> None:
    br.edit_csv(root, "policies.csv", lambda rows: br.row(rows, "cpu").update(
        average_power_w="", joules_per_inference=""))


def m_b1002(root: Path) -> None:
    br.edit_jsonl(root, "outputs/cpu/trial-1.jsonl", lambda lines: [lines[1], lines[0],
                                                                    *lines[2:]])


_order = [("cpu", 1), ("cpu", 2), ("torch-cuda", 1), ("ort-cuda", 1), ("torch-cuda", 2),
          ("ort-cuda", 2)] + [(p, k) for k in (3, 4, 5) for p in ("cpu", "torch-cuda",
                                                                     "ort-cuda")]
_gemm_on_cpu = [(op, "CPUExecutionProvider" if op == "Gemm" else prov)
                for op, prov in br.ORT_GPU_NODES]
_ort_cpu = br.Pol("ort-cpu", "cpu-only", "onnxruntime", "CPUExecutionProvider",
                  latency_ms=1.6, wall_s=1.8, watts={"rapl": 38.0, "nvml": 30.0},
                  verdict="rejected")

#: code -> (template, mutation); template "" builds the run from its own spec.
MUTATIONS: dict[str, tuple[str, Mutation]] = {
    "B0001": ("synthetic", lambda r: _manifest(r, lambda m: m.update(model_tier="large"))),
    "B0002": ("synthetic", m_b0002),
    "B0003": ("synthetic", m_b0003),
    "B0004": ("synthetic", lambda r: (r / "notes.txt").write_text("added later\n")),
    "B0005": ("synthetic", lambda r: _manifest(
        r, lambda m: m["artifacts"].update({"model/extra.bin": "0" * 64}))),
    "B0006": ("synthetic", m_b0006),
    "B0007": ("synthetic", lambda r: _manifest(r, lambda m: m.update(status="aborted"))),
    "B0008": ("synthetic", _set_row("trials.csv", "cpu", 2, average_power_w="70,0")),
    "B0101": ("synthetic", lambda r: br.edit_json(r, "environment.json", lambda e: e.update(
        power_mode={"value": None, "not_available": "no power mode is exposed"}))),
    "B0102": ("synthetic", _set_row("policies.csv", "torch-cuda", None, compute_units="mps")),
    "B0103": ("synthetic", lambda r: _manifest(r, lambda m: m.update(
        artifact_sha256="a" * 64))),
    "B0201": ("synthetic", _set_row("trials.csv", "ort-cuda", 3, warmup_iterations="10")),
    "B0202": ("synthetic", lambda r: _manifest(r, lambda m: m["prompt_sequence"].update(
        sha256="b" * 64))),
    "B0203": ("synthetic", m_b0203),
    "B0204": ("synthetic", lambda r: _manifest(r, lambda m: m.update(
        timer_scope="model forward only"))),
    "B0301": ("", _build(replace(_syn(**{"torch-cuda": {"verdict": "rejected"}}),
                                 failed=frozenset({("torch-cuda", 3)})))),
    "B0302": ("", _build(replace(br.synthetic_spec(), order=_order))),
    "B0303": ("synthetic", _set_row("trials.csv", "cpu", 4, p95_latency_ms="9.9")),
    "B0304": ("synthetic", _set_row("trials.csv", "torch-cuda", 2, energy_j="79.2")),
    "B0305": ("synthetic", m_b0305),
    "B0401": ("synthetic", m_b0401),
    "B0402": ("", _build(_syn(**{"ort-cuda": {"verdict": "rejected", "placement": (
        ".ort.json", br.ort_placement("ort-cuda", "CUDAExecutionProvider",
                                      active="CPUExecutionProvider"))}}))),
    "B0403": ("synthetic", _set_row("policies.csv", "ort-cuda", None, operation_share="0.95")),
    "B0404": ("", _build(_syn(**{"ort-cuda": {"placement": (
        ".ort.json", br.ort_placement("ort-cuda", "CUDAExecutionProvider", _gemm_on_cpu))}}))),
    "B0501": ("", _build(replace(br.synthetic_spec(),
                                 policies=[*br.synthetic_spec().policies, _ort_cpu]))),
    "B0502": ("macos", lambda r: _manifest(r, lambda m: m["reference"].update(
        artifact_file="model/candidate.mlpackage"))),
    "B0601": ("synthetic", m_b0601),
    "B0602": ("macos", m_b0602),
    "B0603": ("synthetic", m_b0603),
    "B0604": ("synthetic", _energy_doc("ort-cuda", 4, energy_j=99.0)),
    "B0605": ("", m_b0605),
    "B0701": ("", _build(_syn(**{"torch-cuda": {"verdict": "rejected",
                                                "watts": {"rapl": 15.0, "nvml": 60.0}}}))),
    "B0702": ("macos", m_b0702),
    "B0801": ("", _build(_syn(**{"torch-cuda": {"verdict": "rejected", "wrong_every": 20}}))),
    "B0802": ("synthetic", _set_row("policies.csv", "torch-cuda", None, accuracy="0.95")),
    "B0803": ("", _build(_syn(**{"torch-cuda": {"verdict": "rejected", "wrong_every": 20}}))),
    "B0901": ("windows", lambda r: _manifest(r, lambda m: m.pop("power_state_checks"))),
    "B0902": ("windows", m_b0902),
    "B1001": ("synthetic", m_b1001),
    "B1002": ("synthetic", m_b1002),
    "B1003": ("synthetic", _set_row("policies.csv", "torch-cuda", None, verdict="baseline")),
}

COMPANIONS: dict[str, set[str]] = {"B0803": {"B0801"}}
"""A warning that is by nature the consequence of another rule's error: energy measured on
a candidate rejected at a gate (B0803) needs the rejection (B0801)."""

CLEAN = ("synthetic", "macos", "windows")


@pytest.mark.parametrize("name", CLEAN)
def test_clean_runs_are_accepted(runs, name: str) -> None:
    result = run_check(runs[name])
    assert [(f.code, f.message) for f in result.findings] == []
    assert result.skipped == ()
    assert result.verdict == "accepted" and result.exit_code == 0
    assert len(result.rules_run) == len(B.rules)


@pytest.mark.parametrize("code", sorted(MUTATIONS))
def test_mutation_raises_its_rule_only(runs, tmp_path: Path, code: str) -> None:
    template, mutate = MUTATIONS[code]
    root = tmp_path / "run"
    if template:
        shutil.copytree(runs[template], root)
    else:
        root.mkdir()
    mutate(root)
    result = run_check(root)
    rule = B.get_rule(code)
    assert rule is not None
    own = [f for f in result.findings if f.code == code]
    assert own, f"{code} not raised; got {[(f.code, f.message) for f in result.findings]}"
    assert any(f.severity == rule.severity for f in own)
    others = [(f.code, f.message) for f in result.findings
              if f.code != code and f.severity == "error"
              and f.code not in COMPANIONS.get(code, set())]
    assert others == []
    if rule.severity == "error":
        assert result.exit_code == 1
        assert result.verdict in ("rejected", "incomplete")
        if all(not f.missing_evidence for f in own):
            assert result.verdict == "rejected"
    for f in own:  # a finding names its file, and its rule's protocol rule or another B one
        assert f.artifact is not None and f.message
        assert f.protocol_ref == rule.protocol_ref or f.protocol_ref in PROTOCOL_B_RULES


PROTOCOL_B_RULES = tuple(f"B{i}" for i in range(1, 11))


def test_every_rule_is_documented_and_has_a_mutation() -> None:
    codes = [r.code for r in B.rules]
    assert len(codes) == len(set(codes)) and codes == sorted(codes)
    assert set(codes) == set(MUTATIONS)
    for r in B.rules:
        assert re.fullmatch(r"B\d{4}", r.code)
        assert r.protocol_ref in PROTOCOL_B_RULES
        section = int(r.code[1:3])
        assert section == 0 or r.protocol_ref == f"B{section}", r.code
        assert r.severity in ("error", "warning", "info")
        assert r.title and r.title == r.title.strip()
        for part in ("What it checks", "Reads:", "Why it matters", "Example"):
            assert part in r.doc, (r.code, part)
        assert r.doc.startswith(f"{r.code}:")
        assert r.fix and r.fix.endswith(".")
        assert B.get_rule(r.code) is r


def test_protocol_b_is_covered_rule_by_rule() -> None:
    """Every numbered rule of protocol B (PROTOCOL.md) is enforced by at least one rule."""
    protocol_md = SHARED / "PROTOCOL.md"
    if protocol_md.is_file():
        text = protocol_md.read_text(encoding="utf-8")
        assert set(re.findall(r"^- (B\d+) ", text, flags=re.MULTILINE)) == set(
            PROTOCOL_B_RULES)
    assert {r.protocol_ref for r in B.rules} >= set(PROTOCOL_B_RULES)


def test_the_synthetic_run_is_the_protocols() -> None:
    """The clean synthetic run classifies the protocol's 1,000-prompt sequence (so B0202's
    warning on another length is not what keeps its findings empty)."""
    assert br.Spec(policies=[]).prompts == PROTOCOL_PROMPTS


def test_a_crash_inside_a_rule_is_an_internal_error_finding(
        runs, monkeypatch: pytest.MonkeyPatch) -> None:
    rule = B.get_rule("B0303")
    assert rule is not None

    def boom(view: object) -> list:
        raise KeyError("no such column")

    monkeypatch.setitem(B.__dict__, "rules", tuple(
        replace(r, check=boom) if r.code == "B0303" else r for r in B.rules))
    result = run_check(runs["synthetic"])
    assert [f.code for f in result.findings] == ["B0000"]
    f = result.findings[0]
    assert "B0303" in f.message and "bug" in f.message and f.protocol_ref == "B10"
    assert result.exit_code == 1 and result.verdict == "rejected"
