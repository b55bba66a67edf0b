"""purepcp.pmapi.printvalue: pmPrintValue, pmAtomStr, pminfo -f lines and pmval columns.

The interop tests compare our text with the reference libpcp's own pmPrintValue
(written through open_memstream) and pmAtomStr_r, batched into one subprocess.
"""

from __future__ import annotations

import math
import struct
from array import array
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.cnumbers import float32
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_INDOM_NULL, pmInDom_build
from purepcp.pmapi.printvalue import (
    pmAtomStr,
    pminfo_values,
    pmPrintValue,
    pmval_real,
    pmval_reals,
    pmval_width,
    print_value,
)
from purepcp.pmapi.types import PMSem, PMType, ValFmt
from purepcp.pmapi.values import ValueBlock, ValueSet
from tests.support.examples import examples
from tests.support.libpcp_oracle import SLOW_AND_BIG, host_block, reference, sample_tool, to_bits

I32, U32, I64, U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
FLT, DBL, STR = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
AGG, AGG_S = PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_AGGREGATE_STATIC
EVENT, HR_EVENT = PMType.PM_TYPE_EVENT, PMType.PM_TYPE_HIGHRES_EVENT
UNKNOWN, NOSUPPORT = PMType.PM_TYPE_UNKNOWN, PMType.PM_TYPE_NOSUPPORT
INSITU, DPTR = ValFmt.PM_VAL_INSITU, ValFmt.PM_VAL_DPTR
MISSED = 1 << 31
NEG_NAN = math.copysign(math.nan, -1.0)


# --- event arrays, built in either byte order -----------------------------------------


def event_payload(records: list[tuple], highres: bool, order: str) -> bytes:
    """An event array's block payload: records are (sec, usec|nsec, flags, nparams, params)
    with params a list of (pmid, vtype, payload); a missed record carries no params."""
    out = struct.pack(order + "i", len(records))
    for sec, sub, flags, nparams, params in records:
        out += struct.pack(order + ("qqIi" if highres else "iiIi"), sec, sub, flags, nparams)
        for pmid, vtype, payload in params:
            out += struct.pack(order + "II", pmid, vtype << 24 | (len(payload) + 4))
            out += payload + b"\0" * (-len(payload) % 4)
    return out


EVENTS = [
    [],
    [(1700000000, 123456, 1, 1, [(0x1234, U32, b"\0\0\0\7")])],
    [
        (1700000000, 1000, 1, 2, [(1, U32, b"\0\0\0\1"), (2, STR, b"hello\0")]),
        (1700000061, 999999, 2, 0, []),
        (1700003600, 500000, 4, 1, [(3, U64, b"\0" * 8)]),
    ],
    [  # libpcp's walk does not step over a missed record: keep its sums
        (1700000000, 0, 1, 0, []),
        (1700000001, 0, MISSED, 5, []),
        (1700000002, 0, MISSED, 3, []),
        (1700000003, 0, 1, 0, []),
    ],
]


# --- examples -------------------------------------------------------------------------


def test_print_value_examples():
    assert print_value(42, I32) == "42"
    assert print_value(-7, I32, 5) == "   -7"
    assert print_value(0xFFFFFFFF, U32) == "4294967295"
    assert print_value(1 << 40, U64, 21) == " " * 8 + "1099511627776"
    assert print_value(1.5, FLT) == "1.5"
    assert print_value(1 / 3, DBL) == "0.3333333333333333"
    assert print_value(float32(1 / 3), FLT, 13) == "   0.33333334"
    assert print_value("abc", STR) == '"abc"'
    assert print_value("abc", STR, 8) == '   "abc"'
    assert print_value(math.inf, DBL, 5) == "  inf"
    assert print_value(NEG_NAN, DBL) == "-nan"


def test_print_value_aggregates_dump_every_reading():
    assert print_value(b"", AGG) == '"" []'
    assert print_value(b"ab\x01", AGG) == "[616201]"
    assert print_value(b"abcd", AGG) == '1.6777999e+22 "abcd" [61626364]'
    eight = struct.pack("<d", 2.5)
    assert print_value(eight, AGG) == f"{struct.unpack('<Q', eight)[0]} 2.5 [{eight.hex()}]"


def test_print_value_unreadable_as_its_type():
    # a 64-bit metric whose value came insitu: libpcp dumps the word every way
    assert pmPrintValue(INSITU, I64, 0x3F800000, 1) == "1065353216 1 0x3f800000"
    assert pmPrintValue(INSITU, UNKNOWN, 0x7FC00000, 12) == "  2143289344 0x  7fc00000"


