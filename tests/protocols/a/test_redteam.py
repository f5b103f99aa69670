"""Red-team round on protocol A: lies a dishonest submitter tells with every file made
consistent (the manifest re-hashed, as a submitter may), each of which must raise the rule
that recomputes the fact; and the legitimate runs that look like them (IDs that differ only
by case for distinct texts, a multi-GPU B200 lot, an empty cell for a figure not recorded)
that must stay accepted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import runfactory as rf
from runfactory import edit_json, edit_rows, edit_timeline, pass_row, shift_iso
from test_evidence import _copy, _errors

from auditor.engine import run_check

EXPECTED = "corpus/expected_ids.txt"
INPUTS = "corpus/eval-inputs.jsonl"


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("redteam")
    return {
        "cpu": rf.make_clean_run(base / "cpu", claims=True),
        "cuda": rf.make_clean_run(base / "cuda", device="cuda:0", claims=True),
        "b200": rf.make_clean_run(base / "b200", device="cuda:0", gpus_per_lot=2, claims=True),
    }


# -- a duplicated ID among the expected IDs ---------------------------------------------------


def _ids(root: Path) -> list[str]:
    return (root / EXPECTED).read_text(encoding="utf-8").splitlines()


def _rename_id(root: Path, old: str, new: str, *, text_of: str | None = None) -> None:
    """ID OLD is NEW in every file that names it (the list, references, inputs, outputs);
    with TEXT_OF, its input text becomes that ID's: one text listed twice."""
    (root / EXPECTED).write_text(
        "".join((new if i == old else i) + "\n" for i in _ids(root)), encoding="utf-8"
    )
    texts = {x["id"]: x["text"] for x in rf.read_jsonl(root, INPUTS)}
    for rel in [
        "corpus/references.jsonl",
        INPUTS,
        *(p.relative_to(root).as_posix() for p in (root / "outputs").rglob("*.jsonl")),
    ]:
        lines = rf.read_jsonl(root, rel)
        for x in lines:
            if x["id"] == old:
                x["id"] = new
                if rel == INPUTS and text_of is not None:
                    x["text"] = texts[text_of]
        rf.write_jsonl(root, rel, lines)
    rf.rehash(root)


def _twin(make: Callable[[str], str], same_text: bool = False) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        ids = _ids(root)
        _rename_id(root, ids[11], make(ids[10]), text_of=ids[10] if same_text else None)

    return change


# -- economics ----------------------------------------------------------------------------


def _no_offer_package_x5(root: Path) -> None:
    edit_json(root, "manifest.json", lambda m: m.update(economics=None))
    edit_rows(
        root,
        lambda rows: [
            r.update(package_total_usd_minor=str(5 * int(r["package_total_usd_minor"])))
            for r in rows
        ],
    )


def _b200_offer(root: Path, **changes: object) -> None:
    edit_json(
        root, "economics/offers.json", lambda o: o["offers"][0].update(gpu_model="B200", **changes)
    )


def _two_b200(root: Path, lots: int) -> None:
    """Both GPUs of a B200 lot used by every pass (device maps, identities, rows, environment),
    billed as LOTS lots."""
    b200 = "NVIDIA B200"
    for p in sorted((root / "evidence/placement").rglob("*.json")):
        edit_json(
            root,
            p.relative_to(root).as_posix(),
            lambda d: d.update(
                parameter_devices={"cuda:0": 6, "cuda:1": 6},
                input_devices={"cuda:0": 15, "cuda:1": 15},
                gpus_used=[
                    {"index": 0, "name": b200, "uuid": "GPU-0"},
                    {"index": 1, "name": b200, "uuid": "GPU-1"},
                ],
                gpus_visible=2,
            ),
            rehash=False,
        )
    edit_json(
        root,
        "environment.json",
        lambda e: e.update(gpu_count=2, gpus_visible=2, gpu_model=b200),
        rehash=False,
    )
    _b200_offer(root)
    price = rf.read_json(root, "economics/offers.json")["offers"][0]["price_per_lot_usd_minor"]
    edit_json(root, "manifest.json", lambda m: m["economics"].update(lots=lots))
    edit_rows(
        root,
        lambda rows: [
            r.update(
                gpu_count="2",
                gpu_model=b200,
                lots=str(lots),
                package_total_usd_minor=str(price * lots),
            )
            for r in rows
        ],
    )


