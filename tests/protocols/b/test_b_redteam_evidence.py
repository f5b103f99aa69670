"""Issue 21, the lies about placement, gates, power-state checks and declarations that the audit
of a protocol B run once accepted (every file re-hashed, every claim recomputed from the edited
files, as a dishonest submitter would), each beside its honest twin: the same run told
truthfully, which the rule leaves alone.

1. Records over raw evidence: a record beside the raw profile it names, a fallback the manifest
   itself records, a runtime taken from the declared string (B0401, B0402, B0405, B0501,
   B0502, B0901).
4. Gates: answers swapped in after a failed gate, a gate pass of another artifact, an ONNX
   comparison without its hash (B0502, B0801, B0804).
5. Placement: operations the report marks invalid, a compute plan of another package or from
   before the declaration, a report cut short (B0401, B0402, B0403, B0406); on Linux a deep
   model needs the GPU for every compute node (B0404).
6. Power-state checks need evidence (B0901).
7. Declarations after the first trial started (B0104).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import b_fixtures as bf
import b_runs as br
import pytest
from paths import REPO

from auditor.engine import audit, run_check
from auditor.protocols import get
from auditor.protocols.b.facts.placement import placements, runtime_of
from auditor.protocols.b.facts.power_state import discrete_gpu

PROFILE = "placement/ort-cuda.ort-profile.json"
RECORD = "placement/ort-cuda.ort.json"


def _copy(runs, name: str, tmp_path: Path) -> Path:
    root = tmp_path / "run"
    shutil.copytree(runs[name], root)
    return root


def _findings(root: Path) -> list:
    return list(run_check(root).findings)


def _errors(root: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in _findings(root):
        if f.severity == "error":
            out.setdefault(f.code, []).append(f.message)
    return out


def _accepted(root: Path) -> None:
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]


def _manifest(root: Path, fn) -> None:
    br.edit_json(root, "manifest.json", fn, seal=False)


def _policy(m: dict, pid: str) -> dict:
    return next(p for p in m["policies"] if p["policy_id"] == pid)


# -- 1. records over raw evidence -------------------------------------------------------------


def _with_profile(root: Path, nodes: list[tuple[str, str | None]]) -> None:
    """ort-cuda's record (its nodes on CUDA, as built) names a raw profile running NODES."""
    (root / PROFILE).write_bytes(br.ort_profile(nodes))
    (root / RECORD).write_bytes(
        br.ort_placement("ort-cuda", "CUDAExecutionProvider", profile_file=PROFILE)
    )
    br.rehash(root)


def test_a_record_beside_a_profile_that_ran_every_node_on_the_cpu(runs, tmp_path: Path) -> None:
    """The assignment record puts 30 of 34 placed nodes on CUDA; the profile it names ran
    every one on the CPU: the profile decides (0 % on the GPU, the compute operators on the
    CPU), and the disagreement is an error."""
    root = _copy(runs, "synthetic", tmp_path)
    _with_profile(root, [(op, "CPUExecutionProvider") for op, _ in br.ORT_GPU_NODES])
    errors = _errors(root)
    assert {"B0405", "B0402", "B0404"} <= set(errors), errors
    assert set(errors) <= {"B0405", "B0402", "B0404", "B1003"}, errors
    assert "the raw evidence, placement/ort-cuda.ort-profile.json, decides" in errors["B0405"][0]
    p = placements(audit(root)[0])["ort-cuda"]
    assert p.used == PROFILE and p.operation_share == 0.0
    assert [(d.file, d.decides) for d in p.disagreements] == [(RECORD, PROFILE)]


def test_a_record_and_the_profile_it_names_that_agree(runs, tmp_path: Path) -> None:
    root = _copy(runs, "synthetic", tmp_path)
    _with_profile(root, list(br.ORT_GPU_NODES))
    _accepted(root)
    p = placements(audit(root)[0])["ort-cuda"]
    assert p.used == RECORD and p.disagreements == () and p.operation_share == 30 / 34


def test_two_reports_without_a_source_the_less_resident_decides(runs, tmp_path: Path) -> None:
    """A second raw report of the same policy that its record does not name, every node on
    the CPU: neither is the other's source, so the one against residency decides."""
    root = _copy(runs, "synthetic", tmp_path)
    (root / PROFILE).write_bytes(
        br.ort_profile([(op, "CPUExecutionProvider") for op, _ in br.ORT_GPU_NODES])
    )
    br.rehash(root)
    assert "B0405" in _errors(root)
    assert placements(audit(root)[0])["ort-cuda"].used == PROFILE