def test_print_value_events(utc):
    hr = event_payload(EVENTS[2], True, ">")
    assert print_value(hr, HR_EVENT) == (
        "[3 event records timestamps 22:13:20.000001000...23:13:20.000500000]"
    )
    assert print_value(event_payload([], False, ">"), EVENT) == "[0 event records]"
    assert (
        pmPrintValue(INSITU, EVENT, 0x2 | 0x1 | 0x8 | 0x4 | 60 << 4) == "[pmlc control mand on  60]"
    )
    assert pmPrintValue(INSITU, EVENT, 0) == "[pmlc control adv off nl 0]"


def test_atom_str_examples():
    assert pmAtomStr(-3, I32) == "-3"
    assert pmAtomStr(1.5, DBL) == "1.500000e+00"
    assert pmAtomStr("x" * 37, STR) == '"' + "x" * 37 + '"'
    assert pmAtomStr("y" * 38, STR) == '"' + "y" * 34 + '..."'
    assert pmAtomStr(None, STR) == "<null>"
    assert (
        pmAtomStr(bytes(range(13)), AGG) == "[type=AGGREGATE len=13] 00010203 04050607 08090a0b ..."
    )
    assert pmAtomStr(b"\0\0\0\1", EVENT) == "[1 event record]"
    assert pmAtomStr(0, NOSUPPORT) == "Error: unexpected type: Not Supported"
    assert pmAtomStr(0, 42) == "Error: unexpected type: Illegal type=42"


def test_pminfo_values():
    names = {0: "red", 1: "green"}.get
    indom = pmInDom_build(29, 1)
    desc = Desc(pmid=1, type=U32, indom=indom)
    vset = ValueSet.of_atoms(1, U32, [(0, 5), (1, 7), (2, 9)])
    assert pminfo_values(desc, vset, names).splitlines() == [
        '    inst [0 or "red"] value 5',
        '    inst [1 or "green"] value 7',
        "pmNameIndom: indom=29.1 inst=2: Unknown or illegal instance identifier",
        "    inst [2] value 9",
    ]
    assert pminfo_values(desc, vset, names, force=True).splitlines()[-1] == (
        '    inst [2 "DISAPPEARED"]'
    )
    singular = Desc(pmid=2, type=STR, indom=PM_INDOM_NULL)
    one = ValueSet.of_atoms(2, STR, [(PM_INDOM_NULL, "hi there")])
    assert pminfo_values(singular, one, names) == '    value "hi there"\n'
    empty = ValueSet(2, 0, INSITU, UNKNOWN, array("I"), array("I"))
    assert pminfo_values(singular, empty, names) == "No value(s) available!\n"
    assert pminfo_values(singular, ValueSet.of_error(2, -12357), names) == (
        "Error: Unknown metric name\n"
    )


@pytest.mark.parametrize(
    ("v", "text"),
    [
        (0.0, "     0.0   "),
        (0.05, "  5.000E-02"),
        (0.5, "     0.5000"),
        (5.0, "     5.000 "),
        (50.0, "     50.00  "[1:]),
        (500.0, "     500.0   "[2:]),
        (5000.0, "      5000.    "[4:]),
        (50000.0, "  5.000E+04"),
        (-1.0, "          !"),
    ],
)
def test_pmval_real(v, text):
    assert pmval_real(v, PMSem.PM_SEM_COUNTER, 11) == text
    assert len(text) == 11


def test_pmval_real_fixed_and_instant():
    assert pmval_real(-1.0, PMSem.PM_SEM_INSTANT, 11) == "  -1.000E+00"[1:]
    assert pmval_real(2.0, PMSem.PM_SEM_COUNTER, 8, fixed=2) == "    2.00"
    assert pmval_width(U64) == 21 and pmval_width(FLT) == 13 and pmval_width(EVENT) == 0


# --- against the reference libpcp -----------------------------------------------------

WIDTHS = (1, 0, -6, 5, 13, 21)


def _check_print(cases: list[tuple]) -> None:
    """Cases are (valfmt, type, our pmValue payload, minwidth, the reference's spec)."""
    requests = [
        {"op": "print", "valfmt": vf, "type": t, "value": spec, "minwidth": w}
        for vf, t, _, w, spec in cases
    ]
    for (vf, t, value, w, _), theirs in zip(cases, reference(requests), strict=True):
        ours = pmPrintValue(vf, t, value, w).encode("utf-8", "surrogateescape").hex()
        assert ours == theirs, (vf, t, value, w, bytes.fromhex(theirs))


