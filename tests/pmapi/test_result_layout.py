"""Cached result layouts: decoding and encoding through a layout gives exactly what the
careful path gives, on real captures and on random results; layouts are learned only
when they recur and refused when anything but sender, timestamp and values differs."""

from __future__ import annotations

import re
import struct
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.pdu.codec import decode, encode
from purepcp.pmapi.pdu.constants import PDUType
from purepcp.pmapi.pdu.framer import split_stream
from purepcp.pmapi.pdu.records import HighResResultPDU, ResultPDU
from purepcp.pmapi.pdu.result import decode_result, decode_value_sets, encode_result
from purepcp.pmapi.pdu.result_layout import (
    HIGHRES_PREAMBLE,
    LAYOUTS,
    RESULT_PREAMBLE,
    ColumnValueSets,
    LayoutCache,
    ResultLayout,
    shape_of,
)
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from tests.support.examples import examples
from tests.support.strategies import results

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pdus"
RESULT_FRAMES = [
    f
    for s in sorted(FIXTURES.glob("*.bin"))
    for f in split_stream(s.read_bytes())
    if int.from_bytes(f[4:8], "big") in (PDUType.PDU_RESULT, PDUType.PDU_HIGHRES_RESULT)
]


def careful(frame: bytes) -> Result:
    """The result decoded without layouts."""
    highres = int.from_bytes(frame[4:8], "big") == PDUType.PDU_HIGHRES_RESULT
    start = HIGHRES_PREAMBLE if highres else RESULT_PREAMBLE
    numpmid = int.from_bytes(frame[12:16] if highres else frame[20:24], "big", signed=True)
    LAYOUTS.clear()
    stamp = decode_result(frame, highres).timestamp
    return Result(stamp, decode_value_sets(frame, start, numpmid))


def through_layout(frame: bytes) -> Result:
    """The result decoded the third time its layout is seen."""
    LAYOUTS.clear()
    for _ in range(3):
        pdu = decode(frame)
    return pdu.result


def test_there_are_real_results_to_check():
    assert len(RESULT_FRAMES) > 50


@pytest.mark.parametrize("index", range(len(RESULT_FRAMES)))
def test_real_results_decode_and_encode_the_same_through_a_layout(index):
    frame = RESULT_FRAMES[index]
    expect = careful(frame)
    got = through_layout(frame)
    assert got == expect
    assert got.vsets == expect.vsets
    # every captured result but pmval's raw-string store is regular enough to learn
    if b"pmval" not in frame:
        assert type(got.vsets) is ColumnValueSets
    pdutype = int.from_bytes(frame[4:8], "big")
    record = ResultPDU if pdutype == PDUType.PDU_RESULT else HighResResultPDU
    sender = int.from_bytes(frame[8:12], "big", signed=True)
    assert encode(record(got, sender)) == frame
    # and as the other PDU type (pmcd turns agents' RESULTs into clients' HIGHRES_RESULTs)
    other = HighResResultPDU if record is ResultPDU else ResultPDU
    plain = Result(got.timestamp, tuple(got.vsets))
    assert encode(other(got, 5)) == encode(other(plain, 5))


@settings(max_examples=examples(300))
@given(results(), st.data())
def test_random_results_through_a_layout(result, data):
    frame = encode(ResultPDU(result, 3))
    got = through_layout(frame)
    assert got.vsets == result.vsets
    assert encode(ResultPDU(got, 3)) == frame
    assert encode(HighResResultPDU(got, 4)) == encode(
        HighResResultPDU(Result(got.timestamp, tuple(got.vsets)), 4)
    )
    # the same layout with other values: decoded through the learned layout
    other = Result(Timestamp(9, 9000), tuple(_new_values(vs, data) for vs in result.vsets))
    frame2 = encode(ResultPDU(other, 3))
    if len(frame2) == len(frame):
        got2 = decode(frame2).result
        assert got2.vsets == other.vsets
        assert got2.timestamp == other.timestamp
        if type(got.vsets) is ColumnValueSets:
            assert type(got2.vsets) is ColumnValueSets  # read through the learned layout


