"""Damaged and old archives: what the reader takes, what it refuses, and what it says.

libpcp's rules are the answer: an archive whose labels or metadata libpcp refuses at
open is refused at open, by every tool; damage in a volume ends the records there; old
archives libpcp reads (value blocks of type 0, names stored NUL-padded, names of
derived-metric PMIDs or that look like PMIDs) are read.  Every refusal is PCP's message
followed by the file, the offset and what is wrong there.

The interop tests compare our pminfo, pmprobe, pmval and pmdumplog with PCP's on
archives damaged by seeded byte flips and on some of PCP's own QA archives, read where
Debian's pcp-testsuite package puts them (PCP's QA data is GPL: it is not copied here;
.ci/run unpacks the package).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi.archive import Archive, ArchiveError, ArchiveWriter
from purepcp.pmapi.archive.format import (
    PM_TEXT_ONELINE,
    PM_TEXT_PMID,
    DescRecord,
    InDomRecord,
    LabelRecord,
    MetaType,
    TextRecord,
    encode_desc,
    encode_indom,
    encode_labels,
    encode_text,
    read_meta,
)
from purepcp.pmapi.archive.frames import Frames
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import (
    PM_ERR_LABEL,
    PM_ERR_LOGCHANGETYPE,
    PM_ERR_LOGCHANGEUNITS,
    PM_ERR_LOGREC,
    PM_ERR_NODATA,
    PM_ERR_RECTYPE,
    PMError,
    pmErrStr,
)
from purepcp.pmapi.ids import pmID_build
from purepcp.pmapi.labels import LabelSet
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.qa_archives import qa, qa_dir
from tests.support.reference_pmcd import require_reference
from tests.support.replay_archives import carried

ROOT = Path(__file__).resolve().parents[2]


T0 = 1_700_000_000  # Tue Nov 14 22:13:20 2023 UTC
CTR, INST, STR, DISK = (pmID_build(60, 0, i) for i in (1, 2, 3, 4))
INDOM = (60 << 22) | 1
NAMES = ["d.ctr", "d.inst", "d.str", "d.disk"]
LABEL_V2 = 132


def write_small(base: str, version: int = 2) -> None:
    """Thirty records, one a second, of a counter, an instant double, a string and a
    three-instance metric, with index entries every ten records."""
    with ArchiveWriter(
        base, hostname="box", timezone="UTC", start=Timestamp(T0, 0), version=version, pid=4242
    ) as w:
        u64, dbl = PMType.PM_TYPE_U64, PMType.PM_TYPE_DOUBLE
        w.put_desc(Desc(CTR, u64, sem=PMSem.PM_SEM_COUNTER, units=Units(dimCount=1)), ["d.ctr"])
        w.put_desc(Desc(INST, dbl, sem=PMSem.PM_SEM_INSTANT), ["d.inst"])
        w.put_desc(Desc(STR, PMType.PM_TYPE_STRING, sem=PMSem.PM_SEM_DISCRETE), ["d.str"])
        w.put_desc(Desc(DISK, PMType.PM_TYPE_U32, INDOM, PMSem.PM_SEM_INSTANT), ["d.disk"])
        w.put_index(Timestamp(T0, 0))
        w.put_indom(Timestamp(T0, 0), INDOM, [0, 1, 2], ["a", "b", "c"])
        for i in range(30):
            stamp = Timestamp(T0 + i, 0)
            w.put_result(
                Result(
                    stamp,
                    (
                        ValueSet.of_atoms(CTR, u64, [(0xFFFFFFFF, 1000 * i * i)]),
                        ValueSet.of_atoms(INST, dbl, [(0xFFFFFFFF, i / 8)]),
                        ValueSet.of_atoms(STR, PMType.PM_TYPE_STRING, [(0xFFFFFFFF, f"s{i % 4}")]),
                        ValueSet.of_atoms(
                            DISK, PMType.PM_TYPE_U32, [(n, 10 * i + n) for n in range(3)]
                        ),
                    ),
                )
            )
            if i % 10 == 9:
                w.put_index(stamp)


def flip_bytes(src: str, dst: str, seed: int, suffix: str) -> list[int]:
    """A copy of archive SRC as DST with one to three bytes after the label of its SUFFIX
    file (".0" or ".meta") changed, chosen by SEED; the offsets changed."""
    rng = random.Random(seed)
    for s in (".0", ".meta", ".index"):
        shutil.copy(src + s, dst + s)
    path = Path(dst + suffix)
    data = bytearray(path.read_bytes())
    where = []
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(LABEL_V2, len(data))
        data[at] ^= rng.randrange(1, 256)
        where.append(at)
    path.write_bytes(bytes(data))
    return sorted(where)


@pytest.fixture
def small(tmp_path) -> str:
    base = str(tmp_path / "small")
    write_small(base)
    return base


# -- the .meta: read as libpcp reads it -------------------------------------------------


def _meta(base: str, *records: bytes) -> None:
    """Replace BASE.meta's records by RECORDS (its label kept)."""
    path = Path(base + ".meta")
    path.write_bytes(path.read_bytes()[:LABEL_V2] + b"".join(records))