def _cost_per_corpus(value: float, unit: str = "usd_minor") -> Callable[[Path], None]:
    def change(root: Path) -> None:
        edit_json(
            root,
            "claims.json",
            lambda c: c.update(
                projections=[
                    {
                        "figure": "cost_per_accepted_corpus",
                        "variant_id": None,
                        "value": value,
                        "unit": unit,
                        "period_days": 7,
                        "accepted_corpora": 1,
                    }
                ]
            ),
        )

    return change


def _offer_of_another_gpu(root: Path) -> None:
    edit_json(root, "economics/offers.json", lambda o: o["offers"][0].update(gpu_model="A100"))
    _cost_per_corpus(123456)(root)


PACKAGE = 123456  # runfactory's offer: one lot, 7 days

# -- memory, out of memory, a GPU run that fell back to the CPU ----------------------------

TRACE = "traces/memory/batch-1/warm-1.json"
PLACEMENT = "evidence/placement/batch-1/warm-1.json"


def _mixed_sum(root: Path) -> None:
    t = rf.read_json(root, TRACE)
    edit_json(
        root,
        "claims.json",
        lambda c: c.update(
            memory_figures=[
                {
                    "name": "footprint",
                    "value": t["baseline_allocated_bytes"] + t["peak_reserved_bytes"],
                    "unit": "bytes",
                    "source": "torch.cuda",
                    "variant_id": "batch-1",
                    "phase": "warm",
                    "run_index": 1,
                }
            ]
        ),
    )


def _oom_counted(incident: dict | None) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        edit_json(root, TRACE, lambda t: t["memory_stats_after"].update(num_ooms=1), rehash=False)
        edit_timeline(
            root,
            lambda t: next(
                e
                for e in t
                if (e["variant_id"], e["phase"], e["run_index"]) == ("batch-1", "warm", 1)
            ).update(incident=incident),
        )

    return change


def _placement(**changes: object) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        edit_json(root, PLACEMENT, lambda d: d.update(**changes))

    return change


LIES: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "a package total x5 on rows of a run naming no offer": ("cpu", _no_offer_package_x5, "A0901"),
    "a B200 offer counting one GPU per lot": (
        "b200",
        lambda r: (_b200_offer(r, gpus_per_lot=1), rf.rehash(r)),
        "A0901",
    ),
    "two B200 GPUs billed as two lots": ("b200", lambda r: _two_b200(r, 2), "A0405"),
    "a cost per accepted corpus for a GPU offer, from a CPU run": (
        "cpu",
        _cost_per_corpus(PACKAGE),
        "A0405",
    ),
    "a cost per accepted corpus for an offer of another GPU": (
        "cuda",
        _offer_of_another_gpu,
        "A0405",
    ),
    "a cost per accepted corpus of a fifth of the package for one corpus": (
        "cuda",
        _cost_per_corpus(PACKAGE / 5),
        "A0904",
    ),
    "a cost per accepted corpus in dollars, 100x too small": (
        "cuda",
        _cost_per_corpus(PACKAGE / 10000, "usd"),
        "A0904",
    ),
    "a memory figure of baseline allocated + peak reserved": ("cuda", _mixed_sum, "A0704"),
    "an out-of-memory event the allocator counted, recorded ok": (
        "cuda",
        _oom_counted(None),
        "A0605",
    ),
    "a cuda:0 pass whose input batches were on the CPU": (
        "cuda",
        _placement(input_devices={"cpu": 30}),
        "A0402",
    ),
    "a cuda:0 pass with 11 of its 12 parameters on the CPU": (
        "cuda",
        _placement(parameter_devices={"cuda:0": 1, "cpu": 11}),
        "A0402",
    ),
    "a cuda:0 pass whose memory was read on the CPU": (
        "cuda",
        lambda root: edit_json(root, TRACE, lambda t: t.update(device="cpu")),
        "A0402",
    ),
    "a process that saw no GPU used one": ("cuda", _placement(gpus_visible=0), "A0404"),
    "an environment that saw no GPU while the passes used one": (
        "cuda",
        lambda root: edit_json(root, "environment.json", lambda e: e.update(gpus_visible=0)),
        "A0404",
    ),
    "an expected ID twice, once with a zero-width space": (
        "cpu",
        _twin(lambda i: i + "\u200b"),
        "A0207",
    ),
    "an expected ID twice, once with a zero-width joiner inside": (
        "cpu",
        _twin(lambda i: i[:2] + "\u200d" + i[2:]),
        "A0207",
    ),
    "an expected ID twice, once behind a BOM": ("cpu", _twin(lambda i: "\ufeff" + i), "A0207"),
    "an expected ID twice, once with a soft hyphen": (
        "cpu",
        _twin(lambda i: i + "\u00ad"),
        "A0207",
    ),
    "an expected ID twice, once with a fullwidth hyphen (NFKC)": (
        "cpu",
        _twin(lambda i: i.replace("-", "\uff0d")),
        "A0207",
    ),
    "an expected ID twice, once upper-case, with the same text": (
        "cpu",
        _twin(str.upper, same_text=True),
        "A0207",
    ),
    "an OOM row claimed accepted with its metric left empty": (
        "cuda",
        lambda root: _oom(root, accepted="true"),
        "A0204",
    ),
}


