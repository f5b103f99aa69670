"""The engine knows no protocol: it picks the package from the manifest's `protocol`,
reports an unknown one as one clear finding, and a protocol package's rules are discovered
whatever their letter, each code matching its package's prefix and its module's name."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
import runfactory as rf

from auditor import protocols
from auditor.engine import run_check
from auditor.protocols.base import Protocol
from auditor.rule import Rule


def test_every_rule_code_matches_its_package_prefix_and_module() -> None:
    seen: set[str] = set()
    for p in protocols.all_protocols():
        assert p.rules, p.name
        package = importlib.import_module(p.rules_package)
        assert p.rules_package.startswith(f"auditor.protocols.{p.prefix.lower()}.")
        for r in p.rules:
            assert re.fullmatch(rf"{p.prefix}\d{{4}}", r.code), r.code
            assert r.protocol_ref.startswith(p.prefix), (r.code, r.protocol_ref)
            module = sys.modules[r.check.__module__]
            assert module.__name__.startswith(package.__name__ + ".")
            assert module.__name__.rsplit(".", 1)[1][:5] == r.code.lower()
            assert r.code not in seen
            seen.add(r.code)
    assert {r.code for r in protocols.all_rules()} == seen


def _fake_protocol(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, modules: dict[str, str]
) -> Protocol:
    name = f"fakeproto_{tmp_path.name}"  # a package per test: none is cached by another
    pkg = tmp_path / name / "rules"
    pkg.mkdir(parents=True)
    (tmp_path / name / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    for module, body in modules.items():
        (pkg / f"{module}.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    return Protocol(
        name="fake",
        prefix="B",
        title="fake",
        rules_package=f"{name}.rules",
        parsed_prefixes=(),
        signature_files=(),
        load=lambda files: files,
        internal_error_ref="B10",
    )


RULE_B = '''
    """B0101: a rule of another protocol.

    What it checks: nothing. Why it matters: discovery. Example: none.
    """
    from auditor.rule import rule

    @rule(code="{code}", title="t", protocol_ref="B1", severity="error")
    def check(view):
        return []

    RULE = check
'''


def test_rules_of_any_letter_are_discovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _fake_protocol(
        tmp_path,
        monkeypatch,
        {"b0101_something": RULE_B.format(code="B0101"), "_helpers": "X = 1\n"},
    )
    assert [r.code for r in p.rules] == ["B0101"] and isinstance(p.rules[0], Rule)


def test_a_rule_with_the_wrong_prefix_is_refused_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _fake_protocol(tmp_path, monkeypatch, {"b0101_wrong": RULE_B.format(code="A0101")})
    with pytest.raises(ValueError, match="does not match"):
        _ = p.rules


def test_an_unknown_protocol_is_one_clear_finding(tmp_path: Path) -> None:
    root = rf.make_clean_run(tmp_path / "run")
    doc = json.loads((root / "manifest.json").read_text())
    doc["protocol"] = "energy-v9"
    (root / "manifest.json").write_text(json.dumps(doc))
    result = run_check(root)
    (f,) = result.findings
    assert (f.code, f.severity, f.artifact, f.pointer) == (
        "R0001",
        "error",
        "manifest.json",
        "/protocol",
    )
    assert "energy-v9" in f.message and result.verdict == "rejected" and result.exit_code == 1
    assert result.rules_run == () and result.skipped == ()


def test_the_manifest_picks_the_package(tmp_path: Path) -> None:
    root = rf.make_clean_run(tmp_path / "run")
    assert protocols.get("accepted-corpus-cost").prefix == "A"
    assert protocols.get("no-such-protocol") is None
    result = run_check(root)
    assert result.protocol == "accepted-corpus-cost" and result.verdict == "accepted"
    assert all(code.startswith("A") for code in result.rules_run)
    # without a readable manifest, the files only protocol A's runs hold decide
    shutil.copy(root / "manifest.json", tmp_path / "m.json")
    (root / "manifest.json").write_text("{not json")
    broken = run_check(root)
    assert broken.protocol == "accepted-corpus-cost"
    assert any(f.code == "A0001" for f in broken.findings)


def test_every_rule_says_what_to_do_and_cites_a_rule_of_the_protocol_text() -> None:
    from auditor import protocol_text

    text = protocol_text.rules()
    for r in protocols.all_rules():  # a rule without its own fix gets rule.DEFAULT_FIX
        assert r.fix and r.fix.endswith("."), r.code
        assert r.protocol_ref in text, (r.code, r.protocol_ref)
        assert r.info().fix == r.fix


def test_the_protocol_text_has_one_anchor_per_rule() -> None:
    from auditor import protocol_text

    groups = {1: 4, 2: 6, 3: 3, 4: 2, 5: 2, 6: 5, 7: 5, 8: 4, 9: 5, 10: 3}  # PROTOCOL.md
    want = [f"A{g}.{i}" for g, n in groups.items() for i in range(1, n + 1)]
    want += [f"B{i}" for i in range(1, 11)] + ["RUN_DIR"]
    rules = protocol_text.rules()
    assert list(rules) == want
    page = protocol_text.source().read_text(encoding="utf-8")
    for ref, r in rules.items():
        assert page.count(f'<a id="{ref}"></a>') == 1
        assert r.text and "<" not in r.text and "**" not in r.text, ref
        assert r.protocol.startswith(("Protocol A", "Protocol B", "The run directory"))
