"""pmdumplog: ours prints what PCP 6.0.3's pmdumplog prints, byte for byte, on the same archives.

Unit tests read archives our writer makes (no PCP needed); interop tests run PCP's
pmdumplog and ours on archives made by PCP's pmlogger (v2 and v3, local context with
the sample agent loaded as "sampledso"), by PCP's python pmi module and by our writer,
and compare stdout, stderr and exit status.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from purepcp.pmapi import version_line
from purepcp.pmapi.archive import Archive, ArchiveError, ArchiveWriter, IndexEntry, LabelRecord
from purepcp.pmapi.archive.format import InDomRecord, encode_index, encode_indom
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
    PM_LABEL_OPTIONAL,
    LabelSet,
)
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools.pmdumplog import main
from purepcp.tools.pmdumplog.metadata import LogInDom, merge_delta, undelta
from purepcp.tools.pmdumplog.raw import raw_dump
from tests.support.reference_pmcd import require_reference

ROOT = Path(__file__).resolve().parents[2]

# -- an archive of ours -------------------------------------------------------------------

T0 = Timestamp(1_700_000_000, 123_456_789)  # Tue Nov 14 22:13:20 2023 UTC
LOAD = pmID_build(245, 1, 1)
COLOUR = pmID_build(245, 1, 2)
COUNT = pmID_build(245, 1, 3)
EVENTS = pmID_build(245, 1, 4)
PARAM = pmID_build(245, 1, 5)
NOVALUES = pmID_build(245, 1, 6)
INDOM = pmInDom_build(245, 1)
EVINDOM = pmInDom_build(245, 2)


def _at(sec: int, frac: int = 0) -> Timestamp:
    return Timestamp(T0.sec + sec, T0.nsec + frac)


def _event_array(records: list[tuple[Timestamp, int, list[tuple[int, int, bytes]]]], v3: bool):
    """An event record array's payload: each record's time, flags and (pmid, type, value)."""
    out = [struct.pack(">i", len(records))]
    for stamp, flags, params in records:
        if v3:
            out.append(struct.pack(">qqIi", stamp.sec, stamp.nsec, flags, len(params)))
        else:
            out.append(struct.pack(">iiIi", stamp.sec, stamp.nsec // 1000, flags, len(params)))
        for pmid, ptype, value in params:
            padded = value.ljust((len(value) + 3) // 4 * 4, b"\0")
            out.append(struct.pack(">II", pmid, ptype << 24 | (4 + len(value))) + padded)
    return b"".join(out)


def write_ours(base: str, version: int = 2) -> None:
    """A small archive with every kind of metadata pmdumplog shows, and values of each sort."""
    v3 = version == 3
    evtype = PMType.PM_TYPE_HIGHRES_EVENT if v3 else PMType.PM_TYPE_EVENT
    zoneinfo = ":Australia/Brisbane" if v3 else ""
    label = dict(hostname="box.example", timezone="AEST-10", zoneinfo=zoneinfo, pid=4242)
    with ArchiveWriter(base, start=T0, version=version, **label) as w:  # type: ignore[arg-type]
        w.put_desc(Desc(LOAD, PMType.PM_TYPE_DOUBLE, sem=PMSem.PM_SEM_INSTANT), ["demo.load"])
        w.put_desc(
            Desc(COLOUR, PMType.PM_TYPE_STRING, INDOM, PMSem.PM_SEM_DISCRETE),
            ["demo.colour", "demo.alias.colour"],
        )
        w.put_desc(
            Desc(COUNT, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER,
                 Units(dimSpace=1, scaleSpace=1)),
            ["demo.bytes"],
        )  # fmt: skip
        w.put_desc(Desc(EVENTS, evtype, EVINDOM, PMSem.PM_SEM_DISCRETE), ["demo.events"])
        w.put_desc(Desc(PARAM, PMType.PM_TYPE_STRING), ["demo.param"])
        w.put_desc(Desc(NOVALUES, PMType.PM_TYPE_32), ["demo.none"])
        w.put_text(4 | 1, LOAD, "the load")
        w.put_text(4 | 2, LOAD, "The load,\nover two lines.")
        w.put_text(4 | 1, COLOUR, "colours")
        w.put_text(8 | 2, INDOM, "Three colours, then four.")
        context = LabelSet.from_json('{"hostname":"box","agent":"demo"}', PM_LABEL_CONTEXT)
        domain = LabelSet.from_json('{"role":"testing"}', PM_LABEL_DOMAIN)
        w.put_labels(LabelRecord(T0, PM_LABEL_CONTEXT, 0xFFFFFFFF, (context,)))
        w.put_labels(LabelRecord(T0, PM_LABEL_DOMAIN, 245, (domain,)))
        sets = tuple(
            LabelSet.from_json(f'{{"shade":{i}}}', PM_LABEL_INSTANCES, inst=i) for i in range(3)
        )
        w.put_labels(LabelRecord(T0, PM_LABEL_INSTANCES, INDOM, sets))
        w.put_index(T0)
        w.put_indom(T0, EVINDOM, [0, 7], ["fungus", "bogus"])
        for i in range(6):
            stamp = _at(i, 1000 * i)
            insts = [0, 1, 2] if i < 3 else [3, 0, 1, 2]  # a new one, out of order
            names = [("red", "green", "blue", "cyan")[k] for k in insts]
            if w.put_indom(stamp, INDOM, insts, names):
                w.put_index(stamp)
            if i == 3:  # the same label sets again, one changed: only that one is new
                again = (
                    sets[0],
                    sets[1],
                    LabelSet.from_json('{"shade":"new"}', PM_LABEL_INSTANCES, inst=2),
                )
                w.put_labels(LabelRecord(stamp, PM_LABEL_INSTANCES, INDOM, again))
            if i == 4:
                w.put_mark(_at(i))
            events = _event_array(
                [(stamp, 1, [(PARAM, PMType.PM_TYPE_STRING, f"fetch {i}\0".encode())])]
                + ([(_at(i - 10), 0, [])] if i == 2 else []),
                v3,
            )
            vsets = [
                ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE, [(0xFFFFFFFF, i / 3)]),
                ValueSet.of_atoms(
                    COLOUR, PMType.PM_TYPE_STRING, [(n, f"c{i}.{n}") for n in insts[: 1 + i % 4]]
                ),
                ValueSet.of_atoms(COUNT, PMType.PM_TYPE_U64, [(0xFFFFFFFF, 2**64 - 1 - i)]),
                ValueSet.of_atoms(EVENTS, evtype, [(7, events), (0, _event_array([], v3))]),
                ValueSet.of_atoms(NOVALUES, PMType.PM_TYPE_32, [])
                if i < 5
                else ValueSet.of_error(NOVALUES, -12357),
            ]
            w.put_result(Result(stamp, tuple(vsets)))
        w.put_index(_at(5, 5000))
    # written last, but in force from the last record on: red goes, white comes (v3: a delta)
    change = InDomRecord(_at(5, 5000), INDOM, (0, 4), (None, "white"), delta=True)
    if not v3:
        change = InDomRecord(change.stamp, INDOM, (3, 1, 2, 4), ("cyan", "green", "blue", "white"))
    with open(base + ".meta", "ab") as f:
        f.write(encode_indom(change, version))


def write_odd(base: str, version: int = 2, negative: bool = False) -> None:
    """Corners: a metric with no name, an aggregate, missed events, an event parameter the
    archive does not describe, values for instances not in the domain, label records with
    no sets or repeated, help text replaced, two instance domains at one time.  NEGATIVE
    puts a negative instance id in the domain, which libpcp refuses.
    """
    v3 = version == 3
    evtype = PMType.PM_TYPE_HIGHRES_EVENT if v3 else PMType.PM_TYPE_EVENT
    nameless, agg = pmID_build(40, 0, 1), pmID_build(40, 0, 2)
    ev, p64, flt = pmID_build(40, 1, 3), pmID_build(40, 1, 4), pmID_build(40, 2, 5)
    indom = pmInDom_build(40, 3)
    with ArchiveWriter(base, hostname="odd", timezone="UTC", start=T0, version=version, pid=1) as w:
        w.put_desc(Desc(nameless, PMType.PM_TYPE_32, indom), [])
        w.put_desc(Desc(agg, PMType.PM_TYPE_AGGREGATE), ["odd.agg"])
        w.put_desc(Desc(ev, evtype), ["odd.ev"])
        w.put_desc(Desc(p64, PMType.PM_TYPE_64), ["odd.p64"])
        w.put_desc(Desc(flt, PMType.PM_TYPE_FLOAT), ["odd.g", "odd.z.g", "odd.a.g"])
        w.put_text(4 | 1, nameless, "first")
        w.put_text(4 | 1, nameless, "second")
        w.put_text(8 | 1, indom, "indom one-liner")

        def labels(stamp: Timestamp, kind: int, ident: int, *texts: str) -> None:
            sets = tuple(LabelSet.from_json(t, kind) for t in texts)
            w.put_labels(LabelRecord(stamp, kind, ident, sets))

        labels(T0, PM_LABEL_CONTEXT, 0, '{"a":1}')
        labels(T0, PM_LABEL_ITEM | PM_LABEL_OPTIONAL, nameless, '{"unit":"x"}')
        labels(T0, PM_LABEL_CLUSTER, pmID_build(40, 0, 0), '{"c":0}')
        labels(T0, PM_LABEL_INDOM, indom)
        labels(_at(1), PM_LABEL_CONTEXT, 0, '{"a":1}')
        labels(_at(2), PM_LABEL_CONTEXT, 0, '{"a":2}')
        labels(_at(1), PM_LABEL_INDOM, indom, '{"late":true}')
        w.put_indom(T0, indom, [5, -3 if negative else 3, 2], ["five", "three", "two"])
        w.put_indom(T0, indom, [5, 2], ["five", "two"])
        w.put_index(T0)
        for i in range(3):
            stamp = _at(i, 7)
            missed = (stamp, 1 << 31, [])
            known = (p64, PMType.PM_TYPE_64, struct.pack(">q", -5))
            unknown = (pmID_build(41, 1, 1), PMType.PM_TYPE_32, struct.pack(">i", 9))
            records = [missed, (stamp, 0, [known, unknown]), (stamp, 2 | 8, [known])]
            payload = bytearray(_event_array(records, v3))
            at = 4 + (24 if v3 else 16) - 4  # the first record's nparams: its missed count
            payload[at : at + 4] = struct.pack(">i", 3)
            vsets = (
                ValueSet.of_atoms(nameless, PMType.PM_TYPE_32, [(5, -1), (3, 2**31 - 1), (99, 0)]),
                ValueSet.of_atoms(agg, PMType.PM_TYPE_AGGREGATE, [(PM_IN_NULL, b"\1\2hi\xff")]),
                ValueSet.of_atoms(ev, evtype, [(PM_IN_NULL, bytes(payload))]),
                ValueSet.of_atoms(flt, PMType.PM_TYPE_FLOAT, [(PM_IN_NULL, 1e-40 * i)]),
            )
            w.put_result(Result(stamp, vsets))
            if i == 1:
                w.put_mark(_at(i, 8))
        w.put_index(_at(2, 7))


def write_repeating(base: str, version: int = 2) -> None:
    """Records of a few repeated layouts, as pmlogger writes them, for pmdumplog's
    templates: an instance renamed (same ids) and one added mid-way, a "%" in names,
    NaNs of both signs and infinities, every numeric type insitu and in blocks, a set
    with no values and one with an error, a mark."""
    dbl, u32, i32 = pmID_build(60, 0, 1), pmID_build(60, 0, 2), pmID_build(60, 0, 3)
    i64, u64, flt = pmID_build(60, 0, 4), pmID_build(60, 0, 5), pmID_build(60, 0, 6)
    gone, bad = pmID_build(60, 0, 7), pmID_build(60, 0, 8)
    indom = pmInDom_build(60, 1)
    nan, neg_nan = float("nan"), -float("nan")
    with ArchiveWriter(base, hostname="rep", timezone="UTC", start=T0, version=version) as w:
        w.put_desc(Desc(dbl, PMType.PM_TYPE_DOUBLE, indom), ["rep.dbl%d"])
        w.put_desc(Desc(u32, PMType.PM_TYPE_U32, indom), ["rep.u32"])
        w.put_desc(Desc(i32, PMType.PM_TYPE_32), ["rep.i32"])
        w.put_desc(Desc(i64, PMType.PM_TYPE_64, indom), ["rep.i64"])
        w.put_desc(Desc(u64, PMType.PM_TYPE_U64), ["rep.u64"])
        w.put_desc(Desc(flt, PMType.PM_TYPE_FLOAT, indom), ["rep.flt"])
        w.put_desc(Desc(gone, PMType.PM_TYPE_32), ["rep.gone"])
        w.put_desc(Desc(bad, PMType.PM_TYPE_32), ["rep.bad"])
        w.put_index(T0)
        for i in range(12):
            stamp = _at(i)
            insts = [0, 1] if i < 8 else [0, 1, 2]
            names = ["a%s", "b"] if i < 4 else ["a%s", "bee"] if i < 8 else ["a%s", "bee", "c"]
            if w.put_indom(stamp, indom, insts, names):
                w.put_index(stamp)
            if i == 6:
                w.put_mark(_at(i, -1000))
            doubles = {3: (nan, 1.0), 5: (neg_nan, -0.0), 9: (float("inf"), -float("inf"))}
            pair = doubles.get(i, (i / 7, -i * 1e300))
            vsets = [
                ValueSet.of_atoms(dbl, PMType.PM_TYPE_DOUBLE, [(0, pair[0]), (1, pair[1])]),
                ValueSet.of_atoms(u32, PMType.PM_TYPE_U32, [(n, 2**32 - 1 - n - i) for n in insts]),
                ValueSet.of_atoms(i32, PMType.PM_TYPE_32, [(PM_IN_NULL, -(2**31) + i)]),
                ValueSet.of_atoms(i64, PMType.PM_TYPE_64, [(n, -(2**63) + n * i) for n in insts]),
                ValueSet.of_atoms(u64, PMType.PM_TYPE_U64, [(PM_IN_NULL, 2**64 - 1 - i)]),
                ValueSet.of_atoms(flt, PMType.PM_TYPE_FLOAT, [(n, n + i / 3) for n in insts]),
                ValueSet.of_atoms(gone, PMType.PM_TYPE_32, []),
                ValueSet.of_error(bad, -12357),
            ]
            w.put_result(Result(stamp, tuple(vsets)))
        w.put_index(_at(11))


@pytest.fixture
def ours2(tmp_path, utc) -> str:
    base = str(tmp_path / "ours2")
    write_ours(base, 2)
    return base


@pytest.fixture
def ours3(tmp_path, utc) -> str:
    base = str(tmp_path / "ours3")
    write_ours(base, 3)
    return base


def dump(capsys, *args: str) -> tuple[str, str, int]:
    """Run our pmdumplog in this process: (stdout, stderr, exit status)."""
    status = main(list(args))
    out, err = capsys.readouterr()
    return out, err, status


# -- unit tests: no PCP needed ------------------------------------------------------------


def test_label_v2_and_v3(capsys, ours2, ours3):
    out, err, status = dump(capsys, "-L", ours2)
    assert (err, status) == ("", 0)
    assert out == (
        "Log Label (Log Format Version 2)\n"
        "Performance metrics from host box.example\n"
        "    commencing Tue Nov 14 22:13:20.123456 2023\n"
        "    ending     Tue Nov 14 22:13:25.123461 2023\n"
        "Archive timezone: AEST-10\n"
        "PID for pmlogger: 4242\n"
    )
    out, _, _ = dump(capsys, "-L", "-xxx", ours3)
    assert out == (
        "Log Label (Log Format Version 3)\n"
        "Performance metrics from host box.example\n"
        "    commencing Tue Nov 14 22:13:20.123456789 2023 1700000000\n"
        "    ending     Tue Nov 14 22:13:25.123461789 2023 1700000005\n"
        "Archive timezone: AEST-10\n"
        "Archive zoneinfo: :Australia/Brisbane\n"
        "PID for pmlogger: 4242\n"
    )


def test_timezones(capsys, ours2):
    out, _, _ = dump(capsys, "-l", "-z", ours2)
    assert out.startswith(
        'Note: timezone set to local timezone of host "box.example" from archive\n\n'
        "Log Label (Log Format Version 2)\n"
    )
    assert "    commencing Wed Nov 15 08:13:20.123456 2023\n" in out
    out, _, _ = dump(capsys, "-l", "-Z", "XYZ-5:30", ours2)
    assert out.startswith('Note: timezone set to "TZ=XYZ-5:30"\n\n')
    assert "    commencing Wed Nov 15 03:43:20.123456 2023\n" in out


def test_values_instances_names_and_marks(capsys, ours2):
    out, err, status = dump(capsys, "-s", ours2)
    assert (err, status) == ("", 0)
    assert out.startswith("\n")
    records = out[1:].split("\n\n")
    assert records[0] == (
        "[200 bytes]\n"
        "22:13:20.123456 5 metrics\n"
        "    245.1.1 (demo.load): value 0\n"
        '    245.1.2 (demo.colour or demo.alias.colour): inst [0 or "red"] value "c0.0"\n'
        "    245.1.3 (demo.bytes): value 18446744073709551615\n"
        '    245.1.4 (demo.events[7 or "bogus"]): 1 event record\n'
        "        --- event record [0] timestamp 22:13:20.123456 flags 0x1 (point) ---\n"
        '        245.1.5 (demo.param): value "fetch 0"\n'
        '    245.1.4 (demo.events[0 or "fungus"]): No event records\n'
        "    245.1.6 (demo.none): No values returned!"
    )
    assert "\n[20 bytes]\n22:13:24.123456  <mark>\n" in out
    assert (
        "22:13:23.123459 5 metrics\n"
        "    245.1.1 (demo.load): value 1\n"
        "    245.1.2 (demo.colour or demo.alias.colour):\n"
        '        inst [3 or "cyan"] value "c3.3"\n'
        '        inst [0 or "red"] value "c3.0"\n'
    ) in out
    assert records[-1].endswith("    245.1.6 (demo.none): Unknown metric name\n")


def test_event_records_v2_and_v3(capsys, ours2, ours3):
    out, _, _ = dump(capsys, "-xx", ours2, "demo.events")
    assert (
        '    245.1.4 (demo.events[7 or "bogus"]): 2 event records\n'
        "        --- event record [0] timestamp Tue Nov 14 22:13:22.123458 2023 (2.000002)"
        " flags 0x1 (point) ---\n"
        '        245.1.5 (demo.param): value "fetch 2"\n'
        "        --- event record [1] timestamp Tue Nov 14 22:13:12.123456 2023 (-8.000000) ---\n"
        "\t          No parameters\n"
    ) in out
    out, _, _ = dump(capsys, ours3, "demo.events")
    assert (
        "        --- event record [0] timestamp 22:13:22.123458789 flags 0x1 (point) ---\n" in out
    )


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("flags", [["-a"], ["-a", "-s", "-r"], ["-x"], ["-M"]])
def test_templated_records_read_as_the_careful_path_writes_them(
    capsys, monkeypatch, tmp_path, utc, version, flags
):
    """Records of a layout seen before are written through its template: the text is the
    record-by-record text, renamed instances, NaNs and "%" in names included."""
    from purepcp.tools.pmdumplog.values import RecordText

    base = str(tmp_path / "rep")
    write_repeating(base, version)
    fast = dump(capsys, *flags, base)
    made = []
    careful = RecordText.template
    monkeypatch.setattr(
        RecordText, "template", lambda self, r: made.append(careful(self, r)) or False
    )
    slow = dump(capsys, *flags, base)
    assert fast == slow
    assert fast[2] == 0 and "-nan" in fast[0] and "a%s" in fast[0] and '"bee"' in fast[0]
    assert made.count(False) == 0 and len(made) >= 3  # three instance epochs: three templates


def test_sizes_are_the_record_sizes(capsys, ours2, ours3):
    for base in (ours2, ours3):
        out, _, _ = dump(capsys, "-s", base)
        sizes = [int(line[1:].split()[0]) for line in out.splitlines() if line.startswith("[")]
        with Archive(base) as a:
            assert sizes == [rec.size for rec in a.records()]


def test_metric_names_pick_in_argument_order(capsys, ours2):
    out, err, status = dump(capsys, ours2, "demo.bytes", "no.such", "demo.load")
    assert (err, status) == ("pmdumplog: pmLookupName(no.such): Unknown metric name\n", 0)
    assert out.split("\n\n")[0] == (
        "\n22:13:20.123456 2 metrics\n"
        "    245.1.3 (demo.bytes): value 18446744073709551615\n"
        "    245.1.1 (demo.load): value 0"
    )
    assert "<mark>" not in out
    out, _, _ = dump(capsys, "-M", ours2, "demo.alias")  # a non-leaf: every name below it
    assert "\n22:13:24.123456  <mark>\n" in out and "demo.load" not in out
    assert out.count(" 1 metric\n") == 6
    out, err, status = dump(capsys, ours2, "nothing.here")
    assert (out, status) == ("", 1)
    assert err == (
        "pmdumplog: pmLookupName(nothing.here): Unknown metric name\n"
        "No metric names can be translated, dump abandoned\n"
    )


def test_reverse_and_time_window(capsys, ours2):
    out, _, _ = dump(capsys, "-r", ours2, "demo.load")
    assert out.startswith(
        "\nLog finished at Tue Nov 14 22:13:25 2023 - dump in reverse order\n\n"
        "22:13:25.123461 1 metric\n"
        "    245.1.1 (demo.load): value 1.666666666666667\n"
    )
    stamps = [line.split()[0] for line in out.splitlines() if line.startswith("22:")]
    assert stamps == sorted(stamps, reverse=True) and len(stamps) == 6
    out, _, _ = dump(capsys, "-S", "+1.5", "-T", "+4", ours2, "demo.load")
    stamps = [line.split()[0] for line in out.splitlines() if line.startswith("22:")]
    # -T +4 counts from the start -S gives
    assert stamps == ["22:13:22.123458", "22:13:23.123459", "22:13:24.123460", "22:13:25.123461"]
    out, err, status = dump(capsys, "-S", "junk", ours2)
    assert (out, status) == ("", 1)
    assert err == "pmdumplog: invalid time window.\njunk\n^ -- unexpected value\n\n"


def test_descriptors_in_hash_order(capsys, ours2):
    out, _, _ = dump(capsys, "-d", ours2)
    pmids = [line.split()[1] for line in out.splitlines() if line.startswith("PMID:")]
    # six PMIDs fit one hash chain, newest first
    assert pmids == ["245.1.6", "245.1.5", "245.1.4", "245.1.3", "245.1.2", "245.1.1"]
    assert (
        "PMID: 245.1.3 (demo.bytes)\n"
        "    Data Type: 64-bit unsigned int  InDom: PM_INDOM_NULL 0xffffffff\n"
        "    Semantics: counter  Units: Kbyte\n"
        "PMID: 245.1.2 (demo.colour or demo.alias.colour)\n"
    ) in out


def test_label_sets_by_time_and_without_repeats(capsys, ours2):
    out, _, _ = dump(capsys, "-e", ours2)
    assert out == (
        "\nMetric Labels in the Log ...\n"
        "22:13:20.123456\n"
        '    Context labels (33 bytes): {"hostname":"box","agent":"demo"}\n'
        "        [0] name(19,5) : value(26,6) [context]\n"
        "        [1] name(2,8) : value(12,5) [context]\n"
        '    Domain 245 labels (18 bytes): {"role":"testing"}\n'
        "        [0] name(2,4) : value(8,9) [domain]\n"
        '    InDom 245.1[0] labels (11 bytes): {"shade":0}\n'
        "        [0] name(2,5) : value(9,1) [instances]\n"
        '    InDom 245.1[1] labels (11 bytes): {"shade":1}\n'
        "        [0] name(2,5) : value(9,1) [instances]\n"
        '    InDom 245.1[2] labels (11 bytes): {"shade":2}\n'
        "        [0] name(2,5) : value(9,1) [instances]\n"
        "22:13:23.123459\n"
        '    InDom 245.1[2] labels (15 bytes): {"shade":"new"}\n'
        "        [0] name(2,5) : value(9,5) [instances]\n"
    )


def test_help_text_by_identifier(capsys, ours2):
    out, _, _ = dump(capsys, "-h", ours2)
    assert out == (
        "\nMetric Help Text in the Log ...\n"
        "PMID: 245.1.1 [the load]\n"
        "PMID: 245.1.1\nThe load,\nover two lines.\n"
        "PMID: 245.1.2 [colours]\n"
        "InDom: 245.1\nThree colours, then four.\n"
    )


def test_instance_domains(capsys, ours2):
    out, _, _ = dump(capsys, "-I", "-i", ours2)
    assert out == (
        "\nInstance Domains on-disk ...\n"
        "22:13:20.123456 InDom: 245.2 2 instances\n"
        '   0 or "fungus"\n'
        '   7 or "bogus"\n'
        "22:13:20.123456 InDom: 245.1 3 instances\n"
        '   0 or "red"\n   1 or "green"\n   2 or "blue"\n'
        "22:13:23.123459 InDom: 245.1 4 instances\n"
        '   3 or "cyan"\n   0 or "red"\n   1 or "green"\n   2 or "blue"\n'
        "22:13:25.123461 InDom: 245.1 4 instances\n"
        '   3 or "cyan"\n   1 or "green"\n   2 or "blue"\n   4 or "white"\n'
        "\nInstance Domains in the Log ...\n"
        "InDom: 245.1\n"
        "22:13:20.123456 3 instances\n"
        '   0 or "red"\n   1 or "green"\n   2 or "blue"\n'
        "22:13:23.123459 4 instances\n"
        '   0 or "red"\n   1 or "green"\n   2 or "blue"\n   3 or "cyan"\n'
        "22:13:25.123461 4 instances\n"
        '   1 or "green"\n   2 or "blue"\n   3 or "cyan"\n   4 or "white"\n'
        "InDom: 245.2\n"
        "22:13:20.123456 2 instances\n"
        '   0 or "fungus"\n   7 or "bogus"\n'
    )


def test_v3_delta_records(capsys, ours3):
    out, _, _ = dump(capsys, "-I", "-i", ours3)
    assert (
        "22:13:25.123461789 InDom: 245.1 delta 2 instances\n"
        "   del 0\n"
        '   add 4 or "white"\n'
        "\nInstance Domains in the Log ...\n"
    ) in out
    assert (
        "22:13:25.123461789 4 instances\n"
        '   1 or "green"\n   2 or "blue"\n   3 or "cyan"\n   4 or "white"\n'
        "InDom: 245.2\n"
    ) in out
    out, _, _ = dump(capsys, ours3, "demo.colour")  # red is gone by the last record
    assert out.endswith('"c5.3"\n        inst [0 or ???] value "c5.0"\n')


def test_deltas_merge_in_sorted_order():
    full = LogInDom(T0, False, [1, 2, 3], ["one", "two", "three"])
    delta = LogInDom(_at(1), True, [0, 1, 3, 5], ["zero", None, None, "five"])
    later = LogInDom(_at(2), True, [4], ["four"])
    assert merge_delta(full, delta) == ([0, 2, 5], ["zero", "two", "five"])
    chain = [later, delta, full]  # newest first, as libpcp keeps them
    undelta(chain)
    assert [(c.delta, c.insts) for c in chain] == [
        (False, [0, 2, 4, 5]),
        (False, [0, 2, 5]),
        (False, [1, 2, 3]),
    ]


def test_temporal_index(capsys, ours2, ours3):
    out, _, _ = dump(capsys, "-t", ours2)
    assert out == (
        "\nTemporal Index\n"
        "\t\tLog Vol    end(meta)     end(log)\n"
        "22:13:20.123456\t      0          890          132\n"
        "22:13:20.123456\t      0         1014          132\n"
        "22:13:23.123459\t      0         1094          808\n"
        "22:13:25.123461\t      0         1223         1508\n"
    )
    out, _, _ = dump(capsys, "-t", "-xx", ours3)
    assert out.startswith("\nTemporal Index\n\t\t\t\t\t\t\tLog Vol    end(meta)     end(log)\n")
    assert "Tue Nov 14 22:13:23.123459789 2023 (3.000003000)\t      0         1794" in out


def test_temporal_index_integrity_checks(capsys, ours2):
    """An entry that goes back in time, to a later volume that is missing, past both ends."""
    bogus = IndexEntry(Timestamp(T0.sec - 60, 0), 1, 99999, 88888)
    with open(ours2 + ".index", "ab") as f:
        f.write(encode_index(bogus, 2))
        f.write(encode_index(IndexEntry(T0, 0, 10, 10), 2))
    out, _, _ = dump(capsys, "-t", ours2)
    assert out.endswith(
        "22:12:20.000000\t      1        99999        88888\n"
        "\t\tWarning: file missing for log volume 1\n"
        "\t\tError: offset to meta file past end of file (1305)\n"
        "\t\tError: timestamp went backwards in time 22:13:25.123461 -> 22:12:20.000000\n"
        "22:13:20.123456\t      0           10           10\n"
        "\t\tError: volume number decreased\n"
    )


def test_raw_dump_of_any_file():
    record = struct.pack(">i", 16) + bytes(range(8)) + struct.pack(">i", 16)
    assert raw_dump(record) == "Dump ... record len: 16 @ offset: 0\n 00010203 04050607\n"
    body = bytes(range(40))
    long = struct.pack(">i", 48) + body + struct.pack(">i", 48)
    assert raw_dump(long).splitlines()[1:] == [
        " 00010203 04050607 08090a0b 0c0d0e0f 10111213 14151617 18191a1b 1c1d1e1f",
        " 20212223 24252627",
    ]
    assert raw_dump(long[:22]) == (
        "Dump ... record len: 48 @ offset: 0\n"
        " 00010203 04050607 08090a0b 0c0d0e0f 1011Unexpected EOF\n\nUnexpected EOF\n"
    )
    botch = struct.pack(">i", 12) + b"abcd" + struct.pack(">i", 13)
    assert (
        raw_dump(botch)
        == "Dump ... record len: 12 @ offset: 0\n 61626364\nTrailer botch: 13 != 12\n"
    )


def test_raw_dump_command(capsys, ours2):
    out, err, status = dump(capsys, "-v", ours2 + ".index")
    assert (err, status) == ("", 0)
    assert out.startswith(
        f'Raw dump of physical archive file "{ours2}.index" ...\n'
        "Dump ... record len: 132 @ offset: 0\n 50052602 "
    )
    out, err, status = dump(capsys, "-v", ours2 + ".nothing")
    assert (out, status) == ("", 1)
    assert err == f'pmdumplog: Cannot open "{ours2}.nothing": No such file or directory\n'


def test_truncated_volume_dumps_up_to_the_damage(capsys, ours2):
    whole, _, _ = dump(capsys, ours2)
    size = os.path.getsize(ours2 + ".0")
    with open(ours2 + ".0", "r+b") as f:
        f.truncate(size - 10)
    out, err, status = dump(capsys, ours2)
    assert status == 1 and whole.startswith(out) and out.count(" metrics\n") == 5
    assert "<mark>" in out
    assert err == (
        "pmdumplog: pmFetch: Corrupted record in a PCP archive log: "
        f"{ours2}.0: offset 1288: truncated record: its length is 220 bytes, 210 are left\n"
    )
    out, err, status = dump(capsys, "-l", ours2)  # the end is the last good record
    assert (err, status) == ("", 0)
    assert out.endswith("    ending     Tue Nov 14 22:13:24.123460 2023\n")
    out, err, status = dump(capsys, "-r", ours2, "demo.load")  # backwards: no damage met
    assert (err, status) == ("", 0)
    assert out.count(" 1 metric\n") == 5


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("missing", "No such file or directory"),
        ("empty meta", "Empty archive log file: {base}.meta: offset 0: empty file"),
        ("no volume", "Missing PCP archive log file"),
        ("label only", "Empty archive log file"),  # (QA 195: PCP's line, nothing to add)
        (
            "bad label",
            "Illegal label record at start of a PCP archive log file: {base}.0: offset 0: "
            "bad magic number 0x78787878",
        ),
        (
            "corrupt meta",
            "Corrupted record in a PCP archive log: {base}.meta: offset 1223: "
            "TYPE_INDOM_V2 record of 82 bytes, 75 left in the file",
        ),
    ],
)
def test_archives_that_will_not_open(capsys, ours2, damage, message):
    """PCP's words, then where the damage is (file and offset) when there is some."""
    base = ours2
    volume = Path(ours2 + ".0")
    if damage == "missing":
        base = ours2 + "-not"
    elif damage == "empty meta":
        Path(ours2 + ".meta").write_bytes(b"")
    elif damage == "no volume":
        volume.unlink()
    elif damage == "label only":
        volume.write_bytes(volume.read_bytes()[:132])
    elif damage == "bad label":
        volume.write_bytes(b"\0\0\0\x84" + b"x" * 200)
    else:
        with open(ours2 + ".meta", "r+b") as f:
            f.truncate(os.path.getsize(ours2 + ".meta") - 7)
    out, err, status = dump(capsys, base)
    message = message.format(base=base)
    assert (out, err, status) == ("", f'pmdumplog: Cannot open archive "{base}": {message}\n', 1)