@pytest.mark.parametrize(
    "recorded",
    [
        {
            "active_providers": ["CPUExecutionProvider"],
            "requested_providers": ["CUDAExecutionProvider", "CPUExecutionProvider"],
        },
        {"status": "fault", "reason": "ONNX Runtime fell back to CPUExecutionProvider"},
        {"device": "cpu"},
    ],
)
def test_a_cpu_fallback_the_manifest_itself_records(runs, tmp_path: Path, recorded: dict) -> None:
    """The placement record shows CUDA, the trials and figures are an accelerator's, but the
    manifest records that the session ran on the CPU: a residency failure."""
    root = _copy(runs, "synthetic", tmp_path)
    _manifest(root, lambda m: _policy(m, "ort-cuda").update(recorded))
    errors = _errors(root)
    assert "B0402" in errors and set(errors) <= {"B0402", "B1003"}, errors
    assert "the manifest records" in errors["B0402"][0]


def test_the_manifest_recording_the_providers_asked_for(runs, tmp_path: Path) -> None:
    root = _copy(runs, "synthetic", tmp_path)
    _manifest(
        root,
        lambda m: _policy(m, "ort-cuda").update(
            active_providers=["CUDAExecutionProvider", "CPUExecutionProvider"],
            requested_providers=["CUDAExecutionProvider", "CPUExecutionProvider"],
            device="CUDAExecutionProvider",
        ),
    )
    _accepted(root)


def _directml(root: Path, *, tier: str = "deep", checks: bool = True) -> None:
    """The Windows run's GPU session is a DirectML one (its record says so), declared as an
    ONNX Runtime policy with DmlExecutionProvider (policies.csv as declared)."""
    dml = {**bf.GPU_EP, "execution_provider": "DmlExecutionProvider", "ep_vendor": "Microsoft"}
    (root / "placement/gpu.winml.json").write_bytes(
        bf.winml_record(
            "gpu",
            {"mode": "explicit", "policy": None, "requested_providers": ["DmlExecutionProvider"]},
            [dml, bf.CPU_EP],
        )
    )

    def edit(m: dict) -> None:
        _policy(m, "gpu").update(runtime="onnxruntime", compute_units="DmlExecutionProvider")
        m["model_tier"] = tier
        if not checks:
            m.pop("power_state_checks")

    br.edit_csv(
        root,
        "policies.csv",
        lambda rows: [
            r.update(
                model_tier=tier,
                **(
                    {"runtime": "onnxruntime", "compute_units": "DmlExecutionProvider"}
                    if r["policy_id"] == "gpu"
                    else {}
                ),
            )
            for r in rows
        ],
    )
    _manifest(root, edit)


def test_a_directml_session_declared_as_something_else(runs, tmp_path: Path) -> None:
    """A deep model's DirectML session declared as runtime `onnxruntime`: the Windows ML
    record decides the runtime, so B5's provider list applies (DirectML is not on it) and so
    does B9 (no power-state check recorded)."""
    root = _copy(runs, "windows", tmp_path)
    _directml(root, checks=False)
    findings = _findings(root)
    errors = {f.code for f in findings if f.severity == "error"}
    assert errors == {"B0501", "B0901"}, [(f.code, f.message) for f in findings]
    (b0501,) = [f for f in findings if f.code == "B0501"]
    assert "DmlExecutionProvider on GPU" in b0501.message
    assert "declared as runtime 'onnxruntime'" in b0501.message
    assert runtime_of(audit(root)[0], "gpu") == "windows-ml"


def test_a_lite_directml_session_declared_as_onnx_runtime(runs, tmp_path: Path) -> None:
    """The same session for the lite model, its power-state checks kept: any provider will
    do for lite, and the Windows checks hold."""
    root = _copy(runs, "windows", tmp_path)
    _directml(root, tier="lite")
    _accepted(root)


def test_a_session_of_another_runtime_than_declared(runs, tmp_path: Path) -> None:
    """The Windows ML GPU session declared as a torch policy."""
    root = _copy(runs, "windows", tmp_path)
    br.edit_csv(root, "policies.csv", lambda rows: br.row(rows, "gpu").update(runtime="torch"))
    _manifest(root, lambda m: _policy(m, "gpu").update(runtime="torch"))
    errors = _errors(root)
    assert list(errors) == ["B0401"], errors
    assert "windows-ml session, the policy declares runtime 'torch'" in errors["B0401"][0]


