"""Fuzzing the decoder with mutated real PCP 6 PDUs: PDUs or one clean error, nothing else.

Four mutation families, 25,000 examples each (100,000 in all): random bytes
overwritten, count and length words set to hostile values, PDUs cut short or
extended, and PDUs spliced together.  The header length is usually fixed up so
mutations reach the body decoders.  Every input must either decode or raise
PDUError; a decoded PDU must hold no more elements than its input has bytes (so
no input makes the decoder allocate beyond its size) and must encode again.
"""

from __future__ import annotations

import struct
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from purepcp.pmapi.pdu.codec import PDUError, decode, encode
from purepcp.pmapi.pdu.constants import PDUType
from purepcp.pmapi.pdu.framer import PDUFramer, split_stream
from tests.support.examples import examples

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pdus"
FRAMES = [f for s in sorted(FIXTURES.glob("*.bin")) for f in split_stream(s.read_bytes())]
EXAMPLES = examples(25_000)
HOSTILE = [
    0,
    1,
    2,
    3,
    4,
    255,
    0x7FFF,
    0xFFFF,
    0x10000,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFF,
    0xFFFFFFFE,
    0x3FFFFFFF,
    0x00FFFFFF,
    0x06FFFFFF,
]
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

frames = st.sampled_from(FRAMES)


def _fix_length(data: bytearray, fix: bool) -> bytes:
    if fix and len(data) >= 4:
        data[0:4] = struct.pack(">i", len(data))
    return bytes(data)


def _elements(obj) -> int:
    """How many scalars a decoded record holds (its size, independent of Python overheads)."""
    if isinstance(obj, str | bytes):
        return max(1, len(obj))
    if isinstance(obj, Sequence) or type(obj).__name__ == "array":
        return sum(_elements(x) for x in obj) + 1
    if hasattr(obj, "__dataclass_fields__"):
        return sum(_elements(getattr(obj, f)) for f in obj.__dataclass_fields__)
    return 1


def check(data: bytes) -> None:
    """DATA decodes (and then re-encodes) or raises PDUError; nothing else may escape."""
    try:
        pdu = decode(data)
    except PDUError:
        return
    assert _elements(pdu) <= 2 * len(data) + 16
    encode(pdu)


@pytest.mark.slow  # 25,000 examples: about a minute
@FUZZ
@given(
    frames,
    st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1, max_size=6),
    st.booleans(),
)
def test_fuzz_overwritten_bytes(frame, edits, fix):
    data = bytearray(frame)
    for pos, byte in edits:
        data[pos % len(data)] = byte
    check(_fix_length(data, fix))


@pytest.mark.slow  # 25,000 examples: about a minute
@FUZZ
@given(
    frames,
    st.lists(st.tuples(st.integers(0, 1 << 16), st.sampled_from(HOSTILE)), min_size=1, max_size=3),
    st.booleans(),
)
def test_fuzz_hostile_words(frame, edits, fix):
    data = bytearray(frame)
    words = len(data) // 4
    for pos, word in edits:
        at = 4 * (pos % words)
        data[at : at + 4] = struct.pack(">I", word)
    check(_fix_length(data, fix or edits[0][0] % words == 0))


@pytest.mark.slow  # 25,000 examples: about a minute
@FUZZ
@given(frames, st.integers(0, 1 << 16), st.binary(max_size=64), st.booleans())
def test_fuzz_cut_and_extended(frame, cut, extra, fix):
    data = bytearray(frame[: cut % (len(frame) + 1)] + extra)
    check(_fix_length(data, fix))


@pytest.mark.slow  # 25,000 examples: about a minute
@FUZZ
@given(frames, frames, st.integers(0, 1 << 16), st.booleans())
def test_fuzz_spliced(first, second, at, fix):
    at = at % (len(first) + 1)
    data = bytearray(first[:at] + second[at:])
    check(_fix_length(data, fix))


@settings(max_examples=examples(2_000), deadline=None, database=None)
@given(st.lists(st.sampled_from(FRAMES), max_size=6), st.binary(max_size=40), st.integers(1, 64))
def test_fuzz_framer_stream(chunks, junk, size):
    """A stream of real PDUs with junk inserted: PDUs, then at worst one PDUError."""
    stream = b"".join(chunks) + junk
    framer = PDUFramer(ceiling=1 << 20)
    try:
        for i in range(0, len(stream), size):
            framer.feed(stream[i : i + size])
            for frame in framer.frames():
                check(frame)
        framer.close()
    except PDUError:
        pass


@pytest.mark.parametrize("pdutype", [t for t in PDUType if t != PDUType.PDU_CONTROL_REQ])
def test_hostile_counts_allocate_nothing_big(pdutype):
    """Every count field set to 2**31-1 in a small PDU: a quick error, no big allocation."""
    for frame in [f for f in FRAMES if int.from_bytes(f[4:8], "big") == pdutype][:3]:
        for at in range(12, min(len(frame), 64), 4):
            data = bytearray(frame)
            data[at : at + 4] = struct.pack(">i", 0x7FFFFFFF)
            tracemalloc.start()
            try:
                check(bytes(data))
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert peak < 1_000_000 + 50 * len(data), (pdutype.label, at, peak)
