"""Notes in the seeds' languages (Portuguese, French) and in English's common forms get the
warnings of A0604 (a tail percentile), A0904 (a cadence) and A1002 (a ranking of a variant
that is not accepted), each quoting its sentence; notes that say nothing of the kind, in the
same languages, get none. The phrases are data (`schemas/note-phrases.json`): every language
a topic lists is tried here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import runfactory as rf
from test_evidence import fails_quality_and_says_so

import schemas
from auditor.engine import run_check
from auditor.protocols.a.facts.notes import phrases


@pytest.fixture(scope="module")
def rejected_batch4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean run whose batch-4 fails the quality rule and says so (the CSV, the claims)."""
    root = rf.make_clean_run(tmp_path_factory.mktemp("notes") / "run", claims=True)
    fails_quality_and_says_so(root)
    return root


def _warnings(template: Path, tmp_path: Path, note: str) -> list[tuple[str, str]]:
    root = tmp_path / "run"
    shutil.copytree(template, root)
    rf.edit_json(root, "manifest.json", lambda m: m.__setitem__("notes", note))
    result = run_check(root)
    assert result.verdict == "accepted", [(f.code, f.message) for f in result.findings]
    return [
        (f.code, f.evidence["observed"])
        for f in result.findings
        if f.severity == "warning" and f.artifact == "manifest.json"
    ]


WARNED = [
    # A6.3: a tail percentile
    ("O percentil 95 foi de 1,2 s.", "A0604"),
    ("Latência: 95º percentil 1,2 s.", "A0604"),
    ("p95 de 1,2 s nas passagens aquecidas.", "A0604"),
    ("Le 95e centile vaut 1,2 s.", "A0604"),
    ("Latence au percentile 95 : 1,2 s.", "A0604"),
    ("warm latency 95th pct 1.2 s", "A0604"),
    # A9.5: a cadence
    ("Produção diária estimada em 400 corpus.", "A0904"),
    ("Cerca de 400 corpus por dia.", "A0904"),
    ("Une cadence quotidienne de 400 corpus.", "A0904"),
    ("Environ 400 corpus par jour.", "A0904"),
    ("About 400 corpora daily.", "A0904"),
    ("About 400 corpora per day.", "A0904"),
    # A10.2: a variant that is not accepted, ranked, chosen or recommended
    ("Vamos escolher batch-4 para a produção.", "A1002"),
    ("Recomendamos batch-4.", "A1002"),
    ("Il faut choisir batch-4.", "A1002"),
    ("Nous recommandons batch-4, le plus rapide.", "A1002"),
    ("We recommend batch-4.", "A1002"),
    ("Choose batch-4 for production.", "A1002"),
]

PLAIN = [
    "Relatamos a mediana e o intervalo mín–máx das cinco passagens.",
    "Nous donnons la médiane et l'étendue min-max des cinq passages.",
    "batch-4 não atinge a regra de qualidade; batch-1 é aceito.",
    "batch-4 n'est pas accepté : son macro-F1 est sous le seuil.",
    "Recomendamos batch-1, a única variante aceita.",  # a ranking word about an accepted one
    "Warm passes in alternating order; load average 0.2.",
]


@pytest.mark.parametrize(("note", "code"), WARNED)
def test_a_note_in_any_seed_language_is_warned(
    rejected_batch4: Path, tmp_path: Path, note: str, code: str
) -> None:
    warned = _warnings(rejected_batch4, tmp_path, note)
    assert (code, note) in warned, warned


@pytest.mark.parametrize("note", PLAIN)
def test_a_plain_note_is_not_warned(rejected_batch4: Path, tmp_path: Path, note: str) -> None:
    assert _warnings(rejected_batch4, tmp_path, note) == []


def test_every_topic_lists_every_language_and_compiles() -> None:
    doc = schemas.data("note_phrases")
    for topic, entry in doc["topics"].items():
        assert sorted(entry["phrases"]) == sorted(doc["languages"]), topic
        assert phrases(topic).search("") is None  # compiles, and an empty note says nothing
