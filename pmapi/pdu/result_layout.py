"""Cached layouts of recurring results: decode and re-encode a whole pmResult in a few calls.

pmcd asks its agents for the same metrics fetch after fetch, and pmlogger logs the
same metrics every interval, so the *layout* of a result (every byte except the
sender, the timestamp and the values) repeats.  A ResultLayout records one layout:
a template of its bytes, a mask of which bytes are layout, and one struct that reads
or writes every value at once.  Checking a PDU against it is one big-integer
compare; decoding it is one unpack; encoding is one pack into a copy of the
template.  Values stay column-wise in ColumnValueSets, which builds a ValueSet for
a metric only when asked, so relaying or recording a result never pays for
per-metric objects.

A layout is learned the second time a result of its size and metric count is
decoded the careful way (result.py), and only if the careful decode and the layout
agree on that PDU; so a result decoded here is always exactly what result.py would
give.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..types import PM_VAL_HDR_SIZE, PMType, ValFmt
from ..values import ARRAY_CODES, NO_BLOCKS, ValueSet

_INSITU = ValFmt.PM_VAL_INSITU
_STRING = PMType.PM_TYPE_STRING
_new = tuple.__new__

RESULT_PREAMBLE = 24
HIGHRES_PREAMBLE = 32
_TIMESTAMP_BYTES = {RESULT_PREAMBLE: (12, 20), HIGHRES_PREAMBLE: (16, 32)}
_NUMPMID_AT = {RESULT_PREAMBLE: 20, HIGHRES_PREAMBLE: 12}
_PREAMBLE = {
    RESULT_PREAMBLE: struct.Struct(">iiiiii"),  # len, type, from, sec, usec, numpmid
    HIGHRES_PREAMBLE: struct.Struct(">iiiiqq"),  # len, type, from, numpmid, sec, nsec
}
#: The layout cache holds at most this many template bytes (each layout also keeps a
#: mask and an expected value of about the same size).
_MAX_LAYOUT_BYTES = 16 << 20


class SetShape(NamedTuple):
    """One value set's layout: everything about it except its values.

    sizes holds each value's payload length for variable-size blocks (a string's
    UTF-8 length without its NUL; an aggregate's length), and is empty otherwise.
    """

    pmid: int
    numval: int
    valfmt: int
    vtype: int
    insts: tuple[int, ...]
    sizes: tuple[int, ...]


def shape_of(vsets: Sequence[ValueSet]) -> tuple[SetShape, ...] | None:
    """The layout-defining part of VSETS, or None if they cannot have a fixed layout.

    Raw string payloads (not "text NUL") are left to the careful path.
    """
    shapes = []
    for vs in vsets:
        sizes: tuple[int, ...] = ()
        if vs.numval > 0 and vs.valfmt != _INSITU and vs.vtype not in ARRAY_CODES:
            if vs.vtype == _STRING:
                if not all(type(v) is str for v in vs.values):
                    return None
                sizes = tuple(len(v.encode("utf-8", "surrogateescape")) for v in vs.values)
            else:
                sizes = tuple(len(v) for v in vs.values)
        shapes.append(SetShape(vs.pmid, vs.numval, vs.valfmt, vs.vtype, tuple(vs.insts), sizes))
    return tuple(shapes)


class ResultLayout:
    """The bytes of every result with one shape, minus sender, timestamp and values."""

    __slots__ = (
        "_args",
        "_numpmid",
        "_siblings",
        "_writer",
        "expect",
        "mask",
        "preamble",
        "shape",
        "size",
        "spans",
        "template",
        "values",
    )

    def __init__(self, shape: tuple[SetShape, ...], preamble: int, pdutype: int) -> None:
        self.shape = shape
        self.preamble = preamble
        self._siblings: dict[int, ResultLayout] = {preamble: self}
        vlist_size = sum(12 + 8 * s.numval if s.numval > 0 else 8 for s in shape)
        block_size = 0
        for s in shape:
            if s.numval > 0 and s.valfmt != _INSITU:
                code = ARRAY_CODES.get(s.vtype)
                if code is not None:
                    block_size += s.numval * (PM_VAL_HDR_SIZE + struct.calcsize(code))
                else:
                    extra = 1 if s.vtype == _STRING else 0  # the NUL
                    block_size += sum((PM_VAL_HDR_SIZE + n + extra + 3) & ~3 for n in s.sizes)
        self.size = size = preamble + vlist_size + block_size
        template = bytearray(size)
        mask = bytearray(b"\xff") * size
        struct.pack_into(">ii", template, 0, size, pdutype)
        struct.pack_into(">i", template, _NUMPMID_AT[preamble], len(shape))
        mask[8:12] = bytes(4)  # sender
        ts_from, ts_to = _TIMESTAMP_BYTES[preamble]
        mask[ts_from:ts_to] = bytes(ts_to - ts_from)
        head_fields: list[tuple[int, str]] = []  # (offset, code) of insitu values
        block_fields: list[tuple[int, str]] = []  # (offset, code) of block payloads
        spans = []  # per set: (kind, start, stop) into its part of the values
        pos = preamble
        cursor = preamble + vlist_size
        for s in shape:
            struct.pack_into(">Ii", template, pos, s.pmid, s.numval)
            if s.numval <= 0:
                spans.append(None)
                pos += 8
                continue
            struct.pack_into(">I", template, pos + 8, s.valfmt)
            pos += 12
            if s.valfmt == _INSITU:
                spans.append(("head", len(head_fields), len(head_fields) + s.numval))
                for inst in s.insts:
                    struct.pack_into(">I", template, pos, inst)
                    head_fields.append((pos + 4, "I"))
                    mask[pos + 4 : pos + 8] = bytes(4)
                    pos += 8
                continue
            code = ARRAY_CODES.get(s.vtype)
            start = len(block_fields)
            for i, inst in enumerate(s.insts):
                struct.pack_into(">II", template, pos, inst, cursor >> 2)
                pos += 8
                if code is not None:
                    payload = struct.calcsize(code)
                    field, vlen = code, PM_VAL_HDR_SIZE + payload
                else:
                    payload = s.sizes[i]
                    field = f"{payload}s"
                    vlen = PM_VAL_HDR_SIZE + payload + (1 if s.vtype == _STRING else 0)
                struct.pack_into(">I", template, cursor, (s.vtype << 24) | vlen)
                block_fields.append((cursor + PM_VAL_HDR_SIZE, field))
                payload_at = cursor + PM_VAL_HDR_SIZE
                mask[payload_at : payload_at + payload] = bytes(payload)
                stop = (cursor + vlen + 3) & ~3
                template[cursor + vlen : stop] = b"~" * (stop - cursor - vlen)  # NUL stays 0
                cursor = stop
            spans.append(("blocks", start, start + s.numval))
        fields = head_fields + block_fields
        # reading: skip the layout's bytes, read the values
        fmt, at = [">"], 0
        for offset, field in fields:
            if offset > at:
                fmt.append(f"{offset - at}x")
            fmt.append(field)
            at = offset + struct.calcsize(field)
        self.values = struct.Struct("".join(fmt))
        # writing: the layout's bytes after the preamble, in chunks between the values
        chunks, fmt, at = [], [">"], preamble
        for offset, field in fields:
            chunks.append(bytes(template[at:offset]))
            fmt += (f"{offset - at}s", field)
            at = offset + struct.calcsize(field)
        chunks.append(bytes(template[at:]))
        fmt.append(f"{size - at}s")
        self._writer = struct.Struct("".join(fmt))
        self._args: list[Any] = [None] * (2 * len(fields) + 1)
        self._args[0::2] = chunks
        self._numpmid = len(shape)
        nhead = len(head_fields)
        self.spans = tuple(
            None
            if span is None
            else (span[1] + nhead, span[2] + nhead)
            if span[0] == "blocks"
            else (span[1], span[2])
            for span in spans
        )
        self.template = bytes(template)
        self.mask = int.from_bytes(mask, "big")
        self.expect = int.from_bytes(self.template, "big") & self.mask

    def matches(self, buf: bytes) -> bool:
        """True if BUF has exactly this layout (any sender, timestamp and values)."""
        return len(buf) == self.size and int.from_bytes(buf, "big") & self.mask == self.expect

    def read(self, buf: bytes) -> ColumnValueSets:
        """The value sets of BUF, which matches() this layout."""
        return ColumnValueSets(self, self.values.unpack_from(buf))

    def sibling(self, preamble: int) -> ResultLayout:
        """The same shape laid out after a different preamble (RESULT vs HIGHRES_RESULT)."""
        other = self._siblings.get(preamble)
        if other is None:
            pdutype = 0x7015 if preamble == HIGHRES_PREAMBLE else 0x7001
            other = ResultLayout(self.shape, preamble, pdutype)
            other._siblings = self._siblings
            self._siblings[preamble] = other
        return other

    def write(
        self, values: tuple[Any, ...], pdutype: int, sender: int, sec: int, nsec: int
    ) -> bytes:
        """A PDU with this layout holding VALUES."""
        args = self._args.copy()
        args[1::2] = values
        if self.preamble == HIGHRES_PREAMBLE:
            head = _PREAMBLE[HIGHRES_PREAMBLE].pack(
                self.size, pdutype, sender, self._numpmid, sec, nsec
            )
        else:
            head = _PREAMBLE[RESULT_PREAMBLE].pack(
                self.size, pdutype, sender, sec, nsec // 1000, self._numpmid
            )
        return head + self._writer.pack(*args)


class ColumnValueSets(Sequence):
    """A decoded result's value sets, held column-wise; each ValueSet is built on demand.

    Behaves as a read-only sequence of ValueSet, equal to the tuple the careful
    decoder returns; encoding it again reuses its layout.
    """

    __slots__ = ("_cache", "layout", "values")

    def __init__(self, layout: ResultLayout, values: tuple[Any, ...]) -> None:
        self.layout = layout
        #: Every value of the PDU as the layout's struct reads them: insitu words, fixed
        #: payloads, and string/aggregate payloads as bytes (strings without their NUL).
        self.values = values
        self._cache: list[ValueSet | None] | None = None  # made on first access

    def __len__(self) -> int:
        return len(self.layout.shape)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        cache = self._cache
        if cache is None:
            cache = self._cache = [None] * len(self.layout.shape)
        vs = cache[index]
        if vs is None:
            vs = cache[index] = _materialize(self.layout, self.values, index)
        return vs

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ColumnValueSets({tuple(self)!r})"


def _text(payload: bytes) -> str | bytes:
    """A string payload read by a layout (its NUL already checked): as result.py reads it."""
    if b"\0" in payload:
        return payload + b"\0"  # not plain text: the raw payload, NUL included
    return payload.decode("utf-8", "surrogateescape")


def _materialize(layout: ResultLayout, values: tuple[Any, ...], index: int) -> ValueSet:
    """Build the ValueSet for metric INDEX from the PDU's value column."""
    s = layout.shape[index]
    span = layout.spans[index]
    if span is None:
        return _new(ValueSet, (s.pmid, s.numval, _INSITU, NO_BLOCKS, array("I"), array("I")))
    start, stop = span
    insts = array("I", s.insts)
    if s.valfmt == _INSITU:
        return _new(
            ValueSet, (s.pmid, s.numval, _INSITU, NO_BLOCKS, insts, array("I", values[start:stop]))
        )
    column = values[start:stop]
    if s.vtype == _STRING:
        column = tuple(map(_text, column))
    return _new(ValueSet, (s.pmid, s.numval, s.valfmt, s.vtype, insts, column))