def test_a_negative_instance_id_is_refused_as_libpcp_does(capsys, tmp_path, utc):
    base = str(tmp_path / "neg")
    write_odd(base, 2, negative=True)
    message = (
        f'pmdumplog: Cannot open archive "{base}": Corrupted record in a PCP archive log: '
        f"{base}.meta: offset 861: TYPE_INDOM_V2 record: "
        "instance 1 has a negative identifier (-3)\n"
    )
    assert dump(capsys, base) == ("", message, 1)
    write_odd(str(tmp_path / "fine"), 2)
    out, err, status = dump(capsys, "-i", str(tmp_path / "fine"))
    assert (err, status) == ("", 0)
    assert out == (
        "\nInstance Domains in the Log ...\nInDom: 40.3\n"
        '22:13:20.123456 3 instances\n   2 or "two"\n   3 or "three"\n   5 or "five"\n'
        '22:13:20.123456 2 instances\n   2 or "two"\n   5 or "five"\n'
    )


def test_usage_and_option_errors(capsys, ours2):
    out, err, status = dump(capsys, "-?")
    assert (out, status) == ("", 1)
    assert err.startswith("Usage: pmdumplog [options] [archive [metricname ...]]\n\nOptions:\n")
    assert "  -n FILE, --namespace=FILE\n                        use an alternative PMNS\n" in err
    assert err.endswith("  -?, --help            show this usage message and exit\n")
    usage = err
    out, err, status = dump(capsys, "-Q", "-V", ours2)
    assert (out, status) == ("", 1)
    assert err == "pmdumplog: invalid option -- 'Q'\npmdumplog: invalid option -- 'V'\n" + usage
    _, err, _ = dump(capsys, "--la", ours2)
    assert err.startswith(
        "pmdumplog: option '--la' is ambiguous; possibilities: '--labelsets' '--label'\n"
    )
    _, err, _ = dump(capsys, "-z", "-Z", "UTC", ours2)
    assert err == "pmdumplog: at most one of -Z and -z allowed\n" + usage
    # our version, in the words every one of our commands uses (not a claim to be PCP's)
    assert dump(capsys, "--version") == ("", version_line("pmdumplog") + "\n", 0)
    assert dump(capsys, "-v", "x", ours2) == ("", usage, 1)
    assert dump(capsys, "a,b") == ("", "pmdumplog: Multiple archives are not supported\n", 1)
    assert dump(capsys, "-D", "log,pdu", "-l", ours2)[2] == 0
    _, err, _ = dump(capsys, "-D", "nonsense", ours2)
    assert err == "pmdumplog: unrecognized debug options specification (nonsense)\n" + usage


