"""purepcp.pmapi.convert: pmConvScale, pmExtractValue and pmstore's parse, against libpcp itself.

The interop tests send batches of cases as JSON to one /usr/bin/python3 subprocess,
which calls the reference libpcp through PCP's Python bindings and ctypes.  Floats
travel as their IEEE bit patterns so every comparison is exact, NaN signs included.
"""

from __future__ import annotations

import errno
import math
import struct
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purepcp.pmapi.cnumbers import float32, float32_of_int
from purepcp.pmapi.convert import (
    StoreValueError,
    extract_value,
    parse_typed_value,
    pmConvScale,
    pmExtractValue,
)
from purepcp.pmapi.errors import (
    PM_ERR_CONV,
    PM_ERR_SIGN,
    PM_ERR_TRUNC,
    PM_ERR_TYPE,
    PM_ERR_UNIT,
    PMError,
)
from purepcp.pmapi.printvalue import print_value
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import ValueBlock
from tests.support.examples import examples
from tests.support.libpcp_oracle import SLOW_AND_BIG, host_block, reference, sample_tool, to_bits

I32, U32, I64, U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
FLT, DBL, STR = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
AGG = PMType.PM_TYPE_AGGREGATE
NUMERIC = (I32, U32, I64, U64, FLT, DBL)


def outcome(fn, *args) -> list[Any]:
    """[status, result bits] of one of our functions, in the oracle's shape."""
    try:
        return [0, fn(*args)]
    except PMError as exc:
        return [exc.code, None]


# --- pmConvScale ----------------------------------------------------------------------

KB, MB = Units(dimSpace=1, scaleSpace=1), Units(dimSpace=1, scaleSpace=2)
BYTES = Units(dimSpace=1)
MSEC, SEC = Units(dimTime=1, scaleTime=2), Units(dimTime=1, scaleTime=3)
COUNT, KCOUNT = Units(dimCount=1), Units(dimCount=1, scaleCount=3)


def test_convscale_examples():
    assert pmConvScale(U32, 1, KB, BYTES) == 1024
    assert pmConvScale(U64, 1536, BYTES, KB) == 2  # rounds half up
    assert pmConvScale(I32, -1536, BYTES, KB) == -1  # C division truncates toward zero
    assert pmConvScale(I64, 1499, MSEC, SEC) == 1
    assert pmConvScale(DBL, 1.5, SEC, MSEC) == 1500.0
    assert pmConvScale(FLT, 3.0, KCOUNT, COUNT) == 3000.0
    assert pmConvScale(U32, 7, Units(), KCOUNT) == 0  # dimensionless counts as "count"


def test_convscale_rate_units():
    kb_per_sec = Units(dimSpace=1, dimTime=-1, scaleSpace=1, scaleTime=3)
    mb_per_min = Units(dimSpace=1, dimTime=-1, scaleSpace=2, scaleTime=4)
    assert pmConvScale(DBL, 1024.0, kb_per_sec, mb_per_min) == 60.0


def test_convscale_errors():
    with pytest.raises(PMError) as exc:
        pmConvScale(U32, 1, KB, SEC)
    assert exc.value.code == PM_ERR_CONV
    with pytest.raises(PMError) as exc:
        pmConvScale(U32, 1, Units(dimSpace=1, scaleSpace=7), KB)  # Zbyte: libpcp stops at Ebyte
    assert exc.value.code == PM_ERR_UNIT
    with pytest.raises(PMError) as exc:
        pmConvScale(STR, "1", KB, KB)
    assert exc.value.code == PM_ERR_CONV


# --- pmExtractValue -------------------------------------------------------------------