def _new_values(vs: ValueSet, data) -> ValueSet:
    """VS with new values of the same type and, for strings, the same length."""
    if vs.numval <= 0:
        return vs
    if vs.vtype == PMType.PM_TYPE_STRING:
        values = tuple("x" * len(v.encode()) if isinstance(v, str) else v for v in vs.values)
        return vs._replace(values=values)
    if vs.vtype in (PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_EVENT):
        return vs._replace(values=tuple(bytes(reversed(v)) for v in vs.values))
    words = data.draw(st.lists(st.integers(0, 0xFFFFFFFF), min_size=vs.numval, max_size=vs.numval))
    if vs.valfmt == 0:
        return vs._replace(values=array("I", words))
    if vs.vtype in (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE):
        return vs._replace(
            values=tuple(
                w / 7 if vs.vtype == PMType.PM_TYPE_DOUBLE else float(w % 1024) for w in words
            )
        )
    return vs._replace(values=tuple(words))


def _result(pmid: int, text: str) -> Result:
    return Result(
        Timestamp(1, 0),
        (
            ValueSet.of_atoms(pmid, PMType.PM_TYPE_U64, [(0, 5), (1, 6)]),
            ValueSet.of_atoms(pmid + 1, PMType.PM_TYPE_STRING, [(0, text)]),
        ),
    )


def test_a_layout_is_refused_when_any_structure_differs():
    LAYOUTS.clear()
    frame = encode(ResultPDU(_result(10, "abc")))
    decode(frame)
    decode(frame)  # learned
    assert type(decode(frame).result.vsets) is ColumnValueSets
    moved = encode(ResultPDU(_result(11, "abc")))  # same size, other PMIDs
    got = decode(moved).result
    assert type(got.vsets) is tuple and got == _result(11, "abc")


def test_a_nul_inside_a_learned_string_gives_the_raw_payload():
    LAYOUTS.clear()
    frame = encode(ResultPDU(_result(10, "abc")))
    decode(frame)
    decode(frame)
    odd = bytearray(frame)
    at = frame.index(b"abc\x00")
    odd[at + 1] = 0  # "a\0c": not plain text any more
    got = decode(bytes(odd)).result
    assert type(got.vsets) is ColumnValueSets
    assert got.vsets[1].values == (b"a\x00c\x00",)
    assert got == careful(bytes(odd))


def test_layouts_are_learned_only_when_they_recur():
    cache = LayoutCache()
    result = _result(10, "abc")
    frame = encode(ResultPDU(result))
    args = (frame, 2, RESULT_PREAMBLE, result.vsets, PDUType.PDU_RESULT)
    cache.learn(*args)
    assert not cache.candidates((len(frame), 2, RESULT_PREAMBLE))
    cache.learn(*args)
    assert cache.candidates((len(frame), 2, RESULT_PREAMBLE))
    cache.clear()
    assert not cache.candidates((len(frame), 2, RESULT_PREAMBLE))


def test_layout_cache_stays_within_its_byte_limit():
    cache = LayoutCache(limit=64 * 1024)
    for n in range(1, 400):
        result = Result(
            Timestamp(1, 0), (ValueSet.of_atoms(1, PMType.PM_TYPE_U32, [(i, i) for i in range(n)]),)
        )
        frame = encode(ResultPDU(result))
        for _ in range(2):
            cache.learn(frame, 1, RESULT_PREAMBLE, result.vsets, PDUType.PDU_RESULT)
        assert cache._bytes <= 64 * 1024


