"""pmlogmv: ours renames archives as PCP 6.0.3's does, with the same words and status.

Unit tests cover the names of an archive's parts, the unsafe-name check and the rename
(links, then removals; the undo when a new name exists).  Interop tests run PCP's
pmlogmv and ours on identical copies of archives (ours, multi-volume with a gap and
compressed volumes) and compare stdout, stderr, exit status and the files left.
"""

from __future__ import annotations

import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import pmID_build
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools.pmlogmv import INDEX, META, main, part_name, unsafe_character

PCP_PMLOGMV = shutil.which("pmlogmv", path="/usr/bin")
OURS = str(Path(sys.executable).parent / "pmlogmv")
T0 = Timestamp(1_700_000_000, 0)
PMID = pmID_build(245, 0, 1)


def write_archive(base: Path, volumes: int = 1) -> None:
    """A small archive of our writer's with VOLUMES data volumes."""
    with ArchiveWriter(str(base), hostname="box", timezone="UTC", start=T0, pid=7) as w:
        w.put_desc(Desc(PMID, PMType.PM_TYPE_U32), ["demo.u32"])
        w.put_index(T0)
        for i in range(volumes * 2):
            stamp = Timestamp(T0.sec + i, 0)
            if i and i % 2 == 0:
                w.new_volume(stamp)
            w.put_result(Result(stamp, (ValueSet.of_single(PMID, PMType.PM_TYPE_U32, i),)))


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    write_archive(tmp_path / "foo")
    return tmp_path


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# -- units ----------------------------------------------------------------------------------


def test_part_names() -> None:
    assert part_name("a/b", 0, "") == "a/b.0"
    assert part_name("a/b", INDEX, ".xz") == "a/b.index.xz"
    assert part_name("a/b", META, "") == "a/b.meta"


@pytest.mark.parametrize(
    ("name", "bad"), [("foo", None), ("foo bar", " "), ("a$b", "$"), ("a<b>", "<"), ("x+y", None)]
)
def test_unsafe_character(name: str, bad: str | None) -> None:
    assert unsafe_character(name) == bad


def test_rename(archive: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(archive)
    assert main(["-V", "foo", "bar"]) == 0
    assert listing(archive) == ["bar.0", "bar.index", "bar.meta"]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "link ./foo.0 -> bar.0"
    assert out[-1] == "remove ./foo.meta"


def test_showme_changes_nothing(archive: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(archive)
    assert main(["-N", "foo.meta", "bar"]) == 0
    assert listing(archive) == ["foo.0", "foo.index", "foo.meta"]
    assert capsys.readouterr().out.splitlines()[:2] == [
        "+ ln ./foo.0 bar.0",
        "+ ln ./foo.index bar.index",
    ]


def test_existing_new_name_undoes_links(archive: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(archive)
    (archive / "bar.meta").write_bytes(b"")
    assert main(["-V", "foo", "bar"]) == 1
    assert listing(archive) == ["bar.meta", "foo.0", "foo.index", "foo.meta"]
    captured = capsys.readouterr()
    assert "pmlogmv: bar.meta: already exists\n" in captured.err
    assert captured.out.endswith("cleanup: remove bar.index\ncleanup: remove bar.0\n")


def test_no_archive(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["nosuch", "bar"]) == 1
    assert (
        capsys.readouterr().err
        == 'pmlogmv: Cannot open archive "nosuch": No such file or directory\n'
    )


# -- interop --------------------------------------------------------------------------------


def _case(folder: Path, kind: str) -> None:
    """Files for one comparison in FOLDER."""
    if kind == "multi":
        write_archive(folder / "mv", volumes=3)
        shutil.copy(folder / "mv.2", folder / "mv.7")
    elif kind == "compressed":
        write_archive(folder / "mv", volumes=2)
        data = (folder / "mv.0").read_bytes()
        (folder / "mv.0.xz").write_bytes(lzma.compress(data))
        (folder / "mv.0").unlink()
    elif kind == "meta-only":
        write_archive(folder / "mv")
        (folder / "mv.0").unlink()
        (folder / "mv.index").unlink()
    elif kind == "exists":
        write_archive(folder / "mv")
        (folder / "new.index").write_bytes(b"x")
    else:
        write_archive(folder / "mv")


CASES = [
    ("multi", ["-V", "mv", "new"]),
    ("multi", ["-VV", "mv.7", "new"]),
    ("multi", ["-N", "mv.meta", "new"]),
    ("compressed", ["-V", "mv", "new"]),
    ("meta-only", ["mv", "new"]),
    ("exists", ["-V", "mv", "new"]),
    ("plain", ["mv", "new bar"]),
    ("plain", ["-f", "-V", "mv", "new;bar"]),
    ("plain", ["mv"]),
    ("plain", ["-x", "mv", "new"]),
    ("plain", ["--help"]),
    ("plain", ["mv.bozo", "new"]),
]


@pytest.mark.interop
@pytest.mark.skipif(
    PCP_PMLOGMV is None, reason="PCP's pmlogmv is not installed (Debian package pcp)"
)
@pytest.mark.parametrize(("kind", "args"), CASES, ids=[" ".join(a) for _, a in CASES])
def test_same_as_pcp(tmp_path: Path, kind: str, args: list[str]) -> None:
    results = []
    for side, command in (("pcp", PCP_PMLOGMV), ("ours", OURS)):
        folder = tmp_path / side
        folder.mkdir()
        _case(folder, kind)
        done = subprocess.run(
            [command, *args], cwd=folder, capture_output=True, text=True, timeout=60
        )
        results.append((done.stdout, done.stderr, done.returncode, listing(folder)))
    assert results[1] == results[0]


@pytest.mark.interop
@pytest.mark.skipif(
    shutil.which("pmlogcheck") is None,
    reason="PCP's pmlogcheck is not installed (Debian package pcp)",
)
def test_renamed_archive_is_sound(tmp_path: Path) -> None:
    write_archive(tmp_path / "mv", volumes=3)
    assert main([str(tmp_path / "mv.1"), str(tmp_path / "renamed")]) == 0
    done = subprocess.run(
        ["/usr/bin/pmlogcheck", str(tmp_path / "renamed")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not any(p.name.startswith("mv.") for p in tmp_path.iterdir())
    assert os.path.exists(tmp_path / "renamed.2")