def test_a_core_ml_plan_declared_as_onnx_runtime_still_needs_its_onnx_comparison(
    runs, tmp_path: Path
) -> None:
    root = _copy(runs, "macos", tmp_path)
    br.edit_csv(root, "policies.csv", lambda rows: [r.update(runtime="onnxruntime") for r in rows])

    def edit(m: dict) -> None:
        for p in m["policies"]:
            p["runtime"] = "onnxruntime"
        m["reference"]["artifact_file"] = "model/candidate.mlpackage"

    _manifest(root, edit)
    errors = _errors(root)
    assert set(errors) == {"B0401", "B0502"}, errors
    assert "not an ONNX artifact" in errors["B0502"][0]


# -- 4. gates ---------------------------------------------------------------------------------


def _gated(every: int):
    """Answers (trial index, answer index) -> label: the reference artifact's in every trial,
    but the gate pass (trial 0) gives another label to every EVERY-th prompt."""

    def labels(k: int, j: int) -> str:
        ref = br.reference_answer(j % 1000)
        if k == 0 and j % every == 3:
            return br.CLASSES[(br.CLASSES.index(ref) + 1) % len(br.CLASSES)]
        return ref

    return labels


def test_answers_swapped_in_after_a_failed_gate(tmp_path: Path) -> None:
    """ort-cuda's gate pass agrees 95 % with the reference (floor 99 %); its trials give the
    reference's own answers, so over them it passes, and policies.csv claims it accepted."""
    spec = br.with_policy(br.synthetic_spec(), "ort-cuda", labels=_gated(20))
    root = br.build(tmp_path / "run", spec)
    findings = _findings(root)
    errors = {f.code for f in findings if f.severity == "error"}
    assert errors == {"B0801", "B0804", "B1003"}, [(f.code, f.message) for f in findings]
    (gate,) = [f for f in findings if f.code == "B0801"]
    assert "fails its gated evaluation" in gate.message and "swapped in" in gate.message
    b0804 = [f for f in findings if f.code == "B0804"]
    assert len(b0804) == 5 and all("95.00%" in f.message for f in b0804)
    assert any(f.code == "B0803" and f.severity == "warning" for f in findings)


def test_a_gate_pass_within_the_parity_floor_of_the_trials(tmp_path: Path) -> None:
    """Two of the gate pass's 1,000 answers differ from the trials' (a GPU's nondeterminism):
    99.8 % alike, within the 99 % the parity gate allows, and both pass."""
    spec = br.with_policy(br.synthetic_spec(), "ort-cuda", labels=_gated(500))
    _accepted(br.build(tmp_path / "run", spec))


def test_a_gate_pass_of_another_artifact(runs, tmp_path: Path) -> None:
    root = _copy(runs, "synthetic", tmp_path)
    br.edit_json(
        root, "gates/gates.json", lambda g: g["policies"][1].update(artifact_sha256="e" * 64)
    )
    errors = _errors(root)
    assert list(errors) == ["B0804"] and "judged another model" in errors["B0804"][0]


@pytest.mark.parametrize("edit", ["no hash", "another export"])
def test_an_onnx_comparison_without_its_hash(runs, tmp_path: Path, edit: str) -> None:
    root = _copy(runs, "macos", tmp_path)
    if edit == "no hash":
        _manifest(root, lambda m: m["reference"].update(artifact_sha256=None))
    else:
        (root / "model/model.onnx").write_bytes(b"another export\n")
        br.rehash(root)
    errors = _errors(root)
    assert list(errors) == ["B0502"], errors
    assert ("no recorded SHA-256" if edit == "no hash" else "hashes to another") in errors["B0502"][
        0
    ]


# -- 5. placement -----------------------------------------------------------------------------


def _e5rt_selects_ane(root: Path) -> None:
    """The E5RT report selects `ane` for the five rows whose own `ane` backend it marks
    invalid ("Unsupported tensor format"), left without an estimate."""
    p = root / "placement/ane.e5rt.csv"
    p.write_text(
        p.read_text(encoding="utf-8").replace('"bnns"', '"ane"').replace('"classic_cpu"', '"ane"'),
        encoding="utf-8",
    )
    br.rehash(root)