def _desc(pmid: int = CTR, names: tuple[str, ...] = ("d.ctr",), **kw) -> bytes:
    return encode_desc(DescRecord(Desc(pmid, **kw), names))


def _refused(base: str) -> ArchiveError:
    with pytest.raises(ArchiveError) as err:
        Archive(base)
    return err.value


def test_names_are_read_as_c_strings(small):
    """Old v2 metadata stores names NUL-padded, with the padding in the length: libpcp
    reads each as a C string (vldb-disks, from PCP's QA, stores disk.dev.total so)."""
    padded = encode_desc(DescRecord(Desc(CTR), ("d.ctr\0\0\0",)))
    assert struct.unpack_from(">i", padded, 32)[0] == 8  # the NULs are in the length
    _meta(small, padded, _desc(INST, ("d.inst",)))
    with Archive(small) as a:
        assert a.pmns.lookup("d.ctr") == CTR and a.names[CTR] == ("d.ctr",)
    with Archive(qa("vldb-disks")) as a:
        assert "disk.dev.total" in set(a.pmns.traverse(""))


def test_any_name_and_any_pmid(small):
    """An archive's namespace takes what its metadata holds, as libpcp's does: names of
    derived-metric PMIDs (domain 511) and names that look like PMIDs."""
    derived = pmID_build(511, 2048, 3)
    _meta(small, _desc(derived, ("disk.dev.await",)), _desc(CTR, ("40.0.0",)))
    with Archive(small) as a:
        assert a.pmns.lookup("disk.dev.await") == derived
        assert a.pmns.lookup("40.0.0") == CTR
        assert a.pmns.names(derived) == ["disk.dev.await"]
    with Archive(qa("log-derived")) as a:
        assert a.pmns.lookup("mem.util.allcache") == pmID_build(511, 2048, 1)
    with Archive(qa("ace_v2")) as a:
        assert a.pmns.lookup("40.0.0") == pmID_build(40, 0, 0)


def test_libpcp_tolerates_these(small):
    """Fewer than 8 bytes after the last record, a text record of a kind libpcp does not
    know (skipped, its trailer unread) at the end, and an instance domain record of no
    instances: libpcp opens such an archive, and so do we."""
    odd_text = encode_text(TextRecord(PM_TEXT_PMID, CTR, "x"))  # neither one-line nor help
    empty = encode_indom(InDomRecord(Timestamp(T0, 0), INDOM, (), ()), 2)
    _meta(small, _desc(), empty, odd_text[:-4] + b"\0\0\0")  # (3 stray bytes for a trailer)
    with Archive(small) as a:
        assert list(a.descs) == [CTR] and a.indoms == {} and a.texts == {}
        (problem,) = a.problems  # said, not refused
        assert problem.file == small + ".meta" and "stray bytes" in problem.reason


def test_text_of_unknown_kind_misframes_the_rest_as_in_libpcp(small):
    """libpcp skips a text record of a kind it does not know without reading its trailer,
    then reads the next header from that trailer: a record after one is refused."""
    odd_text = encode_text(TextRecord(PM_TEXT_PMID, CTR, "x"))
    good_text = encode_text(TextRecord(PM_TEXT_PMID | PM_TEXT_ONELINE, CTR, "x"))
    _meta(small, _desc(), odd_text, good_text)
    err = _refused(small)
    assert err.code == PM_ERR_RECTYPE and err.offset == LABEL_V2 + len(_desc()) + len(odd_text) - 4
    assert err.reason == f"unknown metadata record type {len(good_text)}"


