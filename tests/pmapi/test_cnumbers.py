"""pmapi.cnumbers against the C library itself: glibc's strtol, strtoul, strtod, strtof,
atoi and atof called through ctypes on the same text, and C's casts and division."""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import math
import struct
from fractions import Fraction

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from purepcp.pmapi import cnumbers as C
from tests.support.examples import examples

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.strtol.restype = ctypes.c_long
libc.strtol.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
libc.strtoul.restype = ctypes.c_ulong
libc.strtoul.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
libc.strtod.restype = ctypes.c_double
libc.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
libc.strtof.restype = ctypes.c_float
libc.strtof.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
libc.atoi.restype = ctypes.c_int
libc.atoi.argtypes = [ctypes.c_char_p]


def c_scan(function, text: bytes, *base: int) -> C.Scan:
    """FUNCTION (a libc strto*) on TEXT: value, end index, whether errno became ERANGE."""
    buffer = ctypes.create_string_buffer(text)
    end = ctypes.c_char_p()
    ctypes.set_errno(0)
    value = function(buffer, ctypes.byref(end), *base)
    erange = ctypes.get_errno() == errno.ERANGE
    offset = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buffer)
    return C.Scan(value, offset, erange)


def same_float(a: float, b: float) -> bool:
    """Bit for bit (NaN payloads and the sign of zero included)."""
    return struct.pack("<d", a) == struct.pack("<d", b)


# text that strto* find interesting: blanks, signs, prefixes, digits of every base, exponents
PIECES = [" ", "\t", "+", "-", "0", "1", "7", "8", "9", "x", "X", "a", "F", "z", ".", "e",
          "E", "p", "P", "inf", "INFINITY", "nan", "nan(", ")", "0x", "00", "1e", "99999999999",
          "18446744073709551615", "9223372036854775807", "18446744073709551616", "4294967296",
          "1e308", "1e309", "1e-320", "1e-400", "3.4028235e38", "3.4028236e38", "1.17549435e-38",
          "7e-46", "0x1p-149", "0x1.fffffffffffff8p1023", "2.5", "0.5", "x"]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)


@settings(max_examples=examples(2000))
@given(texts, st.sampled_from([0, 8, 10, 16, 2, 36]))
@example("0x", 16)
@example("0xg", 0)
@example(" -0x1f", 0)
@example("-9223372036854775809", 10)
@example("--1", 10)
def test_strtol_and_strtoul_are_glibcs(text, base):
    raw = text.encode()
    for ours, theirs in ((C.strtol, libc.strtol), (C.strtoul, libc.strtoul)):
        assert ours(text, base) == c_scan(theirs, raw, base), (ours.__name__, text, base)
        assert ours(raw, base) == c_scan(theirs, raw, base), (ours.__name__, text, base)


@settings(max_examples=examples(2000))
@given(texts)
@example("1e-320")
@example("nan(0x7)")
@example("nan(12z)")
@example("-0")
@example("0x1.8p-1074")
@example("2.4703282292062328e-324")
def test_strtod_is_glibcs(text):
    raw = text.encode()
    theirs = c_scan(libc.strtod, raw)
    for ours in (C.strtod(text), C.strtod(raw)):
        assert (ours.end, ours.erange) == (theirs.end, theirs.erange), text
        assert same_float(ours.value, theirs.value), (text, ours, theirs)


@settings(max_examples=examples(2000))
@given(texts)
@example("3.4028235677973366e38")
@example("3.40282357e38")
@example("1.00000005960464477550")  # a tie through double, not in the exact value
@example("7.006492321624085e-46")
@example("1.4e-45")
def test_strtof_is_glibcs(text):
    raw = text.encode()
    theirs = c_scan(libc.strtof, raw)
    ours = C.strtof(text)
    assert (ours.end, ours.erange) == (theirs.end, theirs.erange), text
    if math.isnan(theirs.value):
        assert math.isnan(ours.value)
    else:
        assert same_float(ours.value, theirs.value), (text, ours, theirs)


@settings(max_examples=examples(1000))
@given(st.decimals(allow_nan=False, allow_infinity=False).map(str))
def test_strtof_rounds_decimals_once(text):
    theirs = c_scan(libc.strtof, text.encode())
    assert same_float(C.strtof(text).value, theirs.value), text


@given(texts)
def test_atoi_is_glibcs(text):
    assert C.atoi(text) == libc.atoi(text.encode())
    assert C.atoi(text.encode()) == libc.atoi(text.encode())


