"""pmlogcheck: ours reports what PCP 6.0.3's pmlogcheck reports, byte for byte.

Unit tests check the parts (base names, hash order, descriptor checks, pass 0's
framing, the raw values pass 3 reads) on archives our writer makes.  Interop tests
damage copies of archives (ours, v2 and v3, and PCP's QA archives) in every way the
archive readers refuse one (truncated, lengths flipped, labels broken, the index and
the records out of order, metadata out of range, files missing or empty) and compare
PCP's pmlogcheck with ours: stdout, stderr and exit status; and run both over PCP's
QA archives, good and bad.
"""

from __future__ import annotations

import io
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools.pmlogcheck import main
from tests.support.qa_archives import QA_DIRS

T0 = Timestamp(1_700_000_000, 250_000_000)
U32 = pmID_build(245, 0, 1)
U64 = pmID_build(245, 0, 2)
DBL = pmID_build(245, 0, 3)
STR = pmID_build(245, 0, 4)
I32 = pmID_build(245, 0, 5)
INDOM = pmInDom_build(245, 1)
LABEL = {2: 132, 3: 808}


def _at(sec: int) -> Timestamp:
    return Timestamp(T0.sec + sec, T0.nsec)


def write_ours(base: str, version: int) -> None:
    """An archive of our writer's: counters that wrap (u32 per instance, u64), a
    double, a string, a mark, three volumes and an index entry per volume."""
    with ArchiveWriter(base, hostname="box", timezone="UTC", start=T0, version=version, pid=7) as w:
        w.put_desc(
            Desc(U32, PMType.PM_TYPE_U32, INDOM, PMSem.PM_SEM_COUNTER, Units(dimCount=1)),
            ["demo.u32"],
        )
        w.put_desc(
            Desc(U64, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER,
                 Units(dimSpace=1, scaleSpace=1)),
            ["demo.u64", "demo.alias.u64"],
        )  # fmt: skip
        w.put_desc(Desc(DBL, PMType.PM_TYPE_DOUBLE), ["demo.dbl"])
        w.put_desc(Desc(STR, PMType.PM_TYPE_STRING), ["demo.str"])
        w.put_desc(Desc(I32, PMType.PM_TYPE_32, sem=PMSem.PM_SEM_COUNTER), ["demo.i32"])
        w.put_index(T0)
        for i in range(12):
            stamp = _at(i)
            w.put_indom(stamp, INDOM, [0, 1, 2], ["a", "b", "c"])
            if i in (4, 8):
                w.new_volume(stamp)
            if i == 6:
                w.put_mark(stamp)
                continue
            u32 = [(k, (3_000_000_000 + i * 700_000_000 * (k + 1)) % 2**32) for k in range(3)]
            vsets = (
                ValueSet.of_atoms(U32, PMType.PM_TYPE_U32, u32),
                ValueSet.of_single(U64, PMType.PM_TYPE_U64, (2**64 - 5 + i) % 2**64),
                ValueSet.of_atoms(DBL, PMType.PM_TYPE_DOUBLE, [(PM_INDOM_NULL, i / 3)]),
                ValueSet.of_atoms(STR, PMType.PM_TYPE_STRING, [(PM_INDOM_NULL, f"s{i}")]),
                ValueSet.of_atoms(I32, PMType.PM_TYPE_32, [(PM_INDOM_NULL, 10 - i)]),
            )
            w.put_result(Result(stamp, vsets))
        w.put_index(_at(11))


# -- damage, one way each -------------------------------------------------------------------


def _version(base: str) -> int:
    with open(base + ".meta", "rb") as f:
        return f.read(8)[7]


def _records(path: str, start: int) -> list[tuple[int, int]]:
    """The (offset, length) of each framed record of PATH after its label."""
    with open(path, "rb") as f:
        data = f.read()
    out, at = [], start
    while at + 4 <= len(data):
        n = struct.unpack_from(">i", data, at)[0]
        if n < 8 or at + n > len(data):
            break
        out.append((at, n))
        at += n
    return out