@pytest.mark.parametrize(
    "damage",
    ["no descriptors", "zero length", "unknown type", "trailer", "name length",
     "negative instance", "name offset", "label sets", "type changed", "units changed",
     "truncated"],
)  # fmt: skip
def test_metadata_libpcp_refuses_is_refused_at_open(small, damage):
    """Each of __pmLogLoadMeta's refusals, with the offset of the record at fault."""
    desc = _desc()
    at = LABEL_V2 + len(desc)  # where the record after the descriptor starts
    indom = encode_indom(InDomRecord(Timestamp(T0, 0), INDOM, (0, 1), ("a", "b")), 2)
    text = encode_text(TextRecord(PM_TEXT_PMID | PM_TEXT_ONELINE, CTR, "one line"))
    labels = _label_record()
    records, code, reason = {
        "no descriptors": ([text], PM_ERR_LOGREC, "no metric descriptors in the file"),
        "zero length": (
            [desc, b"\0" * 12],
            PM_ERR_LOGREC,
            "record length 0, where a record is 12 bytes or more",
        ),
        "unknown type": (
            [desc, struct.pack(">iii", 12, 9, 12)],
            PM_ERR_RECTYPE,
            "unknown metadata record type 9",
        ),
        "trailer": (
            [desc, desc[:-4] + struct.pack(">i", 53)],
            PM_ERR_LOGREC,
            f"TYPE_DESC record's trailer at byte {at + len(desc) - 4} is 53, "
            f"not its length {len(desc)}",
        ),
        "name length": (
            [desc, desc[:32] + struct.pack(">i", 99) + desc[36:]],
            PM_ERR_LOGREC,
            f"TYPE_DESC record: name 0 of 1 claims 99 bytes, {len(desc) - 36} left in the file",
        ),
        "negative instance": (
            [desc, indom[:24] + struct.pack(">i", -7) + indom[28:]],
            PM_ERR_LOGREC,
            "TYPE_INDOM_V2 record: instance 0 has a negative identifier (-7)",
        ),
        "name offset": (
            [desc, indom[:36] + struct.pack(">i", 9) + indom[40:]],
            PM_ERR_LOGREC,
            "TYPE_INDOM_V2 record: instance 1's name offset 9 is past its 4-byte name table",
        ),
        "label sets": (
            [desc, labels[:24] + struct.pack(">i", -1) + labels[28:]],
            PM_ERR_LOGREC,
            "TYPE_LABEL_V2 record: negative count of label sets (-1)",
        ),
        "type changed": (
            [desc, _desc(type=PMType.PM_TYPE_64)],
            PM_ERR_LOGCHANGETYPE,
            "metric 60.0.1 described again with another type",
        ),
        "units changed": (
            [desc, _desc(units=Units(dimSpace=1))],
            PM_ERR_LOGCHANGEUNITS,
            "metric 60.0.1 described again with another units",
        ),
        "truncated": (
            [desc, text[:20]],
            PM_ERR_LOGREC,
            f"TYPE_TEXT record of {len(text)} bytes, 20 left in the file",
        ),
    }[damage]
    _meta(small, *records)
    err = _refused(small)
    assert (err.code, err.file, err.reason) == (code, small + ".meta", reason)
    assert err.offset == (LABEL_V2 + len(text) if damage == "no descriptors" else at)


def _label_record() -> bytes:
    sets = (LabelSet.from_dict({"a": 1}, inst=0xFFFFFFFF),)
    return encode_labels(LabelRecord(Timestamp(T0, 0), 1, 0xFFFFFFFF, sets), 2)


def test_read_meta_is_a_stream_like_libpcps():
    """read_meta stops at a partial header and says where it stopped."""
    desc = _desc()
    records, stop = read_meta(b"x" * LABEL_V2 + desc + b"\0\0\0", LABEL_V2, "m")
    assert [type(r) for _, r in records] == [DescRecord] and stop == LABEL_V2 + len(desc)
    assert MetaType.TYPE_DESC == 1


# -- labels, volumes and the index ---------------------------------------------------------


@pytest.mark.parametrize(
    ("cut", "code", "reason"),
    [
        (5, PM_ERR_NODATA, "5 bytes, too few for a label record"),
        (42, PM_ERR_LABEL, "the file ends at byte 42, inside its 132-byte label record"),
        (131, PM_ERR_LABEL, "the file ends at byte 131, inside its 132-byte label record"),
    ],
)
def test_label_messages_say_what_is_wrong(small, cut, code, reason):
    """A volume cut inside its label (PCP's badlen-5 and badlen-10): the message said
    "label record of 132 bytes, not 132" before; now it says what is wrong."""
    vol = Path(small + ".0")
    vol.write_bytes(vol.read_bytes()[:cut])
    err = _refused(small)
    assert (err.code, err.file, err.offset, err.reason) == (code, small + ".0", 0, reason)


def test_an_empty_volume_is_pcps_words_alone(small):
    """QA 958: an empty data volume is PCP's "Empty archive log file", with no file and
    offset after it (they said only what the words say); so is a volume that is a label."""
    vol = Path(small + ".0")
    label = vol.read_bytes()[:132]
    for content in (b"", label):
        vol.write_bytes(content)
        with pytest.raises(PMError) as err:
            Archive(small)
        assert (err.value.code, str(err.value)) == (PM_ERR_NODATA, "Empty archive log file")