@pytest.mark.parametrize("name", sorted(LIES))
def test_a_consistent_lie_is_rejected(
    templates: dict[str, Path], tmp_path: Path, name: str
) -> None:
    flavour, lie, code = LIES[name]
    root = _copy(templates, flavour, tmp_path)
    lie(root)
    result = run_check(root)
    assert not [f for f in result.findings if f.code == "A0000"], "the auditor crashed"
    own = [f for f in result.findings if f.code == code and f.severity == "error"]
    assert own, f"{code} not raised; errors: {_errors(result)}"
    assert result.verdict != "accepted" and result.exit_code == 1
    assert all(f.artifact and f.message for f in own)


def _oom(root: Path, quality_value: str = "", accepted: str = "false") -> None:
    """batch-4's warm-3 ran out of memory after 10 answers; its row stays with the time until
    failure; its metric is not recorded (an empty cell)."""

    def oom(t: list[dict]) -> None:
        e = next(
            x for x in t if (x["variant_id"], x["phase"], x["run_index"]) == ("batch-4", "warm", 3)
        )
        e.update(
            status="oom",
            elapsed_seconds=0.25,
            ended_at=shift_iso(e["started_at"], 0.251),
            incident={"kind": "oom", "message": "CUDA out of memory"},
        )

    edit_timeline(root, oom)
    lines = rf.read_jsonl(root, "outputs/batch-4/warm-3.jsonl")[:10]
    rf.write_jsonl(root, "outputs/batch-4/warm-3.jsonl", lines)
    rf.recompute_claims(root)
    rf.write_claims(root)
    edit_rows(
        root,
        lambda rows: pass_row(rows, "batch-4", "warm", 3).update(
            elapsed_seconds="0.25",
            quality_value=quality_value,
            corpus_accepted=accepted,
            notes="status oom; INCIDENT oom: CUDA out of memory",
        ),
    )


LEGITIMATE: dict[str, tuple[str, Callable[[Path], None]]] = {
    "IDs that differ only by case, for two texts": ("cpu", _twin(str.upper)),
    "an honest OOM row whose metric is not recorded": ("cuda", _oom),
    "two B200 GPUs under one lot": ("b200", lambda r: _two_b200(r, 1)),
    "a cost per accepted corpus of the package over one corpus": (
        "cuda",
        _cost_per_corpus(PACKAGE),
    ),
    "a cost per accepted corpus in dollars": ("cuda", _cost_per_corpus(PACKAGE / 100, "usd")),
    "an out-of-memory event the pass recovered from, with its incident": (
        "cuda",
        _oom_counted({"kind": "oom", "message": "OOM at batch 8; retried at batch 4"}),
    ),
}


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_a_legitimate_run_stays_accepted(
    templates: dict[str, Path], tmp_path: Path, name: str
) -> None:
    flavour, change = LEGITIMATE[name]
    root = _copy(templates, flavour, tmp_path)
    change(root)
    result = run_check(root)
    assert _errors(result) == []
    assert result.verdict == "accepted" and result.exit_code == 0