def test_flags_select_sections(capsys, ours2):
    everything, _, _ = dump(capsys, "-a", ours2)
    titles = [line for line in everything.splitlines() if line.endswith(("...", "Index"))]
    assert titles == [
        "Descriptions for Metrics in the Log ...",
        "Instance Domains in the Log ...",
        "Temporal Index",
    ]
    assert everything.startswith("Log Label") and "\n[200 bytes]\n" in everything
    assert dump(capsys, "-l", ours2)[0].count("\n") == 4  # no values without -m
    assert "<mark>" in dump(capsys, "-l", "-m", ours2)[0]


def test_dotted_base_names_as_pmlogger_makes_them(capsys, tmp_path, utc):
    """ "20231114.00.10" is a base name (pmlogger's daily naming), not volume 10 of another."""
    base = str(tmp_path / "20231114.00.10")
    write_ours(base, 2)
    for name in (base, base + ".0", base + ".meta"):
        out, err, status = dump(capsys, "-l", name)
        assert (err, status) == ("", 0) and "box.example" in out
    for name in (base + ".5", str(tmp_path / "20231114.00")):
        out, err, status = dump(capsys, "-l", name)
        assert (out, status) == ("", 1)
        assert err == f'pmdumplog: Cannot open archive "{name}": No such file or directory\n'