def test_label_length_and_trailer(small):
    vol = Path(small + ".0")
    data = bytearray(vol.read_bytes())
    data[0:4] = struct.pack(">i", 64)
    vol.write_bytes(bytes(data))
    assert _refused(small).reason == "label record length 64, where a version 2 label is 132 bytes"
    data[0:4] = struct.pack(">i", 132)
    data[128:132] = struct.pack(">i", 7)
    vol.write_bytes(bytes(data))
    err = _refused(small)
    assert (err.offset, err.reason) == (128, "label trailer 7 does not match its length 132")


@pytest.mark.parametrize("part", [".index", ".meta"])
def test_labels_must_agree_with_the_volumes(small, part):
    """__pmLogOpen: the .index's and the .meta's labels name the volumes' host and PID."""
    path = Path(small + part)
    data = bytearray(path.read_bytes())
    data[8:12] = struct.pack(">i", 4343)  # the logger's PID
    path.write_bytes(bytes(data))
    err = _refused(small)
    assert (err.code, err.file) == (PM_ERR_LABEL, small + part)
    assert err.reason == "the label's pmlogger PID is 4343, the volumes' 4242"


def test_stray_bytes_end_a_volume_as_in_libpcp(small):
    """Fewer than 4 bytes after the last record: libpcp reads no record there, and
    finds the end only through the index (PCP's badlen-11 is a label and one byte)."""
    with open(small + ".0", "ab") as f:
        f.write(b"\1\2")
    with Archive(small) as a:
        assert len(list(a.records())) == 30
        assert a.end() == Timestamp(T0 + 29, 0)
    os.unlink(small + ".index")
    with Archive(small) as a, pytest.raises(ArchiveError) as err:
        a.end()
    assert err.value.file == small + ".0" and err.value.offset == os.path.getsize(small + ".0")
    assert (
        err.value.reason == "no record at the end of the archive reads cleanly: its end is unknown"
    )


@pytest.mark.parametrize("stray", [1, 2, 3])
def test_stray_bytes_end_the_frames_as_they_end_a_walk(small, stray):
    """The column reader (interpolation: pmval -t, pmrep) framed fewer than 4 bytes as a
    bad record and asked the reader why, which died in struct.error; they are the end of
    the volume, as for Archive.records and libpcp."""
    with open(small + ".0", "ab") as f:
        f.write(b"\1\2\3"[:stray])
    size = os.path.getsize(small + ".0")
    with Archive(small) as a:
        frames = Frames(a)
        assert (len(frames.offsets), frames.problem) == (30, None)
        with pytest.raises(ArchiveError) as err:  # (asked directly, it says so)
            a.frame_length(0, a.volume(0), size - stray)
    assert (err.value.code, err.value.offset) == (PM_ERR_LOGREC, size - stray)
    assert err.value.reason == f"{stray} stray bytes at the end, too few for a record length"


def _label_and(base: str, tail: bytes) -> None:
    """BASE's first volume cut to its label, followed by TAIL (PCP's badlen-11 is a label
    and one byte)."""
    path = Path(base + ".0")
    path.write_bytes(path.read_bytes()[:LABEL_V2] + tail)


def test_pmval_interpolating_a_label_and_one_byte(small):
    """pmval -t on a volume of a label and one byte: PCP's warning, no values, status 0
    (it used to end in a struct.error traceback)."""
    _label_and(small, b"\1")
    run = _ours("pmval", "-a", small, "-t", "7.3", "-f", "3", "d.ctr")
    assert (run.returncode, run.stderr) == (0, _CANNOT_LOCATE_END.format(small))
    assert run.stdout.endswith("samples:   all\n22:13:20.000  No values available\n")


#: What PCP's pmval says of an archive whose end it cannot find.
_CANNOT_LOCATE_END = (
    "pmval: Cannot locate end of archive {}: Corrupted record in a PCP archive log\n\n"
    "WARNING: This archive is sufficiently damaged that it may not be possible to\n"
    "         produce complete information.  Continuing and hoping for the best.\n\n"
)


def test_a_v3_trailer_too_short_for_a_record(tmp_path):
    """A v3 volume ending in 20 bytes framed as a record (the v2 size, 4 short of v3's):
    reading back from the end died in struct.error; now the reader refuses the record,
    as it does going forwards, and the end is the record before it."""
    base = str(tmp_path / "v3")
    write_small(base, version=3)
    with open(base + ".0", "ab") as f:
        f.write(struct.pack(">iqii", 20, 0, 0, 20))
    size = os.path.getsize(base + ".0")
    with Archive(base) as a:
        assert a.end() == Timestamp(T0 + 29, 0)
        with pytest.raises(ArchiveError) as back:
            next(a.records(backwards=True))
        with pytest.raises(ArchiveError) as err:
            a.decode_record(0, 808, struct.pack(">iqii", 20, 0, 0, 20))
    assert (back.value.offset, back.value.reason) == (
        size - 4,
        f"bad record length 20 in the trailer ending at byte {size}",
    )
    assert err.value.code == PM_ERR_LOGREC


