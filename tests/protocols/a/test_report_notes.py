"""The report shows the note parts every pass repeats once, and each pass only its own."""

from auditor.protocols.a.report.notes import factor_common_notes


def _timings(*notes: str) -> list[dict]:
    return [
        {
            "variant_id": "v",
            "passes": [
                {"notes": n, "phase": "warm", "run_index": i + 1} for i, n in enumerate(notes)
            ],
        }
    ]


def test_common_parts_are_shown_once_and_nothing_is_lost() -> None:
    t = _timings("status ok; scope full; code v1", "status oom after 2 s; scope full; code v1")
    common = factor_common_notes(t)
    assert common == "scope full; code v1"
    assert [p["notes"] for p in t[0]["passes"]] == ["status ok", "status oom after 2 s"]


def test_a_part_naming_its_own_pass_is_common_with_the_pass_as_a_placeholder() -> None:
    t = _timings("artifacts: out/v/warm-1.jsonl; pid 7", "artifacts: out/v/warm-2.jsonl; pid 8")
    assert factor_common_notes(t) == "artifacts: out/‹pass›.jsonl"
    assert [p["notes"] for p in t[0]["passes"]] == ["pid 7", "pid 8"]


def test_single_pass_keeps_its_note() -> None:
    t = _timings("only one; note")
    assert factor_common_notes(t) == ""
    assert t[0]["passes"][0]["notes"] == "only one; note"


def test_empty_notes_share_nothing() -> None:
    t = _timings("", "a; b")
    assert factor_common_notes(t) == ""
    assert [p["notes"] for p in t[0]["passes"]] == ["", "a; b"]
