"""Metric values: pmAtomValue, pmValue, pmValueBlock, pmValueSet and pmResult.

PCP keeps 32-bit integers "insitu" in each pmValue and everything else (64-bit
integers, float, double, string, aggregate, event records) in a pmValueBlock: a
vtype:8/vlen:24 header word then the payload, padded to a 4-byte boundary.

Value sets here are columnar: an array of instance ids and an array (or tuple)
of values, with one block type per set.  Insitu values are the raw 32-bit words
PCP sends, in an array('I'); block values are a tuple of typed values (int for
64-bit integers, float for float and double, str for strings, bytes for
aggregates and event arrays).  That shape lets the PDU and archive codecs convert
a whole value set with a few C-level array or struct calls instead of a Python
loop per value.  These are NamedTuples rather than frozen
dataclasses for the same reason: they are built on every fetch.
"""

from __future__ import annotations

import struct
import time as _time
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from .errors import PM_ERR_CONV, PM_ERR_TYPE, PMError
from .ids import PM_IN_NULL
from .types import PM_VAL_HDR_SIZE, PMType, ValFmt

#: struct/array codes of each block type with a fixed payload size.
ARRAY_CODES: dict[int, str] = {
    PMType.PM_TYPE_32: "i",
    PMType.PM_TYPE_U32: "I",
    PMType.PM_TYPE_64: "q",
    PMType.PM_TYPE_U64: "Q",
    PMType.PM_TYPE_FLOAT: "f",
    PMType.PM_TYPE_DOUBLE: "d",
}
assert all(array(c).itemsize == struct.calcsize(c) for c in ARRAY_CODES.values())
#: Block types whose payload is opaque bytes to the codec.
BYTES_TYPES = frozenset(
    {
        PMType.PM_TYPE_AGGREGATE,
        PMType.PM_TYPE_AGGREGATE_STATIC,
        PMType.PM_TYPE_EVENT,
        PMType.PM_TYPE_HIGHRES_EVENT,
    }
)
#: Types pmStuffValue hands over as static pointers (PM_VAL_SPTR).
_SPTR_TYPES = frozenset(
    {PMType.PM_TYPE_AGGREGATE_STATIC, PMType.PM_TYPE_EVENT, PMType.PM_TYPE_HIGHRES_EVENT}
)
#: The vtype recorded for a set whose values are insitu (or absent).
NO_BLOCKS = PMType.PM_TYPE_UNKNOWN
# plain ints for the hot path (an enum member's lookup costs more than the work)
_I32, _U32, _STR = int(PMType.PM_TYPE_32), int(PMType.PM_TYPE_U32), int(PMType.PM_TYPE_STRING)
_INSITU, _DPTR, _SPTR = int(ValFmt.PM_VAL_INSITU), int(ValFmt.PM_VAL_DPTR), int(ValFmt.PM_VAL_SPTR)
_NO_BLOCKS = int(NO_BLOCKS)
_NULL = (PM_IN_NULL,)
_new = tuple.__new__
#: The 64-bit integer types and the values they hold.
_INT64_RANGES = {
    int(PMType.PM_TYPE_64): (-(1 << 63), (1 << 63) - 1),
    int(PMType.PM_TYPE_U64): (0, (1 << 64) - 1),
}
#: 64-bit and floating point types, stored in a block (of_single's quick path).
_SINGLE_CODES = {int(t): c for t, c in ARRAY_CODES.items() if c in "qQfd"}