def test_operations_the_report_marks_invalid_never_count_on_the_accelerator(
    runs, tmp_path: Path
) -> None:
    """Selected `ane` on every row, the report would give 119 of 119 on the Neural Engine:
    the five it marks invalid count off it (114 of 119, as before the edit), each an error,
    and the claimed 1.0 is not the share."""
    root = _copy(runs, "macos", tmp_path)
    _e5rt_selects_ane(root)
    br.edit_csv(
        root, "policies.csv", lambda rows: br.row(rows, "ane").update(operation_share="1.0")
    )
    errors = _errors(root)
    assert set(errors) == {"B0406", "B0403"}, errors
    assert "places 5 operation(s) on ane with no estimate there" in errors["B0406"][0]
    p = placements(audit(root)[0])["ane"]
    assert p.operation_share == pytest.approx(114 / 119) and len(p.invalid) == 5
    assert p.invalid[0] == (2, "ios17.tensor_buffer_to_tensor")


def test_the_report_as_the_tool_wrote_it(runs) -> None:
    p = placements(audit(runs["macos"])[0])["ane"]
    assert p.invalid == () and p.operation_share == pytest.approx(114 / 119)


def _plan_run(
    tmp_path: Path, plan: bytes, artifact: str | None = None, claim: str | None = None
) -> Path:
    pols = bf.coreml_policies((".computeplan.log", plan))
    pols[1] = replace(
        pols[1],
        extra={"artifact_file": artifact} if artifact else {},
        claims={"operation_share": claim} if claim else {},
    )
    cpu, ane = {"CPU": 6000, "GPU": 40, "ANE": 0}, {"CPU": 900, "GPU": 30, "ANE": 1400}
    return br.build(tmp_path / "run", bf._mac(pols, trace=bf.pm_trace({"cpu": cpu, "ane": ane})))


def test_a_compute_plan_of_another_package(tmp_path: Path) -> None:
    """The W8A8 policy's compute plan is the float16 package's (`PurposeDeepF16.mlmodelc`)."""
    root = _plan_run(tmp_path, bf.compute_plan(114, 5, 95.0), "model/PurposeDeepW8A8.mlpackage")
    errors = _errors(root)
    assert list(errors) == ["B0401"], errors
    assert "plan of the package PurposeDeepF16.mlmodelc" in errors["B0401"][0]


def test_the_compute_plan_of_the_package_run(tmp_path: Path) -> None:
    _accepted(_plan_run(tmp_path, bf.compute_plan(114, 5, 95.0), "model/PurposeDeepF16.mlpackage"))


def test_a_compute_plan_cut_short_supports_no_share(tmp_path: Path) -> None:
    """The plan's log ends in `....` (the tool's output cut): the 95.80 % over the operations
    listed supports neither the claimed share nor the floor."""
    root = _plan_run(tmp_path, bf.compute_plan(114, 5, 95.0) + b"....\n", claim="0.958")
    errors = _errors(root)
    assert {"B0402", "B0403"} <= set(errors) and set(errors) <= {"B0402", "B0403", "B1003"}
    assert "cut short" in errors["B0402"][0] and "cut short" in errors["B0403"][0]


def test_a_whole_compute_plan_supports_its_share(tmp_path: Path) -> None:
    _accepted(_plan_run(tmp_path, bf.compute_plan(114, 5, 95.0), claim="0.958"))


@pytest.mark.parametrize(("offset_s", "lie"), [(-600, True), (1, False)])
def test_placement_captured_before_the_declaration(
    runs, tmp_path: Path, offset_s: int, lie: bool
) -> None:
    """torch-cuda's record dates its diagnostic pass 10 minutes before the declaration (once
    within the hour allowed, now an error); a second after it is of the session."""
    root = _copy(runs, "synthetic", tmp_path)
    m = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    at = br.datetime.fromisoformat(m["declared_at"]) + timedelta(seconds=offset_s)
    br.edit_json(
        root,
        "placement/torch-cuda.torch.json",
        lambda d: d["diagnostic"].update(started_at=br.iso(at)),
    )
    if lie:
        errors = _errors(root)
        assert (
            list(errors) == ["B0401"]
            and "captured before the run was declared" in errors["B0401"][0]
        )
    else:
        _accepted(root)


