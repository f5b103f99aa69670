"""Protocol A's questions issue 21 decided, each a lie (or a damaged file) and its honest twin:
warm passes in blocks are rejected whatever the recorded method says (A6.2); a p95 or a
projected cadence written in notes is a warning quoting the sentence (A6.3, A9.5); a data row
that repeats the CSV header is a CSV-format finding naming the row (A8.1); a seed beyond 64
bits is a seed (A1.2), while any other integer that large is still refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import runfactory as rf
from runfactory import edit_json, edit_rows

from auditor.engine import run_check

RESULTS = "resultats-bruts.csv"
BIG_SEED = 2**64 + 7  # above 2^63 and above 2^64: a seed numpy's SeedSequence could be


def _findings(root: Path, code: str, severity: str = "error") -> list:
    return [f for f in run_check(root).findings if f.code == code and f.severity == severity]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rf.make_clean_run(tmp_path_factory.mktemp("open") / "clean")


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


# -- A6.2: blocks are not an alternating or drawn order, whatever the method says ----------


def test_warm_passes_in_blocks_are_rejected_even_when_called_sequential(tmp_path: Path) -> None:
    root = rf.make_clean_run(tmp_path / "blocked", warm_in_blocks=True)
    assert rf.read_json(root, "manifest.json")["pass_order_method"] == "sequential"
    found = _findings(root, "A0602")
    assert len(found) == 1 and "blocks" in found[0].message
    assert "'sequential'" in found[0].message and found[0].pointer == "/pass_order"
    assert run_check(root).verdict == "rejected"


def test_alternating_warm_passes_are_accepted(clean: Path) -> None:
    assert not _findings(clean, "A0602")
    assert run_check(clean).verdict == "accepted"


# -- A6.3 and A9.5: what notes say is quoted in a warning, never judged ----------------------


@pytest.mark.parametrize(
    ("note", "code"),
    [
        ("p95 latency 1.2 s over the five passes", "A0604"),
        ("at this rate, projected 12,000 corpora per week", "A0904"),
    ],
)
def test_a_note_stating_a_p95_or_a_cadence_is_a_warning_quoting_it(
    clean: Path, tmp_path: Path, note: str, code: str
) -> None:
    root = _copy(clean, tmp_path / "run")
    edit_json(root, "manifest.json", lambda m: m.__setitem__("notes", note))
    warned = _findings(root, code, "warning")
    assert len(warned) == 1 and warned[0].evidence["observed"] == note
    assert not _findings(root, code) and run_check(root).verdict == "accepted"


def test_plain_notes_are_not_warned(clean: Path) -> None:
    assert not _findings(clean, "A0604", "warning") and not _findings(clean, "A0904", "warning")


# -- A8.1: a header row in the middle of the data ------------------------------------------


def test_a_repeated_header_row_is_a_csv_finding_naming_the_row(clean: Path, tmp_path: Path) -> None:
    root = _copy(clean, tmp_path / "run")
    path = root / RESULTS
    records = path.read_bytes().split(b"\r\n")
    records.insert(6, records[0])  # two files appended: the second one's header
    path.write_bytes(b"\r\n".join(records))
    rf.rehash(root)
    result = run_check(root)
    csv_errors = [f for f in result.findings if f.artifact == RESULTS and f.severity == "error"]
    assert [(f.code, f.line) for f in csv_errors] == [("A0801", 7)]
    assert "data row 6 repeats the header" in csv_errors[0].message
    assert not [f for f in result.findings if f.code == "A0803"]  # no cell-type noise


def test_the_clean_csv_has_no_csv_finding(clean: Path) -> None:
    assert not [f for f in run_check(clean).findings if f.code.startswith("A08")]


# -- A1.2: a seed is an integer, not a 64-bit one ------------------------------------------


def _with_seed(root: Path, manifest_seed: int, csv_seed: int) -> None:
    edit_json(root, "manifest.json", lambda m: m.__setitem__("seed", manifest_seed))

    def rows(rs: list[dict]) -> None:
        for r in rs:
            r["seed"] = csv_seed

    edit_rows(root, rows)


def test_a_seed_above_2_to_the_63_is_a_valid_seed(clean: Path, tmp_path: Path) -> None:
    root = _copy(clean, tmp_path / "run")
    _with_seed(root, BIG_SEED, BIG_SEED)
    assert f"{BIG_SEED}," in (root / RESULTS).read_text()
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]


def test_a_big_seed_that_differs_from_the_rows_is_still_caught(clean: Path, tmp_path: Path) -> None:
    root = _copy(clean, tmp_path / "run")
    _with_seed(root, BIG_SEED, BIG_SEED + 1)
    found = _findings(root, "A0102")
    assert found and all(f.evidence["observed"] == str(BIG_SEED + 1) for f in found)


def test_any_other_integer_beyond_64_bits_is_still_refused(clean: Path, tmp_path: Path) -> None:
    root = _copy(clean, tmp_path / "run")
    edit_json(root, "manifest.json", lambda m: m["economics"].__setitem__("lots", BIG_SEED))
    faults = [
        f
        for f in run_check(root).findings
        if f.artifact == "manifest.json" and "beyond 64 bits" in f.message
    ]
    assert faults and faults[0].pointer == "/economics/lots"
