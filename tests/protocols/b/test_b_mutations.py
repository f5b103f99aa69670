"""Every protocol B rule, one mutation: the clean runs are accepted with no finding; each
mutation of one of them (re-sealed, so only the rule itself can catch it) raises that rule and
no other error. A mutation is an edit of a built run, or a run built from a changed spec
(a failed trial, another trial order, another placement), whose claims the harness computes
honestly from what it then holds. Meta-tests keep the registry honest: unique codes, B1-B10
refs, the docstring's parts, a mutation module per rule (mutations/, named after its code; see
tests/mutation_modules.py) and none for a code that is no rule, every numbered rule of protocol
B enforced.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import b_runs as br
import mutation_modules
import pytest
from paths import SHARED

from auditor.engine import run_check
from auditor.protocols import get
from auditor.protocols.b.facts.declared import PROTOCOL_PROMPTS

B = get("residency-energy")
FOLDER = Path(__file__).resolve().parent / "mutations"
MUTATIONS = mutation_modules.discover(FOLDER, "b_mutations")

CLEAN = ("synthetic", "macos", "windows")
"""The clean runs a mutation starts from (its TEMPLATE; None: it builds its own run)."""


@pytest.mark.parametrize("name", CLEAN)
def test_clean_runs_are_accepted(runs, name: str) -> None:
    result = run_check(runs[name])
    assert [(f.code, f.message) for f in result.findings] == []
    assert result.skipped == ()
    assert result.verdict == "accepted" and result.exit_code == 0
    assert len(result.rules_run) == len(B.rules)


@pytest.mark.parametrize("code", sorted(MUTATIONS))
def test_mutation_raises_its_rule_only(runs, tmp_path: Path, code: str) -> None:
    mutation = MUTATIONS[code]
    assert mutation.mutate is not None, mutation.path
    root = tmp_path / "run"
    if mutation.template:
        shutil.copytree(runs[mutation.template], root)
    else:
        root.mkdir()
    mutation.mutate(root)
    result = run_check(root)
    rule = B.get_rule(code)
    assert rule is not None
    own = [f for f in result.findings if f.code == code]
    assert own, f"{code} not raised; got {[(f.code, f.message) for f in result.findings]}"
    assert any(f.severity == rule.severity for f in own)
    others = [
        (f.code, f.message)
        for f in result.findings
        if f.code != code and f.severity == "error" and f.code not in mutation.companions
    ]
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
    faults = mutation_modules.faults(codes, MUTATIONS, FOLDER, (*CLEAN, None))
    assert not faults, "\n".join(faults)
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
        assert set(re.findall(r"^- (B\d+) ", text, flags=re.MULTILINE)) == set(PROTOCOL_B_RULES)
    assert {r.protocol_ref for r in B.rules} >= set(PROTOCOL_B_RULES)


def test_the_synthetic_run_is_the_protocols() -> None:
    """The clean synthetic run classifies the protocol's 1,000-prompt sequence (so B0202's
    warning on another length is not what keeps its findings empty)."""
    assert br.Spec(policies=[]).prompts == PROTOCOL_PROMPTS


def test_a_crash_inside_a_rule_is_an_internal_error_finding(
    runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = B.get_rule("B0303")
    assert rule is not None

    def boom(view: object) -> list:
        raise KeyError("no such column")

    monkeypatch.setitem(
        B.__dict__,
        "rules",
        tuple(replace(r, check=boom) if r.code == "B0303" else r for r in B.rules),
    )
    result = run_check(runs["synthetic"])
    assert [f.code for f in result.findings] == ["B0000"]
    f = result.findings[0]
    assert "B0303" in f.message and "bug" in f.message and f.protocol_ref == "B10"
    assert result.exit_code == 1 and result.verdict == "rejected"
