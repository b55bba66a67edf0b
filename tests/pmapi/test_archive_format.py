"""The archive format: our writer and reader against each other, the declarations and PCP."""

from __future__ import annotations

import lzma
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from purepcp.pmapi.archive import Archive, ArchiveError, ArchiveWriter, encode_record
from purepcp.pmapi.archive.declarations import (
    IndexV2,
    IndexV3,
    LabelV2,
    LabelV3,
    ResultHeadV2,
    ResultHeadV3,
)
from purepcp.pmapi.archive.format import (
    INDEX_V2,
    INDEX_V3,
    LABEL_V2,
    LABEL_V3,
    LogLabel,
    TextRecord,
    decode_label,
    encode_label,
    encode_text,
)
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_LOGREC, PMError
from purepcp.pmapi.labels import LabelSet
from purepcp.pmapi.types import PMSem, PMType, ValFmt
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support import strategies as S
from tests.support.examples import examples
from tests.support.reference_pmcd import require_reference

T0 = Timestamp(1_700_000_000, 250_000_000)
LOAD = 0x0F000800  # an arbitrary PMID
COLOUR = 0x0F000801
INDOM = 0x0F000002


def _result(sec: int, *vsets: ValueSet) -> Result:
    return Result(Timestamp(T0.sec + sec, T0.nsec), vsets)


def _write_sample(base: str, version: int = 2, volume_limit: int | None = None) -> None:
    """A small archive: a singular double, a set-valued string metric whose domain changes."""
    kw = {} if volume_limit is None else {"volume_limit": volume_limit}
    with ArchiveWriter(base, hostname="box", timezone="UTC", start=T0, version=version, **kw) as w:
        w.put_desc(Desc(LOAD, PMType.PM_TYPE_DOUBLE, sem=PMSem.PM_SEM_INSTANT), ["sample.load"])
        w.put_desc(
            Desc(COLOUR, PMType.PM_TYPE_STRING, INDOM, PMSem.PM_SEM_DISCRETE), ["sample.colour"]
        )
        w.put_text(5, LOAD, "the load")
        w.put_index(T0)
        for i in range(10):
            stamp = Timestamp(T0.sec + i, T0.nsec)
            insts = [0, 1] if i < 5 else [0, 1, 2]
            if w.put_indom(stamp, INDOM, insts, ["red", "green", "blue"][: len(insts)]):
                w.put_index(stamp)
            if i == 7:
                w.put_mark(Timestamp(T0.sec + i, 0))
            w.put_result(
                _result(
                    i,
                    ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE, [(0xFFFFFFFF, i / 4)]),
                    ValueSet.of_atoms(
                        COLOUR, PMType.PM_TYPE_STRING, [(n, f"v{i}.{n}") for n in insts]
                    ),
                )
            )
        w.put_index(Timestamp(T0.sec + 9, T0.nsec))


@pytest.mark.parametrize("version", [2, 3])
def test_round_trip_of_a_small_archive(tmp_path, version):
    base = str(tmp_path / "a")
    _write_sample(base, version)
    with Archive(base + ".meta") as a:  # any file name opens the archive
        assert a.problems == []
        assert a.label.version == version and a.label.hostname == "box" and a.label.vol == -1
        assert a.label.start == (T0 if version == 3 else Timestamp(T0.sec, 250_000_000))
        assert a.pmns.lookup("sample.colour") == COLOUR
        assert a.descs[LOAD].type == PMType.PM_TYPE_DOUBLE
        assert a.text(LOAD, 5) == "the load"
        assert [r.insts for r in a.indoms[INDOM]] == [(0, 1), (0, 1, 2)]
        assert a.indom_at(INDOM, Timestamp(T0.sec + 4, T0.nsec)).names == ("red", "green")
        assert a.indom_at(INDOM, Timestamp(T0.sec + 5, T0.nsec)).names == ("red", "green", "blue")
        assert a.indom_at(INDOM, Timestamp(T0.sec - 1, 0)) is None
        recs = list(a.records())
        assert len(recs) == 11 and sum(r.is_mark for r in recs) == 1
        assert recs[3].result.vsets[0].values == (0.75,)
        assert recs[9].result.vsets[1].values == ("v8.0", "v8.1", "v8.2")
        back = list(a.records(backwards=True))
        assert [r.offset for r in back] == [r.offset for r in reversed(recs)]
        assert a.end() == Timestamp(T0.sec + 9, T0.nsec)
        later = list(a.records_from(Timestamp(T0.sec + 6, 0)))
        assert later[0].stamp == Timestamp(T0.sec + 6, T0.nsec) and len(later) == 5
        earlier = list(a.records_from(Timestamp(T0.sec + 2, T0.nsec), backwards=True))
        assert [r.stamp.sec - T0.sec for r in earlier] == [2, 1, 0]