class Timestamp(NamedTuple):
    """A collector timestamp: whole seconds and nanoseconds (PCP's __pmTimestamp)."""

    sec: int
    nsec: int = 0

    @classmethod
    def now(cls) -> Timestamp:
        return cls.from_ns(_time.time_ns())

    @classmethod
    def from_ns(cls, ns: int) -> Timestamp:
        """NS nanoseconds since the epoch."""
        return cls(*divmod(ns, 1_000_000_000))

    @property
    def ns(self) -> int:
        """Nanoseconds since the epoch."""
        return self.sec * 1_000_000_000 + self.nsec

    @classmethod
    def from_float(cls, seconds: float) -> Timestamp:
        sec = int(seconds // 1)
        return cls(sec, round((seconds - sec) * 1e9))

    def __float__(self) -> float:
        return self.sec + self.nsec / 1e9


class ValueBlock(NamedTuple):
    """pmValueBlock: a value's type and its payload bytes (vlen = 4 + len(vbuf))."""

    vtype: int
    vbuf: bytes

    @property
    def vlen(self) -> int:
        return PM_VAL_HDR_SIZE + len(self.vbuf)

    def atom(self) -> Any:
        """The payload as a typed Python value (as pmExtractValue would read it)."""
        return block_atom(self.vtype, self.vbuf)


class Value(NamedTuple):
    """pmValue: an instance id and either the insitu lval (int) or a ValueBlock."""

    inst: int
    value: int | ValueBlock


def block_payload(vtype: int, atom: Any) -> bytes:
    """The pmValueBlock payload for ATOM as PCP lays it out (big-endian, strings NUL-ended)."""
    code = ARRAY_CODES.get(vtype)
    try:
        if code is not None:
            return struct.pack(">" + code, atom)
        if vtype == PMType.PM_TYPE_STRING:
            if isinstance(atom, str):
                return atom.encode("utf-8", "surrogateescape") + b"\0"
            return bytes(atom)  # a raw payload, as block_atom returns one
        if vtype in BYTES_TYPES or isinstance(atom, bytes | bytearray | memoryview):
            return bytes(atom)
    except (struct.error, TypeError, AttributeError, OverflowError) as exc:
        raise PMError(PM_ERR_CONV, f"cannot store {atom!r} as type {vtype}: {exc}") from None
    raise PMError(PM_ERR_TYPE, f"no value block layout for type {vtype}")


def block_atom(vtype: int, vbuf: bytes) -> Any:
    """The typed value held in a block payload; inverse of block_payload."""
    code = ARRAY_CODES.get(vtype)
    if code is not None:
        if len(vbuf) != struct.calcsize(code):
            raise PMError(PM_ERR_CONV, f"type {vtype} value block holds {len(vbuf)} bytes")
        return struct.unpack(">" + code, vbuf)[0]
    if vtype == PMType.PM_TYPE_STRING:
        # "text\0" is a str; anything else (no NUL, bytes after the NUL) stays the raw
        # payload, so it goes back on the wire unchanged: use string_value() to read it.
        if vbuf.find(b"\0") == len(vbuf) - 1:
            return vbuf[:-1].decode("utf-8", "surrogateescape")
        return bytes(vbuf)
    return bytes(vbuf)


def string_value(value: str | bytes) -> str:
    """A string metric's value as text: a raw payload is read as a C string (to its NUL)."""
    if isinstance(value, str):
        return value
    return value.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


class ValueSet(NamedTuple):
    """pmValueSet for one metric, stored column-wise.

    numval is the number of values, or a negative PCP error code (then there are
    no values).  valfmt is PM_VAL_INSITU when each value is a 32-bit word in the
    pmValue itself, else PM_VAL_DPTR/PM_VAL_SPTR with every value in a block of
    type vtype.  insts is an ``array('I')``; values is an ``array('I')`` of raw
    32-bit words for insitu sets, else a tuple: int (64-bit), float (float,
    double), str (strings) or bytes (aggregates, events).
    """

    pmid: int
    numval: int
    valfmt: int
    vtype: int
    insts: array
    values: Any

    @classmethod
    def of_atoms(cls, pmid: int, type_: int, pairs: Iterable[tuple[int, Any]]) -> ValueSet:
        """Build a set from (inst, atom) pairs of a metric of TYPE, as pmStuffValue would."""
        items = pairs if type(pairs) is list else list(pairs)
        try:
            if len(items) == 1:  # most metrics have one value
                insts = array("I", (items[0][0],))
                atoms = [items[0][1]]
            else:
                insts = array("I", [inst for inst, _ in items])
                atoms = [atom for _, atom in items]
        except (OverflowError, TypeError) as exc:
            raise PMError(PM_ERR_CONV, f"bad instance id: {exc}") from None
        if not items:
            return cls(pmid, 0, _INSITU, _NO_BLOCKS, insts, array("I"))
        try:
            if type_ == _U32:
                return cls(pmid, len(items), _INSITU, _NO_BLOCKS, insts, array("I", atoms))
            if type_ == _I32:
                words = array("I", array("i", atoms).tobytes())
                return cls(pmid, len(items), _INSITU, _NO_BLOCKS, insts, words)
            code = ARRAY_CODES.get(type_)
            if code is not None:
                values: Any = tuple(array(code, atoms))  # range-checked and rounded as stored
            elif type_ == _STR and all(type(a) is str and "\0" not in a for a in atoms):
                for atom in atoms:  # stored as given, once it is known to encode
                    atom.encode("utf-8", "surrogateescape")
                values = tuple(atoms)
            elif type_ == _STR or type_ in BYTES_TYPES:
                values = tuple(block_atom(type_, block_payload(type_, atom)) for atom in atoms)
            else:
                raise PMError(PM_ERR_TYPE, f"cannot build values of type {type_}")
        except (OverflowError, TypeError, ValueError) as exc:
            raise PMError(PM_ERR_CONV, f"value does not fit type {type_}: {exc}") from None
        valfmt = _SPTR if type_ in _SPTR_TYPES else _DPTR
        return cls(pmid, len(items), valfmt, type_, insts, values)

    @classmethod
    def empty(cls, pmid: int) -> ValueSet:
        """The set of a metric that has no values now (of_atoms's answer for none)."""
        return _new(cls, (pmid, 0, _INSITU, _NO_BLOCKS, array("I"), array("I")))

    @classmethod
    def of_single(cls, pmid: int, type_: int, atom: Any) -> ValueSet:
        """The set of one value of a metric without instances: of_atoms's answer for
        [(PM_IN_NULL, ATOM)], built without its general steps (the common case)."""
        if type(atom) is int and type_ in _INT64_RANGES:
            low, high = _INT64_RANGES[type_]
            if low <= atom <= high:  # what array's range check would pass
                return _new(cls, (pmid, 1, _DPTR, type_, array("I", _NULL), (atom,)))
        if type_ == _U32:
            try:
                return cls(pmid, 1, _INSITU, _NO_BLOCKS, array("I", _NULL), array("I", (atom,)))
            except (OverflowError, TypeError):
                pass  # of_atoms says why
        else:
            code = _SINGLE_CODES.get(type_)
            if code is not None:
                try:
                    return cls(
                        pmid, 1, _DPTR, type_, array("I", _NULL), tuple(array(code, (atom,)))
                    )
                except (OverflowError, TypeError):
                    pass
        return cls.of_atoms(pmid, type_, [(PM_IN_NULL, atom)])

    @classmethod
    def of_error(cls, pmid: int, code: int) -> ValueSet:
        """A set that reports CODE (a negative PCP error) instead of values."""
        if code >= 0:
            raise ValueError(f"error code must be negative, not {code}")
        return cls(pmid, code, ValFmt.PM_VAL_INSITU, NO_BLOCKS, array("I"), array("I"))

    @property
    def vlist(self) -> tuple[Value, ...]:
        """The values as pmValue records (insitu lvals, or ValueBlocks)."""
        if self.valfmt == ValFmt.PM_VAL_INSITU:
            lvals = array("i", self.values.tobytes())
            return tuple(map(Value, self.insts, lvals))
        blocks = (ValueBlock(self.vtype, block_payload(self.vtype, v)) for v in self.values)
        return tuple(map(Value, self.insts, blocks))

    def atoms(self, type_: int | None = None) -> Sequence[Any]:
        """The values as atoms of TYPE (the metric's descriptor type).

        Insitu words are read as PCP reads them for TYPE: signed for PM_TYPE_32
        (and when TYPE is not given), unsigned for PM_TYPE_U32, IEEE bits for a
        PM_TYPE_FLOAT stored insitu by old archives.  Block values come as decoded.
        """
        if self.valfmt != ValFmt.PM_VAL_INSITU:
            return self.values
        if type_ == PMType.PM_TYPE_U32:
            return self.values
        if type_ == PMType.PM_TYPE_FLOAT:
            return array("f", self.values.tobytes())
        return array("i", self.values.tobytes())

    def subset(self, keep: Callable[[int], bool]) -> ValueSet:
        """This set with only the values whose instance KEEP accepts (itself if all are)."""
        chosen = [i for i, inst in enumerate(self.insts) if keep(inst)]
        if len(chosen) == len(self.insts):
            return self
        insts = array(self.insts.typecode, (self.insts[i] for i in chosen))
        values = self.values
        if isinstance(values, array):
            values = array(values.typecode, (values[i] for i in chosen))
        else:
            values = tuple(values[i] for i in chosen)
        return self._replace(numval=len(chosen), insts=insts, values=values)

    def get(self, inst: int = PM_IN_NULL, type_: int | None = None) -> Any:
        """The atom for instance INST; KeyError if it has no value."""
        try:
            i = self.insts.index(inst)
        except ValueError:
            raise KeyError(inst) from None
        return self.atoms(type_)[i]


class Result(NamedTuple):
    """pmResult: a timestamp and one value set per requested metric."""

    timestamp: Timestamp
    vsets: tuple[ValueSet, ...]

    @property
    def numpmid(self) -> int:
        return len(self.vsets)