def test_extract_examples():
    assert extract_value(-1, I32, I64) == -1
    assert extract_value(0xFFFFFFFF, U32, DBL) == 4294967295.0
    assert extract_value(1.75, DBL, I32) == 1
    assert extract_value(16777217, I32, FLT) == 16777216.0
    assert extract_value(-(1 << 40), I64, I32) == 0  # libpcp checks only the upper bound
    assert extract_value("abc", STR, STR) == "abc"
    for args, code in [
        ((0x80000000, U32, I32), PM_ERR_TRUNC),
        ((-1, I32, U64), PM_ERR_SIGN),
        ((-0.5, DBL, U32), PM_ERR_SIGN),
        ((2147483647.0, DBL, I32), PM_ERR_TRUNC),
        ((1 << 63, U64, I64), PM_ERR_TRUNC),
        (("1", STR, I32), PM_ERR_CONV),
        ((b"x", AGG, STR), PM_ERR_CONV),
        ((b"x", PMType.PM_TYPE_EVENT, PMType.PM_TYPE_EVENT), PM_ERR_CONV),
    ]:
        with pytest.raises(PMError) as exc:
            extract_value(*args)
        assert exc.value.code == code, args


def test_extract_from_pmvalue():
    block = ValueBlock(I64, struct.pack(">q", -5))
    assert pmExtractValue(ValFmt.PM_VAL_DPTR, block, I64, DBL) == -5.0
    assert pmExtractValue(ValFmt.PM_VAL_INSITU, 0xFFFFFFFF, I32, I64) == -1
    assert pmExtractValue(ValFmt.PM_VAL_INSITU, 0xFFFFFFFF, U32, I64) == 0xFFFFFFFF
    for valfmt, value, itype in [
        (ValFmt.PM_VAL_DPTR, block, U64),  # block type differs
        (ValFmt.PM_VAL_DPTR, ValueBlock(I64, b"\0" * 4), I64),  # wrong length
        (ValFmt.PM_VAL_INSITU, 5, I64),  # 64-bit values are never insitu
    ]:
        with pytest.raises(PMError) as exc:
            pmExtractValue(valfmt, value, itype, DBL)
        assert exc.value.code == PM_ERR_CONV


def test_float32_of_int_rounds_once():
    # 2^60 + 2^36 + 1 is just above a tie: a detour through double would round it down
    n = (1 << 60) + (1 << 36) + 1
    assert float32_of_int(n) == float((1 << 60) + (1 << 37))
    assert float32_of_int(-n) == -float((1 << 60) + (1 << 37))
    assert float32(float(n)) == float(1 << 60)


@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(0, 6), st.integers(0, 6))
def test_convscale_space_scales_invert_exactly(x, i, o):
    there = pmConvScale(DBL, x, Units(dimSpace=1, scaleSpace=i), Units(dimSpace=1, scaleSpace=o))
    back = pmConvScale(DBL, there, Units(dimSpace=1, scaleSpace=o), Units(dimSpace=1, scaleSpace=i))
    # factors are powers of two: exact both ways unless the value left the normal double
    # range on the way (overflow, or a subnormal, which has fewer bits of precision)
    assert back == x or math.isinf(there) or abs(there) < sys.float_info.min


# --- pmstore's parse ------------------------------------------------------------------


@given(st.sampled_from([I32, U32, I64, U64]), st.data())
def test_parse_round_trips_integers(type_, data):
    bits, signed = {I32: (32, True), U32: (32, False), I64: (64, True), U64: (64, False)}[type_]
    low = -(1 << (bits - 1)) if signed else 0
    n = data.draw(st.integers(low, low + (1 << bits) - 1))
    assert parse_typed_value(str(n), type_) == n
    assert parse_typed_value(("-" if n < 0 else "") + hex(abs(n)), type_) == n


@pytest.mark.parametrize(
    ("text", "type_", "value"),
    [
        ("42", I32, 42),
        ("-0x10", I32, -16),
        ("0x1F", U32, 31),
        ("010", I64, 10),  # decimal, never octal
        ("-1", U64, (1 << 64) - 1),  # strtoull's wrap
        ("", I32, 0),  # strtol reads nothing and leaves nothing
        (" 7", U32, 7),
        ("1.5", FLT, 1.5),
        ("0x1.8p1", DBL, 3.0),
        ("1e-300", DBL, 1e-300),
        ("hello world", STR, "hello world"),
    ],
)
def test_parse_typed_value(text, type_, value):
    assert parse_typed_value(text, type_) == value