def test_the_end_is_found_through_the_index(small):
    """A damaged last record: the end is the last record before it, read forwards from
    the index entry before the damage (__pmGetArchiveEnd)."""
    size = os.path.getsize(small + ".0")
    with open(small + ".0", "r+b") as f:
        f.truncate(size - 6)
    with Archive(small) as a:
        assert a.end() == Timestamp(T0 + 28, 0)
        found = a.find_end()
        assert found is not None and found.offset == size - (size - LABEL_V2) // 30


def test_v2_microseconds_wrap_as_in_libpcp(small):
    """libpcp makes a v2 time's nanoseconds in a 32-bit int: a damaged microseconds
    field wraps there, and pmdumplog prints what it made."""
    data = bytearray(Path(small + ".0").read_bytes())
    data[LABEL_V2 + 8 : LABEL_V2 + 12] = struct.pack(">i", 1778384896)
    Path(small + ".0").write_bytes(bytes(data))
    with Archive(small) as a:
        first = next(a.records())
    assert first.stamp == Timestamp(T0, 268435456)  # (1778384896 * 1000 in 32 bits)


# -- value blocks --------------------------------------------------------------------------


def test_value_blocks_are_read_as_their_descriptor_types(small):
    """Old archives' value blocks carry type 0 whatever they hold: libpcp never looks at
    the type, and neither does the reader (PCP's 541380_v2 holds strings so)."""
    data = bytearray(Path(small + ".0").read_bytes())
    rec = LABEL_V2
    length = struct.unpack_from(">i", data, rec)[0]
    for at in range(rec + 16, rec + length - 4, 4):  # every block header of the first record
        word = struct.unpack_from(">I", data, at)[0]
        kinds = (PMType.PM_TYPE_U64, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING)
        if word >> 24 in kinds and 6 <= word & 0xFFFFFF <= 12:
            data[at] = 0
    Path(small + ".0").write_bytes(bytes(data))
    with Archive(small) as a:
        first = next(a.records())
    values = {vs.pmid: list(vs.values) for vs in first.result.vsets}
    assert values[CTR] == [0] and values[INST] == [0.0] and values[STR] == ["s0"]
    with Archive(qa("541380_v2")) as a:
        (first,) = list(a.records())[:1]
        hosts = [vs.values for vs in first.result.vsets if vs.pmid == pmID_build(2, 3, 3)]
    assert hosts == [("ha1.melbourne.sgi.com",)]


# -- every tool: damage is said, with where, and the status is 1 ------------------------------


def _ours(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TZ="UTC", PYTHONPATH=str(ROOT), PCP_DERIVED_CONFIG="")
    cmd = [sys.executable, "-m", f"purepcp.tools.{tool}", *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, errors="replace", env=env, timeout=120
    )


@pytest.mark.parametrize("tool", ["pminfo", "pmprobe", "pmval", "pmdumplog"])
def test_every_tool_refuses_what_libpcp_refuses_at_open(small, tool):
    """pminfo and pmprobe used to list names and values from metadata PCP refuses."""
    indom = encode_indom(InDomRecord(Timestamp(T0, 0), INDOM, (0, 1), ("a", "b")), 2)
    _meta(small, _desc(), indom[:36] + struct.pack(">i", 9) + indom[40:])
    args = {"pmval": ["-a", small, "d.ctr"], "pmdumplog": ["-a", small]}.get(tool, ["-a", small])
    run = _ours(tool, *args)
    assert (run.stdout, run.returncode) == ("", 1)
    assert run.stderr == (
        f'{tool}: Cannot open archive "{small}": {pmErrStr(PM_ERR_LOGREC)}: {small}.meta: '
        f"offset {LABEL_V2 + len(_desc())}: TYPE_INDOM_V2 record: "
        "instance 1's name offset 9 is past its 4-byte name table\n"
    )


def test_pminfo_and_pmprobe_say_where_a_fetch_met_damage(small):
    """PCP's lines on stdout, unchanged; where the damage is, once, on stderr."""
    data = bytearray(Path(small + ".0").read_bytes())
    data[LABEL_V2 : LABEL_V2 + 4] = struct.pack(">i", 178)  # the first record's length
    Path(small + ".0").write_bytes(bytes(data))
    where = f"{small}.0: offset {LABEL_V2}: bad record length 178"
    info = _ours("pminfo", "-f", "-a", small, *NAMES)
    assert info.stdout == "".join(f"{n}: pmFetch: {pmErrStr(PM_ERR_LOGREC)}\n" for n in NAMES)
    assert info.stderr.startswith(f"pminfo: {pmErrStr(PM_ERR_LOGREC)}: {where}")
    assert info.stderr.count("\n") == 1
    probe = _ours("pmprobe", "-v", "-a", small, *NAMES)
    assert probe.stdout == "".join(
        f"{n} {PM_ERR_LOGREC} {pmErrStr(PM_ERR_LOGREC)} (pmFetch)\n" for n in NAMES
    )
    assert probe.stderr.startswith(f"pmprobe: {pmErrStr(PM_ERR_LOGREC)}: {where}")
    assert probe.stderr.count("\n") == 1


