"""Archives are read safely: no member lands outside the extraction root, no link is
created, no device file, and bombs stop at the limits; each refusal is a finding on that
archive, the rest of it is still audited, and nothing is written outside --out."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import archfactory
import pytest

from auditor.archive import extract, sources
from auditor.archive import source_findings as sf
from auditor.archive.sources import Job, SourceProblem, discover


def _snapshot(root: Path, skip: Path) -> dict[str, int]:
    """Every path under ROOT outside SKIP, with its size (what must not change)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        if base == skip or skip in base.parents:
            dirnames[:] = []
            continue
        for n in dirnames + filenames:
            p = base / n
            if p != skip:
                out[str(p)] = p.lstat().st_size
    return out


def _add_bytes(tf: tarfile.TarFile, name: str, data: bytes, **kw) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for k, v in kw.items():
        setattr(info, k, v)
    tf.addfile(info, io.BytesIO(data))


def _add_special(tf: tarfile.TarFile, name: str, kind: bytes, linkname: str = "") -> None:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    tf.addfile(info)


@pytest.fixture
def evil_tar(tmp_path: Path) -> Path:
    """A .tar.gz with one clean run and every kind of unsafe member."""
    run = archfactory.accepted(tmp_path / "staging" / "good")
    path = tmp_path / "src" / "evil.tar.gz"
    path.parent.mkdir()
    with tarfile.open(path, "w:gz") as tf:
        tf.add(run, arcname="good")
        _add_bytes(tf, "../escaped.txt", b"outside")
        _add_bytes(tf, "good/../../escaped2.txt", b"outside")
        _add_bytes(tf, "/tmp/absolute-escape.txt", b"outside")
        _add_special(tf, "link-out", tarfile.SYMTYPE, "/etc")
        _add_special(tf, "good/link-in", tarfile.SYMTYPE, "manifest.json")
        _add_special(tf, "hard-out", tarfile.LNKTYPE, "../../etc/passwd")
        _add_special(tf, "good/copy-of-manifest", tarfile.LNKTYPE, "good/manifest.json")
        _add_special(tf, "dev-null", tarfile.CHRTYPE)
        _add_special(tf, "fifo", tarfile.FIFOTYPE)
        _add_bytes(tf, "good/manifest.json", b"{}")  # a second member of the same name
    return path


