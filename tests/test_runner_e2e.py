"""`runner execute` end to end on a small configuration (40 evaluation texts, 3 variants,
1 cold + 5 warm passes each), with an out-of-memory warm pass and a failing cold pass
injected by the test workload. One run, shared by every test of this module and by
tests/test_integration.py (`shared_run`: built once per session, read only)."""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_workloads import tiny_rows, write_jsonl
from shared_builds import built_result, shared

import schemas
from runner.cli import cli

REPO = Path(__file__).resolve().parent.parent
OFFERS = REPO / "examples" / "offers.example.json"
N_EVAL = 40


def write_config(
    tmp: Path, corpus: Path, extra: str = "", fail: str = "", sleep_per_batch: float = 0.0
) -> Path:
    cfg = tmp / "run.toml"
    cfg.write_text(
        f"""
experiment_id = "tiny-test"
seed = 11
device = "cpu"
notes = "test run, commas, \\"quotes\\" and all"
[corpus]
path = "{corpus}"
eval_size = {N_EVAL}
[workload]
callable = "runner_workloads:Faulty"
options = {{ epochs = 8, fail = [{fail}], sleep_per_batch = {sleep_per_batch} }}
[variants]
batches = [1, 4, 8]
context = 5
[passes]
warmup_iterations = 3
warm_passes = 5
[quality]
metric = "macro_f1"
threshold = "from_tune"
tolerance = 0.1
[economics]
offers_file = "{OFFERS}"
offer_id = "example-b200-7d"
lots = 2
{extra}
""",
        encoding="utf-8",
    )
    return cfg


FAILS = (
    '{ variant = "batch-4", phase = "warm", run_index = 2, after_batches = 2, '
    'kind = "oom" }, { variant = "batch-8", phase = "cold", run_index = 1, '
    'after_batches = 1, kind = "error" }, { variant = "batch-1", phase = "cold", '
    'run_index = 1, after_batches = 3, kind = "crash" }'
)


