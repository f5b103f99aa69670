"""What replay reads of a run, and from which files: the manifest's `replay` section
(schemas/replay-contract.schema.json), the inputs file it names, and the answers files to
compare, each with the floor it is judged against (docs/replay.md).

Files are read only as plain files inside the run dir (a symbolic link, or a path that leaves
the run dir through one, is refused, never followed), each up to a size limit; a fault is
data (`Fault`), never an exception. Runs are read here from their files directly, not
through a protocol's view; which answers files a protocol's run holds, and the floor each is
judged against, is the protocol's (`auditor/protocols/<p>/replay.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from auditor.readers import json_doc, jsonl_records
from auditor.readers.base import Fault
from auditor.replay.compare import Threshold

MANIFEST = "manifest.json"
MAX_ANSWERS_BYTES = jsonl_records.MAX_BYTES
"""The largest answers or inputs file read (256 MiB)."""
INPUT_SCHEMAS = {"corpus/eval-inputs.jsonl": "input_line", "prompts/sequence.jsonl": "prompt_line"}

PASS_FILE = re.compile(r"^outputs/(?P<config>[A-Za-z0-9._-]+)/(?:cold|warm)-[1-9][0-9]*\.jsonl\Z")
TRIAL_FILE = re.compile(r"^outputs/(?P<config>[A-Za-z0-9._-]+)/trial-[1-9][0-9]*\.jsonl\Z")
GATE_FILE = re.compile(r"^gates/(?P<config>[A-Za-z0-9._-]+)\.jsonl\Z")
REFERENCE_FILE = "reference/outputs.jsonl"


def read_file(root: Path, rel: str, limit: int) -> bytes | Fault:
    """The bytes of the regular file REL of the run dir ROOT, up to LIMIT bytes."""
    path = root / rel
    try:
        real_root = os.path.realpath(root)
        if os.path.realpath(path) != os.path.join(real_root, *rel.split("/")):
            return Fault(
                rel,
                "the path goes through a symbolic link; replay never follows one",
                kind="format",
            )
        if not path.exists():
            return Fault(rel, "the file does not exist", kind="missing")
        if path.is_symlink() or not path.is_file():
            return Fault(rel, "not a regular file", kind="format")
        size = path.stat().st_size
        if size > limit:
            return json_doc.too_large(rel, size, limit)
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        return Fault(rel, f"cannot be read ({exc.strerror or exc})", kind="format")
    return data if len(data) <= limit else json_doc.too_large(rel, len(data), limit)


def read_manifest(root: Path) -> tuple[dict[str, Any] | None, bytes | None, Fault | None]:
    """(the manifest, its bytes, the fault when it cannot be read as a JSON object)."""
    data = read_file(root, MANIFEST, json_doc.MAX_DOC_BYTES)
    if isinstance(data, Fault):
        return None, None, data
    read = json_doc.read(data, name=MANIFEST)
    if read.errors or not isinstance(read.value, dict):
        return (
            None,
            data,
            (
                read.errors[0]
                if read.errors
                else Fault(MANIFEST, "not a JSON object", kind="schema")
            ),
        )
    return read.value, data, None


def contract_faults(contract: Any) -> tuple[Fault, ...]:
    """Schema faults of the manifest's `replay` section."""
    return tuple(
        Fault(
            MANIFEST, f.message, pointer="/replay" + (f.pointer or ""), kind="schema", value=f.value
        )
        for f in json_doc.schema_faults(
            contract, "replay_contract", MANIFEST, label="replay-contract"
        )
    )


def read_inputs(data: bytes, rel: str) -> tuple[dict[str, str], tuple[Fault, ...]]:
    """ID -> text of an inputs file (first line of an ID wins), and its faults."""
    read = jsonl_records.read(
        data, name=rel, schema=INPUT_SCHEMAS.get(rel, "input_line"), surely_valid=_plain_text_line
    )
    texts: dict[str, str] = {}
    for _, record in read.value or ():
        texts.setdefault(record["id"], record["text"])
    return texts, read.faults


def _plain_text_line(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("id"), str)
        and bool(obj["id"])
        and isinstance(obj.get("text"), str)
    )


def read_answers(
    data: bytes, rel: str, wanted: set[str]
) -> tuple[dict[str, list[str]], tuple[Fault, ...]]:
    """ID -> its labels in file order, for the WANTED IDs only, and the file's faults.

    Only `id` and `label` are read (a trial line's latency is `audit check`'s business).
    When every line holds exactly one `"id"` and one `"label"` token and no `\\u` escape,
    one vectorized parse reads the file; otherwise each line is parsed strictly
    (`strict_json`: a repeated key is refused, not read one way or another)."""
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    frame = None
    if (
        lines
        and data.count(b'"id"') == lines
        and data.count(b'"label"') == lines
        and b"\\u" not in data
    ):
        try:
            frame = pl.read_ndjson(data, schema={"id": pl.String, "label": pl.String})
        except pl.exceptions.PolarsError:
            frame = None
        if frame is not None and (
            frame.height != lines
            or frame.select(pl.any_horizontal(pl.col("id", "label").is_null()).any()).item()
        ):
            frame = None
    faults: list[Fault] = []
    if frame is None:
        read = jsonl_records.read(data, name=rel)
        faults = list(read.faults)
        rows = []
        for n, record in read.value or ():
            idv, label = record.get("id"), record.get("label")
            if isinstance(idv, str) and isinstance(label, str):
                rows.append((idv, label))
            else:
                faults.append(
                    Fault(rel, "the line has no string `id` and `label`", line=n, kind="schema")
                )
        frame = pl.DataFrame(rows, schema={"id": pl.String, "label": pl.String}, orient="row")
    frame = frame.filter(pl.col("id").is_in(list(wanted)))
    answered: dict[str, list[str]] = {}
    for idv, label in frame.iter_rows():
        answered.setdefault(idv, []).append(label)
    return answered, tuple(faults)


# -- the answers files of each protocol, and their floors ------------------------------------


@dataclass(frozen=True)
class Source:
    """One answers file to compare, and how it is judged."""

    file: str
    kind: str
    config: str | None
    threshold: Threshold
    judged: bool = True
    note: str | None = None


def by_id(value: Any, key: str) -> dict[str, dict[str, Any]]:
    """The objects of a manifest list (`variants`, `policies`) by their string KEY; nothing
    when it is not a list (the manifest's schema is `audit check`'s business)."""
    records = value if isinstance(value, list) else []
    return {r[key]: r for r in records if isinstance(r, dict) and isinstance(r.get(key), str)}


def on_cpu(device: Any) -> bool:
    return isinstance(device, str) and (device == "cpu" or device.startswith("cpu:"))


def sources(manifest: Mapping[str, Any], files: list[str]) -> list[Source]:
    """The answers files of the run (FILES: every file of the run dir), in a stable order,
    each with its floor: which files and floors is the protocol's (`Protocol.replay_sources`,
    `auditor/protocols/<p>/replay.py`); none for a protocol replay does not know."""
    from auditor import protocols

    name = manifest.get("protocol")
    p = protocols.get(name) if isinstance(name, str) else None
    return [] if p is None or p.replay_sources is None else p.replay_sources(manifest, files)