class LayoutCache:
    """Layouts learned from decoded results, looked up by (size, numpmid, preamble)."""

    def __init__(self, limit: int = _MAX_LAYOUT_BYTES) -> None:
        self.limit = limit
        self._layouts: dict[tuple[int, int, int], list[ResultLayout]] = {}
        self._seen: set[tuple[int, int, int]] = set()
        self._bytes = 0
        #: The layouts seen with a given (size, numpmid, preamble), newest first.
        self.candidates = self._layouts.get

    def learn(
        self, buf: bytes, numpmid: int, preamble: int, vsets: Sequence[ValueSet], pdutype: int
    ) -> None:
        """Remember the layout of BUF (carefully decoded as VSETS) once it recurs."""
        key = (len(buf), numpmid, preamble)
        if key not in self._seen:
            if len(self._seen) >= 4096:
                self._seen.clear()
            self._seen.add(key)
            return
        if len(buf) > self.limit // 8:
            return
        shape = shape_of(vsets)
        if shape is None:
            return
        layout = ResultLayout(shape, preamble, pdutype)
        if not layout.matches(buf):
            return  # laid out differently from libpcp's encoder: keep decoding carefully
        if layout.read(buf) != vsets:
            return
        if self._bytes + layout.size > self.limit:
            self.clear()
        candidates = self._layouts.setdefault(key, [])
        candidates.insert(0, layout)
        self._bytes += layout.size
        for dropped in candidates[4:]:
            self._bytes -= dropped.size
        del candidates[4:]

    def clear(self) -> None:
        self._layouts.clear()
        self._seen.clear()
        self._bytes = 0


#: The process-wide cache the PDU decoder uses.
LAYOUTS = LayoutCache()
