"""schemas/conventions.json holds the protocols' fixed numbers once: every entry says its
value, the protocol rule it comes from (an anchor of docs/protocol.md, or the doc that fixes
it) and what it is; the runner and the auditor hold the same value because they read it."""

from __future__ import annotations

import re
from pathlib import Path

import schemas
from auditor.protocols.a import economics as a_economics
from auditor.protocols.b.facts import declared, energy
from auditor.replay import tokenizer_hf
from runner.a import config as a_config
from runner.b import config as b_config
from runner.b.energy import window
from runner.workloads import hf_inference

ROOT = Path(__file__).resolve().parents[1]


def test_every_convention_says_its_value_rule_and_meaning() -> None:
    protocol = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([AB][0-9.]+)"></a>', protocol))
    found = schemas.conventions()
    assert set(found) == {"A", "B", "replay"}
    for group, names in found.items():
        for name, c in names.items():
            assert set(c) == {"value", "ref", "what"} and c["what"], (group, name)
            ref = c["ref"]
            assert ref in anchors or (ROOT / ref).is_file(), (group, name, ref)


def test_the_runner_and_the_auditor_read_the_same_numbers() -> None:
    b = schemas.conventions()["B"]
    assert b_config.PROMPTS == declared.PROTOCOL_PROMPTS == b["prompts"]["value"]
    assert b_config.WARMUP == declared.PROTOCOL_WARMUP == b["warmup"]["value"]
    assert b_config.TRIALS == declared.MIN_TRIALS == b["trials_per_policy"]["value"]
    floor = b["min_samples_per_window"]["value"]
    assert b_config.MIN_SAMPLES == window.MIN_READINGS == energy.MIN_SAMPLES == floor
    assert window.Minimums(0.1, 1, 0).min_readings == floor
    assert schemas.convention("A", "warm_passes_per_variant") == a_config.WARM_PASSES
    assert schemas.convention("A", "b200_gpus_per_lot") == a_economics.B200_GPUS_PER_LOT
    assert hf_inference.PAD_TOKENS == tokenizer_hf._PAD_TOKENS == ("[PAD]", "<pad>")