@given(st.integers(-(2**70), 2**70))
def test_casts_keep_the_low_bits(n):
    assert C.int32(n) == ctypes.c_int32(n).value
    assert C.uint32(n) == ctypes.c_uint32(n).value
    assert C.int64(n) == ctypes.c_int64(n).value
    assert C.uint64(n) == ctypes.c_uint64(n).value
    assert C.wrap(n, 16, True) == ctypes.c_int16(n).value


@given(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1).filter(bool))
def test_division_truncates_toward_zero(a, b):
    q, r = C.cdiv(a, b), C.cmod(a, b)
    assert q * b + r == a and abs(r) < abs(b) and (r == 0 or (r < 0) == (a < 0))


@given(st.floats(allow_nan=False, width=64))
def test_float32_is_a_c_cast(x):
    assert same_float(C.float32(x), ctypes.c_float(x).value)


@pytest.mark.parametrize(
    ("x", "bits", "signed", "expected"),
    [
        (math.nan, 32, True, -(2**31)),
        (2.0**31, 32, True, -(2**31)),
        (-1.5, 32, True, -1),
        (2.0**64, 64, False, 0),
        (1.5 * 2.0**64, 64, False, 0),  # (past 2**64 the indefinite value's top bit, cleared)
        (math.inf, 64, False, 0),
        (-1.0, 64, False, 2**64 - 1),
        (2.0**63 + 2048, 64, False, 2**63 + 2048),
        (math.nan, 64, False, 2**63),
        (1e20, 32, False, 0),
    ],
)
def test_double_to_int_as_x86_64(x, bits, signed, expected):
    assert C.to_int(x, bits, signed) == expected


def test_libm_answers():
    assert str(C.c_log(-1.0)) == "nan" and math.copysign(1, C.c_log(-1.0)) < 0
    assert C.c_log(0.0) == -math.inf
    assert math.copysign(1, C.c_sqrt(-0.0)) < 0
    assert math.copysign(1, C.c_round(-0.4)) < 0 and C.c_round(2.5) == 3.0
    assert math.copysign(1, C.c_floor(-0.0)) < 0
    assert C.fdiv(1.0, -0.0) == -math.inf and math.copysign(1, C.fdiv(0.0, 0.0)) < 0
    assert C.float32_of_int(2**24 + 1) == 2.0**24 and C.float32_of_int(2**60 + 2**36) == 2.0**60
    assert C.scan_int(" 42x", 32, True) == 42 and C.scan_int("x", 32, True) is None
    assert C.scan_int("-1", 32, False) == 2**32 - 1 and C.cstring("ab\0cd") == "ab"


# -- the agents' readers: strtoul_value, scan_hex, scan_ints against glibc's sscanf ------------

libc.sscanf.restype = ctypes.c_int


def c_sscanf(text: bytes, conversion: bytes, count: int, kind) -> list[int]:
    """glibc's sscanf of TEXT with COUNT CONVERSIONs in a row into KIND (a ctypes integer):
    the values it converted."""
    slots = [kind() for _ in range(count)]
    done = libc.sscanf(text, b" ".join([conversion] * count), *map(ctypes.byref, slots))
    return [slot.value for slot in slots[: max(done, 0)]]


@given(texts)
@example("18446744073709551615")
@example("99999999999999999999999")
@example("-1")
@example("\t+9abc")
@example("٣")
@example("0012")
def test_strtoul_value_is_glibcs(text):
    raw = text.encode()
    assert C.strtoul_value(text) == C.strtoul_value(raw) == c_scan(libc.strtoul, raw, 10).value


@given(texts, st.sampled_from([(b"%x", ctypes.c_uint, 32), (b"%lx", ctypes.c_ulong, 64)]))
@example(" -0x1f", (b"%x", ctypes.c_uint, 32))
@example("0A", (b"%x", ctypes.c_uint, 32))
def test_scan_hex_is_sscanfs(text, conversion):
    fmt, kind, bits = conversion
    theirs = c_sscanf(text.encode(), fmt, 1, kind)
    assert C.scan_hex(text, bits) == (theirs[0] if theirs else None), text