def _poke(path: str, offset: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _truncate(path: str, size: int) -> None:
    with open(path, "r+b") as f:
        f.truncate(size)


def _nth(base: str, suffix: str, n: int) -> tuple[int, int]:
    recs = _records(base + suffix, LABEL[_version(base)])
    return recs[min(n, len(recs) - 1)]


def _cut_record(suffix: str, n: int, keep: int) -> Callable[[str], None]:
    def damage(base: str) -> None:
        at, _ = _nth(base, suffix, n)
        _truncate(base + suffix, at + keep)

    return damage


def _set_length(suffix: str, n: int, value: int, trailer: bool = False) -> Callable[[str], None]:
    def damage(base: str) -> None:
        at, length = _nth(base, suffix, n)
        _poke(base + suffix, at + (length - 4 if trailer else 0), struct.pack(">i", value))

    return damage


#: where a label's fields are, by version: (v2 offset, v3 offset)
_LABEL_FIELDS = {"len": (0, 0), "magic": (4, 4), "pid": (8, 8), "nsec": (16, 20), "vol": (20, 24)}


def _label_word(suffix: str, field: str, value: int) -> Callable[[str], None]:
    def damage(base: str) -> None:
        offset = _LABEL_FIELDS[field][_version(base) - 2]
        _poke(base + suffix, offset, struct.pack(">I", value & 0xFFFFFFFF))

    return damage


def _index_field(n: int, field: str, value: int) -> Callable[[str], None]:
    """Set index entry N's FIELD (sec, vol, meta, log) to VALUE."""

    def damage(base: str) -> None:
        v3 = _version(base) == 3
        size = 32 if v3 else 20
        at = LABEL[_version(base)] + n * size
        where = {"sec": 4 if v3 else 0, "vol": 12 if v3 else 8, "meta": 20 if v3 else 12,
                 "log": 28 if v3 else 16}[field]  # fmt: skip
        _poke(base + ".index", at + where, struct.pack(">i", value))

    return damage


def _record_time(n: int, delta: int) -> Callable[[str], None]:
    """Move volume 0's record N's seconds by DELTA (out of order, or before the label)."""

    def damage(base: str) -> None:
        v3 = _version(base) == 3
        at, _ = _nth(base, ".0", n)
        where = at + (8 if v3 else 4)
        with open(base + ".0", "rb") as f:
            f.seek(where)
            sec = struct.unpack(">i", f.read(4))[0]
        _poke(base + ".0", where, struct.pack(">i", sec + delta))

    return damage


def _remove(suffix: str) -> Callable[[str], None]:
    def damage(base: str) -> None:
        os.remove(base + suffix)

    return damage


def _empty(suffix: str) -> Callable[[str], None]:
    def damage(base: str) -> None:
        _truncate(base + suffix, 0)

    return damage


def _label_only(suffix: str) -> Callable[[str], None]:
    def damage(base: str) -> None:
        _truncate(base + suffix, LABEL[_version(base)])

    return damage


def _desc_field(offset: int, value: int) -> Callable[[str], None]:
    """Set a word of the first descriptor's body (0 pmid, 4 type, 8 indom, 12 sem, 16 units)."""

    def damage(base: str) -> None:
        with open(base + ".meta", "rb") as f:
            data = f.read()
        at = LABEL[_version(base)]
        while struct.unpack_from(">i", data, at + 4)[0] != 1:
            at += struct.unpack_from(">i", data, at)[0]
        _poke(base + ".meta", at + 8 + offset, struct.pack(">I", value & 0xFFFFFFFF))

    return damage


def _append(suffix: str, data: bytes) -> Callable[[str], None]:
    def damage(base: str) -> None:
        with open(base + suffix, "ab") as f:
            f.write(data)

    return damage


#: Every way of damaging an archive the tests try, by name.
DAMAGES: dict[str, Callable[[str], None]] = {
    "none": lambda base: None,
    "vol0-cut-in-label": lambda base: _truncate(base + ".0", 60),
    "vol0-label-only": _label_only(".0"),
    "vol0-empty": _empty(".0"),
    "vol0-cut-in-body": _cut_record(".0", 2, 30),
    "vol0-cut-in-trailer": _cut_record(".0", 3, -2),
    "vol0-stray-bytes": _append(".0", b"\0\0"),
    "vol0-stray-word": _append(".0", b"\0\0\0\x20\0\0"),
    "vol0-length-big": _set_length(".0", 1, 4000),
    "vol0-length-small": _set_length(".0", 2, 4),
    "vol0-length-negative": _set_length(".0", 1, -96),
    "vol0-length-odd": _set_length(".0", 2, 30),
    "vol0-trailer": _set_length(".0", 2, 999, trailer=True),
    "vol0-magic": _label_word(".0", "magic", 0x50052700),
    "vol0-version": _label_word(".0", "magic", 0x50052609),
    "vol0-label-length": _label_word(".0", "len", 12),
    "vol0-volume-number": _label_word(".0", "vol", 5),
    "vol1-volume-number": _label_word(".1", "vol", 7),
    "vol1-missing": _remove(".1"),
    "vol1-label-only": _label_only(".1"),
    "vol2-cut": _cut_record(".2", 1, 10),
    "meta-missing": _remove(".meta"),
    "meta-empty": _empty(".meta"),
    "meta-label-only": _label_only(".meta"),
    "meta-magic": _label_word(".meta", "magic", 0x12345602),
    "meta-volume-number": _label_word(".meta", "vol", 0),
    "meta-pid": _label_word(".meta", "pid", 99),
    "meta-start": _label_word(".meta", "nsec", 5),
    "vol0-start": _label_word(".0", "nsec", 7000),
    "meta-cut": _cut_record(".meta", 3, 10),
    "meta-length": _set_length(".meta", 2, 5000),
    "meta-trailer": _set_length(".meta", 1, 12, trailer=True),
    "meta-stray": _append(".meta", b"\0\0\0"),
    "meta-bad-type": _desc_field(4, 77),
    "meta-bad-sem": _desc_field(12, 9),
    "meta-bad-indom-domain": _desc_field(8, pmInDom_build(3, 1)),
    "meta-bad-units": _desc_field(16, 0x7_3_0_6_5_0_00),
    "index-missing": _remove(".index"),
    "index-empty": _empty(".index"),
    "index-label-only": _label_only(".index"),
    "index-partial-entry": _append(".index", b"\0" * 7),
    "index-magic": _label_word(".index", "magic", 0),
    "index-backwards": _index_field(1, "sec", 1000),
    "index-negative-vol": _index_field(1, "vol", -3),
    "index-vol-missing": _index_field(1, "vol", 9),
    "index-meta-past-end": _index_field(1, "meta", 1 << 20),
    "index-meta-in-label": _index_field(1, "meta", 16),
    "index-log-past-end": _index_field(1, "log", 1 << 20),
    "index-log-in-label": _index_field(0, "log", 8),
    "records-backwards": _record_time(3, -1000),
    "records-before-label": _record_time(0, -100000),
}


# -- running the two --------------------------------------------------------------------------


def run_ours(*argv: str) -> tuple[str, str, int]:
    """Our pmlogcheck, in this process: stdout, stderr and exit status."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        status = main(list(argv))
    finally:
        sys.stdout, sys.stderr = saved
    return out.getvalue(), err.getvalue(), status


def run_pcp(*argv: str) -> tuple[str, str, int]:
    p = subprocess.run(["pmlogcheck", *argv], capture_output=True, text=True, errors="replace")
    return p.stdout, p.stderr, p.returncode


needs_pcp = pytest.mark.skipif(
    shutil.which("pmlogcheck") is None,
    reason="PCP's pmlogcheck is not installed (Debian package pcp)",
)


# -- unit tests -------------------------------------------------------------------------------


def test_log_base_name() -> None:
    from purepcp.pmapi.archive.reader import log_base_name

    assert log_base_name("foo.meta") == ("foo", "meta")
    assert log_base_name("foo.index.xz") == ("foo", "index")
    assert log_base_name("a.b.12") == ("a.b", "12")
    assert log_base_name("foo.12x") is None
    assert log_base_name("foo.xz") is None
    assert log_base_name("foo") is None


def test_names_for(tmp_path: Path) -> None:
    from purepcp.tools.pmlogcheck.files import names_for

    assert names_for("dir/foo.meta").basename == "foo"
    assert names_for("dir/foo.meta").dirname == "dir"
    assert names_for("foo.index").archname == "foo"
    # foo-20150415.041154 is a base name when no such file exists
    assert names_for(str(tmp_path / "arch-20150415.041154")).basename == "arch-20150415.041154"
    (tmp_path / "arch.7").write_bytes(b"")
    assert names_for(str(tmp_path / "arch.7")).basename == "arch"


def test_hash_order_grows_as_libpcp() -> None:
    from purepcp.pmapi.hashtable import hash_order

    assert hash_order([5, 3, 9]) == [9, 3, 5]  # one bucket: newest first
    keys = list(range(1, 30))
    order = hash_order(keys)
    assert sorted(order) == keys and order != keys


def test_desc_problems_in_pcp_order() -> None:
    from purepcp.tools.pmlogcheck.pass2 import desc_problems

    d = Desc(pmID_build(29, 0, 7), 16, pmInDom_build(33, 1), 7, Units(dimSpace=3, scaleTime=2))
    assert desc_problems(d) == [
        "bad type (16) in pmDesc",
        "domain of pmid (29) != domain of indom (33)",
        "bad semantics (7) in pmDesc",
        "bad dimension (3) for Space in pmDesc",
        "non-zero scale (2) with zero dimension for Time in pmDesc",
    ]
    assert desc_problems(Desc(1, PMType.PM_TYPE_NOSUPPORT, sem=99)) == []


@pytest.mark.parametrize("version", [2, 3])
def test_clean_archive_is_quiet(tmp_path: Path, version: int) -> None:
    base = str(tmp_path / "a")
    write_ours(base, version)
    out, err, status = run_ours("-w", "-Z", "UTC", base)
    assert (out, err, status) == ('Note: timezone set to "TZ=UTC"\n\n', "", 0)


@pytest.mark.parametrize("version", [2, 3])
def test_wraps_reported(tmp_path: Path, version: int) -> None:
    base = str(tmp_path / "a")
    write_ours(base, version)
    _, err, status = run_ours("-Z", "UTC", base)
    assert status == 0
    assert "demo.u64 or demo.alias.u64: unsigned 64-bit wrap" in err or (
        "demo.alias.u64 or demo.u64: unsigned 64-bit wrap" in err
    )
    assert "demo.u32[b]: unsigned 32-bit wrap" in err
    assert "signed 32-bit wrap" in err  # demo.i32 counts down


@pytest.mark.parametrize("damage", ["vol0-length-big", "vol0-trailer", "meta-cut"])
def test_pass0_names_record_and_offset(tmp_path: Path, damage: str) -> None:
    base = str(tmp_path / "a")
    write_ours(base, 2)
    DAMAGES[damage](base)
    _, err, status = run_ours(base)
    assert status == 1
    assert "[record " in err and "last valid record ends at offset" in err


def test_raw_values_read_as_libpcp() -> None:
    from purepcp.tools.pmlogcheck.rawvalues import RawValue, as_double

    # an untyped 8-byte block, as old archives hold u64 values: read little-endian
    block = RawValue(0, None, 0, (159819048).to_bytes(8, "big"))
    assert as_double(1, block, PMType.PM_TYPE_U64) == float(int.from_bytes(block.payload, "little"))
    typed = RawValue(0, None, PMType.PM_TYPE_U64, (7).to_bytes(8, "big"))
    assert as_double(1, typed, PMType.PM_TYPE_U64) == 7.0


def test_usage_and_no_archive() -> None:
    _, err, status = run_ours()
    assert status == 1 and err.startswith("Error: no archive specified\n\nUsage: pmlogcheck")
    _, err, status = run_ours("-x", "a")
    assert status == 1 and err.startswith("pmlogcheck: invalid option -- 'x'\nUsage:")


# -- interop ------------------------------------------------------------------------------------


def _qa_dir() -> Path | None:
    for top in QA_DIRS:
        if (top / "archives" / "ok-mv-foo.meta").exists():
            return top
    return None


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Archives to damage: ours (v2, v3) and, when here, PCP's QA ok-mv-foo and omnibus_v3."""
    top = tmp_path_factory.mktemp("sources")
    found = {}
    for version in (2, 3):
        (top / f"ours{version}").mkdir()
        base = str(top / f"ours{version}" / "a")
        write_ours(base, version)
        found[f"ours{version}"] = base
    qa = _qa_dir()
    for name in ("ok-mv-foo", "omnibus_v3") if qa else ():
        (top / name).mkdir()
        for f in (qa / "archives").glob(f"{name}.*"):
            shutil.copy(f, top / name)
        found[name] = str(top / name / name)
    return found


#: every damage to every source, but a later volume's to omnibus_v3, which has only one
DAMAGE_CASES = [
    (source, damage)
    for source in ("ours2", "ours3", "ok-mv-foo", "omnibus_v3")
    for damage in sorted(DAMAGES)
    if not (source == "omnibus_v3" and damage.startswith(("vol1", "vol2")))
]


@pytest.mark.interop
@needs_pcp
@pytest.mark.slow
@pytest.mark.parametrize(("source", "damage"), DAMAGE_CASES)
def test_damage_as_pcp(sources: dict[str, str], tmp_path: Path, source: str, damage: str) -> None:
    if source not in sources:
        pytest.skip(
            "PCP's QA archives are not here: install or unpack Debian's pcp-testsuite package"
        )
    src = Path(sources[source])
    shutil.copytree(src.parent, tmp_path / "a")
    base = str(tmp_path / "a" / src.name)
    DAMAGES[damage](base)
    for opts in (["-v"], ["-z", "-l"]):
        assert run_ours(*opts, base) == run_pcp(*opts, base), opts


def _qa_archives() -> list[str]:
    top = _qa_dir()
    if top is None:
        return []
    names = []
    for sub in ("archives", "badarchives"):
        for meta in sorted((top / sub).glob("*.meta*")):
            base = meta.name.split(".meta")[0]
            size = sum(p.stat().st_size for p in (top / sub).glob(f"{base}.*"))
            if sub == "badarchives" or size < 1 << 20:  # (the big ones take long, and add little)
                names.append(f"{sub}/{base}")
    return names


@pytest.mark.interop
@needs_pcp
@pytest.mark.slow
@pytest.mark.parametrize("name", _qa_archives())
def test_qa_archives_as_pcp(name: str) -> None:
    top = _qa_dir()
    assert top is not None
    cwd = os.getcwd()
    os.chdir(top)
    try:
        assert run_ours("-z", name) == run_pcp("-z", name)
    finally:
        os.chdir(cwd)
