"""What the passes ran on, from the evidence of the run rather than its declarations: the
GPU device pattern, per pass the GPUs its placement device map shows, the GPUs and models
used, per variant its GPUs and the torch build the environment observed (A4); the model
files the run keeps are `facts.revisions`'."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, cast

import polars as pl

from auditor.protocols.cache import per_view

if TYPE_CHECKING:
    from auditor.protocols.a.view import RunView

GPU_DEVICE = re.compile(r"^(cuda|rocm|hip)(:(\d+))?$")
"""A torch device string of a GPU (ROCm builds name theirs `cuda` too); `cuda` alone is the
current device, index 0 in a run of one process per pass."""


def is_gpu_device(column: str = "device") -> pl.Expr:
    """Whether a device column names a GPU (`GPU_DEVICE`), vectorized."""
    return (
        pl.col(column)
        .str.strip_chars()
        .str.to_lowercase()
        .str.contains(GPU_DEVICE.pattern)
        .fill_null(False)
    )


def gpu_index(device: str) -> int | None:
    """The GPU index a device string names, None for a device that is not a GPU."""
    m = GPU_DEVICE.match(device.strip().lower())
    return None if m is None else int(m.group(3) or 0)


@per_view
def pass_gpus(view: RunView) -> pl.DataFrame:
    """Per pass with placement evidence, from its device map only (where the parameters and
    input batches were: `parameter_devices`, `input_devices`), never from the declared
    `gpus_used` list: `variant_id, phase, run_index, file, pid`, `devices` (every device that
    held a parameter or an input), `gpu_indices` and `gpu_count` (distinct GPUs among them),
    `gpu_models` (the driver's name of each such GPU, from the pass's identity records;
    a GPU without one is in `unidentified`), and `unbacked` (indices the declared list names
    that the device map does not show)."""
    rows = []
    for k, doc in sorted(view.placement.items()):
        held = {
            d
            for part in ("parameter_devices", "input_devices")
            for d, n in doc[part].items()
            if n > 0
        }
        indices = sorted({i for d in held if (i := gpu_index(d)) is not None})
        names = {g["index"]: g["name"] for g in doc["gpus_used"]}
        rows.append(
            {
                "variant_id": k[0],
                "phase": k[1],
                "run_index": k[2],
                "file": view.placement_files[k],
                "pid": doc.get("pid"),
                "devices": sorted(held),
                "gpu_indices": indices,
                "gpu_count": len(indices),
                "gpu_models": sorted({names[i] for i in indices if i in names}),
                "unidentified": [i for i in indices if i not in names],
                "unbacked": sorted(set(names) - set(indices)),
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "variant_id": pl.String,
            "phase": pl.String,
            "run_index": pl.Int64,
            "file": pl.String,
            "pid": pl.Int64,
            "devices": pl.List(pl.String),
            "gpu_indices": pl.List(pl.Int64),
            "gpu_count": pl.Int64,
            "gpu_models": pl.List(pl.String),
            "unidentified": pl.List(pl.Int64),
            "unbacked": pl.List(pl.Int64),
        },
    )


@per_view
def gpus_used(view: RunView) -> int:
    """The most GPUs any pass used, from the placement device maps (0: a CPU run)."""
    counts = pass_gpus(view).get_column("gpu_count")
    return int(cast(int | None, counts.max()) or 0) if counts.len() else 0


@per_view
def gpu_models(view: RunView) -> frozenset[str]:
    """The GPU models the passes ran on: the driver's names of the GPUs their device maps
    show (empty: CPU only)."""
    return frozenset(pass_gpus(view).get_column("gpu_models").explode().drop_nulls().to_list())


@dataclass(frozen=True)
class VariantGpus:
    """The GPUs one variant's passes used, as their device maps show."""

    models: tuple[str, ...]
    """The driver's names, sorted (empty: CPU only, or no placement evidence)."""
    count: int
    """The most GPUs one of its passes used."""


@per_view
def variant_gpus(view: RunView) -> Mapping[str, VariantGpus]:
    """Per variant with placement evidence, its `VariantGpus`."""
    out = {}
    for mine in pass_gpus(view).partition_by("variant_id", maintain_order=True):
        models = sorted(set(mine.get_column("gpu_models").explode().drop_nulls().to_list()))
        out[mine["variant_id"][0]] = VariantGpus(
            tuple(models), int(cast(int | None, mine.get_column("gpu_count").max()) or 0)
        )
    return MappingProxyType(out)


@per_view
def torch_build(view: RunView) -> str | None:
    """What the observed torch build can run on: `cpu` (a `+cpu` build, or a `cpu` runtime:
    no CUDA or ROCm was available to it), `cuda`, `rocm`, or None when the environment does
    not say (no environment, or a build without a local version and no runtime)."""
    env = view.environment
    if env is None:
        return None
    version, runtime = env["torch_version"], env["runtime"]
    local = version.partition("+")[2].lower()
    if local == "cpu" or runtime["name"] == "cpu":
        return "cpu"
    if local.startswith("rocm") or runtime["name"] == "rocm":
        return "rocm"
    if local.startswith("cu") or (runtime["name"] == "cuda" and runtime["version"]):
        return "cuda"
    return None