def test_a_file_named_is_a_volume_of_some_archive(capsys, tmp_path):
    """libpcp takes an existing file NAME.N as volume N of archive NAME: with no .meta
    beside it that is a missing file of an archive, not a missing archive (PCP's QA has
    bozo.client_v2.meta.bad.1 so)."""
    lone = tmp_path / "bozo.meta.bad.1"
    lone.write_bytes(b"junk")
    out, err, status = dump(capsys, str(lone))
    assert (out, status) == ("", 1)
    assert err == f'pmdumplog: Cannot open archive "{lone}": Missing PCP archive log file\n'


# -- interop: PCP's pmdumplog and ours on the same archives ----------------------------------

PCP_BIN = Path("/usr/lib/pcp/bin")
PMDAS = Path("/var/lib/pcp/pmdas")
LOGGED = """
log mandatory on every 100 msec {
    sampledso.colour sampledso.string.hullo sampledso.double.hundred sampledso.float.ten
    sampledso.longlong.hundred sampledso.ulonglong.million sampledso.negative.instant.m_32
    sampledso.bin sampledso.mirage sampledso.aggregate.hullo sampledso.bad.novalues
    sampledso.dupnames.two.seconds sampledso.event.records sampledso.event.highres_records
    sampledso.event.no_indom_records sampledso.kbyte_ctr
}
"""
PMI_SCRIPT = r"""
import sys
from pcp import pmi
import cpmapi as c

base, version = sys.argv[1], int(sys.argv[2])
log = pmi.pmiLogImport(base)
if version == 3:
    log.pmiSetVersion(3)
log.pmiSetHostname("importer.example")
log.pmiSetTimezone("NZST-12")
disks = log.pmiInDom(251, 7)
log.pmiAddMetric("imp.io", log.pmiID(251, 0, 1), c.PM_TYPE_U64, disks, c.PM_SEM_COUNTER,
                 log.pmiUnits(1, 0, 0, c.PM_SPACE_KBYTE, 0, 0))
log.pmiAddMetric("imp.temp", log.pmiID(251, 0, 2), c.PM_TYPE_FLOAT, c.PM_INDOM_NULL,
                 c.PM_SEM_INSTANT, log.pmiUnits(0, 0, 0, 0, 0, 0))
log.pmiAddMetric("imp.state", log.pmiID(251, 2, 3), c.PM_TYPE_STRING, c.PM_INDOM_NULL,
                 c.PM_SEM_DISCRETE, log.pmiUnits(0, 0, 0, 0, 0, 0))
log.pmiAddMetric("imp.delta", log.pmiID(251, 2, 4), c.PM_TYPE_32, disks, c.PM_SEM_INSTANT,
                 log.pmiUnits(0, 1, 0, 0, c.PM_TIME_USEC, 0))
log.pmiAddInstance(disks, "sda", 0)
log.pmiAddInstance(disks, "nvme0n1 main", 5)
log.pmiPutText(c.PM_TEXT_PMID, c.PM_TEXT_ONELINE, log.pmiID(251, 0, 2), "a temperature")
log.pmiPutText(c.PM_TEXT_INDOM, c.PM_TEXT_HELP, disks, "The disks,\nin order.")
log.pmiPutLabel(c.PM_LABEL_DOMAIN, 251, c.PM_IN_NULL, "source", "import")
log.pmiPutLabel(c.PM_LABEL_INSTANCES, disks, 5, "bus", "pcie")
t0 = 1699999000
for i in range(12):
    log.pmiPutValue("imp.io", "sda", str(10 ** 15 * i))
    log.pmiPutValue("imp.io", "nvme0n1 main", str(7 * i))
    if i >= 6:
        log.pmiPutValue("imp.io", "sdb", str(i))
    log.pmiPutValue("imp.temp", "", str(20 + i / 7))
    if i % 4 == 0:
        log.pmiPutValue("imp.state", "", "ok %d" % i)
    log.pmiPutValue("imp.delta", "sda", str(-i))
    if i == 5:
        log.pmiAddInstance(disks, "sdb", 9)
    if version == 3:
        log.pmiHighResWrite(t0 + 3 * i, 987654321 * (i % 2))
    else:
        log.pmiWrite(t0 + 3 * i, 500000 * (i % 2))
    if i == 8:
        log.pmiPutMark()
log.pmiEnd()
"""
TZ = "America/New_York"  # neither the archives' zone nor UTC


