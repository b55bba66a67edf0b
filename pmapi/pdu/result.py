"""Fast encode and decode of pmResult bodies (PDU_RESULT, PDU_HIGHRES_RESULT, archive records).

The layout is declared in layouts.py.  This module moves it as whole arrays of
32-bit words: the record is read into one ``array('I')`` and byte-swapped once,
and each value set's instance ids and values are strided slices of it, so a value
set costs a handful of C-level array operations however many values it holds.
Fixed-size value blocks (64-bit, float, double) laid out back to back, as every
PCP encoder lays them out, are converted the same way; anything else takes the
careful path, one block at a time.

The decoder enforces what libpcp's __pmDecodeValueSet enforces: every offset and
length inside the record, value blocks starting right after the value sets, and
the blocks exactly filling the rest.  It also requires one block type per value
set (PCP's encoders always produce that) and fixed-size payloads of the right
size, so every decoded value is a proper typed value.
"""

from __future__ import annotations

import struct
import sys
from array import array
from functools import lru_cache
from typing import Any

from ..errors import PM_ERR_IPC, PMError
from ..types import PM_VAL_HDR_SIZE, PM_VAL_VLEN_MAX, PMType, ValFmt
from ..values import (
    ARRAY_CODES,
    NO_BLOCKS,
    Result,
    Timestamp,
    ValueSet,
    block_atom,
    block_payload,
)
from .result_layout import LAYOUTS, ColumnValueSets

_INSITU = ValFmt.PM_VAL_INSITU
_DPTR = ValFmt.PM_VAL_DPTR
_SPTR = ValFmt.PM_VAL_SPTR
_LITTLE = sys.byteorder == "little"
_STRING_TYPE = PMType.PM_TYPE_STRING
_STRING_HEADER = PMType.PM_TYPE_STRING << 24
_WRAP = 1 << 32
_new = tuple.__new__

_PREAMBLE = struct.Struct(">iiiiii")  # header + pmTimeval + numpmid
_HR_PREAMBLE = struct.Struct(">iiiiqq")  # header + numpmid + 64-bit timespec
_WORD = struct.Struct(">I")
_HDR_TYPE = struct.Struct(">i")
_known_layouts = LAYOUTS.candidates

RESULT_PREAMBLE = _PREAMBLE.size
HIGHRES_PREAMBLE = _HR_PREAMBLE.size