INCOMPATIBLE = 'The value "{}" is incompatible with the data type (PM_TYPE_{})'
OUT_OF_RANGE = 'The value "{}" is out of range for the data type (PM_TYPE_{})'


@pytest.mark.parametrize(
    ("text", "type_", "code", "message"),
    [
        ("1.5", I32, PM_ERR_TYPE, INCOMPATIBLE.format("1.5", "32")),
        ("7 ", U32, PM_ERR_TYPE, INCOMPATIBLE.format("7 ", "U32")),
        ("0x10", DBL, PM_ERR_TYPE, INCOMPATIBLE.format("0x10", "DOUBLE")),
        ("-1", U32, -errno.ERANGE, OUT_OF_RANGE.format("-1", "U32")),
        ("2147483648", I32, -errno.ERANGE, OUT_OF_RANGE.format("2147483648", "32")),
        ("0", FLT, -errno.ERANGE, OUT_OF_RANGE.format("0", "FLOAT")),
        ("1e39", FLT, -errno.ERANGE, OUT_OF_RANGE.format("1e39", "FLOAT")),
        ("1e999", DBL, -errno.ERANGE, OUT_OF_RANGE.format("1e999", "DOUBLE")),
    ],
)
def test_parse_typed_value_errors(text, type_, code, message):
    with pytest.raises(StoreValueError) as exc:
        parse_typed_value(text, type_)
    assert exc.value.code == code
    assert str(exc.value) == message


# --- against the reference libpcp -----------------------------------------------------

units_words = st.builds(
    Units,
    dimSpace=st.integers(-2, 2),
    dimTime=st.integers(-2, 2),
    dimCount=st.integers(-2, 2),
    scaleSpace=st.integers(0, 8),
    scaleTime=st.integers(0, 6),
    scaleCount=st.integers(-8, 7),
)
ATOMS = {
    I32: st.integers(-(1 << 31), (1 << 31) - 1),
    U32: st.integers(0, (1 << 32) - 1),
    I64: st.integers(-(1 << 63), (1 << 63) - 1),
    U64: st.integers(0, (1 << 64) - 1),
    FLT: st.floats(width=32),
    DBL: st.floats(),
}


@st.composite
def conv_cases(draw):
    type_ = draw(st.sampled_from(NUMERIC))
    iunit = draw(units_words)
    if draw(st.booleans()):  # mostly convertible: same dimensions, other scales
        other = draw(units_words)
        ounit = Units(iunit.dimSpace, iunit.dimTime, iunit.dimCount,
                      other.scaleSpace, other.scaleTime, other.scaleCount)  # fmt: skip
    else:
        ounit = draw(units_words)
    return type_, draw(ATOMS[type_]), iunit, ounit


def _conv_request(case) -> dict[str, Any]:
    type_, value, iunit, ounit = case
    return {"op": "conv", "type": type_, "value": to_bits(value, type_),
            "iunit": iunit.pack(), "ounit": ounit.pack()}  # fmt: skip


def _ours_conv(case) -> list[Any]:
    type_, value, iunit, ounit = case
    sts, out = outcome(pmConvScale, type_, value, iunit, ounit)
    return [sts, None if sts else to_bits(out, type_)]


def _traps(case) -> bool:
    """Scale factors that overflow int64 make libpcp divide by zero (SIGFPE)."""
    try:
        pmConvScale(*case)
    except PMError as exc:
        return "overflow" in str(exc)
    return False


def _check_conv(cases) -> None:
    cases = [c for c in cases if not _traps(c)]
    answers = reference([_conv_request(c) for c in cases])
    for case, theirs in zip(cases, answers, strict=True):
        assert _ours_conv(case) == theirs, case


EDGE_UNITS = [Units(), BYTES, KB, MB, Units(dimSpace=1, scaleSpace=6), MSEC, SEC,
              Units(dimTime=1, scaleTime=5), COUNT, KCOUNT, Units(dimCount=1, scaleCount=-3),
              Units(dimSpace=1, dimTime=-1, scaleSpace=1, scaleTime=3),
              Units(dimSpace=1, dimTime=-1, scaleSpace=0, scaleTime=1),
              Units(dimSpace=-2, dimCount=2, scaleSpace=3, scaleCount=-2)]  # fmt: skip