def _pcp_env(tmp: Path) -> dict[str, str]:
    """A local context with PCP's sample agent loaded as "sampledso" (domain 30), its help
    text compiled for the names it has there, and a namespace of pmcd and sampledso.
    """
    for need in (PCP_BIN / "pmcpp", PCP_BIN / "newhelp", PMDAS / "sample" / "pmda_sample.so",
                 PMDAS / "pmcd" / "pmda_pmcd.so", Path("/var/lib/pcp/pmns/root_pmcd")):  # fmt: skip
        if not need.exists():
            pytest.skip(f"reference PCP 6 is not fully installed: no {need}")
    pmdas = tmp / "pmdas"
    (pmdas / "sample").mkdir(parents=True)
    (pmdas / "pmcd").symlink_to(PMDAS / "pmcd")
    conf = tmp / "pmcd.conf"
    conf.write_text(
        f"pmcd\t2\tdso\tpmcd_init\t{PMDAS / 'pmcd' / 'pmda_pmcd.so'}\n"
        f"sampledso\t30\tdso\tsample_init\t{PMDAS / 'sample' / 'pmda_sample.so'}\n"
    )
    lines = Path("/var/lib/pcp/pmns/root_pmcd").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("pmcd {"))
    pmcd_part = tmp / "pmcd.part"
    pmcd_part.write_text(
        "\n".join(line.replace("PMCD", "2") for line in lines[start:] if not line.startswith("#"))
        + "\n"
    )

    def cpp(*args: str) -> str:
        return subprocess.run(
            [str(PCP_BIN / "pmcpp"), "-P", *args], capture_output=True, text=True, check=True
        ).stdout

    root = tmp / "root"
    root.write_text(
        "root {\n    pmcd\n    sampledso\n}\n"
        + cpp(str(pmcd_part))
        + cpp("-D", "SAMPLE=30", "-D", "sample=sampledso", str(PMDAS / "sample" / "pmns"))
    )
    helpsrc = pmdas / "sample" / "dsohelp.src"
    helpsrc.write_text(
        "".join(
            line.replace("@ SAMPLE.", "@ 30.", 1).replace("sample", "sampledso", 1) + "\n"
            for line in (PMDAS / "sample" / "help").read_text().splitlines()
        )
    )
    subprocess.run(
        [str(PCP_BIN / "newhelp"), "-n", str(root), "-v", "2", "-o",
         str(pmdas / "sample" / "dsohelp"), str(helpsrc)],
        check=True, capture_output=True,
    )  # fmt: skip
    return dict(
        os.environ,
        PCP_PMCDCONF_PATH=str(conf),
        PMNS_DEFAULT=str(root),
        PCP_PMDAS_DIR=str(pmdas),
        TZ="UTC",
        PCP_DERIVED_CONFIG="",
    )


