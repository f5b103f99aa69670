"""The whole replay of one run, in the order that keeps anything from running on a file that is
not the one declared (docs/replay.md):

1. the manifest and its `replay` section (not replayable: RA01/RB01);
2. the SHA-256 of the archived model and tokenizer files against every hash the manifest
   declares for them, before anything else reads them (RA02);
3. the tokenizer from its data (RA03) and the model's graph checked (RA04);
4. the inputs file (RA05), the seeded sample of its IDs;
5. one ONNX Runtime session on the CPU, the sampled texts scored (RA04), the labels;
6. every answers file compared on the sample (RA05, RA06, RA07).

Returns a `ReplayResult`; raises `AuditorError` only for bad usage (not a run directory, a
protocol replay does not know). Never prints.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from auditor.dirkind import absent, wrong_kind
from auditor.errors import AuditorError
from auditor.fsutil import list_files
from auditor.model import Finding
from auditor.readers.base import Fault
from auditor.replay import DEFAULT_SAMPLE, codes, compare, contract, sample, tokenizers
from auditor.replay import run as onnx_run
from auditor.replay.result import ReplayResult

FAULTS_SHOWN = 5
"""Faults of one file reported as findings (the rest are counted in the last one)."""


class _Stop(Exception):
    """Replay cannot go on; the findings say why."""


@dataclass
class _Replay:
    root: Path
    protocol: str
    manifest: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)

    def add(
        self,
        number: str,
        message: str,
        *,
        artifact: str | None = None,
        missing: bool = False,
        fault: Fault | None = None,
        pointer: str | None = None,
        **evidence: Any,
    ) -> None:
        rule = codes.rule_of(self.protocol, number)
        place = (
            {"pointer": pointer}
            if fault is None
            else {"line": fault.line, "column": fault.column, "pointer": fault.pointer}
        )
        observed, expected = evidence.pop("observed", None), evidence.pop("expected", None)
        self.findings.append(
            rule.finding(
                message,
                artifact=artifact,
                missing_evidence=missing,
                **place,
                observed=observed,
                expected=expected,
                evidence=evidence,
            )
        )

    def faults(self, number: str, faults: tuple[Fault, ...], what: str) -> None:
        shown = faults[:FAULTS_SHOWN]
        for n, f in enumerate(shown, 1):
            more = (
                f" (and {len(faults) - n} more fault(s) in the file)"
                if n == len(shown) < len(faults)
                else ""
            )
            self.add(
                number,
                f"{what}: {f.message}{more}",
                artifact=f.file,
                fault=f,
                missing=f.kind == "missing",
                **({"observed": f.value} if f.value is not None else {}),
            )

    def read(self, rel: str, limit: int, number: str, what: str) -> bytes:
        data = contract.read_file(self.root, rel, limit)
        if isinstance(data, Fault):
            self.faults(number, (data,), what)
            raise _Stop
        return data


def replay(
    run_dir: Path, *, sample_size: int = DEFAULT_SAMPLE, seed: int | None = None
) -> ReplayResult:
    """Replay SAMPLE_SIZE IDs of the run at RUN_DIR (drawn with SEED, or the default seed)."""
    root = Path(run_dir)
    if problem := wrong_kind(root, "run", "audit replay"):
        raise AuditorError(problem)
    if problem := absent(root):
        raise AuditorError(problem)
    if sample_size < 1:
        raise AuditorError(f"--sample {sample_size}: replay at least one ID")
    if seed is not None and seed < 0:
        raise AuditorError(f"--seed {seed}: a seed is a non-negative integer")
    manifest, data, fault = contract.read_manifest(root)
    if manifest is None or data is None:
        assert fault is not None
        if fault.kind == "missing":
            raise AuditorError(f"{run_dir}: not a run directory (no {contract.MANIFEST})")
        raise AuditorError(
            f"{run_dir}/{contract.MANIFEST} cannot be read ({fault.message}); "
            "`audit check` reports why"
        )
    protocol = manifest.get("protocol")
    if not isinstance(protocol, str) or protocol not in codes.PROTOCOL_PREFIX:
        raise AuditorError(
            f"{run_dir}: replay knows the protocols "
            f"{', '.join(sorted(codes.PROTOCOL_PREFIX))}, not {protocol!r}"
        )
    state = _Replay(root, protocol, manifest)
    manifest_sha = hashlib.sha256(data).hexdigest()
    drawn = model = tokenizer_info = None
    files: list[compare.Agreement] = []
    try:
        section = _contract(state)
        model_data, tok_data = _artifacts(state, section)
        tok = _tokenizer(state, section, tok_data)
        opset = _graph(state, section, model_data, tok)
        texts = _inputs(state, section)
        seed_source = "--seed"
        if seed is None:
            seed = sample.default_seed(manifest_sha)
            seed_source = (
                f"default: {sample.SEED_TAG!r} mixed with the manifest's SHA-256 {manifest_sha}"
            )
        drawn = sample.draw(texts, sample_size, seed, seed_source)
        labels = section["labels"]
        try:
            session = onnx_run.Session.create(model_data, section["model"])
            scores = session.scores(
                tok.encode,
                [texts[i] for i in drawn.ids],
                len(labels),
                batch=getattr(tok, "batch", onnx_run.BATCH),
            )
        except onnx_run.ModelRefused as exc:
            state.add(codes.MODEL, str(exc), artifact=section["model"]["file"])
            raise _Stop from None
        except tokenizers.TokenizerFailed as exc:
            state.add(codes.TOKENIZER, str(exc), artifact=section["tokenizer"]["file"])
            raise _Stop from None
        model = {
            "file": section["model"]["file"],
            "sha256": section["model"]["sha256"],
            "opset": opset,
            "runtime": session.runtime,
            "threads": onnx_run.THREADS,
        }
        tokenizer_info = {k: section["tokenizer"][k] for k in ("file", "sha256", "kind")}
        files = _compare(state, drawn, labels, scores)
    except _Stop:
        pass
    experiment = manifest.get("experiment_id")
    return ReplayResult(
        str(run_dir),
        protocol,
        experiment if isinstance(experiment, str) else None,
        manifest_sha,
        drawn,
        model,
        tokenizer_info,
        tuple(files),
        tuple(sorted(state.findings, key=Finding.sort_key)),
    )


def _contract(state: _Replay) -> dict[str, Any]:
    section = state.manifest.get("replay")
    if section is None:
        why = state.manifest.get("replay_unavailable")
        reason = why if isinstance(why, str) and why else "the manifest has no `replay` section"
        state.add(
            codes.NOT_REPLAYABLE,
            f"not replayable: {reason}",
            artifact=contract.MANIFEST,
            missing=True,
            pointer="/replay",
        )
        raise _Stop
    faults = contract.contract_faults(section)
    if faults:
        state.faults(
            codes.NOT_REPLAYABLE, faults, "the manifest's replay section breaks its schema"
        )
        raise _Stop
    return section


def _artifacts(state: _Replay, section: dict[str, Any]) -> tuple[bytes, bytes]:
    """Both files' bytes, once every hash the manifest declares for them is checked."""
    listed = state.manifest.get("artifacts")
    listed = listed if isinstance(listed, dict) else {}
    revisions = state.manifest.get("revisions")
    revision = revisions.get("tokenizer") if isinstance(revisions, dict) else None
    out = []
    ok = True
    for what, part, limit, too_large in (
        ("model", section["model"], onnx_run.MAX_BYTES, codes.MODEL),
        ("tokenizer", section["tokenizer"], tokenizers.MAX_BYTES, codes.TOKENIZER),
    ):
        rel = part["file"]
        data = contract.read_file(state.root, rel, limit)
        if isinstance(data, Fault):
            state.faults(
                too_large if data.kind == "limit" else codes.HASH, (data,), f"the archived {what}"
            )
            ok = False
            continue
        actual = hashlib.sha256(data).hexdigest()
        declared = [("the replay section", f"/replay/{what}/sha256", part["sha256"])]
        if isinstance(listed.get(rel), str):
            declared.append(("the artifacts table", f"/artifacts/{rel}", listed[rel]))
        if what == "tokenizer" and isinstance(revision, str):
            declared.append(
                ("revisions.tokenizer", "/revisions/tokenizer", revision.removeprefix("sha256:"))
            )
        for where, pointer, value in declared:
            if value != actual:
                state.add(
                    codes.HASH,
                    f"the archived {what} {rel} hashes to {actual}, not to "
                    f"the {value} {where} declares; nothing was run",
                    artifact=rel,
                    observed=actual,
                    expected=value,
                    declared_in=pointer,
                )
                ok = False
        out.append(data)
    if not ok:
        raise _Stop
    return out[0], out[1]