# -- values misencoded for their type: libpcp's interpolation stops there ---------------------

WIDE, NARROW = pmID_build(60, 9, 1), pmID_build(60, 9, 2)
NULL = 0xFFFFFFFF
S = 1_000_000_000


def write_misencoded(base: str) -> None:
    """Records every second for 11 s of m.wide (a 64-bit counter, its values in blocks)
    and m.narrow (32-bit, in place); at 6 s m.wide's value is written in place, as a
    32-bit one (PCP's qa/badarchives have such records, qa/317 and qa/931)."""
    u32, u64 = PMType.PM_TYPE_U32, PMType.PM_TYPE_U64
    with ArchiveWriter(base, hostname="enc", timezone="UTC", start=Timestamp(T0, 0)) as w:
        w.put_index(Timestamp(T0, 0))
        w.put_desc(Desc(WIDE, u64, sem=PMSem.PM_SEM_COUNTER), ["m.wide"])
        w.put_desc(Desc(NARROW, u32, sem=PMSem.PM_SEM_COUNTER), ["m.narrow"])
        for k in range(12):
            w.put_result(Result(Timestamp(T0 + k, 0), (
                ValueSet.of_atoms(WIDE, u32 if k == 6 else u64, [(NULL, 10 * k)]),
                ValueSet.of_atoms(NARROW, u32, [(NULL, 10 * k)]),
            )))  # fmt: skip


def test_a_misencoded_record_ends_interpolation_there(tmp_path):
    """libpcp's update_bounds refuses a record whose value encoding is not the metric's
    (PM_ERR_LOGREC, in PCP's words): a fetch that reads it fails; the records before it
    answer as before, and a metric encoded as it should be is not touched."""
    from purepcp.pmapi.archive.context import PM_MODE_INTERP, ArchiveContext
    from purepcp.pmapi.archive.replay import _damage

    base = str(tmp_path / "enc")
    write_misencoded(base)
    with ArchiveContext(base) as ctx:
        ctx.set_mode(PM_MODE_INTERP, Timestamp(T0, S // 2), S)
        run = ctx.replay([WIDE], 10)
        assert run.failed is not None and run.fail_code == PM_ERR_LOGREC
        # (bounds up to 5 s read cleanly; from 5.5 s on the record at 6 s is read)
        assert run.failed.tolist() == [False] * 5 + [True] * 5
        assert str(run.fetch_error(5)) == pmErrStr(PM_ERR_LOGREC)
        assert run.metrics[0].has[:5, 0].all()
        ctx.set_mode(PM_MODE_INTERP, Timestamp(T0, S // 2), S)
        assert ctx.replay([NARROW], 10).failed is None
        observations, _ = ctx._source()
        assert _damage(observations, [NARROW]) == (None, None)
        assert observations.misencoded(WIDE) == (T0 + 5) * S  # (the last record before)
    run = _ours("pmval", "-z", "-a", base, "-t", "0.7", "m.wide")
    assert run.returncode == 1
    assert run.stderr == f"\npmval: pmFetch: {pmErrStr(PM_ERR_LOGREC)}\n"
    assert run.stdout.splitlines()[-1] == "22:13:24.900              10.00  "


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        ["-z", "-a", "ENC", "-t", "0.7", "m.wide"],
        ["-z", "-a", "ENC", "-S", "+5.5", "-t", "0.7", "m.wide"],
        ["-z", "-a", "ENC", "-t", "0.7", "m.narrow"],
        # qa/931 and qa/317: PCP's archives holding such records
        ["-z", "-a", "archive-20141125-000009", "-t", "1min", "-f", "1",
         "network.interface.in.bytes"],
        ["-z", "-a", "logsummary-bug", "kernel.all.cpu.wait.total"],
    ],
)  # fmt: skip
def test_misencoded_records_against_pcp(tmp_path, args):
    require_reference("pmval")
    where = args.index("-a") + 1
    if args[where] == "ENC":
        args[where] = str(tmp_path / "enc")
        write_misencoded(args[where])
    else:
        args[where] = qa(args[where])
    theirs, ours = _reference("pmval", *args), _ours("pmval", *args)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode, carried(theirs.stdout), theirs.stderr)  # fmt: skip


def _pmrep(*args: str, reference: bool) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TZ="UTC", PYTHONPATH=str(ROOT), PCP_PYTHON_PROG="/usr/bin/python3")
    cmd = ["pmrep", *args] if reference else [sys.executable, "-m", "purepcp.tools.pmrep", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def test_pmrep_stops_at_a_damaged_archive_of_a_set():
    """qa/1671: a directory of archives, one of them truncated: pmrep's replay stops at
    the first sample that reads into the damage, even past the set's end (libpcp's fetch
    is no end of the log while archives follow the one it reads), as PCP's pmrep does:
    the samples before it, then PCP's message, status 1."""
    args = ["-s", "10000", "-z", "-a", qa_dir("multi-corrupted"), "-t10m", "-pf%c",
            "kernel.percpu.cpu.user"]  # fmt: skip
    ours = _pmrep(*args, reference=False)
    assert ours.returncode == 1
    assert ours.stderr == f"pmrep: {pmErrStr(PM_ERR_LOGREC)}\n"
    assert [line[11:19] for line in ours.stdout.splitlines()[3:]] == ["11:44:04", "11:54:04"]


@pytest.mark.interop
@pytest.mark.parametrize("interval", ["1s", "30s", "1m", "10m"])
def test_pmrep_at_a_damaged_archive_of_a_set_against_pcp(interval):
    require_reference("pmrep")
    args = ["-s", "10000", "-z", "-a", qa_dir("multi-corrupted"), f"-t{interval}", "-pf%c",
            "kernel.percpu.cpu.user"]  # fmt: skip
    theirs, ours = _pmrep(*args, reference=True), _pmrep(*args, reference=False)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode, theirs.stdout, theirs.stderr)  # fmt: skip
    assert theirs.returncode == 1