def test_column_value_sets_behave_as_a_read_only_sequence():
    result = _result(10, "abc")
    shape = shape_of(result.vsets)
    layout = ResultLayout(shape, RESULT_PREAMBLE, PDUType.PDU_RESULT)
    frame = encode_result(result, False, 0, PDUType.PDU_RESULT)
    assert layout.matches(frame)
    columns = layout.read(frame)
    assert len(columns) == 2
    assert columns[0] == result.vsets[0] and columns[-1] == result.vsets[1]
    assert columns[0:2] == result.vsets
    assert list(columns) == list(result.vsets)
    assert columns == result.vsets and result.vsets == columns
    assert columns != result.vsets[:1]
    assert result.vsets[1] in columns
    assert "ColumnValueSets" in repr(columns)
    with pytest.raises(TypeError):
        hash(columns)


def test_shapes_with_raw_strings_are_not_learned():
    vs = ValueSet(1, 1, 1, PMType.PM_TYPE_STRING, array("I", [0]), (b"a\x00junk",))
    assert shape_of((vs,)) is None


def _mixed_result() -> Result:
    """Value sets alternating insitu and block values, with a string and an empty set."""
    return Result(
        Timestamp(5, 6000),
        (
            ValueSet.of_atoms(1, PMType.PM_TYPE_U32, [(0, 1), (1, 2), (2, 3)]),
            ValueSet.of_atoms(2, PMType.PM_TYPE_U64, [(0, 1 << 40), (7, 9)]),
            ValueSet.of_atoms(3, PMType.PM_TYPE_32, [(4, -4)]),
            ValueSet.of_error(4, -12357),
            ValueSet.of_atoms(5, PMType.PM_TYPE_STRING, [(0, "sda"), (1, "nvme0n1")]),
            ValueSet.of_atoms(6, PMType.PM_TYPE_FLOAT, [(0, 0.5)]),
            ValueSet.of_atoms(7, PMType.PM_TYPE_DOUBLE, [(3, 2.25)]),
        ),
    )


def test_every_layout_byte_is_checked_and_no_value_byte_is():
    result = _mixed_result()
    layout = ResultLayout(shape_of(result.vsets), RESULT_PREAMBLE, PDUType.PDU_RESULT)
    frame = encode_result(result, False, 0, PDUType.PDU_RESULT)
    assert layout.matches(frame)
    values = set()
    for offset, field in zip(*_value_offsets(layout), strict=True):
        values.update(range(offset, offset + field))
    values.update(range(8, 20))  # sender and timestamp
    for at in range(len(frame)):
        changed = bytearray(frame)
        changed[at] ^= 0x40
        assert layout.matches(bytes(changed)) == (at in values), at
    assert not layout.matches(frame + b"\0\0\0\0")


def _value_offsets(layout: ResultLayout) -> tuple[list[int], list[int]]:
    """Offsets and sizes of the values the layout's struct reads (its non-pad fields)."""
    offsets, sizes, at = [], [], 0
    for count, code in re.findall(r"(\d*)([a-zA-Z])", layout.values.format.lstrip(">")):
        n = int(count) if count else 1
        if code == "x":
            at += n
        elif code == "s":
            offsets.append(at)
            sizes.append(n)
            at += n
        else:
            size = struct.calcsize(">" + code)
            for _ in range(n):
                offsets.append(at)
                sizes.append(size)
                at += size
    return offsets, sizes


@pytest.mark.parametrize("source", [ResultPDU, HighResResultPDU])
def test_a_relayed_result_is_what_the_careful_encoder_writes(source):
    result = _mixed_result()
    frame = encode(source(result, 3))
    LAYOUTS.clear()
    for _ in range(3):
        got = decode(frame).result
    assert type(got.vsets) is ColumnValueSets
    assert got.vsets._values is None  # nothing read yet: relaying never reads values
    for target in (ResultPDU, HighResResultPDU):
        assert encode(target(got, 9)) == encode(target(result, 9))
    assert got.vsets._values is None
    assert got.vsets == result.vsets  # now read, and equal
    assert len(got.vsets.values) == 10