def _pmi_works() -> bool:
    return (
        os.path.exists("/usr/bin/python3")
        and not subprocess.run(
            ["/usr/bin/python3", "-c", "from pcp import pmi"], capture_output=True
        ).returncode
    )


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> dict[str, str]:
    """Archives from pmlogger (v2, v3), PCP's pmi (v2, v3) and ours (v2, v3), by name; "dir"
    is their folder.  The pmi ones are left out when PCP's python module is missing.
    """
    require_reference("pmdumplog", "pmlogger")
    tmp = tmp_path_factory.mktemp("pmdumplog")
    env = _pcp_env(tmp / "pcp")
    cfg = tmp / "logged.config"
    cfg.write_text(LOGGED)
    found = {"dir": str(tmp)}
    for name, extra in (("logger2", []), ("logger3", ["-V", "3"])):
        subprocess.run(
            ["pmlogger", "-o", *extra, "-c", str(cfg), "-s", "8", "-l", str(tmp / f"{name}.log"),
             name],
            cwd=tmp, env=env, check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        found[name] = name
    for version in (2, 3):
        write_ours(str(tmp / f"ours{version}"), version)
        write_odd(str(tmp / f"odd{version}"), version)
        write_repeating(str(tmp / f"rep{version}"), version)
        for name in ("ours", "odd", "rep"):
            found[f"{name}{version}"] = f"{name}{version}"
        if _pmi_works():
            subprocess.run(
                ["/usr/bin/python3", "-c", PMI_SCRIPT, f"pmi{version}", str(version)],
                cwd=tmp, env=env, check=True, capture_output=True, timeout=120,
            )  # fmt: skip
            found[f"pmi{version}"] = f"pmi{version}"
    return found


def source(archives: dict[str, str], name: str) -> str:
    """The archive NAME (skipping the test when it could not be made here)."""
    if name not in archives:
        pytest.skip(f"no {name} archive: PCP's python pmi module is not installed")
    return archives[name]


Run = subprocess.CompletedProcess[bytes]


def _run(cmd: list[str], cwd: str, tz: str) -> Run:
    env = dict(os.environ, TZ=tz, PYTHONPATH=str(ROOT), PCP_DERIVED_CONFIG="")
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, timeout=120)