def test_volumes_switch_by_size_and_read_as_one(tmp_path):
    base = str(tmp_path / "v")
    _write_sample(base, volume_limit=400)
    with Archive(base) as a:
        assert len(a.volume_paths) > 2
        recs = list(a.records())
        assert len(recs) == 11
        assert [r.stamp for r in a.records(backwards=True)] == [r.stamp for r in reversed(recs)]
        vols = {e.vol for e in a.index}
        assert vols == set(a.volume_paths)  # an index entry at every switch


def test_records_decode_as_the_declarations_say(tmp_path):
    vs = ValueSet.of_atoms(LOAD, PMType.PM_TYPE_U32, [(1, 7), (2, 8)])
    for version, head in ((2, ResultHeadV2), (3, ResultHeadV3)):
        rec = encode_record(_result(1, vs), version)
        assert int.from_bytes(rec[:4], "big") == len(rec) == int.from_bytes(rec[-4:], "big")
        fields = head.parse(rec[4:])
        assert fields.sec == T0.sec + 1 and fields.numpmid == 1
    label = LogLabel(2, 42, T0, 0, "h" * 100, "AEST-10")
    parsed = LabelV2.parse(encode_label(label))
    assert parsed.hostname.rstrip(b"\0") == b"h" * 63  # cut to leave its NUL, as PCP does
    assert LabelV3.parse(encode_label(LogLabel(3, 1, T0, -1, "h", "UTC", "Europe/Paris"))).vol == -1
    assert IndexV2.sizeof() == INDEX_V2.size and IndexV3.sizeof() == INDEX_V3.size
    assert LabelV2.sizeof() == LABEL_V2.size and LabelV3.sizeof() == LABEL_V3.size
    rec = encode_text(TextRecord(6, LOAD, "help"))
    assert rec == bytes.fromhex("0000001900000004") + (6).to_bytes(4, "big") + LOAD.to_bytes(
        4, "big"
    ) + b"help\0" + bytes.fromhex("00000019")


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    results=st.lists(S.results(highres=False), min_size=1, max_size=6),
    version=st.sampled_from([2, 3]),
)
def test_any_result_survives_writing_and_reading(tmp_path_factory, results, version):
    # each metric's descriptor types its value blocks, as a reader takes them
    types = {LOAD: PMType.PM_TYPE_U32}  # (a descriptor at least: libpcp wants one)
    for vs in (vs for r in results for vs in r.vsets if vs.numval > 0):
        kind = vs.vtype if vs.valfmt != ValFmt.PM_VAL_INSITU else PMType.PM_TYPE_U32
        assume(types.setdefault(vs.pmid, kind) == kind)
    base = str(tmp_path_factory.mktemp("h") / "arch")
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=T0, version=version) as w:
        for pmid in {vs.pmid for r in results for vs in r.vsets} | {LOAD}:
            w.put_desc(Desc(pmid, types.get(pmid, PMType.PM_TYPE_U32)), [f"m.x{pmid}"])
        for r in results:
            w.put_result(r)
    with Archive(base) as a:
        got = [rec.result for rec in a.records()]
    assert len(got) == len(results)
    for mine, theirs in zip(got, results, strict=True):
        assert mine.timestamp == theirs.timestamp
        assert [tuple(vs.insts) for vs in mine.vsets] == [tuple(vs.insts) for vs in theirs.vsets]
        assert [list(vs.values) for vs in mine.vsets] == [list(vs.values) for vs in theirs.vsets]
        assert [vs.numval for vs in mine.vsets] == [vs.numval for vs in theirs.vsets]


