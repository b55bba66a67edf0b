"""Cached layouts of recurring results: decode and re-encode a whole pmResult in a few calls.

pmcd asks its agents for the same metrics fetch after fetch, and pmlogger logs the
same metrics every interval, so the *layout* of a result (every byte except the
sender, the timestamp and the values) repeats.  A ResultLayout records one layout:
a template of its bytes, a mask of which bytes are layout, and one struct that reads
every value at once.  Checking a PDU against it is a bytes compare (its longest
stretch of layout) and two masked big-integer compares (the rest); decoding it is
one unpack.  Values stay column-wise in ColumnValueSets, which
builds a ValueSet for a metric only when asked, so relaying or recording a result
never pays for per-metric objects.  Encoding a decoded result again (pmcd turning
an agent's RESULT into a client's HIGHRES_RESULT) copies the PDU it was read from,
with a new header and, where a value set has blocks, its value list (whose offsets
move) from the target layout.

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
        "_head",
        "_numpmid",
        "_relay_plans",
        "_run",
        "_siblings",
        "_tail",
        "_vlist_runs",
        "fields",
        "pmids",
        "preamble",
        "shape",
        "size",
        "spans",
        "template",
        "values",
        "vlist_end",
    )

    def __init__(self, shape: tuple[SetShape, ...], preamble: int, pdutype: int) -> None:
        self.shape = shape
        self.pmids = tuple(s.pmid for s in shape)
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
        self.fields = fields = head_fields + block_fields
        # reading: skip the layout's bytes, read the values
        fmt, at = [">"], 0
        for offset, field in fields:
            if offset > at:
                fmt.append(f"{offset - at}x")
            fmt.append(field)
            at = offset + struct.calcsize(field)
        self.values = struct.Struct("".join(fmt))
        # relaying: which stretches of the value lists hold block offsets (those move
        # with the preamble) and which hold insitu values (copied as they are)
        runs: list[list[Any]] = []
        pos = preamble
        for s in shape:
            end = pos + (12 + 8 * s.numval if s.numval > 0 else 8)
            moves = s.numval > 0 and s.valfmt != _INSITU
            if runs and runs[-1][2] == moves:
                runs[-1][1] = end - preamble
            else:
                runs.append([pos - preamble, end - preamble, moves])
            pos = end
        self._vlist_runs = tuple((a, b, moves) for a, b, moves in runs)
        self._relay_plans: dict[int, tuple[bytes | slice, ...]] = {}
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
        self.vlist_end = preamble + vlist_size
        self.template = bytes(template)
        # checking: the longest stretch of layout bytes is compared as bytes, what comes
        # before and after it as masked integers
        a, b = _longest_run(mask, preamble)
        self._run = (a, b, self.template[a:b])
        self._head = _masked(self.template[:a], mask[:a])
        self._tail = _masked(self.template[b:], mask[b:])

    def matches(self, buf: bytes) -> bool:
        """True if BUF has exactly this layout (any sender, timestamp and values)."""
        if len(buf) != self.size:
            return False
        a, b, run = self._run
        head_mask, head = self._head
        tail_mask, tail = self._tail
        return (
            buf[a:b] == run
            and int.from_bytes(buf[:a], "little") & head_mask == head
            and int.from_bytes(buf[b:], "little") & tail_mask == tail
        )

    def read(self, buf: bytes) -> ColumnValueSets:
        """The value sets of BUF, which matches() this layout."""
        return ColumnValueSets(self, buf)

    def sibling(self, preamble: int) -> ResultLayout:
        """The same shape laid out after a different preamble (RESULT vs HIGHRES_RESULT)."""
        other = self._siblings.get(preamble)
        if other is None:
            pdutype = 0x7015 if preamble == HIGHRES_PREAMBLE else 0x7001
            other = ResultLayout(self.shape, preamble, pdutype)
            other._siblings = self._siblings
            self._siblings[preamble] = other
        return other

    def relay(
        self, buf: bytes, preamble: int, pdutype: int, sender: int, sec: int, nsec: int
    ) -> bytes:
        """BUF (which matches() this layout) sent again after PREAMBLE, with a new header.

        A block's offset counts words from the start of the PDU, so the value lists
        of sets with blocks come from the target layout's template; everything else
        (insitu values, the blocks) is copied from BUF.
        """
        size = self.size + preamble - self.preamble
        if preamble == HIGHRES_PREAMBLE:
            head = _PREAMBLE[HIGHRES_PREAMBLE].pack(size, pdutype, sender, self._numpmid, sec, nsec)
        else:
            head = _PREAMBLE[RESULT_PREAMBLE].pack(
                size, pdutype, sender, sec, nsec // 1000, self._numpmid
            )
        if preamble == self.preamble:
            return head + buf[preamble:]
        plan = self._relay_plans.get(preamble)
        if plan is None:
            plan = self._relay_plans[preamble] = self._relay_plan(preamble)
        parts = [head]
        parts += [piece if type(piece) is bytes else buf[piece] for piece in plan]
        return b"".join(parts)

    def _relay_plan(self, preamble: int) -> tuple[bytes | slice, ...]:
        """What relay() joins after the header: template bytes, or slices of the PDU."""
        template = self.sibling(preamble).template
        mine = self.preamble
        plan: list[bytes | slice] = [
            template[preamble + a : preamble + b] if moves else slice(mine + a, mine + b)
            for a, b, moves in self._vlist_runs
        ]
        plan.append(slice(self.vlist_end, None))
        return tuple(plan)


class ResultWriter:
    """Writes a result of one layout from its values alone: one struct packs the whole
    PDU, the layout's bytes going in as fixed byte strings between the values.

    An agent answering the same list of metrics fetch after fetch keeps one, so a
    result costs a list copy and one pack, not a value-set object per metric.  The
    PDU has sender 0 and a zero timestamp: relay() gives it its real header.
    """

    __slots__ = ("_args", "_struct", "layout")

    def __init__(self, layout: ResultLayout, signed: frozenset[int] = frozenset()) -> None:
        """SIGNED: the indexes of insitu sets whose values are PM_TYPE_32 (packed signed)."""
        self.layout = layout
        codes = [code for _, code in layout.fields]
        for index in signed:
            span = layout.spans[index]
            if span is not None and layout.shape[index].valfmt == _INSITU:
                codes[span[0] : span[1]] = ["i"] * (span[1] - span[0])
        template = layout.template
        fmt, args, at = [">"], [], 0
        for (offset, _), code in zip(layout.fields, codes, strict=True):
            fmt.append(f"{offset - at}s{code}")
            args += (template[at:offset], None)
            at = offset + struct.calcsize(code)
        fmt.append(f"{len(template) - at}s")
        args.append(template[at:])
        self._struct = struct.Struct("".join(fmt))
        self._args = args

    def pack(self, values: list[Any]) -> bytes:
        """The PDU holding VALUES, in the layout's order (every insitu value, then every
        block's payload: a number, or a string's UTF-8 bytes).  struct.error,
        OverflowError or TypeError if one does not fit its field."""
        args = self._args.copy()
        args[1::2] = values
        return self._struct.pack(*args)


def _longest_run(mask: bytes | bytearray, start: int) -> tuple[int, int]:
    """The longest stretch of all-layout bytes in MASK from START on (may be empty)."""
    best = (start, start)
    at = start
    while at < len(mask):
        stop = mask.find(0, at)
        if stop < 0:
            stop = len(mask)
        if stop - at > best[1] - best[0]:
            best = (at, stop)
        at = mask.find(255, stop)
        if at < 0:
            break
    return best


def _masked(template: bytes, mask: bytes | bytearray) -> tuple[int, int]:
    """(mask, expected value) as little-endian integers, for a masked compare."""
    bits = int.from_bytes(mask, "little")
    return bits, int.from_bytes(template, "little") & bits


class ColumnValueSets(Sequence):
    """A decoded result's value sets, held column-wise; each ValueSet is built on demand.

    Behaves as a read-only sequence of ValueSet, equal to the tuple the careful
    decoder returns; encoding it again copies the PDU it was read from.  The PDU
    has been checked against the layout in full; its values are read (one unpack)
    when first asked for, which pmcd relaying a result never does.
    """

    __slots__ = ("_cache", "_values", "layout", "source")

    def __init__(self, layout: ResultLayout, source: bytes) -> None:
        self.layout = layout
        #: The PDU, which matches() the layout: checked in full, so reading its values
        #: cannot fail.
        self.source = source
        self._values: tuple[Any, ...] | None = None  # read on first use
        self._cache: list[ValueSet | None] | None = None  # made on first access

    @property
    def values(self) -> tuple[Any, ...]:
        """Every value of the PDU as the layout's struct reads them: insitu words, fixed
        payloads, and string/aggregate payloads as bytes (strings without their NUL).

        Read in one unpack the first time they are asked for; a relayed result never is.
        """
        values = self._values
        if values is None:
            values = self._values = self.layout.values.unpack_from(self.source)
        return values

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