def _tokenizer(state: _Replay, section: dict[str, Any], data: bytes) -> tokenizers.Tokenizer:
    part = section["tokenizer"]
    tok, faults = tokenizers.load(
        data, name=part["file"], kind=part["kind"], context=section["context"]
    )
    if tok is None:
        state.faults(
            codes.TOKENIZER, faults or (Fault(part["file"], "unusable"),), "the tokenizer data"
        )
        raise _Stop
    return tok


def _graph(
    state: _Replay, section: dict[str, Any], data: bytes, tok: tokenizers.Tokenizer
) -> int | None:
    model = section["model"]
    unfed = [i["tensor"] for i in model["inputs"] if i["tensor"] not in tok.tensors]
    try:
        if unfed:
            raise onnx_run.ModelRefused(
                f"the replay section feeds graph inputs from tensor(s) {unfed}, which tokenizer "
                f"kind {tok.kind} does not produce (it produces {list(tok.tensors)})"
            )
        info = onnx_run.inspect(data, model)
    except onnx_run.ModelRefused as exc:
        state.add(codes.MODEL, f"{exc}; nothing was run", artifact=model["file"])
        raise _Stop from None
    return info["opset"]


def _inputs(state: _Replay, section: dict[str, Any]) -> dict[str, str]:
    rel = section["inputs"]
    data = state.read(rel, contract.MAX_ANSWERS_BYTES, codes.FILES, "the inputs file")
    texts, faults = contract.read_inputs(data, rel)
    state.faults(codes.FILES, faults, "the inputs file")
    if not texts:
        state.add(
            codes.FILES, "the inputs file holds no usable text; nothing to replay", artifact=rel
        )
        raise _Stop
    return texts


