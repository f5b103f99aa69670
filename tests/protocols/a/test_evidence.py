"""Issue 10: every verdict from evidence. One self-consistent lie per member of the five
classes (the manifest re-hashed, as a submitter may) must raise the rule that recomputes
the fact; the legitimate variants (an honest OOM row, local UTC offsets and lower-case
RFC 3339 times, a variant that fails quality and says so, notes that merely use a word)
must stay `accepted`; and nothing a run holds crashes `audit check` or the report."""

from __future__ import annotations

import shutil
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
import runfactory as rf
from runfactory import (
    edit_json,
    edit_output,
    edit_rows,
    edit_timeline,
    pass_row,
    set_at,
    shift_iso,
)
from test_mutations import MUTATIONS

from auditor.engine import audit, run_check
from auditor.model import AuditResult

H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("evidence")
    return {
        "cpu": rf.make_clean_run(base / "cpu", claims=True),
        "cuda": rf.make_clean_run(base / "cuda", device="cuda:0", claims=True),
    }


def _copy(templates: dict[str, Path], flavour: str, tmp_path: Path) -> Path:
    root = tmp_path / "run"
    shutil.copytree(templates[flavour], root)
    return root


def _errors(result: AuditResult) -> list[tuple[str, str | None, str]]:
    return [(f.code, f.artifact, f.message) for f in result.findings if f.severity == "error"]


def _text_edit(root: Path, rel: str, fn: Callable[[str], str]) -> None:
    p = root / rel
    p.write_text(fn(p.read_text(encoding="utf-8")), encoding="utf-8")
    rf.rehash(root)


# -- class 1: facts derived from evidence, never from a declaration ------------------------


def c1_cuda_claim_on_cpu_build(root: Path) -> None:
    """Every file says cuda:0 and H100, the device maps included; the torch build is +cpu."""
    for p in sorted((root / "evidence/placement").rglob("*.json")):
        edit_json(
            root,
            p.relative_to(root).as_posix(),
            lambda d: d.update(
                requested_device="cuda:0",
                parameter_devices={"cuda:0": 12},
                input_devices={"cuda:0": 8},
                gpus_used=[{"index": 0, "name": H100}],
            ),
            rehash=False,
        )
    edit_json(
        root,
        "environment.json",
        lambda e: e.update(device="cuda:0", gpu_model=H100, gpu_count=1),
        rehash=False,
    )
    doc = rf.read_json(root, "manifest.json")
    for v in doc["variants"]:
        v["device"] = "cuda:0"
    rf.write_json(root, "manifest.json", doc)
    edit_rows(
        root, lambda rows: [r.update(device="cuda:0", gpu_model=H100, gpu_count="1") for r in rows]
    )


def c1_declared_gpu_list(root: Path) -> None:
    """The accepted lie of the issue: a CPU run whose placement records *declare* an H100
    (`gpus_used`) while their device maps say cpu; rows and environment say one H100."""
    for p in sorted((root / "evidence/placement").rglob("*.json")):
        edit_json(
            root,
            p.relative_to(root).as_posix(),
            lambda d: d.update(gpus_used=[{"index": 0, "name": H100}]),
            rehash=False,
        )
    edit_json(
        root, "environment.json", lambda e: e.update(gpu_model=H100, gpu_count=1), rehash=False
    )
    edit_rows(root, lambda rows: [r.update(gpu_model=H100, gpu_count="1") for r in rows])


def c1_full_chain_too_short(root: Path) -> None:
    """Half the window of a full-chain pass, in the CSV and the timeline alike."""

    def halve(t: list[dict]) -> None:
        e = next(x for x in t if x["phase"] == "warm")
        e["elapsed_seconds"] = round(e["elapsed_seconds"] / 2, 6)

    edit_timeline(root, halve)
    t = next(x for x in rf.read_jsonl(root, "timeline.jsonl") if x["phase"] == "warm")
    edit_rows(
        root,
        lambda rows: pass_row(rows, t["variant_id"], "warm", t["run_index"]).update(
            elapsed_seconds=str(t["elapsed_seconds"])
        ),
    )


def c1_duplicate_timeline_entry(root: Path) -> None:
    edit_timeline(root, lambda t: t.insert(8, dict(t[8])))


def c1_cold_in_warmup_process(root: Path) -> None:
    edit_timeline(root, lambda t: t[1].update(pid=5000))
    rel = f"evidence/placement/{t1(root)}.json"
    edit_json(root, rel, lambda d: set_at(d, "pid", 5000))