@given(
    texts,
    st.integers(1, 4),
    st.sampled_from(
        [
            (b"%lu", ctypes.c_ulong, 64, False),
            (b"%u", ctypes.c_uint, 32, False),
            (b"%d", ctypes.c_int, 32, True),
            (b"%ld", ctypes.c_long, 64, True),
        ]
    ),
)
@example("1 2 x 3", 3, (b"%lu", ctypes.c_ulong, 64, False))
@example("99999999999999999999 -1", 2, (b"%d", ctypes.c_int, 32, True))
@example(" 1 x 3\n", 3, (b"%lu", ctypes.c_ulong, 64, False))
@example(" 8 0 0.000 0.000\n", 2, (b"%u", ctypes.c_uint, 32, False))
@example("", 4, (b"%lu", ctypes.c_ulong, 64, False))
def test_scan_ints_are_sscanfs(text, count, conversion):
    fmt, kind, bits, signed = conversion
    theirs = c_sscanf(text.encode(), fmt, count, kind)
    assert C.scan_ints(text, count, bits, signed) == theirs, text
    assert C.scan_ints(text.encode(), count, bits, signed) == theirs, text


@pytest.mark.parametrize(
    ("text", "base"),
    [(b"  \t+42xyz", 10), (b"-2", 10), (b"-99999999999999999999999", 10), (b"  -", 10),
     (b"0x1F", 0), (b"0x1F", 16), (b"1f", 16), (b"017", 0), (b"0x", 0), (b"19", 0)],
)  # fmt: skip
def test_strtoul_reads_kernel_text_as_glibc(text, base):
    """The cases the linux agent's own strtoul was held to (agents/linux/cnumbers.py, now
    folded in here): "-1" wraps, too large is 2**64 - 1, "0x" alone reads its 0."""
    assert C.strtoul(text, base) == c_scan(libc.strtoul, text, base)


@given(st.floats(width=64))
def test_float_of_double_reads_a_unions_float_member(d):
    class Union(ctypes.Union):
        _fields_ = [("d", ctypes.c_double), ("f", ctypes.c_float)]

    theirs = Union(d=d).f
    ours = C.float_of_double(d)
    assert same_float(ours, theirs) or (math.isnan(ours) and math.isnan(theirs))


@given(st.lists(st.floats(allow_nan=False, width=64), max_size=20))
def test_c_sum_adds_left_to_right_in_doubles(values):
    total = ctypes.c_double(0.0)
    for x in values:
        total = ctypes.c_double(total.value + x)
    assert same_float(C.c_sum(values), total.value) or math.isnan(C.c_sum(values))
    assert C.c_sum([1e16, 1.0, -1e16]) == 0.0  # (math.fsum would say 1.0)


@given(st.integers(-(2**40), 2**40), st.integers(0, 10**9 - 1))
def test_long_double_is_x87s(sec, nsec):
    """pmtimespecToReal's sum, sec + nsec / 1e9 in long double, as NumPy's longdouble
    (gcc's x87 type on x86-64) computes it."""
    import numpy as np

    ld = np.longdouble
    theirs = ld(sec) + ld(nsec) / ld(10**9)
    ours = C.long_double(sec + C.long_double(Fraction(nsec, 10**9)))
    assert ours == Fraction(*theirs.as_integer_ratio())


@settings(max_examples=examples(2000))
@given(
    st.one_of(
        texts,
        st.decimals(allow_nan=False, allow_infinity=False).map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda x: f"{x:.2f}"),
    )
)
@example("-0")
@example("0.10")
@example("1.00000005960464477550")
@example("3.4028235677973366e38")
@example("1e-50")
def test_strtof_decimal_is_strtofs(text):
    theirs = c_scan(libc.strtof, text.encode()).value
    for ours in (C.strtof_decimal(text), C.strtof_decimal(text.encode())):
        assert same_float(ours, theirs) or (math.isnan(ours) and math.isnan(theirs)), text


@given(
    texts, st.integers(1, 4), st.sampled_from([(64, False), (32, False), (32, True), (64, True)])
)
@example("1 2 3\n", 3, (64, False))
@example("9223372036854775807 9999999999999999999 18446744073709551615", 3, (64, True))
@example(" 12\n", 1, (32, True))
def test_short_ways_read_as_the_long_way(text, count, kind):
    """scan_int's and scan_ints' plain-digits short ways give what strtol/strtoul read."""
    bits, signed = kind
    read = C.strtol if signed else C.strtoul
    found, at = [], 0
    while len(found) < count:
        scan = read(text, 10, at)
        if scan.end == at:
            break
        found.append(C.wrap(int(scan.value), bits, signed))
        at = scan.end
    assert C.scan_ints(text.encode(), count, bits, signed) == found
    first = C.scan_int(text, bits, signed)
    assert first == C.scan_int(text.encode(), bits, signed)
    assert first == (C.wrap(int(read(text).value), bits, signed) if read(text).end else None)