def test_labels_round_trip(tmp_path):
    from purepcp.pmapi.archive import LabelRecord

    base = str(tmp_path / "l")
    record = LabelRecord(T0, 32, INDOM, (LabelSet.from_dict({"a": 1}, inst=3), LabelSet(inst=4)))
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=T0) as w:
        w.put_desc(Desc(LOAD), ["sample.load"])  # (an archive holds a metric at least)
        w.put_labels(record)
        w.put_result(_result(0, ValueSet.of_atoms(LOAD, PMType.PM_TYPE_U32, [(0xFFFFFFFF, 1)])))
    with Archive(base) as a:
        (got,) = a.labels
    assert got.type == 32 and got.ident == INDOM and got.sets[0].json == b'{"a":1}'
    assert got.sets[0].labels == record.sets[0].labels and got.sets[1].inst == 4


def test_existing_files_are_never_overwritten(tmp_path):
    base = str(tmp_path / "x")
    _write_sample(base)
    before = Path(base + ".0").read_bytes()
    with pytest.raises(Exception, match="already exists, not over-written"):
        ArchiveWriter(base, hostname="h", timezone="UTC", start=T0)
    assert Path(base + ".0").read_bytes() == before


def test_a_value_before_its_descriptor_is_refused(tmp_path):
    with (
        ArchiveWriter(str(tmp_path / "d"), hostname="h", timezone="UTC", start=T0) as w,
        pytest.raises(Exception, match="before its descriptor"),
    ):
        w.put_result(_result(0, ValueSet.of_atoms(LOAD, PMType.PM_TYPE_U32, [(0, 1)])))


# -- damage ------------------------------------------------------------------------------


def test_a_truncated_volume_reads_up_to_the_damage(tmp_path):
    base = str(tmp_path / "t")
    _write_sample(base)
    size = os.path.getsize(base + ".0")
    with open(base + ".0", "r+b") as f:
        f.truncate(size - 10)
    with Archive(base) as a:
        got = []
        with pytest.raises(ArchiveError) as err:
            for rec in a.records():
                got.append(rec)
    assert len(got) == 10
    with Archive(base) as a:  # the index leads back past the damage, as libpcp goes
        assert a.end() == got[-1].stamp
    assert err.value.file == base + ".0" and err.value.offset == got[-1].offset + got[-1].size
    assert "truncated record" in str(err.value) and err.value.detail.startswith(base + ".0: offset")


def test_corrupt_metadata_is_refused_at_open(tmp_path):
    """As libpcp's __pmLogLoadMeta: damage anywhere in the .meta fails the open, naming
    the file and the offset of the record."""
    base = str(tmp_path / "m")
    _write_sample(base)
    data = bytearray(Path(base + ".meta").read_bytes())
    with Archive(base) as a:
        second = a.meta[1][0]
    data[second + 2] ^= 0x40  # the second record's length no longer matches its trailer
    Path(base + ".meta").write_bytes(bytes(data))
    with pytest.raises(ArchiveError) as err:
        Archive(base)
    assert err.value.code == PM_ERR_LOGREC
    assert err.value.file == base + ".meta" and err.value.offset == second
    assert "trailer" in err.value.reason


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "^Empty archive log file$"),  # (an empty volume: PCP's words, nothing to add)
        (b"\0\0\0\x84junk", "bad magic number"),
    ],
)
def test_not_an_archive(tmp_path, content, message):
    base = str(tmp_path / "n")
    for suffix in (".meta", ".0"):
        Path(base + suffix).write_bytes(content)
    with pytest.raises(Exception, match=message):
        Archive(base)


def test_missing_archive(tmp_path):
    with pytest.raises(Exception, match=r"no \.meta file"):
        Archive(str(tmp_path / "nothing"))


def test_compressed_volumes_read_transparently(tmp_path):
    base = str(tmp_path / "c")
    _write_sample(base)
    with Archive(base) as a:
        plain = [r.result for r in a.records()]
    for name in (base + ".0", base + ".meta"):
        data = Path(name).read_bytes()
        Path(name + ".xz").write_bytes(lzma.compress(data))
        os.unlink(name)
    with Archive(base + ".0.xz") as a:
        assert [r.result.timestamp for r in a.records()] == [r.timestamp for r in plain]
        assert a.meta_path.endswith(".meta.xz")