def t1(root: Path) -> str:
    e = rf.read_jsonl(root, "timeline.jsonl")[1]
    return f"{e['variant_id']}/{e['phase']}-{e['run_index']}"


def c1_pass_points_at_other_files(root: Path) -> None:
    edit_timeline(root, lambda t: t[6].update(output_file=t[7]["output_file"]))


def c1_model_file_replaced(root: Path) -> None:
    (root / "model/model.safetensors").write_bytes(b"other weights")
    rf.rehash(root)


def c1_inputs_reordered(root: Path) -> None:
    lines = rf.read_jsonl(root, "corpus/eval-inputs.jsonl")
    lines[0], lines[1] = lines[1], lines[0]
    rf.write_jsonl(root, "corpus/eval-inputs.jsonl", lines)
    rf.rehash(root)


def c1_split_size(root: Path) -> None:
    edit_json(root, "manifest.json", lambda m: set_at(m, "corpus/train_size", 7), rehash=False)


def c1_manifest_restates_offer_wrongly(root: Path) -> None:
    edit_json(
        root,
        "manifest.json",
        lambda m: m["economics"].update(package_total_usd_minor=1),
        rehash=False,
    )


# -- class 2: strict, faithful parsing ----------------------------------------------------


def c2_csv_int_beyond_64_bits(root: Path) -> None:
    # not the seed: a seed is an integer of any size (A1.2, docs/protocol.md)
    edit_rows(root, lambda rows: rows[1].update(context="9" * 30))


def c2_csv_number_overflows(root: Path) -> None:
    edit_rows(root, lambda rows: rows[1].update(elapsed_seconds="1e999"))


def c2_json_repeated_key(root: Path) -> None:
    _text_edit(
        root,
        "environment.json",
        lambda s: s.replace('"gpu_count": 0,', '"gpu_count": 0,\n  "gpu_count": 1,'),
    )


def c2_jsonl_repeated_escaped_key(root: Path) -> None:
    def dup(text: str) -> str:
        lines = text.splitlines()
        lines[4] = lines[4].replace('"status": "ok"', '"status": "ok", "st\\u0061tus": "oom"')
        return "\n".join(lines) + "\n"

    _text_edit(root, "timeline.jsonl", dup)


def c2_output_repeated_escaped_id(root: Path) -> None:
    """`"\\u0069d"` is `"id"`: an output line answering for two IDs."""
    _text_edit(
        root,
        "outputs/batch-1/warm-2.jsonl",
        lambda s: s.replace(
            '{"id": "ev-000003",', '{"id": "ev-000003", "\\u0069d": "ev-000004",', 1
        ),
    )


def c2_nan_in_a_trace(root: Path) -> None:
    _text_edit(
        root,
        "traces/memory/batch-1/warm-2.json",
        lambda s: s.replace(
            '"peak_allocated_bytes": ', '"peak_allocated_bytes": NaN, "x_peak": ', 1
        ),
    )


def c2_bad_date(root: Path) -> None:
    edit_json(root, "environment.json", lambda e: set_at(e, "observed_at", "2026-13-45T25:00:00Z"))


def c2_expected_id_padded(root: Path) -> None:
    _text_edit(root, "corpus/expected_ids.txt", lambda s: s + "ev-000001 \n")


def c2_output_id_other_normalisation(root: Path) -> None:
    """An expected ID written precomposed (NFC); one output answers it decomposed (NFD)."""
    nfc = unicodedata.normalize("NFC", "ev-caf\u00e9")
    _text_edit(root, "corpus/expected_ids.txt", lambda s: s + nfc + "\n")
    rows = rf.read_jsonl(root, "corpus/references.jsonl")
    rf.write_jsonl(root, "corpus/references.jsonl", [*rows, {"id": nfc, "label": "neutral"}])
    rows = rf.read_jsonl(root, "corpus/eval-inputs.jsonl")
    rf.write_jsonl(root, "corpus/eval-inputs.jsonl", [*rows, {"id": nfc, "text": "x"}])
    for p in sorted((root / "outputs").rglob("*.jsonl")):
        rel = p.relative_to(root).as_posix()
        nfd = unicodedata.normalize("NFD", nfc) if rel.endswith("batch-1/warm-2.jsonl") else nfc
        edit_output(root, rel, lambda lines, i=nfd: [*lines, {"id": i, "label": "neutral"}])
    for rel in ("manifest.json",):
        edit_json(
            root,
            rel,
            lambda m: (
                m["corpus"].update(eval_size=31),
                m["corpus"]["truncation"].update(eval_texts=31),
            ),
            rehash=False,
        )
    edit_rows(root, lambda rows: [r.update(expected_ids="31") for r in rows])
    rf.recompute_claims(
        root,
        keep=[
            (_row_index(root, "batch-1", "warm", 2), c) for c in ("ids_match", "corpus_accepted")
        ],
    )