def _atom_case(atom: Any, type_: int, width: int) -> tuple:
    """pmPrintValue of ATOM stored as PCP stores a TYPE_ value."""
    if type_ in (I32, U32):
        word = atom & 0xFFFFFFFF
        return (
            INSITU,
            type_,
            word,
            width,
            ["lval", struct.unpack("<i", struct.pack("<I", word))[0]],
        )
    codes = {I64: "q", U64: "Q", FLT: "f", DBL: "d"}
    if type_ in codes:
        block = ValueBlock(type_, struct.pack(">" + codes[type_], atom))
    elif type_ == STR:
        block = ValueBlock(type_, atom.encode("utf-8", "surrogateescape") + b"\0")
    else:
        block = ValueBlock(type_, bytes(atom))
    return (DPTR, type_, block, width, ["block", type_, host_block(type_, atom)])


SCALARS = {
    I32: [0, 1, -1, 2**31 - 1, -(2**31)],
    U32: [0, 7, 2**32 - 1],
    I64: [0, -(2**63), 2**63 - 1],
    U64: [0, 2**64 - 1, 10**15],
    FLT: [0.0, -0.0, 1.5, float32(1 / 3), float32(1e-40), float32(3e38), math.inf, -math.inf,
          math.nan, NEG_NAN, float32(123456789.0)],
    DBL: [0.0, 1 / 3, 1e300, 5e-324, -2.5e-5, 123456789012345678.0, math.inf, math.nan, NEG_NAN],
    STR: ["", "a", "hello world", "x" * 40, "ünïcode"],
    AGG: [b"", b"a", b"abcd", b"\0\0\xc0\x7f", b"\xff\xff\xff\xff\xff\xff\xff\xff",
          struct.pack("<d", 1.25), b"abcdefgh", b"\1\2\3", bytes(range(20))],
}  # fmt: skip


@pytest.mark.interop
def test_print_value_matches_libpcp():
    cases = [_atom_case(a, t, w) for t, atoms in SCALARS.items() for a in atoms for w in WIDTHS]
    # values that cannot be read as their type: the fallback dump
    for w in WIDTHS:
        for word in (0, 1, 0x3F800000, 0x7FC00000, 0xFFC00001, 0x80000000, 0xFFFFFFFF):
            lval = struct.unpack("<i", struct.pack("<I", word))[0]
            for t in (UNKNOWN, I64, AGG, STR, NOSUPPORT, DBL):
                cases.append((INSITU, t, word, w, ["lval", lval]))
        for vtype, atom in ((DBL, 2.5), (I64, -3), (U64, 2**63), (FLT, 0.25)):
            valfmt, _, block, _, spec = _atom_case(atom, vtype, w)
            for t in (U64, I64, DBL, FLT, UNKNOWN, AGG_S):
                if t != vtype:
                    cases.append((valfmt, t, block, w, spec))
        block = ValueBlock(STR, b"abc\0")
        cases.append((DPTR, AGG, block, w, ["block", STR, b"abc\0".hex()]))
        cases.append(
            (DPTR, STR, ValueBlock(STR, b"ab\0cd\0"), w, ["block", STR, b"ab\0cd\0".hex()])
        )
    _check_print(cases)


@pytest.mark.interop
def test_print_events_match_libpcp(utc):
    cases = []
    for records in EVENTS:
        for highres, type_ in ((False, EVENT), (True, HR_EVENT)):
            ours = ValueBlock(type_, event_payload(records, highres, ">"))
            host = event_payload(records, highres, "<").hex()
            cases.append((DPTR, type_, ours, 1, ["block", type_, host]))
    for word in (0, 1, 2, 4, 8, 15, 0x7FFFFFFF, -16):
        cases.append((INSITU, EVENT, word, 1, ["lval", word]))
    _check_print(cases)


@pytest.mark.interop
@settings(max_examples=examples(4), deadline=None, suppress_health_check=SLOW_AND_BIG)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.sampled_from((I32, I64)), st.integers(-(2**31), 2**31 - 1)),
            st.tuples(st.just(U64), st.integers(0, 2**64 - 1)),
            st.tuples(st.just(FLT), st.floats(width=32)),
            st.tuples(st.just(DBL), st.floats()),
            st.tuples(st.just(STR), st.text(st.characters(codec="utf-8", exclude_characters="\0"))),
            st.tuples(st.just(AGG), st.binary(max_size=24)),
        ).flatmap(lambda ta: st.tuples(st.just(ta), st.integers(-30, 30))),
        min_size=1,
        max_size=300,
    )
)
def test_print_value_matches_libpcp_generated(cases):
    _check_print([_atom_case(atom, t, w) for (t, atom), w in cases])