def shared_run(factory: pytest.TempPathFactory, fail: str = "") -> tuple[Path, str, int]:
    """`runner execute` on this module's configuration with FAIL injected, built once per
    session for every test process (shared_builds): the run dir, what the runner printed
    and the ID of the process that ran it (another worker's, maybe). Read only: a test that
    changes the run copies it first."""

    def build(folder: Path) -> dict:
        corpus = write_jsonl(folder / "corpus.jsonl", tiny_rows(n_eval=N_EVAL))
        cfg = write_config(folder, corpus, fail=fail)
        result = CliRunner().invoke(
            cli, ["execute", "--config", str(cfg), "--out", str(folder / "run")]
        )
        assert result.exit_code == 0, result.output + repr(result.exception)
        return {"output": result.output, "pid": os.getpid()}

    name = "a-clean" if not fail else "a-" + hashlib.sha256(fail.encode()).hexdigest()[:12]
    folder = shared(factory, name, build)
    done = built_result(folder)
    return folder / "run", done["output"], done["pid"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return shared_run(tmp_path_factory, fail=FAILS)[:2]


@pytest.fixture(scope="module")
def runner_pid(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The process that ran `run` (the runner's own: where its warm passes run)."""
    return shared_run(tmp_path_factory, fail=FAILS)[2]


def macro_f1(pred: list[str | None], ref: list[str]) -> float:
    """Plain-Python macro-F1 over the labels seen in references or answers; None is a
    missing answer (never right, no class)."""
    labels = ({p for p in pred if p is not None}) | set(ref)
    total = 0.0
    for c in labels:
        tp = sum(p == r == c for p, r in zip(pred, ref, strict=True))
        total += 2 * tp / (pred.count(c) + ref.count(c))
    return total / len(labels)


def read_csv(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "resultats-bruts.csv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_no_partial_dir_left_and_progress_printed(run: tuple[Path, str]) -> None:
    out, output = run
    assert not list(out.parent.glob("run.partial-*"))
    assert "batch-4 warm-2: oom" in output
    assert "[21/21]" in output


def test_every_artifact_validates_against_its_schema(run: tuple[Path, str]) -> None:
    out, _ = run
    kinds = {
        "manifest.json": "manifest",
        "environment.json": "environment",
        "economics/offers.json": "offers",
        "checks/set-check.json": "set_check",
        "model/recipe.json": "recipe",
    }
    seen = set()
    for path in out.rglob("*.json"):
        rel = path.relative_to(out).as_posix()
        kind = kinds.get(rel) or (
            "memory_trace"
            if rel.startswith("traces/memory/")
            else "placement"
            if rel.startswith("evidence/placement/")
            else None
        )
        if kind:
            schemas.validator(kind).validate(json.loads(path.read_text()))
            seen.add(kind)
    assert seen == {
        "manifest",
        "environment",
        "offers",
        "set_check",
        "memory_trace",
        "placement",
        "recipe",
    }
    for line in jsonl(out / "timeline.jsonl"):
        schemas.validator("timeline_entry").validate(line)
    for line in jsonl(out / "corpus/references.jsonl"):
        schemas.validator("reference_line").validate(line)
    for path in (out / "outputs").rglob("*.jsonl"):
        for line in jsonl(path):
            schemas.validator("output_line").validate(line)


def test_csv_header_byte_exact_crlf_and_cells_typed(run: tuple[Path, str]) -> None:
    out, _ = run
    raw = (out / "resultats-bruts.csv").read_bytes()
    header = ",".join(schemas.results_columns()).encode() + b"\r\n"
    assert raw.startswith(header)
    assert raw.count(b"\r\n") >= 19 and b"\n" not in raw.replace(b"\r\n", b"")
    fields = {f["name"]: f for f in schemas.results_table()["fields"]}
    for row in read_csv(out):
        for name, value in row.items():
            if value == "":
                assert fields[name]["empty_allowed"], name
            elif fields[name]["type"] == "boolean":
                assert value in ("true", "false")
            elif fields[name]["type"] == "number":
                float(value)
                assert "," not in value
        assert row["device"] == "cpu" and row["gpu_count"] == "0"
        for cell in (
            "baseline_allocated_bytes",
            "baseline_reserved_bytes",
            "peak_allocated_bytes",
            "peak_reserved_bytes",
            "gpu_model",
            "driver_version",
            "runtime_version",
        ):
            assert row[cell] == "", cell


def test_manifest_hashes_every_other_file(run: tuple[Path, str]) -> None:
    out, _ = run
    manifest = json.loads((out / "manifest.json").read_text())
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert set(manifest["artifacts"]) == files - {"manifest.json"}
    for rel, digest in manifest["artifacts"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest, rel
    assert manifest["status"] == "complete"
    assert (
        manifest["revisions"]["model"]
        == "sha256:" + hashlib.sha256((out / "model/weights.pt").read_bytes()).hexdigest()
    )
    # trained at run time: the recipe is pinned, and it is this run's (revision-kinds.json)
    assert manifest["workload"]["trained_at_run_time"] is True
    assert (
        manifest["revisions"]["recipe"]
        == "sha256:" + hashlib.sha256((out / "model/recipe.json").read_bytes()).hexdigest()
    )
    recipe = json.loads((out / "model/recipe.json").read_text())
    assert (recipe["seed"], recipe["code"], recipe["training_inputs"]["corpus"]) == (
        manifest["seed"],
        manifest["revisions"]["code"],
        manifest["revisions"]["corpus"],
    )
    assert (
        recipe["training_inputs"]["ids_sha256"]
        == manifest["artifacts"]["corpus/splits/train_ids.txt"]
    )


def test_pass_counts_per_variant(run: tuple[Path, str]) -> None:
    out, _ = run
    rows = read_csv(out)
    assert len(rows) == 18
    for v in ("batch-1", "batch-4", "batch-8"):
        mine = [(r["phase"], r["run_index"]) for r in rows if r["variant_id"] == v]
        assert sorted(mine) == [("cold", "1")] + [("warm", str(i)) for i in range(1, 6)]
        assert {r["batch"] for r in rows if r["variant_id"] == v} == {v.split("-")[1]}
        assert (out / f"outputs/{v}/cold-1.jsonl").is_file()
    timeline = jsonl(out / "timeline.jsonl")
    assert [e["phase"] for e in timeline].count("warmup") == 3
    assert all(e["iterations"] == 3 for e in timeline if e["phase"] == "warmup")


def test_recorded_order_matches_timeline_and_alternates(run: tuple[Path, str]) -> None:
    out, _ = run
    manifest = json.loads((out / "manifest.json").read_text())
    timeline = jsonl(out / "timeline.jsonl")
    key = ("order_index", "variant_id", "phase", "run_index")
    assert [{k: e[k] for k in key} for e in timeline] == manifest["pass_order"]
    starts = [e["started_at"] for e in timeline]
    assert starts == sorted(starts)
    assert all(e["ended_at"] >= e["started_at"] for e in timeline)
    phases = [e["phase"] for e in timeline]
    assert phases[:3] == ["cold"] * 3 and phases[3:6] == ["warmup"] * 3
    warm = [e["variant_id"] for e in timeline if e["phase"] == "warm"]
    rounds = [warm[i : i + 3] for i in range(0, 15, 3)]
    assert all(sorted(r) == ["batch-1", "batch-4", "batch-8"] for r in rounds)
    assert all(a[-1] != b[0] for a, b in itertools.pairwise(rounds))


def test_each_cold_pass_ran_in_its_own_fresh_process(
    run: tuple[Path, str], runner_pid: int
) -> None:
    out, _ = run
    timeline = jsonl(out / "timeline.jsonl")
    cold = [e for e in timeline if e["phase"] == "cold"]
    pids = {e["pid"] for e in cold}
    assert len(pids) == 3 and runner_pid not in pids
    assert all(e["fresh_process"] for e in cold)
    reported = [e for e in cold if e["variant_id"] != "batch-1"]  # batch-1's process died
    assert all(e["load_seconds"] is not None for e in reported)
    warm = [e for e in timeline if e["phase"] != "cold"]
    assert {e["pid"] for e in warm} == {runner_pid}
    assert not any(e["fresh_process"] for e in warm)
    for e in reported:
        place = json.loads((out / e["placement"]).read_text())
        assert place["pid"] == e["pid"]


def test_oom_pass_keeps_its_row_with_time_until_failure(run: tuple[Path, str]) -> None:
    out, _ = run
    row = next(
        r
        for r in read_csv(out)
        if (r["variant_id"], r["phase"], r["run_index"]) == ("batch-4", "warm", "2")
    )
    assert float(row["elapsed_seconds"]) > 0
    assert row["ids_match"] == "false" and row["corpus_accepted"] == "false"
    assert row["format_valid"] == "true"  # what was written is well formed
    # quality over the 40 expected IDs, the 32 unanswered counting as wrong
    refs = {r["id"]: r["label"] for r in jsonl(out / "corpus/references.jsonl")}
    answers = {line["id"]: line["label"] for line in jsonl(out / "outputs/batch-4/warm-2.jsonl")}
    expected = (out / "corpus/expected_ids.txt").read_text().splitlines()
    assert float(row["quality_value"]) == pytest.approx(
        macro_f1([answers.get(i) for i in expected], [refs[i] for i in expected])
    )
    assert float(row["quality_value"]) < float(row["quality_threshold"])
    assert "INCIDENT oom" in row["notes"]
    assert row["observed_ids"] == "8"  # two batches of 4 answered before the failure
    lines = jsonl(out / "outputs/batch-4/warm-2.jsonl")
    assert len(lines) == 8
    entry = next(
        e
        for e in jsonl(out / "timeline.jsonl")
        if (e["variant_id"], e["phase"], e["run_index"]) == ("batch-4", "warm", 2)
    )
    assert entry["status"] == "oom" and entry["incident"]["kind"] == "oom"
    assert entry["elapsed_seconds"] > 0
    # the other passes of that variant still count: one accepted corpus, not summed
    assert {
        r["accepted_unique_corpora"] for r in read_csv(out) if r["variant_id"] == "batch-4"
    } == {"1"}


def test_error_in_a_cold_process_keeps_its_row(run: tuple[Path, str]) -> None:
    out, _ = run
    row = next(r for r in read_csv(out) if (r["variant_id"], r["phase"]) == ("batch-8", "cold"))
    assert row["observed_ids"] == "8" and row["corpus_accepted"] == "false"
    assert float(row["elapsed_seconds"]) > 0 and "INCIDENT error" in row["notes"]
    entry = next(
        e
        for e in jsonl(out / "timeline.jsonl")
        if (e["variant_id"], e["phase"]) == ("batch-8", "cold")
    )
    assert entry["status"] == "error" and entry["fresh_process"]


def test_csv_claims_equal_what_the_files_show(run: tuple[Path, str]) -> None:
    out, _ = run
    expected = (out / "corpus/expected_ids.txt").read_text().splitlines()
    assert len(expected) == N_EVAL == len(set(expected))
    refs = {r["id"]: r["label"] for r in jsonl(out / "corpus/references.jsonl")}
    check = json.loads((out / "checks/set-check.json").read_text())
    by_key = {(p["variant_id"], p["phase"], p["run_index"]): p for p in check["passes"]}
    accepted = 0
    for row in read_csv(out):
        lines = jsonl(out / f"outputs/{row['variant_id']}/{row['phase']}-{row['run_index']}.jsonl")
        ids = [line["id"] for line in lines]
        match = sorted(ids) == sorted(expected)
        assert row["ids_match"] == ("true" if match else "false")
        assert int(row["observed_ids"]) == len(ids)
        assert int(row["expected_ids"]) == N_EVAL
        p = by_key[(row["variant_id"], row["phase"], int(row["run_index"]))]
        assert p["observed_ids"] == len(ids) and p["ids_match"] == match
        if not lines:  # no usable answer: no quality value, and not accepted
            assert row["quality_value"] == "" and p["quality_value"] is None
            assert row["corpus_accepted"] == "false"
            continue
        answers = {line["id"]: line["label"] for line in lines}
        value = macro_f1([answers.get(i) for i in expected], [refs[i] for i in expected])
        assert float(row["quality_value"]) == pytest.approx(value, abs=1e-12)
        assert p["quality_value"] == pytest.approx(value, abs=1e-12)
        if match:
            assert float(row["quality_value"]) >= float(row["quality_threshold"])
            assert row["corpus_accepted"] == "true"
            accepted += 1
    assert accepted == 15  # 18 passes, three injected failures


def test_economics_package_total_is_price_times_lots_on_every_row(run: tuple[Path, str]) -> None:
    out, _ = run
    offers = json.loads((out / "economics/offers.json").read_text())
    offer = next(o for o in offers["offers"] if o["offer_id"] == "example-b200-7d")
    assert offer["gpus_per_lot"] == 2
    rows = read_csv(out)
    assert {r["package_total_usd_minor"] for r in rows} == {
        str(offer["price_per_lot_usd_minor"] * 2)
    }
    assert {r["lots"] for r in rows} == {"2"} and {r["duration_days"] for r in rows} == {"7"}
    assert (out / "economics/offers.json").read_bytes() == OFFERS.read_bytes()


def test_quality_rule_fixed_from_tune_and_truncation_counted(run: tuple[Path, str]) -> None:
    out, _ = run
    m = json.loads((out / "manifest.json").read_text())
    rule = m["quality_rule"]
    assert rule["tolerance_direction"] == "max_decrease"
    assert rule["threshold"] <= rule["reference"]["value"] - rule["tolerance"] + 1e-12
    assert "tune" in rule["reference"]["source"]
    assert (
        m["declared_at"]
        < json.loads((out / "timeline.jsonl").read_text().splitlines()[0])["started_at"]
    )
    # every tiny text has 9 words and the context is 5: all 40 are cut
    assert m["corpus"]["truncation"] == {
        **m["corpus"]["truncation"],
        "truncated_texts": 40,
        "eval_texts": 40,
        "context_tokens": 5,
    }
    row = read_csv(out)[0]
    assert "40 of 40 eval texts cut at 5 tokens" in row["notes"]
    assert '"quotes"' in row["notes"]


def test_a_cold_process_that_dies_keeps_its_row_with_elapsed_not_recorded(
    run: tuple[Path, str], runner_pid: int
) -> None:
    out, _ = run
    row = next(r for r in read_csv(out) if (r["variant_id"], r["phase"]) == ("batch-1", "cold"))
    assert row["elapsed_seconds"] == ""  # not recorded, never 0
    assert row["corpus_accepted"] == "false" and "exited 3 without a record" in row["notes"]
    entry = next(
        e
        for e in jsonl(out / "timeline.jsonl")
        if (e["variant_id"], e["phase"]) == ("batch-1", "cold")
    )
    assert entry["status"] == "error" and entry["pid"] not in (1, runner_pid)
    assert (out / "outputs/batch-1/cold-1.jsonl").is_file()
    # what the process wrote before the pass stays as evidence, marked unfinished
    place = json.loads((out / entry["placement"]).read_text())
    assert place["finished"] is False and place["pid"] == entry["pid"]
    assert place["parameter_devices"] == {"cpu": 3} and row["gpu_count"] == "0"
    assert json.loads((out / entry["memory_trace"]).read_text())["finished"] is False
    done = json.loads((out / "evidence/placement/batch-4/cold-1.json").read_text())
    assert "finished" not in done and done["input_devices"] == {"cpu": 10}