def test_case_twins_without_inputs_are_a_warning(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    root = _copy(templates, "cpu", tmp_path)
    _twin(str.upper, same_text=True)(root)
    (root / INPUTS).unlink()
    edit_json(root, "manifest.json", lambda m: m["corpus"].pop("inputs_file"))
    result = run_check(root)
    (f,) = [f for f in result.findings if f.code == "A0207"]
    assert f.severity == "warning" and f.line == 12


# -- hostile text in the report ----------------------------------------------------------


def test_a_huge_unbroken_note_is_clipped_in_the_report(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """A note of 100,000 characters without a space kept WeasyPrint's line breaking busy for
    minutes; the page shows its first `MAX_TEXT` characters and says where the rest is (no
    absolute time is asserted, issue 26: the clipping asserted here is what keeps it short)."""
    from auditor.report.build import build_report
    from auditor.report.html import MAX_TEXT

    root = _copy(templates, "cpu", tmp_path)
    edit_rows(root, lambda rows: rows[0].update(notes="A" * 100_000))
    build_report(root, tmp_path / "report")
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "A" * MAX_TEXT in page and "A" * (MAX_TEXT + 1) not in page
    assert "100,000 characters in all" in page


def test_a_run_declared_complete_before_its_last_pass_ended(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    root = _copy(templates, "cpu", tmp_path)
    last = max(e["ended_at"] for e in rf.read_jsonl(root, "timeline.jsonl"))
    edit_json(root, "manifest.json", lambda m: m.update(completed_at=shift_iso(last, -1)))
    result = run_check(root)
    (f,) = [f for f in result.findings if f.severity == "error"]
    assert (f.code, f.artifact, f.pointer) == ("A0602", "manifest.json", "/completed_at")


def test_a_note_past_the_csv_readers_cell_limit_says_so(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """A note one character longer than the CSV reader's limit on one cell (131,072) was
    reported as a "CSV quoting error"; the finding names the file, the line where the row
    starts and the limit."""
    import csv

    limit = csv.field_size_limit()
    root = _copy(templates, "cpu", tmp_path)
    edit_rows(root, lambda rows: rows[2].update(notes="A" * (limit + 1)))
    result = run_check(root)
    (f,) = [f for f in result.findings if f.severity == "error"]
    assert (f.code, f.artifact, f.line, f.row) == ("A0801", "resultats-bruts.csv", 4, 3)
    assert f"{limit:,} characters" in f.message and "quoting" not in f.message
    assert result.verdict == "rejected"


def test_a_cold_pass_that_loaded_in_no_time_is_a_warning(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """A fresh process loads the model before its cold pass: a `load_seconds` of 0 is not
    plausible (the model was already there, or the clock was too coarse): a warning naming
    the pass; an empty one (not recorded) is not judged."""
    root = _copy(templates, "cpu", tmp_path)
    entries = rf.read_jsonl(root, "timeline.jsonl")
    line = 1 + next(
        n
        for n, e in enumerate(entries)
        if (e["variant_id"], e["phase"], e["run_index"]) == ("batch-4", "cold", 1)
    )
    assert entries[line - 1]["fresh_process"] and entries[line - 1]["load_seconds"] > 0

    def load(seconds: float | None) -> Callable[[list[dict]], None]:
        return lambda t: t[line - 1].update(load_seconds=seconds)

    edit_timeline(root, load(0))
    result = run_check(root)
    (f,) = result.findings
    assert (f.code, f.severity, f.artifact, f.line) == ("A0606", "warning", "timeline.jsonl", line)
    assert "batch-4/cold-1" in f.message and f.evidence["observed"] == 0
    assert result.verdict == "accepted" and result.exit_code == 0
    edit_timeline(root, load(None))
    assert run_check(root).findings == ()


# -- rankings: typed basis, recomputed from the passes -----------------------------------------


def _ranking(**changes: object) -> Callable[[Path], None]:
    """The run's one ranking (the accepted variants by median warm time, fastest first, with
    their medians) with CHANGES: each a value or a function of the ranking."""

    def change(root: Path) -> None:
        def edit(c: dict) -> None:
            r = c["rankings"][0]
            r.update({k: v(r) if callable(v) else v for k, v in changes.items()})

        edit_json(root, "claims.json", edit)

    return change


def _reversed(key: str) -> Callable[[dict], list]:
    return lambda r: r[key][::-1]


def _basis(**changes: object) -> Callable[[dict], dict]:
    return lambda r: {**r["basis"], **changes}


RANKING_LIES: dict[str, Callable[[Path], None]] = {
    "slowest first, each figure true": _ranking(
        variants=_reversed("variants"), values=_reversed("values")
    ),
    "slowest first, the figures swapped to look ascending": _ranking(
        variants=_reversed("variants")
    ),
    "an accepted variant left out": _ranking(
        variants=lambda r: r["variants"][:1], values=lambda r: r["values"][:1]
    ),
    "a figure 10% faster than its passes": _ranking(
        values=lambda r: [r["values"][0] * 0.9, *r["values"][1:]]
    ),
    "figures in seconds labelled ms": _ranking(basis=_basis(unit="ms")),
    "fastest first, declared descending": _ranking(basis=_basis(order="descending")),
    "ranked by median cold time with the warm order and figures": _ranking(
        basis=_basis(phase="cold")
    ),
    "one figure too few": _ranking(values=lambda r: r["values"][:1]),
}


@pytest.mark.parametrize("name", sorted(RANKING_LIES))
def test_a_ranking_that_its_passes_do_not_give_is_rejected(
    templates: dict[str, Path], tmp_path: Path, name: str
) -> None:
    root = _copy(templates, "cpu", tmp_path)
    assert len(rf.read_json(root, "claims.json")["rankings"][0]["variants"]) == 2
    RANKING_LIES[name](root)
    result = run_check(root)
    errors = _errors(result)
    assert errors and {code for code, _, _ in errors} == {"A1003"}, errors
    assert all(artifact == "claims.json" for _, artifact, _ in errors)
    assert all(
        f.pointer and f.pointer.startswith("/rankings/0/")
        for f in result.findings
        if f.code == "A1003"
    )
    assert result.verdict == "rejected" and result.exit_code == 1


def _tie(root: Path) -> None:
    """batch-1's warm passes took exactly as long as batch-4's (CSV and timeline, each
    window shortened to match); claims rewritten."""
    rows = rf.read_rows(root)
    took = {
        r["run_index"]: r["elapsed_seconds"]
        for r in rows
        if (r["variant_id"], r["phase"]) == ("batch-4", "warm")
    }
    for r in rows:
        if (r["variant_id"], r["phase"]) == ("batch-1", "warm"):
            r["elapsed_seconds"] = took[r["run_index"]]
    rf.write_rows(root, rows)

    def timeline(t: list[dict]) -> None:
        for e in t:
            if (e["variant_id"], e["phase"]) == ("batch-1", "warm"):
                e["elapsed_seconds"] = float(took[str(e["run_index"])])
                e["ended_at"] = shift_iso(e["started_at"], e["elapsed_seconds"] + 0.0005)

    edit_timeline(root, timeline)
    rf.write_claims(root)


RANKING_LEGITIMATE: dict[str, Callable[[Path], None]] = {
    "no ranking at all": lambda root: edit_json(
        root, "claims.json", lambda c: c.update(rankings=[])
    ),
    "no rankings key": lambda root: edit_json(root, "claims.json", lambda c: c.pop("rankings")),
    "figures in ms": _ranking(
        basis=_basis(unit="ms"), values=lambda r: [v * 1000 for v in r["values"]]
    ),
    "slowest first, declared descending": _ranking(
        basis=_basis(order="descending"), variants=_reversed("variants"), values=_reversed("values")
    ),
    "figures rounded to the millisecond": _ranking(
        values=lambda r: [round(v, 3) for v in r["values"]]
    ),
    "equal medians, in the order written": _tie,
    "equal medians, the other way round": lambda root: (
        _tie(root),
        _ranking(variants=_reversed("variants"), values=_reversed("values"))(root),
    ),
}


@pytest.mark.parametrize("name", sorted(RANKING_LEGITIMATE))
def test_a_ranking_its_passes_give_is_accepted(
    templates: dict[str, Path], tmp_path: Path, name: str
) -> None:
    root = _copy(templates, "cpu", tmp_path)
    RANKING_LEGITIMATE[name](root)
    result = run_check(root)
    assert [f.to_json() for f in result.findings] == []
    assert result.verdict == "accepted" and result.exit_code == 0


def test_tied_medians_are_equal(templates: dict[str, Path], tmp_path: Path) -> None:
    """The tie the legitimate cases rest on: both variants' warm medians are the same."""
    root = _copy(templates, "cpu", tmp_path)
    _tie(root)
    medians = {
        s["variant_id"]: s["value"]
        for s in rf.read_json(root, "claims.json")["summaries"]
        if (s["phase"], s["statistic"]) == ("warm", "median")
    }
    assert medians["batch-1"] == medians["batch-4"]


def test_a_free_text_basis_is_a_warning_on_old_claims_and_refused_on_new(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    """Schema version 1 (older runs): a free-text basis, the order not recomputed (a
    warning); version 2 requires the typed basis and the figures."""
    root = _copy(templates, "cpu", tmp_path)

    def old(c: dict) -> None:
        c["schema_version"] = "1"
        c["rankings"] = [
            {"basis": "median warm elapsed_seconds", "variants": c["rankings"][0]["variants"][::-1]}
        ]

    edit_json(root, "claims.json", old)
    result = run_check(root)
    (f,) = result.findings
    assert (f.code, f.severity, f.pointer) == ("A1003", "warning", "/rankings/0/basis")
    assert result.verdict == "accepted"
    edit_json(root, "claims.json", lambda c: c.update(schema_version="2"))
    result = run_check(root)
    assert result.verdict != "accepted"
    assert any(f.artifact == "claims.json" and f.severity == "error" for f in result.findings)