# -- against PCP ---------------------------------------------------------------------------

#: Our line saying where an archive is damaged, on stderr (pminfo, pmprobe).
_WHERE_LINE = re.compile(r"^(pminfo|pmprobe): .+: offset -?\d+: \S")
#: Our account of a descriptor's name whose length runs past the file.
_NAME_TOO_LONG = re.compile(r"TYPE_DESC record: name \d+ of -?\d+ claims -?\d+ bytes")
#: What we add to PCP's message: the file, the offset and what is wrong.
_DETAIL = re.compile(r"^: .+: offset -?\d+: \S")


def _reference(tool: str, *args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TZ="UTC", PCP_DERIVED_CONFIG="")
    return subprocess.run(
        [tool, *args], capture_output=True, text=True, env=env, timeout=120, cwd=cwd,
        errors="replace",
    )  # fmt: skip


def _same_story(theirs: subprocess.CompletedProcess[str], ours: subprocess.CompletedProcess[str]):
    """Our exit status is PCP's, and our stderr tells PCP's story: each of PCP's lines as
    it is or followed by the file, offset and what is wrong there; at most one line more,
    saying where the damage is."""
    assert ours.returncode == theirs.returncode, (theirs.stderr, ours.stderr)
    mine = [line for line in ours.stderr.splitlines() if line.strip()]
    pcps = [line for line in theirs.stderr.splitlines() if line.strip()]
    told = 0
    for our in list(mine):
        pcp = pcps[0] if pcps else None
        if pcp is not None and pcp.endswith("Bad address") and _NAME_TOO_LONG.search(our):
            # libpcp freads a name whose length runs past the file into a 4 KB buffer on
            # its stack: EFAULT or not, as the memory beyond happens to be mapped; we say
            pcp = pcp[: -len("Bad address")] + pmErrStr(PM_ERR_LOGREC)
        if pcp is not None and (
            our == pcp or (our.startswith(pcp) and _DETAIL.match(our[len(pcp) :]))
        ):
            pcps.pop(0)
        else:
            assert _WHERE_LINE.match(our) and not told, (theirs.stderr, ours.stderr)
            told += 1
        assert not re.search(r"\b(\d+) bytes?, not \1\b", our), our  # no self-contradiction
    assert not pcps, (theirs.stderr, ours.stderr)


_TOOLS = [
    ("pmdumplog", ["-a", "{}"]),
    ("pminfo", ["-f", "-a", "{}", *NAMES]),
    ("pmprobe", ["-v", "-a", "{}", *NAMES]),
    ("pmval", ["-a", "{}", "d.ctr"]),
]


