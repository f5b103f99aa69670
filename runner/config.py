"""The configuration helpers both protocols' configurations share (`runner.a.config`,
`runner.b.config`): the user's file or the embedded default (`runner/defaults/`), a TOML file
read and validated against its schema in `schemas/` with every fault naming the file and the
key, a user file merged over the base defaults table by table, paths resolved against the
file's folder, and the experiment id a file's name gives when it names none."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import schemas
from runner.errors import RunnerError

T = TypeVar("T")


def load(path: Path | None, default_name: str, from_file: Callable[[Path, str], T]) -> T:
    """`from_file(path, label)` on the user's file (labelled by its path), or on the embedded
    `runner/defaults/<default_name>` (labelled `embedded default`) when `path` is None."""
    if path is None:
        ref = resources.files("runner").joinpath("defaults", default_name)
        with resources.as_file(ref) as default_path:
            return from_file(Path(default_path), "embedded default")
    return from_file(path, str(path))


def read_toml(path: Path, kind: str) -> dict[str, Any]:
    """A config file parsed and validated against its schema (`kind`); shared by both
    protocols' configs. Every fault is a RunnerError naming the file and the key."""
    if not path.is_file():
        raise RunnerError(f"config file {path}: not found")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RunnerError(f"config file {path}: not valid TOML ({exc})") from None
    _validate(raw, path, kind)
    return raw


def _validate(raw: dict[str, Any], path: Path, kind: str) -> None:
    errors = sorted(schemas.validator(kind).iter_errors(raw), key=lambda e: e.path)
    if not errors:
        return
    err = errors[0]
    where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
    if err.validator == "additionalProperties":
        # name the unknown key itself, not the table that holds it
        allowed = set(err.schema.get("properties", {}))
        unknown = sorted(k for k in err.instance if k not in allowed)
        prefix = "" if where == "(top level)" else where + "."
        raise RunnerError(
            f"config file {path}: unknown key {prefix}{unknown[0]} "
            f"(allowed here: {', '.join(sorted(allowed))})"
        )
    raise RunnerError(f"config file {path}: {where}: {err.message}")


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`, tables merged key by key (arrays replaced whole)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = merge(base[key], value)
        else:
            out[key] = value
    return out


def resolve_path(base_dir: Path, value: str) -> Path:
    """A path from a config file, relative to that file's folder."""
    p = Path(value).expanduser()
    return p if p.is_absolute() else base_dir / p


def resolve_options(
    options: dict[str, Any], names: tuple[str, ...], base_dir: Path
) -> dict[str, Any]:
    """The workload OPTIONS with each of NAMES that is a string resolved against BASE_DIR
    (the config file's folder), as an absolute path."""
    return {
        k: str(resolve_path(base_dir, v).resolve()) if k in names and isinstance(v, str) else v
        for k, v in options.items()
    }


def recorded_options(options: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The workload OPTIONS as the run records them (manifest, notes): each of NAMES (a file
    option) as the config wrote it when relative (to the config file's folder), or only its
    last part when absolute; a local path of the submitter's machine is not the run's and
    goes into a signed report otherwise (the files themselves are staged under `model/`)."""
    return {
        k: shown_path(v) if k in names and isinstance(v, str) else v for k, v in options.items()
    }


def shown_path(path: str) -> str:
    """PATH as a run records it: as given when relative, its name alone when absolute (a
    local path of the submitter's machine says nothing to a reviewer and would go into the
    signed report); `embedded default` as it is."""
    return f".../{Path(path).name}" if Path(path).expanduser().is_absolute() else path


def experiment_id_from(path: Path) -> str:
    stem = "".join(c if c.isalnum() or c in "._-" else "-" for c in path.stem)
    return stem or "experiment"