@pytest.mark.interop
def test_convscale_matches_libpcp_edges():
    values = {
        I32: [0, 1, -1, 511, 512, -512, -513, (1 << 31) - 1, -(1 << 31)],
        U32: [0, 1, 512, 1023, (1 << 32) - 1],
        I64: [0, -1, 1 << 40, -(1 << 62), (1 << 63) - 1, -(1 << 63)],
        U64: [0, 1, 1 << 63, (1 << 64) - 1],
        FLT: [0.0, -0.0, 1.5, float32(1e30), math.inf, math.nan],
        DBL: [0.0, -1.25, 1e300, -math.inf, math.nan, 5e-324],
    }
    cases = [
        (t, v, i, o) for t in NUMERIC for v in values[t] for i in EDGE_UNITS for o in EDGE_UNITS
    ]
    _check_conv(cases)


@pytest.mark.interop
@settings(max_examples=examples(5), deadline=None, suppress_health_check=SLOW_AND_BIG)
@given(st.lists(conv_cases(), min_size=1, max_size=400))
def test_convscale_matches_libpcp(cases):
    _check_conv(cases)


EXTRACT_VALUES = {
    I32: [0, 1, -1, (1 << 31) - 1, -(1 << 31)],
    U32: [0, 0x7FFFFFFF, 0x80000000, (1 << 32) - 1],
    I64: [0, -1, (1 << 31) - 1, 1 << 31, -(1 << 31) - 1, (1 << 32) - 1, 1 << 32, -(1 << 40),
          (1 << 53) + 1, (1 << 60) + (1 << 36) + 1, (1 << 63) - 1, -(1 << 63)],
    U64: [0, 0x7FFFFFFF, 0x80000000, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63,
          (1 << 64) - 1, (1 << 60) + (1 << 36) + 1],
    FLT: [0.0, -0.0, 0.5, -0.5, 2147483520.0, 2147483648.0, -2147483648.0, 4294967040.0,
          4294967296.0, 9.223371487098962e18, 9.223372036854776e18, 1.8446742974197924e19,
          1.8446744073709552e19, -1e30, 1e30, math.inf, -math.inf, math.nan, -math.nan],
    DBL: [0.0, -0.0, 0.999, -0.999, 2147483646.5, 2147483647.0, -2147483647.0, -2147483648.5,
          4294967294.9, 4294967295.0, 9.2233720368547748e18, 9.223372036854775808e18,
          1.8446744073709550e19, 1.8446744073709552e19, -1e300, 1e300, math.inf, -math.inf,
          math.nan, -math.nan, 3.4e38, 3.5e38, 1e-320],
}  # fmt: skip


def _extract_request(atom: Any, itype: int, otype: int) -> dict[str, Any]:
    if itype in (I32, U32):
        spec = ["lval", struct.unpack("<i", struct.pack("<I", atom & 0xFFFFFFFF))[0]]
        valfmt = ValFmt.PM_VAL_INSITU
    else:
        spec = ["block", itype, host_block(itype, atom)]
        valfmt = ValFmt.PM_VAL_DPTR
    return {"op": "extract", "valfmt": valfmt, "value": spec, "itype": itype, "otype": otype}


def _check_extract(cases) -> None:
    answers = reference([_extract_request(*c) for c in cases])
    for (atom, itype, otype), theirs in zip(cases, answers, strict=True):
        sts, out = outcome(extract_value, atom, itype, otype)
        ours = [sts, None if sts else to_bits(out, otype)]
        assert ours == theirs, (atom, itype, otype)


@pytest.mark.interop
def test_extract_matches_libpcp_edges():
    cases = [
        (float32(atom) if itype == FLT else atom, itype, otype)
        for itype, atoms in EXTRACT_VALUES.items()
        for atom in atoms
        for otype in (*NUMERIC, STR)
    ]
    cases += [("text", STR, STR), ("text", STR, I32), (b"\1\2", AGG, AGG), (b"\1\2", AGG, DBL)]
    _check_extract(cases)