def test_unsafe_members_are_refused_with_findings(evil_tar: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = _snapshot(tmp_path, out)
    items = list(discover([evil_tar], out))
    assert _snapshot(tmp_path, out) == before  # nothing outside --out
    assert not (tmp_path / "escaped.txt").exists() and not Path("/tmp/absolute-escape.txt").exists()
    problems = [i for i in items if isinstance(i, SourceProblem)]
    jobs = [i for i in items if isinstance(i, Job)]
    assert [j.source for j in jobs] == [f"{evil_tar}!/good"]
    assert len(problems) == 1 and problems[0].refused and problems[0].source == str(evil_tar)
    codes = {f.artifact: f.code for f in problems[0].findings}
    assert codes == {
        "../escaped.txt": sf.PATH_OUTSIDE,
        "good/../../escaped2.txt": sf.PATH_OUTSIDE,
        "/tmp/absolute-escape.txt": sf.PATH_OUTSIDE,
        "link-out": sf.LINK_REFUSED,
        "good/link-in": sf.LINK_REFUSED,
        "hard-out": sf.LINK_REFUSED,
        "dev-null": sf.SPECIAL_FILE,
        "fifo": sf.SPECIAL_FILE,
        "good/manifest.json": sf.NAME_CLASH,
    }
    good = Path(jobs[0].run_dir)
    assert out in good.parents
    # The hard link inside became a copy (no shared inode), and no link exists anywhere.
    copy = good / "copy-of-manifest"
    assert copy.read_bytes() == (good / "manifest.json").read_bytes()
    assert copy.stat().st_nlink == 1
    for dirpath, dirnames, filenames in os.walk(out):
        for n in dirnames + filenames:
            mode = (Path(dirpath) / n).lstat().st_mode
            assert stat.S_ISREG(mode) or stat.S_ISDIR(mode), n
    # The manifest kept is the archive's first, never overwritten by the second member.
    assert (good / "manifest.json").read_bytes() != b"{}"


def test_bomb_over_the_size_limit_is_refused_whole(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(extract, "MAX_TOTAL_BYTES", 64 << 10)
    path = tmp_path / "bomb.tar.gz"
    run = archfactory.accepted(tmp_path / "staging" / "good")
    with tarfile.open(path, "w:gz") as tf:
        tf.add(run, arcname="good")
        _add_bytes(tf, "zeros.bin", bytes(1 << 20))
    out = tmp_path / "out"
    (item,) = list(discover([path], out))
    assert isinstance(item, SourceProblem) and item.refused
    assert item.findings[-1].code == sf.LIMIT_EXCEEDED
    assert "MAX_TOTAL_BYTES" in str(item.findings[-1].evidence)
    extracted = next((out / sources.EXTRACTED).iterdir())
    assert [p.name for p in extracted.iterdir()] == [sources.MARKER]  # nothing kept


@pytest.mark.parametrize("limit, value", [("MAX_MEMBER_BYTES", 4096), ("MAX_RATIO", 2)])
def test_member_size_and_ratio_limits(tmp_path: Path, monkeypatch, limit: str, value: int) -> None:
    monkeypatch.setattr(extract, limit, value)
    monkeypatch.setattr(extract, "RATIO_FLOOR_BYTES", 0)
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("run/big.bin", bytes(1 << 20))
    (item,) = list(discover([path], tmp_path / "out"))
    assert isinstance(item, SourceProblem) and item.refused
    assert item.findings[-1].code == sf.LIMIT_EXCEEDED
    assert limit in str(item.findings[-1].evidence)


def test_member_count_limit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(extract, "MAX_MEMBERS", 5)
    path = tmp_path / "many.tar"
    with tarfile.open(path, "w") as tf:
        for n in range(10):
            _add_bytes(tf, f"run/f{n}.txt", b"x")
    (item,) = list(discover([path], tmp_path / "out"))
    assert item.refused and item.findings[-1].code == sf.LIMIT_EXCEEDED


def test_zip_traversal_symlink_and_special_members(tmp_path: Path) -> None:
    run = archfactory.accepted(tmp_path / "staging" / "good")
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for p in sorted(run.rglob("*")):
            if p.is_file():
                zf.write(p, f"good/{p.relative_to(run).as_posix()}")
        zf.writestr("../../zip-escape.txt", b"outside")
        zf.writestr("C:/windows.txt", b"outside")
        zf.writestr("dir\\back.txt", b"x")
        link = zipfile.ZipInfo("good/link")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "../../../etc/passwd")
        fifo = zipfile.ZipInfo("fifo")
        fifo.create_system = 3
        fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
        zf.writestr(fifo, b"")
    out = tmp_path / "out"
    before = _snapshot(tmp_path, out)
    items = list(discover([path], out))
    assert _snapshot(tmp_path, out) == before
    (problem,) = [i for i in items if isinstance(i, SourceProblem)]
    assert {f.artifact: f.code for f in problem.findings} == {
        "../../zip-escape.txt": sf.PATH_OUTSIDE,
        "C:/windows.txt": sf.PATH_OUTSIDE,
        "dir\\back.txt": sf.BAD_NAME,
        "good/link": sf.LINK_REFUSED,
        "fifo": sf.SPECIAL_FILE,
    }
    assert "out of the extraction root" in next(
        f.message for f in problem.findings if f.artifact == "good/link"
    )
    assert [i.source for i in items if isinstance(i, Job)] == [f"{path}!/good"]


def test_corrupt_archive_and_non_runs_are_problems_not_crashes(tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    archfactory.accepted(staging / "r")
    bad = archfactory.truncated_tar_gz(tmp_path / "broken.tar.gz", staging, "r")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("no run here")
    (tmp_path / "not-an-archive.txt").write_text("x")
    items = list(
        discover(
            [bad, empty, tmp_path / "not-an-archive.txt", tmp_path / "missing"], tmp_path / "out"
        )
    )
    assert all(isinstance(i, SourceProblem) for i in items)
    assert [(i.refused, i.findings[0].code) for i in items] == [
        (False, sf.UNREADABLE_ARCHIVE),
        (False, sf.NOT_A_RUN),
        (False, sf.NOT_A_RUN),
        (False, sf.NOT_A_RUN),
    ]


def test_an_extraction_is_reused_and_redone_when_the_archive_changes(tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    archfactory.accepted(staging / "r")
    path = archfactory.tar_gz(tmp_path / "a.tar.gz", staging, ["r"])
    out = tmp_path / "out"
    (job,) = discover([path], out)
    marker = Path(job.run_dir).parent / sources.MARKER
    first = marker.stat().st_mtime_ns
    (again,) = discover([path], out)
    assert again == job and marker.stat().st_mtime_ns == first
    archfactory.accepted(staging / "s")
    archfactory.tar_gz(path, staging, ["r", "s"])
    jobs = list(discover([path], out))
    assert [j.source for j in jobs] == [f"{path}!/r", f"{path}!/s"]
    assert len(list((out / sources.EXTRACTED).iterdir())) == 1  # the stale one is gone


def test_a_folder_source_finds_runs_and_never_walks_out(tmp_path: Path) -> None:
    src = archfactory.mixed(tmp_path)
    out = src / "archive-out"  # --out inside a source: never walked as a source
    first = list(discover([src], out))
    second = list(discover([src], out))
    assert first == second
    labels = sorted(i.source.removeprefix(f"{src}/") for i in first)
    assert labels == sorted(archfactory.EXPECTED_VERDICTS)


def test_links_in_a_source_folder_are_not_followed(tmp_path: Path) -> None:
    src = tmp_path / "src"
    real = archfactory.accepted(tmp_path / "elsewhere" / "run")
    archfactory.tar_gz(tmp_path / "elsewhere" / "runs.tar.gz", real.parent, ["run"])
    src.mkdir()
    (src / "linked-run").symlink_to(real)
    (src / "linked.tar.gz").symlink_to(tmp_path / "elsewhere" / "runs.tar.gz")
    (src / "README").symlink_to(tmp_path / "elsewhere" / "run" / "manifest.json")
    items = list(discover([src, src / "linked-run"], tmp_path / "out"))
    assert all(
        isinstance(i, SourceProblem) and i.findings[0].code == sf.LINK_NOT_FOLLOWED for i in items
    )
    assert sorted(i.source for i in items) == sorted(
        [str(src / "linked-run"), str(src / "linked.tar.gz"), str(src / "linked-run")]
    )
