"""Damage to a clean run directory, drawn from a seeded `random.Random`, for the property
tests and `bench/fuzz_audit.py`: what a careless tool or a submitter who wants a bad run
accepted could do to one file, the manifest re-hashed afterwards (most of the time), as the
submitter may.

- `fact_change(root, rng)`: a change to one file a fact the auditor recomputes depends on
  (an output's label, a reference, a duration, a device map, a model file...), made so the
  fact really changes: the audit must reject the run.
- `damage(root, rng)`: anything to one file (bytes flipped, a truncation, a deeply nested or
  enormous value, a repeated key, a non-UTF-8 name, a sparse file...): the audit must never
  crash, whatever its verdict.

Both return a short description of what they did, for failure messages."""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Callable
from pathlib import Path

import runfactory as rf

NASTY: tuple[bytes, ...] = (
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000,
    b"9" * 5000,
    b"-" + b"1" * 400,
    b"NaN",
    b"Infinity",
    b"1e999",
    b"-1e999",
    b"99999999999999999999",
    b'{"id": "ev-000001", "\\u0069d": "ev-000002", "label": "neutral"}',
    b'{"id": "ev-000001", "label": "neutral", "label": "positive"}',
    b'{"id": 1, "label": null}',
    b"null",
    b"[]",
    b'""',
    b"{}",
    b"\xff\xfe\xfd",
    b"\x00\x00",
    b"\xef\xbb\xbf",
    b"$\\frac{a}{b}$ $x^2$",
    b"\r\n\r\n",
    b'"unterminated',
    b"2026-11-02t09:00:00z",
    b"2026-13-45T25:61:00Z",
    b"2026-11-02T09:00:00+01:00",
    b"x" * 200_000,
)


def _files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    )


def _pick(rng: random.Random, root: Path, prefix: str = "") -> str | None:
    files = [f for f in _files(root) if f.startswith(prefix)]
    return rng.choice(files) if files else None


# -- damage: anything to one file ---------------------------------------------------------


def _flip(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\xff"
    i = rng.randrange(len(data))
    return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]