def _row_index(root: Path, v: str, p: str, r: int) -> int:
    rows = rf.read_rows(root)
    return rows.index(pass_row(rows, v, p, r)) + 1


# -- class 3: bounded resources -----------------------------------------------------------


def c3_deep_nesting(root: Path) -> None:
    _text_edit(
        root,
        "traces/memory/batch-1/warm-2.json",
        lambda s: s.replace('"device": ', '"deep": ' + "[" * 5000 + "]" * 5000 + ', "device": ', 1),
    )


def c3_integer_of_thousands_of_digits(root: Path) -> None:
    _text_edit(
        root,
        "evidence/placement/batch-1/warm-2.json",
        lambda s: s.replace('"pid": ', '"pid": ' + "7" * 5000 + ', "x": ', 1),
    )


def c3_not_utf8_name(root: Path) -> None:
    (root / "outputs" / "batch-1").joinpath(
        b"warm-\xff.jsonl".decode("utf-8", "surrogateescape")
    ).write_bytes(b"")


# -- class 4: no verdict from prose (typed claims are in test_mutations) -------------------


def c4_unexplained_failure(root: Path) -> None:
    edit_timeline(root, lambda t: t[9].update(status="error", incident=None))


def c4_incident_of_another_kind(root: Path) -> None:
    edit_timeline(
        root, lambda t: t[9].update(status="oom", incident={"kind": "error", "message": "failed"})
    )


# -- class 5: the most specific protocol rule ---------------------------------------------


def c5_empty_model_revision_cell(root: Path) -> None:
    edit_rows(root, lambda rows: rows[0].update(model_revision=""))


def c5_empty_model_revision_declared(root: Path) -> None:
    edit_json(root, "manifest.json", lambda m: set_at(m, "revisions/model", ""), rehash=False)


#: name -> (template, mutation, rule that must raise an error, protocol rule it must cite)
LIES: dict[str, tuple[str, Callable[[Path], None], str, str | None]] = {
    "c1 cuda claimed on a +cpu build": ("cpu", c1_cuda_claim_on_cpu_build, "A0404", "A4.1"),
    "c1 GPU model the device maps do not show": ("cpu", MUTATIONS["A0404"].mutate, "A0404", None),
    "c1 a declared gpus_used list": ("cpu", c1_declared_gpu_list, "A0402", "A4.2"),
    "c1 peaks not in memory_stats": ("cuda", MUTATIONS["A0709"].mutate, "A0709", "A7.2"),
    "c1 full-chain elapsed half its window": ("cpu", c1_full_chain_too_short, "A0501", None),
    "c1 a row without timeline entry": ("cpu", MUTATIONS["A0607"].mutate, "A0607", None),
    "c1 a pass with two timeline entries": ("cpu", c1_duplicate_timeline_entry, "A0607", None),
    "c1 warm pass outside the warmed process": ("cpu", MUTATIONS["A0608"].mutate, "A0608", None),
    "c1 cold pass in the warm-up process": ("cpu", c1_cold_in_warmup_process, "A0606", None),
    "c1 a pass naming another's output": ("cpu", c1_pass_points_at_other_files, "A0105", None),
    "c1 model file not the pinned revision": ("cpu", c1_model_file_replaced, "A0106", "A1.2"),
    "c1 inputs file missing an ID": ("cpu", MUTATIONS["A0305"].mutate, "A0305", None),
    "c1 inputs file reordered": ("cpu", c1_inputs_reordered, "A0305", None),
    "c1 declared split size": ("cpu", c1_split_size, "A0103", None),
    "c1 another experiment_id": ("cpu", MUTATIONS["A0306"].mutate, "A0306", None),
    "c1 two GPUs under one lot": ("cuda", MUTATIONS["A0405"].mutate, "A0405", None),
    "c1 manifest restates the offer wrongly": (
        "cpu",
        c1_manifest_restates_offer_wrongly,
        "A0901",
        None,
    ),
    "c2 CSV integer beyond 64 bits": ("cpu", c2_csv_int_beyond_64_bits, "A0803", "A3.1"),
    "c2 CSV number overflowing to inf": ("cpu", c2_csv_number_overflows, "A0803", "A6.3"),
    "c2 JSON key twice": ("cpu", c2_json_repeated_key, "A0002", None),
    "c2 JSONL key twice, one \\u-escaped": ("cpu", c2_jsonl_repeated_escaped_key, "A0002", None),
    "c2 output line answering two IDs": ("cpu", c2_output_repeated_escaped_id, "A0203", None),
    "c2 NaN in a memory trace": ("cuda", c2_nan_in_a_trace, "A0002", None),
    "c2 an impossible date-time": ("cpu", c2_bad_date, "A0002", None),
    "c2 an expected ID with a trailing space": ("cpu", c2_expected_id_padded, "A0207", None),
    "c2 an output ID in another normalisation": (
        "cpu",
        c2_output_id_other_normalisation,
        "A0202",
        None,
    ),
    "c3 JSON nested 5000 deep": ("cuda", c3_deep_nesting, "A0002", None),
    "c3 an integer of 5000 digits": ("cpu", c3_integer_of_thousands_of_digits, "A0002", None),
    "c3 a file name that is not UTF-8": ("cpu", c3_not_utf8_name, "A0002", None),
    "c4 a failed pass without incident": ("cpu", c4_unexplained_failure, "A0605", None),
    "c4 an incident of another kind": ("cpu", c4_incident_of_another_kind, "A0605", None),
    "c5 an empty model revision cell": ("cpu", c5_empty_model_revision_cell, "A0805", "A1.2"),
    "c5 an empty model revision declared": (
        "cpu",
        c5_empty_model_revision_declared,
        "A0001",
        "A1.2",
    ),
}