def _compare(
    state: _Replay, drawn: sample.Sample, labels: list[str], scores: np.ndarray
) -> list[compare.Agreement]:
    best = scores.argmax(axis=1)
    replayed = {i: labels[int(k)] for i, k in zip(drawn.ids, best, strict=True)}
    by_label = {
        i: dict(zip(labels, map(float, row), strict=True))
        for i, row in zip(drawn.ids, scores, strict=True)
    }
    wanted = set(drawn.ids)
    out = []
    for src in contract.sources(state.manifest, list_files(state.root)):
        data = contract.read_file(state.root, src.file, contract.MAX_ANSWERS_BYTES)
        if isinstance(data, Fault):
            state.faults(codes.FILES, (data,), "an answers file")
            continue
        answered, faults = contract.read_answers(data, src.file, wanted)
        state.faults(codes.FILES, faults, "an answers file")
        result = compare.compare(
            src.file,
            src.kind,
            src.config,
            src.threshold,
            src.judged,
            src.note,
            answered,
            drawn.ids,
            replayed,
            by_label,
        )
        out.append(result)
        _judge(state, result)
    if not any(a.compared for a in out):
        state.add(
            codes.FILES,
            "no answers file of the run answers any sampled ID: nothing "
            "to compare with the replayed model",
            missing=True,
        )
    return out


def _judge(state: _Replay, a: compare.Agreement) -> None:
    status = a.status
    if status not in ("failed", "inconclusive"):
        return
    interval = a.interval
    assert a.agreement is not None and interval is not None
    wrong = [d for d in a.disagreements if not d.tie]
    first = wrong[0]
    margin = "" if first.margin is None else f" by a margin of {first.margin:.4g}"
    summary = (
        f"{len(wrong)} of {a.compared} sampled IDs answered otherwise than the archived "
        f"model ({a.agreement:.1%} agreement, 95% interval {interval[0]:.1%} to "
        f"{interval[1]:.1%}; {a.threshold.describe()}); "
        f"e.g. {first.id}: answered {', '.join(first.answered)}, replayed "
        f"{first.replayed}{margin}"
    )
    evidence: dict[str, Any] = {
        "observed": round(a.agreement, 6),
        "expected": a.threshold.floor,
        "ci95": [round(x, 6) for x in interval],
        "disagreeing": [d.id for d in wrong[:20]],
    }
    if status == "failed":
        state.add(codes.DISAGREE, summary, artifact=a.file, **evidence)
    else:
        state.add(
            codes.INCONCLUSIVE,
            summary + "; the sample cannot tell whether the file "
            "meets its floor: replay more IDs (--sample)",
            artifact=a.file,
            **evidence,
        )