def _insert(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(NASTY) + data[i:]


def _replace_value(data: bytes, rng: random.Random) -> bytes:
    """A JSON value or CSV cell replaced by something nasty (where a number is expected)."""
    text = data.decode("utf-8", "surrogateescape")
    import re

    spots = [m.span() for m in re.finditer(r"(?<=[:,])\s*-?\d+(\.\d+)?", text)]
    if not spots:
        return _insert(data, rng)
    a, b = rng.choice(spots)
    return (
        text[:a].encode("utf-8", "surrogateescape")
        + rng.choice(NASTY)
        + text[b:].encode("utf-8", "surrogateescape")
    )


def _line_op(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    if len(lines) < 2:
        return _insert(data, rng)
    i = rng.randrange(len(lines))
    op = rng.choice(("dup", "drop", "swap", "nasty"))
    if op == "dup":
        lines.insert(i, lines[i])
    elif op == "drop":
        del lines[i]
    elif op == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines[i] = rng.choice(NASTY)
    return b"\n".join(lines)


_BYTE_OPS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "flip a bit": _flip,
    "insert something nasty": _insert,
    "replace a number": _replace_value,
    "a line op": _line_op,
    "truncate": lambda d, rng: d[: rng.randrange(len(d) + 1)],
    "empty": lambda d, rng: b"",
    "replace by nasty": lambda d, rng: rng.choice(NASTY),
    "CRLF<->LF": lambda d, rng: (
        d.replace(b"\r\n", b"\n") if b"\r\n" in d else d.replace(b"\n", b"\r\n")
    ),
}


def damage(root: Path, rng: random.Random) -> str:
    """Damage one file of ROOT (or add or remove one); re-hash the manifest most of the
    time. Returns what was done."""
    what = rng.choice(("bytes",) * 8 + ("remove", "add", "odd name", "sparse", "manifest"))
    rehash = rng.random() < 0.85
    if what == "remove":
        rel = _pick(rng, root)
        if rel:
            (root / rel).unlink()
        done = f"removed {rel}"
    elif what == "add":
        rel = rng.choice(
            (
                "outputs/batch-1/warm-9.jsonl",
                "notes.txt",
                "outputs/x.jsonl",
                "traces/memory/batch-1/cold-2.json",
                "claims.json",
                "evidence/placement/batch-9/warm-1.json",
            )
        )
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(rng.choice(NASTY))
        done = f"added {rel}"
    elif what == "odd name":
        name = rng.choice((b"warm-\xff.jsonl", b"\xe9t\xe9.json", b"cold-1.jsonl\n"))
        folder = root / rng.choice(("outputs/batch-1", "traces/memory", "."))
        folder.mkdir(parents=True, exist_ok=True)  # any protocol's run
        with open(os.path.join(os.fsencode(folder), name), "wb") as fh:
            fh.write(rng.choice(NASTY))
        done = f"a file named {name!r}"
    elif what == "sparse":
        rel = rng.choice(("model/sparse.bin", "outputs/batch-1/warm-1.jsonl"))
        (root / rel).parent.mkdir(parents=True, exist_ok=True)  # any protocol's run
        with open(root / rel, "wb") as fh:
            fh.truncate(rng.choice((1 << 20, 16 << 20)))
        done = f"sparse {rel}"
    elif what == "manifest":
        p = root / "manifest.json"
        op = rng.choice(list(_BYTE_OPS))
        p.write_bytes(_BYTE_OPS[op](p.read_bytes(), rng))
        return f"manifest: {op}"  # a re-hash would undo it or fail on it
    else:
        rel = _pick(rng, root)
        if rel is None:
            return "nothing to damage"
        op = rng.choice(list(_BYTE_OPS))
        p = root / rel
        p.write_bytes(_BYTE_OPS[op](p.read_bytes(), rng))
        done = f"{rel}: {op}"
    if rehash:
        with contextlib.suppress(ValueError, OSError):  # a manifest that no longer parses
            rf.rehash(root)
    return done + ("" if rehash else " (not re-hashed)")


# -- fact changes: a recomputed fact really changes ----------------------------------------


def _other(value: str, choices: list[str], rng: random.Random) -> str:
    return rng.choice([c for c in choices if c != value])


def _jsonl_edit(root: Path, rel: str, fn: Callable[[list[dict]], None]) -> None:
    lines = rf.read_jsonl(root, rel)
    fn(lines)
    rf.write_jsonl(root, rel, lines)


def _json_edit(root: Path, rel: str, fn: Callable[[dict], None]) -> None:
    doc = rf.read_json(root, rel)
    fn(doc)
    rf.write_json(root, rel, doc)


def _output(root: Path, rng: random.Random) -> str:
    rel = _pick(rng, root, "outputs/")
    assert rel is not None
    classes = rf.read_json(root, "manifest.json")["task"]["classes"]

    def change(lines: list[dict]) -> None:
        i = rng.randrange(len(lines))
        op = rng.choice(("label", "id", "drop", "dup"))
        if op == "label":
            lines[i]["label"] = _other(lines[i]["label"], classes, rng)
        elif op == "id":
            lines[i]["id"] = "zz-not-expected"
        elif op == "drop":
            del lines[i]
        else:
            lines.insert(i, dict(lines[i]))

    _jsonl_edit(root, rel, change)
    return f"{rel}: an answer changed"


def _ids(root: Path, rng: random.Random) -> str:
    rel = rng.choice(
        ("corpus/expected_ids.txt", "corpus/splits/train_ids.txt", "corpus/splits/tune_ids.txt")
    )
    ids = (root / rel).read_text(encoding="utf-8").splitlines()
    evals = (root / "corpus/expected_ids.txt").read_text(encoding="utf-8").splitlines()
    op = rng.choice(("drop", "add", "change"))
    i = rng.randrange(len(ids))
    if op == "drop":
        del ids[i]
    elif op == "add":
        ids.insert(i, rng.choice(evals) if "splits" in rel else "ev-new-000")
    else:
        ids[i] = rng.choice(evals) if "splits" in rel else ids[i] + "x"
    (root / rel).write_text("".join(x + "\n" for x in ids), encoding="utf-8")
    return f"{rel}: {op}"


def _references(root: Path, rng: random.Random) -> str:
    classes = rf.read_json(root, "manifest.json")["task"]["classes"]

    def change(lines: list[dict]) -> None:
        i = rng.randrange(len(lines))
        if rng.random() < 0.5:
            lines[i]["label"] = _other(lines[i]["label"], classes, rng)
        else:
            del lines[i]

    _jsonl_edit(root, "corpus/references.jsonl", change)
    return "corpus/references.jsonl: a reference changed"


def _inputs(root: Path, rng: random.Random) -> str:
    def change(lines: list[dict]) -> None:
        i = rng.randrange(len(lines))
        j = (i + 1 + rng.randrange(len(lines) - 1)) % len(lines)
        op = rng.choice(("drop", "dup", "swap"))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, dict(lines[j]))
        else:
            lines[i], lines[j] = lines[j], lines[i]

    _jsonl_edit(root, "corpus/eval-inputs.jsonl", change)
    return "corpus/eval-inputs.jsonl: the inputs changed"


def _timeline(root: Path, rng: random.Random) -> str:
    op = rng.choice(("elapsed", "shift", "pid", "status"))

    def change(entries: list[dict]) -> None:
        passes = [e for e in entries if e["phase"] in ("cold", "warm")]
        e = rng.choice(passes)
        if op == "elapsed":
            e["elapsed_seconds"] = round(e["elapsed_seconds"] * rng.choice((0.5, 0.9, 1.1, 2)), 6)
        elif op == "shift":
            e["started_at"] = _shift(e["started_at"], -rng.choice((5, 60, 3600)))
        elif op == "pid":
            e["pid"] = e["pid"] + 1 + rng.randrange(100)
        else:
            e["status"] = rng.choice(("oom", "error"))
            e["incident"] = None

    _jsonl_edit(root, "timeline.jsonl", change)
    return f"timeline.jsonl: {op}"


