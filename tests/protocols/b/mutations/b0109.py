"""The synthetic run keeps a checkpoint config.json whose `id2label` names another task's
classes (negative, neutral, positive, mixed) where the run classifies billing, bug, feature,
praise: only B0109 reads the checkpoint's label map."""

from __future__ import annotations

import json
from pathlib import Path

import b_runs as br

TEMPLATE = "synthetic"


def mutate(root: Path) -> None:
    labels = ("negative", "neutral", "positive", "mixed")
    (root / "model/config.json").write_text(
        json.dumps(
            {
                "architectures": ["BertForSequenceClassification"],
                "id2label": {str(i): lab for i, lab in enumerate(labels)},
                "label2id": {lab: i for i, lab in enumerate(labels)},
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    br.rehash(root)


MUTATION = mutate