@pytest.mark.parametrize("name", sorted(LIES))
def test_a_self_consistent_lie_is_rejected_by_the_rule_that_recomputes_it(
    templates: dict[str, Path], tmp_path: Path, name: str
) -> None:
    flavour, lie, code, ref = LIES[name]
    root = _copy(templates, flavour, tmp_path)
    lie(root)
    result = run_check(root)
    assert not [f for f in result.findings if f.code == "A0000"], "the auditor crashed"
    own = [f for f in result.findings if f.code == code and f.severity == "error"]
    assert own, f"{code} not raised; errors: {_errors(result)}"
    assert result.verdict != "accepted" and result.exit_code == 1
    assert all(f.artifact and f.message for f in own)
    if ref is not None:
        assert ref in {f.protocol_ref for f in own}, [f.protocol_ref for f in own]


def test_the_declared_h100_never_becomes_a_cost_per_corpus(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """The signed-report lie: a CPU run declaring an H100 in its placement records. Whatever
    the verdict, the economics compute no cost per accepted corpus for an H100 offer."""
    from auditor.protocols.a.report.economics import economics_section
    from auditor.protocols.a.summary import summary

    root = _copy(templates, "cpu", tmp_path)
    c1_declared_gpu_list(root)
    view, result = audit(root)
    econ = economics_section(summary(view, result), "the run's own offers")
    assert [o["per_corpus_usd_minor"] for o in econ["offers"]] == [None]
    # ... and even were the audit to accept it, the device maps show no GPU
    accepted = AuditResult(result.run_dir, result.protocol, result.experiment_id, (), (), ())
    econ = economics_section(summary(view, accepted), "the run's own offers")
    assert [o["per_corpus_usd_minor"] for o in econ["offers"]] == [None]


def test_an_offer_for_another_gpu_is_pointed_out_not_rejected(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """A legitimate run compared with an offer of another GPU (the default config's example
    H100 offer on an A100): a warning, and no cost per accepted corpus for that offer."""
    from auditor.protocols.a.report.economics import economics_section
    from auditor.protocols.a.summary import summary

    root = _copy(templates, "cuda", tmp_path)
    edit_json(
        root,
        "economics/offers.json",
        lambda o: set_at(o, "offers/0/gpu_model", "NVIDIA A100-SXM4-80GB"),
    )
    view, result = audit(root)
    assert [(f.code, f.severity, f.protocol_ref) for f in result.findings] == [
        ("A0405", "warning", "A9.1")
    ]
    assert result.verdict == "accepted"
    econ = economics_section(summary(view, result), "the run's own offers")
    assert [o["per_corpus_usd_minor"] for o in econ["offers"]] == [None]


def test_a_finding_of_a_strict_parse_names_file_and_line(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    root = _copy(templates, "cpu", tmp_path)
    c2_jsonl_repeated_escaped_key(root)
    (f,) = [f for f in run_check(root).findings if f.code == "A0002"]
    assert f.artifact == "timeline.jsonl" and f.line == 5 and "'status'" in f.message
    root = _copy(templates, "cpu", tmp_path / "2")
    c2_csv_int_beyond_64_bits(root)
    (f,) = [f for f in run_check(root).findings if f.code == "A0803"]
    assert (f.row, f.line, f.evidence["field"]) == (2, 3, "context")
    assert "64-bit" in f.message


# -- legitimate runs stay accepted ----------------------------------------------------------


def honest_oom(root: Path) -> None:
    """batch-4's warm-3 ran out of memory after 10 answers: its row stays, its partial output
    stays, its time is the time until failure, its incident is typed."""

    def oom(t: list[dict]) -> None:
        e = next(
            x for x in t if (x["variant_id"], x["phase"], x["run_index"]) == ("batch-4", "warm", 3)
        )
        e.update(
            status="oom",
            elapsed_seconds=0.25,
            ended_at=shift_iso(e["started_at"], 0.251),
            incident={"kind": "oom", "message": "CUDA out of memory. Tried to allocate 2.00 GiB"},
        )

    edit_timeline(root, oom)
    edit_output(root, "outputs/batch-4/warm-3.jsonl", lambda lines: lines[:10])
    edit_rows(
        root,
        lambda rows: pass_row(rows, "batch-4", "warm", 3).update(
            elapsed_seconds="0.25", notes="status oom; INCIDENT oom: CUDA out of memory"
        ),
    )
    rf.recompute_claims(root)
    rf.write_claims(root)


def local_offsets(root: Path) -> None:
    """Every time written with a local offset, some with a lower-case t and z: the same
    instants."""

    def local(ts: str, k: int) -> str:
        if k % 3 == 0:
            return ts.replace("T", "t").replace("Z", "z")
        t = shift_iso(ts, 2 * 3600).replace("Z", "+02:00")
        return t if k % 3 == 1 else t.replace("T", "t")

    entries = rf.read_jsonl(root, "timeline.jsonl")
    for k, e in enumerate(entries):
        e["started_at"], e["ended_at"] = local(e["started_at"], k), local(e["ended_at"], k)
    rf.write_jsonl(root, "timeline.jsonl", entries)
    edit_json(
        root,
        "environment.json",
        lambda e: set_at(e, "observed_at", local(e["observed_at"], 1)),
        rehash=False,
    )
    edit_json(
        root,
        "manifest.json",
        lambda m: m.update(
            declared_at=local(m["declared_at"], 2), completed_at=local(m["completed_at"], 0)
        ),
    )


def fails_quality_and_says_so(root: Path) -> None:
    for p in sorted((root / "outputs/batch-4").glob("*.jsonl")):
        edit_output(
            root,
            p.relative_to(root).as_posix(),
            lambda lines: [dict(x, label="negative") for x in lines],
        )
    rf.recompute_claims(root)
    rf.write_claims(root)  # ranks batch-1 alone


NOTES = (
    "linear projection of the embeddings; evaluated once a day in production",
    "baseline allocated and reserved recorded; no top-k sampling",
    "projeção linear; a cadência não é projetada; p95 não reportado (cinco passagens)",
    "median and min-max only; the fastest variant is batch-1; 40 MiB cache flushed",
    "throughput per day is not projected",
)


def notes_that_mention_words(root: Path) -> None:
    edit_rows(
        root, lambda rows: [r.update(notes=NOTES[n % len(NOTES)]) for n, r in enumerate(rows)]
    )
    edit_json(root, "manifest.json", lambda m: set_at(m, "notes", " ".join(NOTES)), rehash=False)
    rf.rehash(root)


LEGITIMATE: dict[str, tuple[str, Callable[[Path], None]]] = {
    "an honest OOM row": ("cuda", honest_oom),
    "local UTC offsets, lower-case t and z": ("cpu", local_offsets),
    "a variant that fails quality and says so": ("cpu", fails_quality_and_says_so),
    "notes that merely mention a word": ("cuda", notes_that_mention_words),
}


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_a_legitimate_run_stays_accepted(
    templates: dict[str, Path], tmp_path: Path, name: str
) -> None:
    flavour, change = LEGITIMATE[name]
    root = _copy(templates, flavour, tmp_path)
    change(root)
    result = run_check(root)
    assert _errors(result) == [] and result.skipped == ()
    assert result.verdict == "accepted" and result.exit_code == 0
    for f in result.findings:  # what is left is a warning that quotes its sentence
        assert f.severity == "warning"


def test_a_note_warning_quotes_the_sentence(templates: dict[str, Path], tmp_path: Path) -> None:
    root = _copy(templates, "cpu", tmp_path)
    edit_rows(
        root,
        lambda rows: rows[2].update(
            notes="status ok. We report a p95 of 1.2 s over the passes. Nothing else."
        ),
    )
    result = run_check(root)
    (f,) = result.findings
    assert (f.code, f.severity, f.row) == ("A0604", "warning", 3)
    assert f.evidence["observed"] == "We report a p95 of 1.2 s over the passes."
    assert result.verdict == "accepted"


# -- class 3: bounded, and the report never crashes on what check handled -----------------


def test_files_beyond_the_limits_are_findings_not_reads(
    templates: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor import rundir

    root = _copy(templates, "cpu", tmp_path)
    with open(root / "outputs/batch-1/warm-9.jsonl", "wb") as fh:  # sparse, unlisted
        fh.truncate(3 << 20)
    with open(root / "model/huge.bin", "wb") as fh:
        fh.truncate(5 << 20)
    rf.rehash(root)
    monkeypatch.setattr(rundir, "MAX_PARSED_BYTES", 1 << 20)
    monkeypatch.setattr(rundir, "MAX_HASHED_BYTES", 4 << 20)
    files = rundir.scan(root, ("outputs/",))
    assert "outputs/batch-1/warm-9.jsonl" not in files.data
    assert files.hashes["model/huge.bin"] == rundir.UNHASHED
    result = run_check(root)
    limits = {f.artifact for f in result.findings if f.code == "A0002" and "bytes" in f.message}
    assert limits == {"outputs/batch-1/warm-9.jsonl", "model/huge.bin"}
    assert not [f for f in result.findings if f.code in ("A0000", "A0003")]


def test_the_report_draws_run_text_literally_and_huge_numbers(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """Mathtext in a name from the run, and a duration too large to scale an axis: `audit
    report` renders (HTML and figures) what `audit check` handled."""
    from auditor.report.build import StepTimer, render_report

    root = _copy(templates, "cpu", tmp_path)
    edit_json(
        root,
        "traces/memory/batch-1/warm-2.json",
        lambda d: set_at(d, "other_sources/0/name", r"$\frac{rss}{$ peak"),
    )
    edit_rows(root, lambda rows: rows[3].update(elapsed_seconds="1.7e308"))
    view, result = audit(root)
    assert result.verdict == "rejected"
    _vm, page, _figs = render_report(
        view,
        result,
        inputs={"offers": (view.offers, "x")},
        generated_at="2026-01-01T00:00:00Z",
        timer=StepTimer(),
    )
    assert r"$\frac{rss}{$ peak" in page
    # The CPU run's RSS is no per-variant figure, so no memory plot: draw a label directly.
    from auditor.report import plots

    svg = plots.memory(
        [
            {
                "variant_id": "batch-1",
                "series": [{"label": r"$\frac{rss}{$ peak", "peak_bytes": 1 << 20}],
            }
        ]
    )
    assert svg is not None and r"$\frac{rss}{$ peak" in svg
    assert "1.018 – 169999999999" in page  # written out in full, never dropped


def test_the_report_refuses_what_a_signed_bundle_cannot_name(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """A file name that is not UTF-8: `audit check` reports it; `audit report` says in one
    line why it cannot sign a bundle of it (exit 2), never a traceback."""
    import os
    import subprocess
    import sys

    root = _copy(templates, "cpu", tmp_path)
    with open(os.path.join(os.fsencode(root / "outputs/batch-1"), b"warm-\xff.jsonl"), "wb") as fh:
        fh.write(b"{}")
    assert "A0002" in {f.code for f in run_check(root).findings}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from auditor.cli import main; main()",
            "report",
            str(root),
            "--out",
            str(tmp_path / "report"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "not UTF-8" in proc.stderr