ATOM_STR_CASES: list[tuple[Any, int]] = [
    *[(a, t) for t, atoms in SCALARS.items() if t in (I32, U32, I64, U64, FLT, DBL) for a in atoms],
    *[(s, STR) for s in SCALARS[STR] + ["z" * 37, "z" * 38, "é" * 20]],
    *[(b, AGG) for b in (b"", b"\1", bytes(range(12)), bytes(range(13)), bytes(range(40)))],
    (bytes(range(5)), AGG_S),
    (None, STR),
    (None, AGG),
    (0, NOSUPPORT),
    (0, UNKNOWN),
    (0, 42),
]


@pytest.mark.interop
def test_atom_str_matches_libpcp():
    cases = list(ATOM_STR_CASES)
    cases += [(event_payload(r, False, ">"), EVENT) for r in EVENTS]
    requests = []
    for atom, type_ in cases:
        if type_ in (AGG, AGG_S) and atom is not None:
            value: Any = [type_, bytes(atom).hex()]
        elif type_ == EVENT:
            value = [type_, event_payload_host(atom)]
        elif type_ in (I32, U32, I64, U64, FLT, DBL, STR) and atom is not None:
            value = to_bits(atom, type_)
        else:
            value = None
        requests.append({"op": "atomstr", "type": type_, "value": value})
    for (atom, type_), theirs in zip(cases, reference(requests), strict=True):
        ours = pmAtomStr(atom, type_).encode("utf-8", "surrogateescape").hex()
        assert ours == theirs, (atom, type_, bytes.fromhex(theirs))


def event_payload_host(wire: bytes) -> str:
    """Only the record count matters to pmAtomStr: swap it to host order."""
    return (struct.pack("<i", struct.unpack_from(">i", wire)[0]) + wire[4:]).hex()


SAMPLE_CONSTANTS = [  # name, type, indom, [(inst, name, atom)]
    ("sample.long.ten", I32, False, [(PM_INDOM_NULL, None, 10)]),
    ("sample.float.ten", FLT, False, [(PM_INDOM_NULL, None, 10.0)]),
    ("sample.double.ten", DBL, False, [(PM_INDOM_NULL, None, 10.0)]),
    ("sample.ulonglong.million", U64, False, [(PM_INDOM_NULL, None, 10**6)]),
    ("sample.string.hullo", STR, False, [(PM_INDOM_NULL, None, "hullo world!")]),
    ("sample.aggregate.hullo", AGG, False, [(PM_INDOM_NULL, None, b"hullo world!")]),
    ("sample.aggregate.null", AGG, False, [(PM_INDOM_NULL, None, b"")]),
    ("sample.dupnames.two.bin", I32, True, [(i, f"bin-{i}", i) for i in range(100, 1000, 100)]),
]


@pytest.mark.interop
def test_pminfo_f_matches_pminfo(tmp_path):
    names = [name for name, *_ in SAMPLE_CONSTANTS]
    done = sample_tool(tmp_path, "pminfo", "-f", *names)
    assert done.returncode == 0, done.stderr
    expected = ""
    for name, type_, has_indom, values in SAMPLE_CONSTANTS:
        indom = pmInDom_build(29, 1) if has_indom else PM_INDOM_NULL
        desc = Desc(pmid=1, type=type_, indom=indom)
        vset = ValueSet.of_atoms(1, type_, [(inst, atom) for inst, _, atom in values])
        lookup = {inst: iname for inst, iname, _ in values}.get
        expected += f"\n{name}\n" + pminfo_values(desc, vset, lookup)
    assert done.stdout == expected


@settings(max_examples=examples(300), deadline=None)
@given(
    values=st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True),
            st.sampled_from([0.0, -0.0, 0.1, 0.9999, 9.999, 99.99, 999.9, 9999.0, -1.0]),
            st.floats(-1e5, 1e5),
        ),
        max_size=40,
    ),
    sem=st.sampled_from([PMSem.PM_SEM_COUNTER, PMSem.PM_SEM_INSTANT]),
    width=st.integers(6, 21),
    fixed=st.sampled_from([-1, 0, 3]),
)
def test_pmval_reals_is_pmval_real_for_each(values, sem, width, fixed):
    assert pmval_reals(values, sem, width, fixed) == [
        pmval_real(v, sem, width, fixed) for v in values
    ]