@pytest.mark.interop
@pytest.mark.slow  # a sweep: 50 damaged archives, each through four of PCP's tools and ours
@pytest.mark.parametrize("part", [".0", ".meta"])
@pytest.mark.parametrize("seed", range(25))
def test_damaged_archives_against_pcp(tmp_path, part, seed):
    """Bytes flipped in the data volume or the .meta of a small archive (50 archives):
    where PCP's tool exits 1 ours does, saying PCP's words and where; what PCP prints
    before the damage we print.

    pmval's values are compared where PCP's pmval meets the damage (a counter, sampled
    at the records' own times, so 6.0.3's interpolation and ours agree); where a flip
    only changed a record's time, values across it may differ by design (docs/archives.md).
    """
    require_reference(*(tool for tool, _ in _TOOLS))
    write_small(str(tmp_path / "good"))
    base = str(tmp_path / "bad")
    flip_bytes(str(tmp_path / "good"), base, seed, part)
    for tool, args in _TOOLS:
        argv = [a.format(base) for a in args]
        theirs, ours = _reference(tool, *argv), _ours(tool, *argv)
        _same_story(theirs, ours)
        if tool != "pmval" or theirs.returncode:
            assert ours.stdout == theirs.stdout, (tool, theirs.stderr)


#: Per QA archive, a metric for pmval (bozo.client_v2: test_old_64_bit_blocks_against_pcp).
_QA = {
    "541380_v2": "pmcd.pmlogger.host",
    "ace_v2": "40.0.0",
    "log-derived": "mem.util.allcache",
    "vldb-disks": "disk.dev.total",
    "badmeta-3": "sample.seconds",
    "badmeta-4": "sample.seconds",
    "badmeta-5": "sample.seconds",
    "corrupted_labelset": "hinv.ncpu",
    "badlen-5": "sample.seconds",
    "badlen-10": "sample.seconds",
    "badlen-11": "sample.seconds",
}


@pytest.mark.interop
@pytest.mark.parametrize("name", sorted(_QA))
def test_qa_archives_against_pcp(name):
    """PCP's own archives, old and damaged: the same names, values, status and story."""
    require_reference("pminfo", "pmprobe", "pmval", "pmdumplog")
    base = qa(name)
    listed = _reference("pminfo", "-a", base)
    _same_story(listed, ours := _ours("pminfo", "-a", base))
    assert ours.stdout == listed.stdout
    names = [n for n in listed.stdout.split() if not n.startswith("event.")]
    runs = [["pmdumplog", "-a", base], ["pminfo", "-f", "-a", base, *names],
            ["pmprobe", "-v", "-a", base, *names]]  # fmt: skip
    if _QA[name]:
        runs.append(["pmval", "-U", base, _QA[name]])
    for tool, *args in runs:
        theirs, ours = _reference(tool, *args), _ours(tool, *args)
        _same_story(theirs, ours)
        assert ours.stdout == theirs.stdout, (tool, args)


@pytest.mark.interop
@pytest.mark.parametrize("which", ["badlen-11", "ours cut to a label and one byte"])
def test_pmval_interpolating_stray_bytes_against_pcp(tmp_path, which):
    """pmval -t over a volume of a label and a stray byte: PCP's output, word for word
    (this ended in a struct.error traceback, where PCP prints "No values available")."""
    require_reference("pmval")
    if which == "badlen-11":
        base, metric = qa("badlen-11"), "sample.seconds"
    else:
        base, metric = str(tmp_path / "cut"), "d.ctr"
        write_small(base)
        _label_and(base, b"\1")
    args = ["-a", base, "-t", "7.3", "-f", "3", metric]
    theirs, ours = _reference("pmval", *args), _ours("pmval", *args)
    assert (ours.returncode, ours.stdout, ours.stderr) == (
        theirs.returncode,
        theirs.stdout,
        theirs.stderr,
    )
    assert theirs.returncode == 0 and theirs.stdout.endswith("No values available\n")


@pytest.mark.interop
def test_old_64_bit_blocks_against_pcp():
    """bozo.client_v2 holds 64-bit values in blocks of type 0.  libpcp swaps a block's
    payload by the block's type, so on a little-endian host PCP shows those values with
    their bytes reversed; we read them by their descriptor's type.  Every other line is
    PCP's."""
    require_reference("pmdumplog", "pminfo")
    base = qa("bozo.client_v2")
    theirs, ours = _reference("pminfo", "-a", base), _ours("pminfo", "-a", base)
    assert (ours.stdout, ours.stderr, ours.returncode) == (theirs.stdout, "", 0)
    theirs, ours = _reference("pmdumplog", "-a", base), _ours("pmdumplog", "-a", base)
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr) == (0, "")
    pcp_lines, our_lines = theirs.stdout.splitlines(), ours.stdout.splitlines()
    assert len(pcp_lines) == len(our_lines)
    differ = [(p, o) for p, o in zip(pcp_lines, our_lines, strict=True) if p != o]
    assert differ  # (this archive does hold some)
    for pcp, our in differ:
        head, value = our.rsplit(" ", 1)
        assert "(disk.all." in head and pcp == f"{head} " + str(
            int.from_bytes(int(value).to_bytes(8, "big"), "little")
        )
