"""The per-run summary an archive keeps: small, frozen, picklable, and derived from the
audit (recomputed acceptance, GPUs from placement evidence), never from the run's claims."""

from __future__ import annotations

import dataclasses
import pickle
import shutil
from pathlib import Path

import pytest
import runfactory as rf

from auditor import protocols
from auditor.engine import audit


def _summary(root: Path):
    view, result = audit(root)
    return protocols.get(result.protocol).summarize(view, result)


def test_an_accepted_run(tmp_path: Path) -> None:
    root = rf.make_clean_run(tmp_path / "run", device="cuda:0", eval_size=20)
    s = _summary(root)
    assert s.verdict == "accepted" and s.main_reason is None
    assert s.manifest_sha256 and len(s.manifest_sha256) == 64
    assert [c.config_id for c in s.configurations] == ["batch-1", "batch-4"]
    for c in s.configurations:
        assert c.accepted and c.gpu_model == "NVIDIA H100 80GB HBM3" and c.gpu_count == 1
        assert c.throughput_per_s == pytest.approx(20 / c.median_s)
        (offer,) = c.costs
        assert offer.package_total_usd_minor == 123456
        assert offer.cost_per_accepted_corpus_usd_minor == 123456.0  # one accepted corpus
    assert pickle.loads(pickle.dumps(s)) == s
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.verdict = "rejected"  # type: ignore[misc]


def test_claims_do_not_make_a_configuration_accepted(tmp_path: Path) -> None:
    clean = rf.make_clean_run(tmp_path / "clean", eval_size=20)
    root = tmp_path / "run"
    shutil.copytree(clean, root)
    lines = rf.read_jsonl(root, "outputs/batch-4/warm-3.jsonl")
    rf.write_jsonl(root, "outputs/batch-4/warm-3.jsonl", lines[:-1])  # one answer lost
    rf.rehash(root)  # every claim still says accepted
    s = _summary(root)
    assert s.verdict == "rejected" and s.main_reason
    assert not any(c.accepted for c in s.configurations)
    assert all(
        o.cost_per_accepted_corpus_usd_minor is None for c in s.configurations for o in c.costs
    )