def _shift(ts: str, seconds: float) -> str:
    from datetime import datetime, timedelta

    t = datetime.fromisoformat(ts.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    return t.isoformat().replace("+00:00", "Z")


def _trace(root: Path, rng: random.Random) -> str:
    rel = _pick(rng, root, "traces/memory/")
    assert rel is not None

    def change(d: dict) -> None:
        if d["allocator_measured"]:
            k = rng.choice(
                (
                    "baseline_allocated_bytes",
                    "baseline_reserved_bytes",
                    "peak_allocated_bytes",
                    "peak_reserved_bytes",
                )
            )
            d[k] = d[k] + rng.choice((1, 4096, -4096, 1 << 30))
        else:
            d["allocator_measured"] = True

    _json_edit(root, rel, change)
    return f"{rel}: a figure changed"


def _placement(root: Path, rng: random.Random) -> str:
    rel = _pick(rng, root, "evidence/placement/")
    assert rel is not None

    def change(d: dict) -> None:
        if rng.random() < 0.5:
            d["parameter_devices"] = {"cuda:1": sum(d["parameter_devices"].values()) or 1}
        else:
            d["pid"] = d["pid"] + 1 + rng.randrange(100)

    _json_edit(root, rel, change)
    return f"{rel}: where or by whom"


def _environment(root: Path, rng: random.Random) -> str:
    def change(e: dict) -> None:
        k = rng.choice(("torch_version", "gpu_count", "python_version"))
        e[k] = e[k] + 1 if k == "gpu_count" else e[k] + ".post1"

    _json_edit(root, "environment.json", change)
    return "environment.json: an observation changed"


_CSV_FACTS = (
    "elapsed_seconds",
    "observed_ids",
    "quality_value",
    "gpu_count",
    "package_total_usd_minor",
    "accepted_unique_corpora",
    "seed",
    "batch",
    "expected_ids",
    "warmup_iterations",
    "context",
    "lots",
)


def _csv(root: Path, rng: random.Random) -> str:
    rows = rf.read_rows(root)
    r = rng.choice(rows)
    col = rng.choice(_CSV_FACTS)
    value = float(r[col]) if r[col] else 1.0
    new = value + rng.choice((1, 2, 7)) if col != "elapsed_seconds" else value * 1.5
    r[col] = str(int(new)) if col not in ("elapsed_seconds", "quality_value") else f"{new:.6f}"
    rf.write_rows(root, rows)
    return f"resultats-bruts.csv: {col} of row {rows.index(r) + 1}"


def _set_check(root: Path, rng: random.Random) -> str:
    def change(d: dict) -> None:
        p = rng.choice(d["passes"])
        k = rng.choice(("lines", "observed_ids", "unique_ids"))
        p[k] += 1

    _json_edit(root, "checks/set-check.json", change)
    return "checks/set-check.json: a count changed"


def _model(root: Path, rng: random.Random) -> str:
    rel = _pick(rng, root, "model/")
    assert rel is not None
    p = root / rel
    p.write_bytes(_flip(p.read_bytes(), rng))
    return f"{rel}: a byte changed"


def _offers(root: Path, rng: random.Random) -> str:
    _json_edit(
        root,
        "economics/offers.json",
        lambda o: o["offers"][0].update(
            price_per_lot_usd_minor=o["offers"][0]["price_per_lot_usd_minor"] + 1
        ),
    )
    return "economics/offers.json: the price changed"


def _claims(root: Path, rng: random.Random) -> str:
    def change(c: dict) -> None:
        s = rng.choice(c["summaries"])
        s["value"] = s["value"] + rng.choice((0.01, 0.1, -0.05))

    _json_edit(root, "claims.json", change)
    return "claims.json: a summary changed"


FACTS: dict[str, Callable[[Path, random.Random], str]] = {
    "outputs": _output,
    "id lists": _ids,
    "references": _references,
    "inputs": _inputs,
    "timeline": _timeline,
    "memory trace": _trace,
    "placement": _placement,
    "environment": _environment,
    "csv": _csv,
    "set check": _set_check,
    "model": _model,
    "offers": _offers,
    "claims": _claims,
}
"""File family -> a change to one of its files that changes a fact the auditor recomputes."""


def fact_change(root: Path, rng: random.Random, family: str | None = None) -> str:
    """Change one fact file of ROOT (of FAMILY, or a random one) and re-hash."""
    name = family or rng.choice(sorted(FACTS))
    if name == "claims" and not (root / "claims.json").exists():
        name = "outputs"
    done = FACTS[name](root, rng)
    rf.rehash(root)
    return done


def result_summary(result: object) -> str:
    return json.dumps([(f.code, f.severity, f.message[:80]) for f in result.findings][:8])