@pytest.mark.interop
@settings(max_examples=examples(5), deadline=None, suppress_health_check=SLOW_AND_BIG)
@given(
    st.lists(
        st.sampled_from(NUMERIC).flatmap(
            lambda t: st.tuples(ATOMS[t], st.just(t), st.sampled_from(NUMERIC))
        ),
        min_size=1,
        max_size=400,
    )
)
def test_extract_matches_libpcp(cases):
    _check_extract(cases)


PARSE_TEXTS = ["", " ", "0", "-0", "+0", "1", "-1", "+1", " 42", "42 ", "\t-7", "010", "1.",
               ".5", "1.5", "-1.5", "1e3", "1E+3", "1e", "1e+", "e3", ".", "-", "0x", "0x10",
               "0X1f", "-0x10", "+0x10", " 0x10", "0x10 ", "0xg", "0x1.8p1", "0x1p-1074",
               "0x1p-1075", "0x.8", "inf", "-INF", "infinity", "nan", "NaN(123)", "abc",
               "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295",
               "4294967296", "-4294967295", "-4294967296", "9223372036854775807",
               "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
               "18446744073709551615", "18446744073709551616", "-18446744073709551615",
               "-18446744073709551616", "0xffffffff", "0x100000000", "0xffffffffffffffff",
               "0x10000000000000000", "-0xffffffffffffffff", "3.4028234e38", "3.4028236e38",
               "1.1754944e-38", "1.1754942e-38", "1e-45", "1e-310", "2.2250738585072011e-308",
               "1e308", "1e309", "-1e309", "0.0", "0e999", "1e-400", "1_000", "١٢"]  # fmt: skip


def _ours_parse(text: str, type_: int) -> list[Any]:
    try:
        return [0, to_bits(parse_typed_value(text, type_), type_)]
    except StoreValueError as exc:
        return [exc.code, None]


def _check_parse(cases) -> None:
    requests = [{"op": "strval", "text": t.encode().hex(), "type": ty} for t, ty in cases]
    for (text, type_), theirs in zip(cases, reference(requests), strict=True):
        assert _ours_parse(text, type_) == theirs, (text, type_)


@pytest.mark.interop
def test_parse_matches_libpcp_edges():
    _check_parse([(t, ty) for t in PARSE_TEXTS for ty in (*NUMERIC, STR)])


number_text = st.text(alphabet="0123456789abcdefxXpP.+-eE in", max_size=12)


@pytest.mark.interop
@settings(max_examples=examples(5), deadline=None, suppress_health_check=SLOW_AND_BIG)
@given(st.lists(st.tuples(number_text, st.sampled_from(NUMERIC)), min_size=1, max_size=400))
def test_parse_matches_libpcp(cases):
    _check_parse(cases)


# --- pmstore itself, with the sample agent loaded as a DSO (no daemon) ----------------

WRITE_ME = {I32: "long", U32: "ulong", I64: "longlong", U64: "ulonglong", FLT: "float",
            DBL: "double", STR: "string"}  # fmt: skip
PMSTORE_TEXTS = ["5", "-5", "0x1f", "1.5", "0", "", "abc", "4294967296", "-1", "1e39", "1e-310",
                 "nan", "0x1.8p1", " 9", "9 ", "hullo world"]  # fmt: skip


@pytest.mark.interop
def test_pmstore_messages_and_values(tmp_path):
    for type_, word in WRITE_ME.items():
        for text in PMSTORE_TEXTS:
            name = f"sample.{word}.write_me"
            done = sample_tool(tmp_path, "pmstore", name, text)
            try:
                atom = parse_typed_value(text, type_)
            except StoreValueError as exc:
                assert done.returncode == 1, (name, text, done.stdout)
                assert done.stderr.splitlines()[-1] == str(exc)
                continue
            assert done.returncode == 0, (name, text, done.stderr)
            line = done.stdout.splitlines()[-1]
            assert line.split(" new value=", 1)[1] == print_value(atom, type_, 1), (name, text)