def same(archives: dict[str, str], *args: str, tz: str = TZ) -> bytes:
    """Run both pmdumplogs in the archives' folder; their stdout, stderr and status agree."""
    cwd = archives["dir"]
    theirs = _run(["pmdumplog", *args], cwd, tz)
    ours = _run([sys.executable, "-m", "purepcp.tools.pmdumplog", *args], cwd, tz)
    assert ours.stdout.decode(errors="replace") == theirs.stdout.decode(errors="replace")
    assert (ours.stdout, ours.stderr, ours.returncode) == (
        theirs.stdout,
        theirs.stderr,
        theirs.returncode,
    )
    return theirs.stdout


FLAGS = ["", "-a", "-d", "-e", "-h", "-I", "-i", "-L", "-l", "-M", "-m", "-r", "-s", "-t",
         "-x", "-xx", "-xxx", "-dilm", "-e -h", "-t -xx", "-a -e -h -I", "-r -s -xx", "-z",
         "-Z EST5EDT", "-L -xxx"]  # fmt: skip
SOURCES = ["logger2", "logger3", "pmi2", "pmi3", "ours2", "ours3", "odd2", "odd3", "rep2", "rep3"]


@pytest.mark.interop
@pytest.mark.slow  # a sweep: 25 flag sets on 10 kinds of archive, each beside PCP's
@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("flags", FLAGS)
def test_every_flag_on_every_kind_of_archive(archives, kind, flags):
    assert same(archives, *flags.split(), source(archives, kind))


@pytest.mark.interop
def test_the_pmlogger_archives_hold_what_the_flags_show(archives):
    out = same(archives, "-a", "-e", "-h", "-I", source(archives, "logger3"))
    for text in (b"Log Format Version 3", b"sampledso.event.records", b"event record",
                 b"Metric Help Text", b"Context labels", b"InDom: 30.3", b"dupnames"):  # fmt: skip
        assert text in out
    out = same(archives, "-a", "-e", "-h", source(archives, "pmi3"))
    for text in (b"Log Format Version 3", b"  <mark>", b"Domain 251 labels", b"[a temperature]"):
        assert text in out


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    [
        ["logger2", "sampledso.colour"],
        ["logger2", "sampledso.event", "sampledso.bin"],
        ["logger3", "sampledso.dupnames", "no.such.metric"],
        ["logger2", "no.such.metric"],
        ["-M", "pmi2", "imp.temp", "imp.io"],
        ["-r", "-M", "pmi3", "imp.state"],
        ["-s", "ours2", "demo.colour", "demo.events"],
        ["-S", "+0.25", "-T", "+0.5", "logger2"],
        ["-r", "-S", "+0.25", "-T", "+0.5", "logger3", "sampledso.mirage"],
        ["-S", "+9", "-T", "-6", "pmi2"],
        ["-S", "@22:57", "-T", "@22:58", "-z", "pmi3"],
        ["-S", "rubbish", "pmi2"],
        ["-T", "+1000", "-r", "ours3"],
    ],
)
def test_metric_names_and_time_windows(archives, args):
    names = set(SOURCES)
    same(archives, *[source(archives, a) if a in names else a for a in args])


@pytest.mark.interop
@pytest.mark.parametrize("tz", ["UTC", "Australia/Adelaide", "Asia/Kolkata"])
def test_local_zones(archives, tz):
    for name in ("logger3", "pmi2", "ours3"):
        same(archives, "-a", "-e", "-xx", source(archives, name), tz=tz)


