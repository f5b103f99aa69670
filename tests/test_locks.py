"""The locks (requirements/*.lock, README "Pinned installs") pin what pyproject.toml asks
for: every dependency of the runtime (and the gpu extra) in the runtime lock, every one of
the dev, hf, cluster, macos and gpu extras in the dev lock, each at one exact version with hashes;
torch in neither (the machine decides its build)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)")


def pinned(lock: str) -> dict[str, list[str]]:
    """Name -> the versions pinned (one per marker fork), from a lock's requirement lines."""
    out: dict[str, list[str]] = {}
    lines = (REPO / "requirements" / lock).read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        m = PIN.match(line)
        if m is None:
            continue
        if "sys_platform == 'never'" in line:  # torch and what only torch pulls in
            continue
        assert lines[i + 1].strip().startswith("--hash=sha256:"), f"{lock}: {line} unhashed"
        out.setdefault(canonicalize_name(m[1]), []).append(m[2])
    return out


def wanted(*extras: str) -> set[str]:
    reqs = [*PYPROJECT["dependencies"]]
    for extra in extras:
        reqs += PYPROJECT["optional-dependencies"][extra]
    return {canonicalize_name(Requirement(r).name) for r in reqs} - {"torch"}


@pytest.mark.parametrize(
    ("lock", "extras"),
    [("runtime.lock", ("gpu",)), ("dev.lock", ("gpu", "hf", "cluster", "macos", "dev"))],
)
def test_each_lock_pins_every_dependency_it_serves(lock: str, extras: tuple[str, ...]) -> None:
    pins = pinned(lock)
    assert wanted(*extras) <= set(pins), wanted(*extras) - set(pins)
    assert "torch" not in pins
    cuda = [n for n in pins if n.startswith("nvidia-") and n != "nvidia-ml-py"]
    assert cuda == [], "a CUDA package (from a CUDA torch) in the lock"


def test_the_runtime_lock_agrees_with_the_dev_lock() -> None:
    runtime, dev = pinned("runtime.lock"), pinned("dev.lock")
    differ = {n: (v, dev.get(n)) for n, v in runtime.items() if dev.get(n) != v}
    assert differ == {}, "make lock writes both from the same resolution day; refresh both"