@pytest.mark.parametrize(("tier", "severity"), [("deep", "error"), ("lite", "warning")])
def test_a_linux_gpu_policy_with_a_tensor_on_the_cpu(
    tmp_path: Path, tier: str, severity: str
) -> None:
    """torch-cuda keeps its classifier head on the CPU: a deep-tier model on Linux needs torch
    CUDA for every compute node (an error); the lite model is told (a warning)."""
    rec = json.loads(br.torch_placement("torch-cuda", "cuda:0"))
    rec["tensors"][1]["device"] = "cpu"
    spec = replace(
        br.with_policy(
            br.synthetic_spec(),
            "torch-cuda",
            placement=(".torch.json", (json.dumps(rec) + "\n").encode()),
        ),
        model_tier=tier,
    )
    root = br.build(tmp_path / "run", spec)
    own = [f for f in _findings(root) if f.code == "B0404"]
    assert [f.severity for f in own] == [severity], own
    assert "tensors (parameters and buffers) x1" in own[0].message
    if tier == "deep":
        assert "on Linux a deep-tier model needs a GPU execution provider" in own[0].message
    else:
        _accepted(root)


# -- 6. power-state checks need evidence ------------------------------------------------------


def _checks(root: Path, fn) -> None:
    _manifest(root, lambda m: fn(m["power_state_checks"]))


