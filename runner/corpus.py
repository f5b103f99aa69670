"""The corpus of a run: a user file (JSONL, CSV or Parquet with `id`, `text`, `label`,
`split`) or the embedded default built from the Python standard library's docstrings.

Everything is checked before anything is measured (A1.3): a missing file, missing columns,
an unknown split, repeated IDs, IDs in more than one split, an evaluation split smaller than
declared. Each problem is a `RunnerError` naming the file.

The embedded default: the first paragraph of every module, class and function docstring in
~100 standard-library modules grouped into 7 families (the label is the family of the module
that the docstring documents). Texts found in more than one family are dropped, repeated
texts are kept once; the split is a seeded shuffle, so the corpus is deterministic for a given
Python version and seed. Nobody here wrote those texts and every machine has them offline.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import re
import sysconfig
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import polars as pl

from runner.config import shown_path
from runner.errors import RunnerError

SPLITS = ("train", "tune", "eval")
COLUMNS = ("id", "text", "label", "split")

#: Module family (the label) -> standard-library modules or packages it covers.
FAMILIES: dict[str, tuple[str, ...]] = {
    "text": (
        "string",
        "re",
        "textwrap",
        "difflib",
        "unicodedata",
        "stringprep",
        "codecs",
        "locale",
        "gettext",
    ),
    "files": (
        "os",
        "pathlib",
        "shutil",
        "glob",
        "fnmatch",
        "tempfile",
        "filecmp",
        "zipfile",
        "tarfile",
        "gzip",
        "bz2",
        "lzma",
        "fileinput",
        "stat",
        "ntpath",
        "posixpath",
        "genericpath",
    ),
    "network": (
        "socket",
        "ssl",
        "http",
        "urllib",
        "email",
        "smtplib",
        "ftplib",
        "imaplib",
        "poplib",
        "xmlrpc",
        "mailbox",
        "ipaddress",
        "socketserver",
        "wsgiref",
        "mimetypes",
    ),
    "concurrency": (
        "threading",
        "multiprocessing",
        "concurrent",
        "asyncio",
        "subprocess",
        "queue",
        "sched",
        "selectors",
    ),
    "datatypes": (
        "collections",
        "heapq",
        "bisect",
        "enum",
        "dataclasses",
        "datetime",
        "_pydatetime",
        "calendar",
        "decimal",
        "_pydecimal",
        "fractions",
        "numbers",
        "statistics",
        "random",
        "copy",
        "pprint",
        "reprlib",
        "zoneinfo",
        "graphlib",
        "functools",
        "operator",
    ),
    "devtools": (
        "unittest",
        "doctest",
        "pdb",
        "bdb",
        "trace",
        "traceback",
        "inspect",
        "dis",
        "ast",
        "tokenize",
        "pydoc",
        "typing",
        "pstats",
        "cProfile",
        "profile",
        "timeit",
        "importlib",
        "pkgutil",
        "warnings",
        "tracemalloc",
    ),
    "formats": (
        "xml",
        "html",
        "json",
        "csv",
        "configparser",
        "tomllib",
        "plistlib",
        "netrc",
        "base64",
        "binascii",
        "quopri",
        "pickle",
        "shelve",
        "sqlite3",
        "dbm",
        "struct",
        "pickletools",
        "marshal",
    ),
}

_MIN_WORDS = 4  # shorter first paragraphs ("Return self.") say nothing about their family


@dataclass(frozen=True)
class Corpus:
    """The validated corpus: one frame with id, text, label, split (eval rows in input order)."""

    frame: pl.DataFrame
    source: str
    revision: str
    """sha256 of the canonical content (every row's id, text, label and split)."""
    notes: str = ""

    def split(self, name: str) -> pl.DataFrame:
        return self.frame.filter(pl.col("split") == name)

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(sorted(self.frame["label"].unique().to_list()))


def load_corpus(
    path: Path | None, eval_size: int | None, max_texts: int | None, seed: int
) -> Corpus:
    """The user's corpus at `path`, or the embedded default when `path` is None."""
    if path is None:
        frame = build_default_frame(seed, eval_size or 1000, max_texts)
        source = (
            f"embedded default: first paragraphs of Python {_py_version()} standard "
            "library docstrings, labelled by module family, seeded split"
        )
        return _finish(frame, source, "(embedded default corpus)", eval_size, "")
    frame = _read_user_file(path)
    # recorded by name (the manifest, the notes): not a local path of this machine
    return _finish(frame, shown_path(str(path)), str(path), eval_size, "", max_texts=max_texts)


def _finish(
    frame: pl.DataFrame,
    source: str,
    label: str,
    eval_size: int | None,
    notes: str,
    max_texts: int | None = None,
) -> Corpus:
    frame = validate_frame(frame, label)
    n_eval = frame.filter(pl.col("split") == "eval").height
    if eval_size is not None and n_eval < eval_size:
        raise RunnerError(
            f"corpus {label}: the evaluation split has {n_eval} texts, fewer "
            f"than the {eval_size} declared (corpus.eval_size)"
        )
    if eval_size is not None and n_eval > eval_size:
        # keep the first eval_size evaluation texts in input order; say so
        keep = set(frame.filter(pl.col("split") == "eval")["id"].head(eval_size).to_list())
        frame = frame.filter((pl.col("split") != "eval") | pl.col("id").is_in(list(keep)))
        notes = (
            f"evaluation split cut from {n_eval} to the first {eval_size} texts in "
            "input order (corpus.eval_size)"
        )
    if max_texts is not None:
        # cap only the training and tuning rows: the evaluation split is the fixed work
        ev = frame.filter(pl.col("split") == "eval")
        rest = frame.filter(pl.col("split") != "eval").head(max(0, max_texts - ev.height))
        frame = pl.concat([rest, ev])
    for split in ("train", "tune"):
        if frame.filter(pl.col("split") == split).height == 0:
            raise RunnerError(
                f"corpus {label}: the {split} split is empty; the model is "
                "trained on train and the quality reference is fixed on tune"
            )
    return Corpus(frame=frame, source=source, revision=corpus_revision(frame), notes=notes)


def validate_frame(frame: pl.DataFrame, label: str) -> pl.DataFrame:
    """Check columns, values, unique IDs and disjoint splits; return the four columns as str."""
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise RunnerError(
            f"corpus {label}: missing column(s) {', '.join(missing)} "
            f"(found: {', '.join(frame.columns) or 'none'})"
        )
    frame = frame.select([pl.col(c).cast(pl.String) for c in COLUMNS])
    for col in COLUMNS:
        bad = frame.with_row_index("row").filter(
            pl.col(col).is_null() | (pl.col(col).str.strip_chars() == "")
        )
        if bad.height:
            raise RunnerError(
                f"corpus {label}: empty {col} in row {bad['row'][0] + 1} "
                f"({bad.height} row(s) in all)"
            )
    unknown = frame.filter(~pl.col("split").is_in(list(SPLITS)))["split"].unique().sort()
    if unknown.len():
        raise RunnerError(
            f"corpus {label}: unknown split value(s) {unknown.to_list()[:5]}; "
            f"allowed: {', '.join(SPLITS)}"
        )
    per_id = frame.group_by("id").agg(
        pl.col("split").n_unique().alias("splits"), pl.len().alias("n")
    )
    overlap = per_id.filter(pl.col("splits") > 1).sort("id")
    if overlap.height:
        ids = overlap["id"].head(5).to_list()
        raise RunnerError(
            f"corpus {label}: overlapping splits: {overlap.height} ID(s) appear "
            f"in more than one split, e.g. {ids}"
        )
    repeated = per_id.filter(pl.col("n") > 1).sort("id")
    if repeated.height:
        ids = repeated["id"].head(5).to_list()
        raise RunnerError(
            f"corpus {label}: repeated IDs: {repeated.height} ID(s) appear more "
            f"than once, e.g. {ids}"
        )
    bad_id = frame.filter(pl.col("id").str.contains(r"[\r\n]"))
    if bad_id.height:
        raise RunnerError(f"corpus {label}: ID {bad_id['id'][0]!r} holds a line break")
    if frame.filter(pl.col("split") == "eval").height == 0:
        raise RunnerError(f"corpus {label}: the eval split is empty")
    return frame


def corpus_revision(frame: pl.DataFrame) -> str:
    """sha256 over the canonical content: one JSON array [id, text, label, split] a line,
    rows sorted by split then id, so the file format and row order do not matter."""
    h = hashlib.sha256()
    rows = frame.select(COLUMNS).sort(["split", "id"]).rows()
    for row in rows:
        h.update(json.dumps(list(row), ensure_ascii=False, separators=(",", ":")).encode())
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


def _read_user_file(path: Path) -> pl.DataFrame:
    if not path.is_file():
        raise RunnerError(f"corpus file {path}: not found")
    suffix = path.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson"):
            return pl.read_ndjson(path, infer_schema_length=None)
        if suffix == ".csv":
            return pl.read_csv(path, infer_schema=False)
        if suffix in (".parquet", ".pq"):
            return pl.read_parquet(path)
    except Exception as exc:  # polars raises many kinds; all mean "cannot read this file"
        raise RunnerError(
            f"corpus file {path}: cannot be read as {suffix[1:]} ({type(exc).__name__}: {exc})"
        ) from None
    raise RunnerError(
        f"corpus file {path}: unknown format {suffix or '(no suffix)'}; "
        "use .jsonl, .csv or .parquet"
    )


def _py_version() -> str:
    import platform

    return platform.python_version()


@cache
def _default_texts() -> tuple[tuple[str, str, str], ...]:
    return tuple(default_texts())


def default_texts() -> list[tuple[str, str, str]]:
    """(id, text, label) for every usable first paragraph, deterministic order, no repeats."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found: list[tuple[str, str, str]] = []
    for family, modules in FAMILIES.items():
        for module in modules:
            for file in _module_files(stdlib, module):
                found.extend(_docstrings(file, stdlib, family))
    families_of: dict[str, set[str]] = {}
    for _, text, family in found:
        families_of.setdefault(text, set()).add(family)
    seen_text: set[str] = set()
    seen_id: set[str] = set()
    out = []
    for id_, text, family in found:
        # a text shared by two families has no single right label; a repeat adds nothing
        if len(families_of[text]) > 1 or text in seen_text or id_ in seen_id:
            continue
        seen_text.add(text)
        seen_id.add(id_)
        out.append((id_, text, family))
    return out


def build_default_frame(seed: int, eval_size: int, max_texts: int | None) -> pl.DataFrame:
    """The default corpus with a seeded split: eval_size eval texts, ~15% of the rest tune,
    the rest train; `max_texts` caps the total (train and tune shrink, eval does not)."""
    rows = list(_default_texts())  # parsed once per process; the texts never change
    rng = random.Random(seed)
    rng.shuffle(rows)
    if max_texts is not None:  # a cap on the total; the evaluation split is kept whole
        rows = rows[: max(max_texts, eval_size)]
    if len(rows) < eval_size + 20:
        raise RunnerError(
            f"embedded default corpus: only {len(rows)} texts, too few for an "
            f"evaluation split of {eval_size} plus train and tune"
        )
    rest = len(rows) - eval_size
    n_tune = max(10, rest * 15 // 100)
    splits = ["eval"] * eval_size + ["tune"] * n_tune + ["train"] * (rest - n_tune)
    ids, texts, labels = zip(*rows, strict=True)
    return pl.DataFrame({"id": ids, "text": texts, "label": labels, "split": splits})


def _module_files(stdlib: Path, module: str) -> list[Path]:
    pkg = stdlib / module
    if pkg.is_dir():
        return sorted(
            f
            for f in pkg.rglob("*.py")
            if not any(part.startswith("test") for part in f.relative_to(pkg).parts)
        )
    single = stdlib / f"{module}.py"
    return [single] if single.is_file() else []


def _docstrings(file: Path, stdlib: Path, family: str) -> list[tuple[str, str, str]]:
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return []  # a file this Python cannot parse is simply not part of the corpus
    module = ".".join(file.relative_to(stdlib).with_suffix("").parts)
    out: list[tuple[str, str, str]] = []

    def visit(node: ast.AST, qual: str) -> None:
        doc = ast.get_docstring(node, clean=True)  # type: ignore[arg-type]
        if doc:
            para = " ".join(re.split(r"\n\s*\n", doc.strip())[0].split())
            if len(para.split()) >= _MIN_WORDS:
                out.append((f"{module}:{qual}" if qual else module, para, family))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, f"{qual}.{child.name}" if qual else child.name)

    visit(tree, "")
    return out