@pytest.mark.interop
def test_alternative_namespace(archives, tmp_path):
    pmns = tmp_path / "alt.pmns"
    pmns.write_text(
        "root {\n    imp\n    other\n}\nimp {\n    io 251:0:1\n    temp 251:0:2\n}\n"
        "other {\n    temperature 251:0:2\n    sampledso_bin 30:0:6\n}\n"
    )
    same(archives, "-n", str(pmns), "-d", "-m", source(archives, "pmi2"))
    same(archives, "-n", str(pmns), source(archives, "pmi2"), "other")
    same(archives, "-n", str(pmns), source(archives, "logger2"), "other.sampledso_bin")
    same(archives, "-n", str(tmp_path / "nothing"), source(archives, "pmi2"))


@pytest.mark.interop
@pytest.mark.parametrize(
    "args",
    # (--version is ours, not PCP's words: test_usage_and_option_errors checks it)
    [[], ["-?"], ["--help"], ["-Q"], ["-V"], ["--la", "x"], ["--metrics=1", "x"],
     ["--namespace"], ["-v"], ["-z", "-Z", "UTC", "x"], ["-D", "nonsense", "x"], ["a,b"],
     ["no-such-archive"], ["-l", "."], ["--foo=bar"]],
)  # fmt: skip
def test_usage_and_command_line_errors(archives, args):
    same(archives, *args)


@pytest.mark.interop
@pytest.mark.parametrize("suffix", [".0", ".meta", ".index"])
def test_raw_dumps(archives, suffix):
    for name in ("logger2", "logger3", "ours3"):
        same(archives, "-v", source(archives, name) + suffix)


@pytest.fixture
def damaged(archives, tmp_path) -> Path:
    """A copy of the v2 pmlogger archive to damage."""
    for suffix in (".0", ".meta", ".index"):
        shutil.copy(Path(archives["dir"]) / f"logger2{suffix}", tmp_path / f"bad{suffix}")
    return tmp_path


def _pair(folder: Path, *args: str) -> tuple[Run, Run]:
    theirs = _run(["pmdumplog", *args], str(folder), TZ)
    ours = _run([sys.executable, "-m", "purepcp.tools.pmdumplog", *args], str(folder), TZ)
    return theirs, ours


@pytest.mark.interop
def test_truncated_volume_against_pcp(damaged):
    vol = damaged / "bad.0"
    size = vol.stat().st_size
    with open(vol, "r+b") as f:
        f.truncate(size - 10)
    with Archive(str(damaged / "bad")) as a:
        ends = []
        with pytest.raises(ArchiveError):
            ends.extend(rec.offset + rec.size for rec in a.records())
    damage_at = ends[-1]
    for flags in ([], ["-a"], ["-s", "-x"]):
        theirs, ours = _pair(damaged, *flags, "bad")
        assert theirs.stderr == b"pmdumplog: pmFetch: Corrupted record in a PCP archive log\n"
        line = _ends_alike(theirs, ours)
        assert f"bad.0: offset {damage_at}: truncated record" in line
    for flags in (["-l"], ["-r"], ["-r", "-t"], ["-v", "bad.0"]):  # no damage met: identical
        theirs, ours = _pair(damaged, *flags, *([] if "-v" in flags else ["bad"]))
        assert (ours.stdout, ours.stderr, ours.returncode) == (
            theirs.stdout,
            theirs.stderr,
            theirs.returncode,
        )


@pytest.mark.interop
def test_negative_instance_against_pcp(archives, tmp_path):
    write_odd(str(tmp_path / "neg"), 3, negative=True)
    line = _ends_alike(*_pair(tmp_path, "neg"))  # PCP's words, then where
    assert "neg.meta: offset " in line and "negative identifier" in line


@pytest.mark.interop
@pytest.mark.parametrize(
    "damage", ["truncated meta", "empty meta", "no volume", "no index", "label only", "bad label"]
)
def test_broken_archives_against_pcp(damaged, damage):
    meta, vol = damaged / "bad.meta", damaged / "bad.0"
    if damage == "truncated meta":
        with open(meta, "r+b") as f:
            f.truncate(meta.stat().st_size - 7)
    elif damage == "empty meta":
        meta.write_bytes(b"")
    elif damage == "no volume":
        vol.unlink()
    elif damage == "no index":
        (damaged / "bad.index").unlink()
    elif damage == "label only":
        vol.write_bytes(vol.read_bytes()[:132])
    else:
        vol.write_bytes(b"\0\0\0\x84" + vol.read_bytes()[4:])
    for flags in ([], ["-l", "-t"], ["-a"]):
        theirs, ours = _pair(damaged, *flags, "bad")
        damage_told = damage not in ("no volume", "label only")  # (those: PCP's line alone)
        if theirs.returncode and "Cannot open" in theirs.stderr.decode() and damage_told:
            _ends_alike(theirs, ours)  # PCP's words, then the file and offset of the damage
            continue
        assert (ours.stdout, ours.stderr, ours.returncode) == (
            theirs.stdout,
            theirs.stderr,
            theirs.returncode,
        )


def _ends_alike(
    theirs: subprocess.CompletedProcess[bytes], ours: subprocess.CompletedProcess[bytes]
):
    """Same output and status; our one error line is PCP's with the file and offset added."""
    assert ours.stdout == theirs.stdout and ours.returncode == theirs.returncode == 1
    line = ours.stderr.decode()
    assert line.count("\n") == 1 and "Traceback" not in line
    assert line.startswith(theirs.stderr.decode().rstrip("\n") + ": ")
    return line


@pytest.mark.interop
@pytest.mark.parametrize("part", ["length", "trailer", "numpmid", "numval"])
def test_corrupt_record_against_pcp(damaged, part):
    with Archive(str(damaged / "bad")) as a:
        rec = list(a.records())[4]
    data = bytearray((damaged / "bad.0").read_bytes())
    at, size = rec.offset, rec.size
    word = {"length": at, "trailer": at + size - 4, "numpmid": at + 12, "numval": at + 20}[part]
    data[word : word + 4] = struct.pack(
        ">i", {"length": 12345, "trailer": size + 4}.get(part, 5000)
    )
    (damaged / "bad.0").write_bytes(bytes(data))
    for flags in ([], ["-r"], ["-s", "-xx"]):
        line = _ends_alike(*_pair(damaged, *flags, "bad"))
        assert "bad.0: offset " in line
    theirs, ours = _pair(damaged, "-l", "-t", "bad")
    assert (ours.stdout, ours.stderr, ours.returncode) == (
        theirs.stdout,
        theirs.stderr,
        theirs.returncode,
    )


@pytest.mark.interop
def test_damaged_index_against_pcp(damaged):
    """Entries back in time, for a missing volume, past the files' ends, before the epoch."""
    with Archive(str(damaged / "bad")) as a:
        start = a.label.start
    with open(damaged / "bad.index", "ab") as f:
        for entry in (
            IndexEntry(Timestamp(start.sec - 60, 0), 1, 99999, 88888),
            IndexEntry(start, 0, 10, 10),
            IndexEntry(Timestamp(-5, 1000), 0, 5, 5),
        ):
            f.write(encode_index(entry, 2))
    for flags in (["-t"], ["-t", "-xx"], [], ["-r"], ["-l"], ["-S", "+0.3"]):
        theirs, ours = _pair(damaged, *flags, "bad")
        assert (ours.stdout, ours.stderr, ours.returncode) == (
            theirs.stdout,
            theirs.stderr,
            theirs.returncode,
        )