#: Words per block (header + payload) for each fixed-size block type.
_BLOCK_WORDS = {vtype: 1 + array(code).itemsize // 4 for vtype, code in ARRAY_CODES.items()}
#: The header word of a well-formed fixed-size block -> (payload code, words per block).
_FIXED_HEADERS = {
    (vtype << 24) | (4 * step): (ARRAY_CODES[vtype], step) for vtype, step in _BLOCK_WORDS.items()
}


class ResultDecodeError(PMError):
    """A malformed pmResult: PM_ERR_IPC with what went wrong and where."""

    def __init__(self, detail: str) -> None:
        super().__init__(PM_ERR_IPC, detail)


@lru_cache(maxsize=1024)
def _seq(first: int, n: int, step: int) -> array:
    """The word offsets of N blocks of STEP words placed back to back from FIRST.

    Cached: a steady stream of fetches repeats the same layouts.  Never handed out.
    """
    return array("I", range(first, first + n * step, step))


@lru_cache(maxsize=1024)
def _repeat(word: int, n: int) -> array:
    """WORD N times; compared against (never handed out), so it can be shared."""
    return array("I", (word,)) * n


@lru_cache(maxsize=1024)
def _block_struct(code: str, n: int) -> struct.Struct:
    """N back-to-back blocks of a fixed-size type: header word, big-endian payload."""
    return struct.Struct(">" + ("I" + code) * n)


@lru_cache(maxsize=1024)
def _payload_struct(code: str, n: int) -> struct.Struct:
    """The payloads of N back-to-back fixed-size blocks, skipping each header word."""
    return struct.Struct(">" + ("4x" + code) * n)


def _as_words(values: Any) -> array:
    """Insitu values as an array of raw 32-bit words (accepting signed ints too)."""
    if type(values) is array:
        if values.typecode == "I":
            return values
        return array("I", values.tobytes()) if values.itemsize == 4 else array("I", values)
    try:
        return array("I", values)
    except OverflowError:
        return array("I", array("i", values).tobytes())


# -- encoding -------------------------------------------------------------------------


def encode_value_sets(
    vsets: tuple[ValueSet, ...], preamble: int, batched: bool = True
) -> tuple[list[bytes], int]:
    """The value sets and their blocks as byte chunks, placed after PREAMBLE bytes.

    Returns the chunks and the total record size.  Block offsets are word offsets
    from the start of the record (the PDU header or archive record header).
    BATCHED packs each run of fixed-size blocks of one type in one call (quicker);
    without it each set's blocks are packed on their own, which is how a value
    that cannot be encoded is traced to its set for the error.
    """
    nwords = 0
    for vs in vsets:
        nwords += 3 + 2 * vs.numval if vs.numval > 0 else 2
    words = array("I", (0,)) * nwords
    cursor = (preamble >> 2) + nwords  # word where the next value block goes
    blocks: list[bytes] = []
    # consecutive fixed-size blocks of one type are packed together, in one call
    run_code, run_flat, run_n = "", [], 0
    o = 0
    try:
        for vs in vsets:
            n = vs.numval
            words[o] = vs.pmid
            if n <= 0:
                words[o + 1] = n % _WRAP
                o += 2
                continue
            valfmt = vs.valfmt
            words[o + 1] = n
            words[o + 2] = valfmt
            e = o + 3 + 2 * n
            insts = vs.insts
            words[o + 3 : e : 2] = insts if type(insts) is array else array("I", insts)
            if valfmt == _INSITU:
                words[o + 4 : e : 2] = _as_words(vs.values)
            elif valfmt in (_DPTR, _SPTR):
                vtype = vs.vtype
                step = _BLOCK_WORDS.get(vtype)
                if step is not None and not batched:
                    words[o + 4 : e : 2] = _seq(cursor, n, step)
                    blocks.append(_fixed_blocks(vtype, step, n, vs.values))
                    cursor += step * n
                elif step is not None:
                    values = vs.values
                    if len(values) != n:
                        raise ValueError(f"numval {n} but {len(values)} values")
                    code = ARRAY_CODES[vtype]
                    if code != run_code:
                        if run_n:
                            blocks.append(_block_struct(run_code, run_n).pack(*run_flat))
                        run_code, run_flat, run_n = code, [], 0
                    header = (vtype << 24) | (4 * step)
                    if n == 1:
                        words[o + 4] = cursor
                        run_flat += (header, values[0])
                    else:
                        words[o + 4 : e : 2] = _seq(cursor, n, step)
                        for value in values:
                            run_flat += (header, value)
                    run_n += n
                    cursor += step * n
                else:
                    if run_n:
                        blocks.append(_block_struct(run_code, run_n).pack(*run_flat))
                        run_code, run_flat, run_n = "", [], 0
                    chunk, offsets = _var_blocks(vs, cursor)
                    words[o + 4 : e : 2] = offsets
                    blocks.append(chunk)
                    cursor += len(chunk) >> 2
            else:
                raise PMError(PM_ERR_IPC, f"value set for PMID {vs.pmid:#x}: bad valfmt {valfmt}")
            o = e
        if run_n:
            blocks.append(_block_struct(run_code, run_n).pack(*run_flat))
    except (ValueError, TypeError, OverflowError, struct.error) as exc:
        if batched:  # a value that will not go: again set by set, to say which set it is in
            return encode_value_sets(vsets, preamble, batched=False)
        raise PMError(
            PM_ERR_IPC, f"value set for PMID {vs.pmid:#x} cannot be encoded: {exc}"
        ) from None
    if _LITTLE:
        words.byteswap()
    blocks.insert(0, words.tobytes())
    return blocks, cursor << 2


def _fixed_blocks(vtype: int, step: int, n: int, values: Any) -> bytes:
    """N blocks of a fixed-size type: header word, then the big-endian payload."""
    if len(values) != n:
        raise ValueError(f"numval {n} but {len(values)} values")
    flat: list[Any] = [(vtype << 24) | (4 * step)] * (2 * n)
    flat[1::2] = values
    return _block_struct(ARRAY_CODES[vtype], n).pack(*flat)


#: NUL terminator plus '~' padding, by a string block's (vlen & 3).
_STRING_TAILS = (b"\0", b"\0~~~", b"\0~~", b"\0~")


def _string_blocks(values: Any, first: int) -> tuple[bytes, array]:
    """String blocks: header, UTF-8 text, NUL, '~' padding; raw bytes go as they are."""
    parts: list[bytes] = []
    offsets = array("I")
    word = first
    for value in values:
        if type(value) is str:
            text = value.encode("utf-8", "surrogateescape")
            vlen = len(text) + 5
            parts += (_WORD.pack(_STRING_HEADER | vlen), text, _STRING_TAILS[vlen & 3])
        else:
            text = bytes(value)
            vlen = len(text) + 4
            parts += (_WORD.pack(_STRING_HEADER | vlen), text, b"~" * (-vlen % 4))
        if vlen > PM_VAL_VLEN_MAX:
            raise ValueError(f"string of {vlen} bytes is longer than PCP allows")
        offsets.append(word)
        word += (vlen + 3) >> 2
    return b"".join(parts), offsets


def _var_blocks(vs: ValueSet, first: int) -> tuple[bytes, array]:
    """Blocks of variable size (strings, aggregates, events), one per value."""
    vtype = vs.vtype
    if vtype == _STRING_TYPE:
        if len(vs.values) != vs.numval:
            raise ValueError(f"numval {vs.numval} but {len(vs.values)} values")
        return _string_blocks(vs.values, first)
    parts: list[bytes] = []
    offsets = array("I")
    word = first
    if len(vs.values) != vs.numval:
        raise ValueError(f"numval {vs.numval} but {len(vs.values)} values")
    for atom in vs.values:
        payload = block_payload(vtype, atom)
        vlen = PM_VAL_HDR_SIZE + len(payload)
        if vlen > PM_VAL_VLEN_MAX:
            raise ValueError(f"value of {vlen} bytes is larger than PCP allows")
        pad = -vlen % 4
        parts.append(_WORD.pack((vtype << 24) | vlen) + payload + b"~" * pad)
        offsets.append(word)
        word += (vlen + pad) >> 2
    return b"".join(parts), offsets


def encode_result(result: Result, highres: bool, sender: int, pdutype: int) -> bytes:
    """A whole RESULT or HIGHRES_RESULT PDU for RESULT."""
    ts = result.timestamp
    vsets = result.vsets
    if type(vsets) is ColumnValueSets:  # decoded through a layout: re-send what it was read from
        preamble = HIGHRES_PREAMBLE if highres else RESULT_PREAMBLE
        return vsets.layout.relay(vsets.source, preamble, pdutype, sender, ts.sec, ts.nsec)
    try:
        if highres:
            chunks, size = encode_value_sets(result.vsets, HIGHRES_PREAMBLE)
            head = _HR_PREAMBLE.pack(size, pdutype, sender, len(result.vsets), ts.sec, ts.nsec)
        else:
            chunks, size = encode_value_sets(result.vsets, RESULT_PREAMBLE)
            head = _PREAMBLE.pack(size, pdutype, sender, ts.sec, ts.nsec // 1000, len(result.vsets))
    except struct.error as exc:
        raise PMError(PM_ERR_IPC, f"result cannot be encoded: {exc}") from None
    chunks.insert(0, head)
    return b"".join(chunks)


# -- decoding -------------------------------------------------------------------------


def decode_result(buf: bytes, highres: bool) -> Result:
    """Decode a whole RESULT (or HIGHRES_RESULT) PDU, header included."""
    end = len(buf)
    if highres:
        if end < HIGHRES_PREAMBLE:
            raise ResultDecodeError(f"PDU of {end} bytes is shorter than its preamble")
        _, _, _, numpmid, sec, nsec = _HR_PREAMBLE.unpack_from(buf)
        stamp = _new(Timestamp, (sec, nsec))
        start = HIGHRES_PREAMBLE
    else:
        if end < RESULT_PREAMBLE:
            raise ResultDecodeError(f"PDU of {end} bytes is shorter than its preamble")
        _, _, _, sec, usec, numpmid = _PREAMBLE.unpack_from(buf)
        stamp = _new(Timestamp, (sec, usec * 1000))
        start = RESULT_PREAMBLE
    candidates = _known_layouts((end, numpmid, start))
    if candidates:  # a layout seen before: one check and one unpack (result_layout.py)
        for layout in candidates:
            if layout.matches(buf):
                return _new(Result, (stamp, ColumnValueSets(layout, buf)))
    vsets = decode_value_sets(buf, start, numpmid)
    LAYOUTS.learn(buf, numpmid, start, vsets, _HDR_TYPE.unpack_from(buf, 4)[0])
    return _new(Result, (stamp, vsets))


def decode_value_sets(buf: bytes, start: int, numpmid: int) -> tuple[ValueSet, ...]:
    """NUMPMID value sets from byte START of BUF, with their blocks, filling BUF exactly.

    Block offsets are word offsets from the start of BUF (the PDU or archive record).
    """
    end = len(buf)
    if end & 3:
        raise ResultDecodeError(f"length {end} is not a whole number of 4-byte words")
    nw = end >> 2
    o = start >> 2
    if numpmid < 0 or numpmid * 2 > nw - o:
        raise ResultDecodeError(f"numpmid {numpmid} does not fit in {end - start} bytes")
    words = array("I")
    words.frombytes(buf)
    if _LITTLE:
        words.byteswap()
    vsets: list[ValueSet] = []
    append = vsets.append
    lowest = nw  # first word of the block region, as the blocks themselves say
    used = 0  # words of blocks seen
    for _ in range(numpmid):
        if o + 2 > nw:
            raise ResultDecodeError(f"value set at byte {o << 2} runs past the end ({end})")
        pmid = words[o]
        n = words[o + 1]
        if n == 0 or n & 0x80000000:
            append(
                _new(
                    ValueSet,
                    (pmid, n - _WRAP if n else 0, _INSITU, NO_BLOCKS, array("I"), array("I")),
                )
            )
            o += 2
            continue
        e = o + 3 + 2 * n
        if e > nw:
            raise ResultDecodeError(
                f"value set at byte {o << 2} claims {n} values, "
                f"more than the {end - (o << 2)} bytes left"
            )
        valfmt = words[o + 2]
        insts = words[o + 3 : e : 2]
        vals = words[o + 4 : e : 2]
        if valfmt == _INSITU:
            append(_new(ValueSet, (pmid, n, _INSITU, NO_BLOCKS, insts, vals)))
            o = e
            continue
        if valfmt != _DPTR and valfmt != _SPTR:
            raise ResultDecodeError(f"value set at byte {o << 2}: bad valfmt {valfmt}")
        o = e
        first = vals[0]
        if first >= nw:
            raise ResultDecodeError(
                f"PMID {pmid:#x}: value block at word {first} is outside the {nw}-word record"
            )
        header = words[first]
        fixed = _FIXED_HEADERS.get(header)
        if fixed is not None:
            code, step = fixed
            stop = first + n * step
            if (
                stop <= nw
                and vals == _seq(first, n, step)
                and words[first:stop:step] == _repeat(header, n)
            ):
                values = _payload_struct(code, n).unpack_from(buf, first << 2)
                if first < lowest:
                    lowest = first
                used += n * step
                append(_new(ValueSet, (pmid, n, valfmt, header >> 24, insts, values)))
                continue
        if header >> 24 == _STRING_TYPE:
            values, low, size = _decode_strings(buf, words, pmid, vals)
        else:
            values, low, size = _decode_blocks_slowly(buf, words, pmid, header >> 24, vals)
        if low < lowest:
            lowest = low
        used += size
        append(_new(ValueSet, (pmid, n, valfmt, header >> 24, insts, values)))
    if not used and lowest == nw:
        if o != nw:
            raise ResultDecodeError(f"{end - (o << 2)} unexpected bytes after the value sets")
    elif lowest != o:
        raise ResultDecodeError(
            f"value blocks start at byte {lowest << 2}, not right after "
            f"the value sets (byte {o << 2})"
        )
    elif o + used != nw:
        raise ResultDecodeError(
            f"value blocks cover {used << 2} bytes but {(nw - o) << 2} follow the value sets"
        )
    return tuple(vsets)


def _decode_strings(buf, words, pmid, offsets):
    """String blocks: str for "text NUL", the raw payload for anything else."""
    nw = len(words)
    end = nw << 2
    texts: list[str | bytes] = []
    append = texts.append
    lowest = nw
    used = 0
    for word in offsets:
        if word >= nw:
            raise ResultDecodeError(
                f"PMID {pmid:#x}: value block at word {word} is outside the {nw}-word record"
            )
        header = words[word]
        vlen = header & 0xFFFFFF
        pos = word << 2
        stop = pos + vlen
        if header >> 24 != _STRING_TYPE:
            raise ResultDecodeError(
                f"PMID {pmid:#x}: value blocks of types "
                f"{_STRING_TYPE} and {header >> 24} in one value set"
            )
        if vlen < PM_VAL_HDR_SIZE or stop > end:
            raise ResultDecodeError(
                f"PMID {pmid:#x}: value block at byte {pos} has bad length {vlen}"
            )
        if buf.find(0, pos + 4, stop) == stop - 1:
            append(buf[pos + 4 : stop - 1].decode("utf-8", "surrogateescape"))
        else:
            append(buf[pos + 4 : stop])
        if word < lowest:
            lowest = word
        used += (vlen + 3) >> 2
    return tuple(texts), lowest, used


def _decode_blocks_slowly(buf, words, pmid, vtype, offsets):
    """One block at a time, checking each; returns (values, lowest word, words used)."""
    nw = len(words)
    atoms = []
    lowest = nw
    used = 0
    for word in offsets:
        if word + 1 > nw:
            raise ResultDecodeError(
                f"PMID {pmid:#x}: value block at word {word} is outside the {nw}-word record"
            )
        header = words[word]
        vlen = header & 0xFFFFFF
        pos = word << 2
        if header >> 24 != vtype:
            raise ResultDecodeError(
                f"PMID {pmid:#x}: value blocks of types {vtype} and {header >> 24} in one value set"
            )
        if vlen < PM_VAL_HDR_SIZE or pos + vlen > nw << 2:
            raise ResultDecodeError(
                f"PMID {pmid:#x}: value block at byte {pos} has bad length {vlen}"
            )
        try:
            atoms.append(block_atom(vtype, bytes(buf[pos + 4 : pos + vlen])))
        except PMError as exc:
            raise ResultDecodeError(
                f"PMID {pmid:#x}: value block at byte {pos}: {exc.detail}"
            ) from None
        lowest = min(lowest, word)
        used += (vlen + 3) >> 2
    return tuple(atoms), lowest, used
