"""Which answers files `audit replay` compares in a protocol B run, and the floor each is
judged against (`Protocol.replay_sources`; docs/replay.md): the reference answers, then each
policy's gate and trial answers, exact for a float32 CPU policy, else the declared parity
floor (`gates.agreement_floor`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.replay.compare import DEFAULT_FLOOR, Threshold
from auditor.replay.contract import GATE_FILE, REFERENCE_FILE, TRIAL_FILE, Source, by_id, on_cpu


def _b_floor(manifest: Mapping[str, Any], what: str) -> Threshold:
    gates = manifest.get("gates")
    floor = gates.get("agreement_floor") if isinstance(gates, dict) else None
    if isinstance(floor, (int, float)) and not isinstance(floor, bool) and 0 < floor <= 1:
        return Threshold(float(floor), f"the declared parity floor gates.agreement_floor; {what}")
    return Threshold(DEFAULT_FLOOR, f"the default floor, no parity floor declared; {what}")


def _policy_threshold(manifest: Mapping[str, Any], p: Mapping[str, Any]) -> Threshold:
    precision = p.get("precision", "float32")
    runtime, units = p.get("runtime"), p.get("compute_units")
    active = p.get("active_providers")
    cpu = (runtime == "torch" and on_cpu(p.get("device") or units)) or (
        runtime == "onnxruntime"
        and units == "CPUExecutionProvider"
        and (not isinstance(active, list) or active[:1] == [units])
    )
    if precision == "float32" and cpu:
        return Threshold(1.0, f"float32 on the CPU, {runtime} {units}")
    return _b_floor(manifest, f"{precision} on {runtime} {units}")


def sources(manifest: Mapping[str, Any], files: list[str]) -> list[Source]:
    """The reference answers (exact when they are the archived model's own), then each
    policy's gate and trial answers: exact for a float32 CPU policy, else the parity floor; a
    candidate the run rejected at its gate is compared but not judged."""
    out: list[Source] = []
    reference = got if isinstance(got := manifest.get("reference"), dict) else {}
    if REFERENCE_FILE in files:
        own = reference.get("artifact_file") is not None and reference.get(
            "artifact_sha256"
        ) == manifest.get("artifact_sha256")
        threshold = (
            Threshold(1.0, "the reference answers are the archived model's own, float32 on the CPU")
            if own
            else _b_floor(manifest, "the reference is another artifact's answers")
        )
        out.append(Source(REFERENCE_FILE, "reference", None, threshold))
    policies = by_id(manifest.get("policies"), "policy_id")
    for rel in files:
        m = GATE_FILE.match(rel) or TRIAL_FILE.match(rel)
        if m is None:
            continue
        p = policies.get(m["config"])
        kind = "gate" if rel.startswith("gates/") else "trial"
        if p is None:
            out.append(
                Source(
                    rel,
                    kind,
                    m["config"],
                    Threshold(DEFAULT_FLOOR, "the policy is not in the manifest's policies"),
                )
            )
            continue
        rejected = p.get("status") == "rejected_at_gate"
        out.append(
            Source(
                rel,
                kind,
                m["config"],
                _policy_threshold(manifest, p),
                judged=not rejected,
                note="a candidate the run rejected at its parity gate (B8): compared, not judged"
                if rejected
                else None,
            )
        )
    return out