def test_a_volume_that_will_not_decompress_is_a_corrupted_record(tmp_path):
    """QA 958: libpcp's word for it is PM_ERR_LOGREC (it was "Missing ... log file")."""
    base = str(tmp_path / "c")
    _write_sample(base)
    os.unlink(base + ".0")
    for ext in (".xz", ".gz", ".bz2"):  # (an empty file pretending to be compressed)
        Path(base + ".0" + ext).write_bytes(b"")
        with pytest.raises(
            PMError, match=r"^Corrupted record in a PCP archive log: .*cannot decompress"
        ):
            Archive(base)
        os.unlink(base + ".0" + ext)


# -- against PCP ----------------------------------------------------------------------------


@pytest.mark.interop
@pytest.mark.parametrize("version", [2, 3])
def test_pmlogcheck_accepts_our_archive(tmp_path, version):
    require_reference("pmlogcheck")
    base = str(tmp_path / "ours")
    _write_sample(base, version, volume_limit=500)
    run = subprocess.run(["pmlogcheck", base], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


@pytest.mark.interop
def test_we_read_what_pmlogger_writes(tmp_path):
    require_reference("pmlogger", "pmdumplog")
    cfg = tmp_path / "cfg"
    cfg.write_text(
        "log mandatory on every 100 msec { kernel.all.load hinv.ncpu kernel.uname.release "
        "mem.util.free network.interface.in.bytes }\n"
    )
    base = str(tmp_path / "ref")
    subprocess.run(
        ["pmlogger", "-o", "-c", str(cfg), "-s", "5", "-l", str(tmp_path / "log"), base],
        check=True,
        timeout=60,
        cwd=tmp_path,
    )
    theirs = subprocess.run(
        ["pmdumplog", "-a", base], capture_output=True, text=True, check=True
    ).stdout
    with Archive(base) as a:
        assert a.problems == []
        recs = list(a.records())
        assert {"kernel.uname.release", "network.interface.in.bytes"} <= set(a.pmns.traverse(""))
        for pmid, names in a.names.items():
            assert names[0] in theirs, pmid
    # one line "HH:MM:SS.uuuuuu  N metrics" per record, as pmdumplog -a prints
    stamps = [line for line in theirs.splitlines() if line[:1].isdigit() and "metric" in line]
    assert len(stamps) == len(recs)
    assert shutil.which("pmlogcheck") is None or (
        subprocess.run(["pmlogcheck", base], capture_output=True).returncode == 0
    )


@settings(max_examples=examples(60), deadline=None)
@given(result=S.results(highres=True), highres=st.booleans())
def test_a_layout_decoded_result_is_recorded_as_a_careful_one(result, highres):
    """The writer's shortcut (copying the PDU of a result a cached layout decoded) writes the
    bytes the value-set encoder writes, from a RESULT or a HIGHRES_RESULT."""
    from purepcp.pmapi.pdu import codec
    from purepcp.pmapi.pdu.records import HighResResultPDU, ResultPDU

    if not highres:
        result = Result(Timestamp(result.timestamp.sec, result.timestamp.nsec // 1000 * 1000),
                        result.vsets)  # fmt: skip
    frame = codec.encode((HighResResultPDU if highres else ResultPDU)(result, 7))
    decoded = [codec.decode(frame).result for _ in range(3)]  # a layout is learned by the 2nd
    careful = Result(result.timestamp, tuple(decoded[0].vsets))
    for got in decoded:
        assert encode_record(got) == encode_record(careful)


def test_the_shortcut_is_taken_for_a_recurring_result():
    from purepcp.pmapi.pdu import codec
    from purepcp.pmapi.pdu.records import HighResResultPDU
    from purepcp.pmapi.pdu.result_layout import ColumnValueSets

    result = Result(
        Timestamp(1_700_000_000, 123_456_789),
        (
            ValueSet.of_atoms(1, PMType.PM_TYPE_U32, [(0, 5), (1, 6)]),
            ValueSet.of_atoms(2, PMType.PM_TYPE_STRING, [(0xFFFFFFFF, "text")]),
            ValueSet.of_atoms(3, PMType.PM_TYPE_DOUBLE, [(4, 2.5)]),
        ),
    )
    frame = codec.encode(HighResResultPDU(result, 7))
    decoded = [codec.decode(frame).result for _ in range(3)]
    assert type(decoded[-1].vsets) is ColumnValueSets
    careful = encode_record(Result(result.timestamp, tuple(decoded[0].vsets)))
    assert encode_record(decoded[-1]) == careful


@given(
    version=st.sampled_from((2, 3)),
    pid=st.integers(-(2**31), 2**31 - 1),
    sec=st.integers(0, 2**31 - 1),
    frac=st.integers(0, 999_999),
    vol=st.integers(-2, 2**31 - 1),
    host=st.text(st.characters(min_codepoint=1, max_codepoint=0x7F), max_size=70),
    zone=st.text(st.characters(min_codepoint=1, max_codepoint=0x7F), max_size=50),
)
def test_labels_read_with_struct_are_what_the_declarations_parse(version, pid, sec, frac, vol,
                                                                 host, zone):  # fmt: skip
    """A log label is read with struct (a reader never imports construct); what it reads
    is what the construct declaration parses from the same bytes."""
    stamp = Timestamp(sec, frac * 1000)
    data = encode_label(LogLabel(version, pid, stamp, vol, host, zone, zone, 0))
    read = decode_label(data, "x")
    declared = (LabelV3 if version == 3 else LabelV2).parse(data)
    assert (read.pid, read.vol) == (declared.pid, declared.vol)
    assert read.hostname.encode() == declared.hostname.split(b"\0")[0]
    assert read.timezone.encode() == declared.timezone.split(b"\0")[0]
    if version == 3:
        assert (declared.sec, declared.nsec) == (read.start.sec, read.start.nsec)
        assert read.zoneinfo.encode() == declared.zoneinfo.split(b"\0")[0]
    else:
        assert (declared.sec, declared.usec * 1000) == (read.start.sec, read.start.nsec)


def test_v3_instance_domain_changes_written_as_deltas_as_pmlogger_does(tmp_path):
    """QA 1364: with delta=True a v3 archive gets only the changes (adds and deletions,
    in instance order) while they are fewer than the members, else the whole domain; a
    renamed instance means the whole domain (pmaDeltaInDom).  v2 always has the whole."""
    steps = [
        ([1, 2, 3, 4], ["a", "b", "c", "d"]),
        ([1, 2, 3, 4, 5], ["a", "b", "c", "d", "e"]),  # one add: a delta
        ([1, 2, 4, 5, 6], ["a", "b", "d", "e", "f"]),  # one gone, one new: a delta
        ([1, 2, 4, 5, 6], ["a", "b", "d", "e", "f"]),  # the same: nothing
        ([7, 8], ["g", "h"]),  # more changes than members: whole
        ([7, 8], ["g", "H"]),  # renamed: whole
    ]
    for version in (2, 3):
        base = str(tmp_path / f"v{version}")
        with ArchiveWriter(base, hostname="box", timezone="UTC", start=T0, version=version) as w:
            w.put_index(T0)
            written = [
                w.put_indom(Timestamp(T0.sec + i, 0), INDOM, insts, names, delta=True)
                for i, (insts, names) in enumerate(steps)
            ]
            w.put_desc(Desc(LOAD, PMType.PM_TYPE_DOUBLE, sem=PMSem.PM_SEM_INSTANT), ["load"])
            w.put_result(
                _result(9, ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE, [(0xFFFFFFFF, 1.0)]))
            )
        assert written == [True, True, True, False, True, True]
        with Archive(base) as a:
            stored = [(r.delta, r.insts, r.names) for _, r in a.meta if hasattr(r, "delta")]
            members = [(r.insts, r.names) for r in a.indoms[INDOM]]
        if version == 3:
            assert stored[1:3] == [
                (True, (5,), ("e",)),
                (True, (3, 6), (None, "f")),
            ]
            assert [d for d, _, _ in stored] == [False, True, True, False, False]
        else:
            assert not any(d for d, _, _ in stored)
        expected = [(tuple(i), tuple(n)) for i, n in steps]
        assert members == expected[:3] + expected[4:]
