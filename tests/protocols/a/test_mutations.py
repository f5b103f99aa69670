"""Every rule, one mutation: the clean run passes; each mutation of it (manifest rehashed, so
only the rule itself can catch it) raises that rule and no other error. Each rule's mutation is
a module of mutations/ named after its code (tests/mutation_modules.py says what it holds). A
meta-test keeps the registry honest: unique codes, protocol refs, three-part docstrings, a
mutation module per rule and none for a code that is no rule."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import mutation_modules
import pytest
import runfactory as rf
from paths import SHARED

from auditor.engine import audit, run_check
from auditor.protocols import get, get_rule

FOLDER = Path(__file__).resolve().parent / "mutations"
MUTATIONS = mutation_modules.discover(FOLDER, "a_mutations")


def all_rules() -> list:
    """Protocol A's rules (other protocols' are their own tests')."""
    return list(get("accepted-corpus-cost").rules)


#: The clean runs a mutation starts from (its TEMPLATE), built once per session.
TEMPLATES = {
    "cpu": {},
    "cuda": {"device": "cuda:0"},
    "b200": {"device": "cuda:0", "gpus_per_lot": 2},
    "cpu+claims": {"claims": True},
    "cuda+claims": {"device": "cuda:0", "claims": True},
    "cpu+trained": {"trained": True},
}


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("templates")
    return {
        name: rf.make_clean_run(base / name.replace("+", "-"), **options)
        for name, options in TEMPLATES.items()
    }


@pytest.mark.parametrize("flavour", ["cpu", "cuda", "cpu+claims", "cuda+claims", "cpu+trained"])
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
def test_mutation_raises_its_rule_only(
    templates: dict[str, Path], tmp_path: Path, code: str
) -> None:
    mutation = MUTATIONS[code]
    assert mutation.template is not None and mutation.mutate is not None, mutation.path
    root = tmp_path / "run"
    shutil.copytree(templates[mutation.template], root)
    mutation.mutate(root)
    result = run_check(root)
    rule = get_rule(code)
    assert rule is not None
    own = [f for f in result.findings if f.code == code]
    assert own, f"{code} not raised; got {[(f.code, f.message) for f in result.findings]}"
    assert any(f.severity == rule.severity for f in own)
    others = [
        (f.code, f.message) for f in result.findings if f.code != code and f.severity == "error"
    ]
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
    faults = mutation_modules.faults(codes, MUTATIONS, FOLDER, TEMPLATES)
    assert not faults, "\n".join(faults)
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
    "A1.1",
    "A1.2",
    "A1.3",
    "A1.4",
    "A2.1",
    "A2.2",
    "A2.3",
    "A2.4",
    "A2.5",
    "A2.6",
    "A3.1",
    "A3.2",
    "A3.3",
    "A4.1",
    "A4.2",
    "A5.1",
    "A5.2",
    "A6.1",
    "A6.2",
    "A6.3",
    "A6.4",
    "A6.5",
    "A7.1",
    "A7.2",
    "A7.3",
    "A7.4",
    "A7.5",
    "A8.1",
    "A8.2",
    "A8.3",
    "A8.4",
    "A9.1",
    "A9.2",
    "A9.3",
    "A9.4",
    "A9.5",
    "A10.1",
    "A10.2",
    "A10.3",
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
    templates: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.protocols.a import PROTOCOL

    rule = get_rule("A0604")
    assert rule is not None

    def boom(view: object) -> list:
        raise KeyError("no such column")

    broken = type(rule)(
        rule.code, rule.title, rule.protocol_ref, rule.severity, rule.requires, boom, rule.doc
    )
    monkeypatch.setitem(
        PROTOCOL.__dict__, "rules", tuple(broken if r.code == "A0604" else r for r in all_rules())
    )
    _, result = audit(templates["cpu"])
    assert [f.code for f in result.findings] == ["A0000"]
    f = result.findings[0]
    assert "A0604" in f.message and "bug" in f.message and f.evidence["exception"] == "KeyError"
    assert result.exit_code == 1


def test_select_and_ignore(templates: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(templates["cpu+claims"], root)
    MUTATIONS["A0604"].mutate(root)
    assert [f.code for f in run_check(root, select=("A06",)).findings] == ["A0604"]
    only = run_check(root, select=("A0101",))
    assert only.rules_run == ("A0101",) and only.findings == ()
    assert run_check(root, ignore=("A0604",)).findings == ()


def test_missing_artifact_skips_rules_with_reason(
    templates: dict[str, Path], tmp_path: Path
) -> None:
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


def test_findings_carry_observed_and_expected(templates: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(templates["cpu"], root)
    MUTATIONS["A0902"].mutate(root)
    (f,) = run_check(root).findings
    assert f.artifact == "resultats-bruts.csv" and f.location == "row 3"
    assert f.evidence["observed"] == 5 * f.evidence["expected"]
    assert json.loads(json.dumps(f.to_json()))["code"] == "A0902"