def test_a_bare_passed_is_missing_evidence(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    _checks(root, lambda c: [c[k].pop("evidence") for k in c])
    result = run_check(root)
    own = [f for f in result.findings if f.code == "B0901"]
    assert len(own) == 2 and all(
        f.missing_evidence and "cites no evidence" in f.message for f in own
    )
    assert result.verdict == "incomplete"


def test_evidence_the_run_does_not_hold(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    (root / "power_state/idle-hwinfo.csv").unlink()
    br.rehash(root)
    own = [f for f in _findings(root) if f.code == "B0901"]
    assert len(own) == 1 and own[0].missing_evidence and "does not hold" in own[0].message


def test_not_applicable_on_a_machine_with_a_discrete_gpu(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    _checks(
        root,
        lambda c: c.update(
            {k: {"result": "not_applicable", "detail": "no discrete GPU"} for k in c}
        ),
    )
    result = run_check(root)
    own = [f for f in result.findings if f.code == "B0901"]
    assert len(own) == 2 and all(f.missing_evidence for f in own)
    assert "environment.json lists nvidia rtx a2000" in own[0].message
    assert result.verdict == "incomplete"


def test_not_applicable_on_a_machine_without_one(tmp_path: Path) -> None:
    """A Windows ML NPU session on a machine whose environment lists no GPU and whose traces
    read none (RAPL only): `not_applicable` is credible."""
    winml = {"execution_provider": "QNNExecutionProvider", "device_type": "NPU"}
    spec = replace(
        br.Spec(
            policies=[
                br.Pol(
                    "cpu",
                    "cpu-only",
                    "windows-ml",
                    "CPUExecutionProvider",
                    latency_ms=1.8,
                    wall_s=2.0,
                    watts={"rapl": 20.0},
                    placement=(
                        ".winml.json",
                        bf.winml_record(
                            "cpu",
                            {
                                "mode": "explicit",
                                "policy": None,
                                "requested_providers": ["CPUExecutionProvider"],
                            },
                            [bf.CPU_EP],
                        ),
                    ),
                ),
                br.Pol(
                    "npu",
                    "accelerator",
                    "windows-ml",
                    "QNNExecutionProvider",
                    latency_ms=1.0,
                    wall_s=1.2,
                    watts={"rapl": 8.0},
                    placement=(
                        ".winml.json",
                        bf.winml_record(
                            "npu",
                            {
                                "mode": "explicit",
                                "policy": None,
                                "requested_providers": ["QNNExecutionProvider"],
                            },
                            [winml, bf.CPU_EP],
                        ),
                    ),
                ),
            ]
        ),
        environment={"gpus": [], "os": {"platform": "Windows", "build": "10.0.26100.4351"}},
        manifest_extra={
            "power_state_checks": {
                k: {"result": "not_applicable", "detail": "no discrete GPU in this machine"}
                for k in ("battery_skips_discrete_gpu", "idle_unloads_discrete_gpu")
            }
        },
    )
    root = br.build(tmp_path / "run", spec)
    view, result = audit(root)
    assert discrete_gpu(view) is None
    assert not [f for f in result.findings if f.code == "B0901"]


def test_a_battery_record_that_holds_the_discrete_gpu(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    (root / "power_state/battery.winml.json").write_bytes(
        bf.winml_record(
            "gpu", {"mode": "policy", "policy": "MAX_EFFICIENCY"}, [bf.GPU_EP, bf.CPU_EP]
        )
    )
    br.rehash(root)
    errors = _errors(root)
    assert list(errors) == ["B0901"], errors
    assert "NvTensorRTRTXExecutionProvider on NVIDIA RTX A2000" in errors["B0901"][0]


def test_an_idle_trace_in_which_the_gpu_stays_awake(runs, tmp_path: Path) -> None:
    """The idle check cites the real HWiNFO log as it was: the discrete GPU draws 12.4 W at
    its last reading."""
    root = _copy(runs, "windows", tmp_path)
    shutil.copy(bf.HWINFO_DELL, root / "power_state/idle-hwinfo.csv")
    br.rehash(root)
    errors = _errors(root)
    assert list(errors) == ["B0901"], errors
    assert "still draws 12.4 W" in errors["B0901"][0]


def test_a_record_is_no_evidence_of_an_idle_power_level(runs, tmp_path: Path) -> None:
    root = _copy(runs, "windows", tmp_path)
    _checks(
        root,
        lambda c: c["idle_unloads_discrete_gpu"].update(evidence="power_state/battery.winml.json"),
    )
    own = [f for f in _findings(root) if f.code == "B0901"]
    assert len(own) == 1 and own[0].missing_evidence and "shows nothing" in own[0].message


# -- 7. declarations after the first trial started --------------------------------------------


@pytest.mark.parametrize(
    ("where", "what"),
    [
        ("/gates", "the compute policies' floors and gates"),
        ("/energy", "the energy window and its minimums"),
        ("/policies/1", "policy 'torch-cuda'"),
    ],
)
def test_a_part_declared_after_the_first_trial(runs, tmp_path: Path, where: str, what: str) -> None:
    root = _copy(runs, "synthetic", tmp_path)

    def edit(m: dict) -> None:
        part = m[where.split("/")[1]]
        part = part[int(where.split("/")[2])] if where.count("/") == 2 else part
        part["declared_at"] = br.iso(br.T0 + timedelta(minutes=5))

    _manifest(root, edit)
    errors = _errors(root)
    assert list(errors) == ["B0104"], errors
    assert (
        errors["B0104"][0].startswith(f"{what} was declared at")
        and "300.0 s after the first trial (cpu trial 1)" in errors["B0104"][0]
    )


def test_the_declaration_after_the_first_trial(runs, tmp_path: Path) -> None:
    """The whole declaration dated after the trials began: every placement record of the run
    is then from before it too."""
    root = _copy(runs, "synthetic", tmp_path)
    _manifest(root, lambda m: m.update(declared_at=br.iso(br.T0 + timedelta(minutes=30))))
    errors = _errors(root)
    assert set(errors) == {"B0104", "B0401"}, errors


def test_parts_declared_apart_before_the_first_trial(runs, tmp_path: Path) -> None:
    root = _copy(runs, "synthetic", tmp_path)

    def edit(m: dict) -> None:
        for part in (m["gates"], m["placement"], m["energy"], m["policies"][2]):
            part["declared_at"] = br.iso(br.T0 - timedelta(seconds=30))

    _manifest(root, edit)
    _accepted(root)


# -- the decisions, written down ----------------------------------------------------------------


def test_the_protocol_page_states_each_decision_with_its_rule() -> None:
    """docs/protocol.md's decisions section names, for each decision of issue 21 the auditor
    enforces, a rule that exists."""
    text = (REPO / "docs/protocol.md").read_text(encoding="utf-8")
    section = text[text.index("### Decisions where the source leaves protocol B open") :]
    codes = {r.code for r in get("residency-energy").rules}
    for phrase, code in (
        ("operation share", "B0402"),
        ("estimated-cost share", "B0403"),
        ("failed a gate", "B0803"),
        ("Linux", "B0404"),
    ):
        item = next(line for line in section.split("\n- ") if phrase in line)
        assert code in re.findall(r"B\d{4}", item) and code in codes, (phrase, item)
