"""libpcp's structures as PCP's Python binding hands them to scripts (ctypes ones with
libpcp's layout: pmResult, pmValueSet, pmValue, pmValueBlock, pmDesc, pmUnits,
pmAtomValue, timeval, timespec, tm, the archive labels), the binding's exceptions
(pmErr, pmUsageErr), and the conversions between them and purepcp's own records."""

from __future__ import annotations

import ctypes
import functools
import operator
import struct
import time
from ctypes import (
    POINTER,
    Structure,
    Union,
    addressof,
    c_char,
    c_char_p,
    c_double,
    c_float,
    c_int,
    c_int32,
    c_int64,
    c_long,
    c_uint,
    c_uint32,
    c_uint64,
    c_void_p,
    cast,
    pointer,
)
from typing import Any

import cpmapi as c_api

# ---- exceptions -------------------------------------------------------------------------


class pmErr(Exception):
    """A PMAPI call's failure: a PCP error code (``code``), and what it was about."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.args = list(args)  # type: ignore[assignment]
        self.code = args[0] if args and isinstance(args[0], int) else 0

    def __str__(self) -> str:
        symbol = c_api.pmErrSymDict.get(self.code)
        return self.message() if symbol is None else f"{symbol} {self.message()}"

    def message(self) -> str:
        """pmErrStr of the code, then each further argument."""
        from purepcp.pmapi.errors import pmErrStr

        return " ".join([pmErrStr(self.code), *(str(a) for a in self.args[1:])])

    def progname(self) -> str:
        from purepcp.pmapi import progname

        return progname()

    def errno(self) -> int:
        return self.code


class pmUsageErr(Exception):
    """A command line to refuse: ``message()`` prints the arguments and the usage text."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.args = list(args)  # type: ignore[assignment]

    def message(self) -> Any:
        from cpmapi import options

        for arg in self.args:
            options.pmprintf(str(arg))
        return options.pmUsageMessage()


def _raised(exc: BaseException, *context: Any) -> pmErr:
    """A purepcp PMError (or an OSError) as PCP's binding raises it."""
    from purepcp.pmapi.errors import PMError

    if isinstance(exc, PMError):
        return pmErr(exc.code, *context)
    if isinstance(exc, OSError) and exc.errno:
        return pmErr(-exc.errno, *context)
    return pmErr(c_api.PM_ERR_GENERIC, *context)


# ---- time structures --------------------------------------------------------------------


class _Seconds(Structure):
    """A time as seconds and a fraction of them (FRACTION units to the second): what
    timeval and timespec share."""

    FRACTION = 1

    @classmethod
    def fromInterval(cls, interval: str | bytes) -> Any:
        """pmParseInterval of INTERVAL (pmErr with PCP's message if it is none)."""
        seconds = _interval(interval)
        whole = int(seconds)
        return cls(whole, round((seconds - whole) * cls.FRACTION))

    def __float__(self) -> float:
        return self.tv_sec + getattr(self, self._fields_[1][0]) / self.FRACTION

    def __str__(self) -> str:
        return f"{float(self):.3f}"

    def __int__(self) -> int:
        return int(self.tv_sec)

    __index__ = __int__

    def __complex__(self) -> complex:
        return complex(float(self))

    def sleep(self) -> None:
        time.sleep(float(self))


class timeval(_Seconds):
    """struct timeval: seconds and microseconds."""

    _fields_ = [("tv_sec", c_int64), ("tv_usec", c_int64)]
    FRACTION = 1_000_000

    def __init__(self, sec: int = 0, usec: int = 0) -> None:
        super().__init__(sec, usec)


class timespec(_Seconds):
    """struct timespec: seconds and nanoseconds."""

    _fields_ = [("tv_sec", c_int64), ("tv_nsec", c_long)]
    FRACTION = 1_000_000_000

    def __init__(self, sec: int = 0, nsec: int = 0) -> None:
        super().__init__(sec, nsec)


def _interval(text: str | bytes) -> float:
    """pmParseInterval's seconds; its failure as the binding raises it: pmErr(-1) with
    the message (a C string)."""
    from purepcp.pmapi.timewindow import TimeParseError, parse_interval

    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogateescape")
    try:
        return parse_interval(text)
    except TimeParseError as exc:
        raise pmErr(-1, c_char_p(exc.errmsg.encode())) from None


class tm(Structure):
    """struct tm, with glibc's tm_gmtoff and tm_zone."""

    _fields_ = [
        ("tm_sec", c_int),
        ("tm_min", c_int),
        ("tm_hour", c_int),
        ("tm_mday", c_int),
        ("tm_mon", c_int),
        ("tm_year", c_int),
        ("tm_wday", c_int),
        ("tm_yday", c_int),
        ("tm_isdst", c_int),
        ("tm_gmtoff", c_long),
        ("tm_zone", c_char_p),
    ]

    def struct_time(self) -> time.struct_time:
        """The same time as Python's time.struct_time (Monday 0, yday from 1)."""
        return time.struct_time(
            (
                self.tm_year + 1900,
                self.tm_mon + 1,
                self.tm_mday,
                self.tm_hour,
                self.tm_min,
                self.tm_sec,
                (self.tm_wday + 6) % 7,
                self.tm_yday + 1,
                self.tm_isdst,
            )
        )

    def __str__(self) -> str:
        import calendar

        from cpmapi.zones import ctime

        seconds = calendar.timegm(self.struct_time()) - self.tm_gmtoff
        return ctime(seconds).rstrip()


def _tm_of(when: Any) -> tm:
    """A datetime (aware) as struct tm."""
    offset = when.utcoffset()
    dst = when.dst()
    name = when.tzname() or ""
    return tm(
        when.second,
        when.minute,
        when.hour,
        when.day,
        when.month - 1,
        when.year - 1900,
        (when.weekday() + 1) % 7,
        when.timetuple().tm_yday - 1,
        1 if dst else 0,
        int(offset.total_seconds()) if offset is not None else 0,
        name.encode(),
    )


# ---- values -----------------------------------------------------------------------------


class pmAtomValue(Union):
    """One value of any type (pmExtractValue's and pmConvScale's answer)."""

    _fields_ = [
        ("l", c_int32),
        ("ul", c_uint32),
        ("ll", c_int64),
        ("ull", c_uint64),
        ("f", c_float),
        ("d", c_double),
        ("cp", c_char_p),
        ("vp", c_void_p),
    ]

    _FIELD = {0: "l", 1: "ul", 2: "ll", 3: "ull", 4: "f", 5: "d", 6: "cp"}

    def dref(self, typed: int) -> Any:
        """The value as the Python value of type TYPED (None for types without one)."""
        field = self._FIELD.get(typed)
        if field is None:
            return None
        value = getattr(self, field)
        if typed == c_api.PM_TYPE_STRING:
            try:
                return str(value.decode("utf-8"))
            except (AttributeError, UnicodeDecodeError):
                return str(value)
        return value


def _atom(value: Any, typed: int) -> pmAtomValue:
    atom = pmAtomValue()
    field = pmAtomValue._FIELD.get(typed)
    if field == "cp":
        atom.cp = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value
    elif field is not None:
        setattr(atom, field, value)
    elif isinstance(value, bytes):  # (an aggregate: its bytes, kept by the atom)
        buffer = ctypes.create_string_buffer(value, len(value))
        atom.vp = addressof(buffer)
        atom._buffer = buffer  # type: ignore[attr-defined]
    return atom


class pmUnits(Structure):
    """pmUnits: dimensions and scales, in gcc's bit order (pad in the low byte)."""

    _fields_ = [
        ("pad", c_int, 8),
        ("scaleCount", c_int, 4),
        ("scaleTime", c_int, 4),
        ("scaleSpace", c_int, 4),
        ("dimCount", c_int, 4),
        ("dimTime", c_int, 4),
        ("dimSpace", c_int, 4),
    ]

    def __init__(
        self,
        dimS: int = 0,
        dimT: int = 0,
        dimC: int = 0,
        scaleS: int = 0,
        scaleT: int = 0,
        scaleC: int = 0,
    ) -> None:
        super().__init__()
        self.dimSpace, self.dimTime, self.dimCount = dimS, dimT, dimC
        self.scaleSpace, self.scaleTime, self.scaleCount = scaleS, scaleT, scaleC
        self.pad = 0

    def _units(self) -> Any:
        from purepcp.pmapi.units import Units

        return Units(
            self.dimSpace,
            self.dimTime,
            self.dimCount,
            self.scaleSpace & 0xF,
            self.scaleTime & 0xF,
            self.scaleCount,
        )

    def __int__(self) -> int:
        return self._units().pack()

    def __str__(self) -> str:
        from purepcp.pmapi.units import pmUnitsStr

        return pmUnitsStr(self._units())


def _c_units(units: Any) -> pmUnits:
    return pmUnits(
        units.dimSpace,
        units.dimTime,
        units.dimCount,
        units.scaleSpace,
        units.scaleTime,
        units.scaleCount,
    )


class pmValueBlock(Structure):
    """A value too big for a pmValue's word: its length (header included) and type, then
    its bytes (in this machine's byte order)."""

    _fields_ = [("vlen", c_uint, 24), ("vtype", c_uint, 8), ("vbuf", c_char * 1)]


class valueDref(Union):
    """A pmValue's value: the 32-bit word itself, or where its block is."""

    _fields_ = [("pval", POINTER(pmValueBlock)), ("lval", c_int), ("_address", c_void_p)]

    def __str__(self) -> str:
        return f"value={self.lval:#x}"


class pmValue(Structure):
    """One instance's value."""

    _fields_ = [("inst", c_int), ("value", valueDref)]

    def __str__(self) -> str:
        return f"pmValue@{addressof(self):#x} inst={self.inst} {self.value}"


class pmValueSet(Structure):
    """One metric's values (``vlist`` holds ``numval`` of them; declared with one)."""

    _fields_ = [("pmid", c_uint), ("numval", c_int), ("valfmt", c_int), ("vlist", pmValue * 1)]

    def __str__(self) -> str:
        if self.valfmt != 0:
            return ""
        values = cast(self.vlist, POINTER(pmValue))
        shown = str([f" {values[i]}" for i in range(self.numval)])
        return (
            f"pmValueSet@{addressof(self):#x} id={self.pmid:#x} numval={self.numval} "
            f"valfmt={self.valfmt}{shown}"
        )


pmValueSetPtr = POINTER(pmValueSet)
_VSET_POINTER = pmValueSetPtr
pmValueSetPtr.pmid = property(lambda p: p.contents.pmid)  # type: ignore[attr-defined]
pmValueSetPtr.numval = property(lambda p: p.contents.numval)  # type: ignore[attr-defined]
pmValueSetPtr.valfmt = property(lambda p: p.contents.valfmt)  # type: ignore[attr-defined]
pmValueSetPtr.vlist = property(lambda p: p.contents.vlist)  # type: ignore[attr-defined]


class _ResultAccess:
    """What scripts call on a result: its value sets and values by position (read where
    they lie: a result's value set pointers follow its count, a set's values its
    header; each answer holds the result, so that its memory lasts as long as it)."""

    _VSETS_AT = 24  # (the timestamp's 16 bytes, numpmid and its padding)

    def get_vset(self, vset_idx: int) -> Any:
        found = _VSET_POINTER.from_address(addressof(self) + self._VSETS_AT + 8 * vset_idx)
        found._owner = self
        return found

    def _vset_at(self, vset_idx: int) -> int:
        """Where value set VSET_IDX is (read once for all of them, per result object)."""
        try:
            return self._vset_places[vset_idx]  # type: ignore[attr-defined]
        except AttributeError:
            count = self.numpmid  # type: ignore[attr-defined]
            at = addressof(self) + self._VSETS_AT
            self._vset_places = list((ctypes.c_uint64 * count).from_address(at))
            return self._vset_places[vset_idx]

    def get_pmid(self, vset_idx: int) -> int:
        return c_uint.from_address(self._vset_at(vset_idx)).value

    def get_numval(self, vset_idx: int) -> int:
        return c_int.from_address(self._vset_at(vset_idx) + 4).value

    def get_valfmt(self, vset_idx: int) -> int:
        return c_int.from_address(self._vset_at(vset_idx) + 8).value

    def get_vlist(self, vset_idx: int, vlist_idx: int) -> pmValue:
        value = pmValue.from_address(self._vset_at(vset_idx) + 16 + 16 * vlist_idx)
        value._owner = self
        return value

    def get_inst(self, vset_idx: int, vlist_idx: int) -> int:
        return c_int.from_address(self._vset_at(vset_idx) + 16 + 16 * vlist_idx).value

    def __str__(self) -> str:
        shown = str([f" {self.get_vset(i).contents}" for i in range(self.numpmid)])  # type: ignore[attr-defined]
        return f"{type(self).__name__}@{addressof(self):#x} id#={self.numpmid} {shown}"  # type: ignore[attr-defined,arg-type]


class pmResult(_ResultAccess, Structure):
    """A fetch's answer: its time, and a value set per metric asked for."""

    _fields_ = [("timestamp", timeval), ("numpmid", c_int), ("vset", POINTER(pmValueSet) * 1)]


class pmHighResResult(_ResultAccess, Structure):
    """pmResult with a timespec."""

    _fields_ = [("timestamp", timespec), ("numpmid", c_int), ("vset", POINTER(pmValueSet) * 1)]


pmID = c_uint
pmInDom = c_uint


class pmDesc(Structure):
    """A metric's descriptor."""

    _fields_ = [
        ("pmid", c_uint),
        ("type", c_int),
        ("indom", c_uint),
        ("sem", c_int),
        ("units", pmUnits),
    ]

    def __str__(self) -> str:
        return f"pmDesc@{addressof(self):#x} id={self.pmid:#x} type={self.type}"


pmDescPtr = POINTER(pmDesc)
pmDescPtr.sem = property(lambda p: p.contents.sem)  # type: ignore[attr-defined]
pmDescPtr.type = property(lambda p: p.contents.type)  # type: ignore[attr-defined]
pmDescPtr.indom = property(lambda p: p.contents.indom)  # type: ignore[attr-defined]
pmDescPtr.units = property(lambda p: p.contents.units)  # type: ignore[attr-defined]


def get_indom(pmdesc: Any) -> int:
    """The instance domain of a descriptor pointer, or PMDESC itself when it is one."""
    if isinstance(pmdesc, pmDescPtr):
        return pmdesc.contents.indom
    if isinstance(pmdesc, pmDesc):
        return pmdesc.indom
    return int(pmdesc) & 0xFFFFFFFF


def _c_desc(desc: Any) -> Any:
    return pointer(pmDesc(desc.pmid, desc.type, desc.indom, desc.sem, _c_units(desc.units)))


def _our_desc(desc: Any) -> Any:
    from purepcp.pmapi.desc import Desc

    d = desc.contents if isinstance(desc, pmDescPtr) else desc
    return Desc(d.pmid, d.type, d.indom, d.sem, d.units._units())


class pmLogLabel(Structure):
    """A version 2 archive's label."""

    _fields_ = [
        ("magic", c_int),
        ("pid_t", c_int),
        ("start", timeval),
        ("hostname", c_char * c_api.PM_LOG_MAXHOSTLEN),
        ("tz", c_char * c_api.PM_TZ_MAXLEN),
    ]

    def get_hostname(self) -> str:
        return self.hostname.decode()

    def get_timezone(self) -> str:
        return self.tz.decode()


class pmHighResLogLabel(Structure):
    """An archive's label with nanosecond time and the zone's full name."""

    _fields_ = [
        ("magic", c_int),
        ("pid_t", c_int),
        ("start", timespec),
        ("hostname", c_char * c_api.PM_MAX_HOSTNAMELEN),
        ("timezone", c_char * c_api.PM_MAX_TIMEZONELEN),
        ("zoneinfo", c_char * c_api.PM_MAX_ZONEINFOLEN),
    ]

    def get_hostname(self) -> str:
        return self.hostname.decode()

    def get_timezone(self) -> str:
        return self.timezone.decode()

    def get_zoneinfo(self) -> str:
        return self.zoneinfo.decode()


# ---- a purepcp result as libpcp's structures ----------------------------------------------

#: block types whose payload is a number: its native struct code
_NATIVE = {2: "q", 3: "Q", 4: "f", 5: "d"}
_EIGHT_BYTES = frozenset({2, 3, 5})  # (PM_TYPE_64, PM_TYPE_U64, PM_TYPE_DOUBLE)
_RESULT_HEAD = struct.Struct("=qqi4x")  # timestamp (seconds, fraction), numpmid
_VSET_HEAD = struct.Struct("=Iii4x")  # pmid, numval, valfmt
_INSITU_VALUE = struct.Struct("=I4xI4x")  # inst, the 32-bit word (the union's low half)
_BLOCK_VALUE = struct.Struct("=I4xQ")  # inst (its bits), the block's address
_BLOCK_HEAD = struct.Struct("=I")  # vlen (low 24 bits) and vtype (high 8), as gcc lays them


def _payloads(vs: Any) -> list[bytes]:
    """A block value set's payloads, as they lie in memory (numbers in this machine's
    byte order, strings with their NUL)."""
    from purepcp.pmapi.values import block_payload

    code = _NATIVE.get(vs.vtype)
    if code is not None:
        pack = struct.Struct("=" + code).pack
        return [pack(v) for v in vs.values]
    return [block_payload(vs.vtype, v) for v in vs.values]


@functools.lru_cache(maxsize=512)
def _layout(each: str, count: int) -> struct.Struct:
    """COUNT records of the struct format EACH, one after another (native, unaligned)."""
    return struct.Struct("=" + each * count)


def _pairs(first: Any, second: Any) -> list[Any]:
    """FIRST and SECOND interleaved: a0, b0, a1, b1, ..."""
    out: list[Any] = [None] * (2 * len(first))
    out[0::2] = first
    out[1::2] = second
    return out


class _Plan:
    """How every result of one decoded layout lies in libpcp's memory, as one struct of
    the whole buffer: its fields in order (the timestamp, the counts, PMIDs, instances
    and block headers that are the same each time, the pointers, which move with the
    buffer, and the values), and a getter that takes them, in that order, from
    (seconds, fraction, *constants, *pointers, *the layout's value column)."""

    __slots__ = ("constants", "size", "struct", "take", "targets")

    def __init__(self, layout: Any) -> None:
        shape = layout.shape
        at = _RESULT_HEAD.size + 8 * max(len(shape), 1)
        places = []
        for s in shape:
            places.append(at)
            at += _VSET_HEAD.size + 16 * max(s.numval, 1)
        constants: list[int] = [len(shape)]
        targets: list[int] = []
        # (offset, struct code, source): source ("t", 0|1), ("k", i), ("p", i) or ("c", i)
        fields: list[tuple[int, str, tuple[str, int]]] = [
            (0, "q", ("t", 0)), (8, "q", ("t", 1)), (16, "i", ("k", 0)),
        ]  # fmt: skip

        def constant(where: int, code: str, value: int) -> None:
            fields.append((where, code, ("k", len(constants))))
            constants.append(value)

        def pointer_to(where: int, target: int) -> None:
            fields.append((where, "Q", ("p", len(targets))))
            targets.append(target)

        for n, (s, place) in enumerate(zip(shape, places, strict=True)):
            pointer_to(_RESULT_HEAD.size + 8 * n, place)
            constant(place, "I", s.pmid)
            constant(place + 4, "i", s.numval)
            constant(place + 8, "i", s.valfmt)
            if s.numval <= 0:
                continue
            start = layout.spans[n][0]
            slot = place + _VSET_HEAD.size
            for k, inst in enumerate(s.insts):
                constant(slot + 16 * k, "I", inst)
                if s.valfmt == c_api.PM_VAL_INSITU:
                    fields.append((slot + 16 * k + 8, "I", ("c", start + k)))
                    continue
                code = _NATIVE[s.vtype]
                pointer_to(slot + 16 * k + 8, at)
                constant(at, "I", (s.vtype << 24) | (4 + struct.calcsize(code)))
                fields.append((at + 4, code, ("c", start + k)))
                at += 16 if s.vtype in _EIGHT_BYTES else 8
        self.size, self.constants, self.targets = at, tuple(constants), tuple(targets)
        fields.sort()
        fmt, end = ["="], 0
        for where, code, _ in fields:
            if where > end:
                fmt.append(f"{where - end}x")
            fmt.append(code)
            end = where + struct.calcsize(code)
        self.struct = struct.Struct("".join(fmt))
        first = {"t": 0, "k": 2, "p": 2 + len(constants), "c": 2 + len(constants) + len(targets)}
        self.take = operator.itemgetter(*(first[kind] + i for _, _, (kind, i) in fields))

    @staticmethod
    def usable(layout: Any) -> bool:
        """Whether results of LAYOUT can be laid out from a plan: every block a number
        (strings and aggregates, whose lengths are per value, take the general way)."""
        return all(s.numval <= 0 or s.valfmt == c_api.PM_VAL_INSITU or s.vtype in _NATIVE
                   for s in layout.shape)  # fmt: skip


#: the plans of the layouts met, by the layout's id (few: one per fetch list, mostly):
#: (the layout, its plan or None where none fits)
_PLANS: dict[int, tuple[Any, _Plan | None]] = {}


def _planned(result: Any, highres: bool) -> Any:
    """_c_result's buffer from a plan, for a result decoded in columns; None if none fits."""
    vsets = result.vsets
    layout = getattr(vsets, "layout", None)
    if layout is None:
        return None
    known = _PLANS.get(id(layout))
    if known is None or known[0] is not layout:
        if len(_PLANS) > 256:
            _PLANS.clear()
        known = _PLANS[id(layout)] = (layout, _Plan(layout) if _Plan.usable(layout) else None)
    plan = known[1]
    if plan is None:
        return None
    buffer = ctypes.create_string_buffer(plan.size)
    base = addressof(buffer)
    stamp = result.timestamp
    source = (
        stamp.sec, stamp.nsec if highres else stamp.nsec // 1000, *plan.constants,
        *[base + target for target in plan.targets], *vsets.values,
    )  # fmt: skip
    plan.struct.pack_into(buffer, 0, *plan.take(source))
    return pointer((pmHighResResult if highres else pmResult).from_buffer(buffer))


def _c_result(result: Any, highres: bool = False) -> Any:
    """A purepcp Result as a pointer to pmResult (pmHighResResult): one buffer holding
    the result, its value sets after it and their value blocks after them, laid out as
    libpcp's are (the pointer keeps the buffer alive).  A result decoded in columns is
    laid out from its layout's plan, made once, without making its value sets."""
    planned = _planned(result, highres)
    if planned is not None:
        return planned
    vsets = list(result.vsets)  # (a fetch's sets may be made as they are first asked for)
    count = len(vsets)
    at = _RESULT_HEAD.size + 8 * max(count, 1)
    places = []
    for vs in vsets:
        places.append(at)
        at += _VSET_HEAD.size + 16 * max(vs.numval, 1)
    blocks = [
        _payloads(vs)
        if vs.valfmt != c_api.PM_VAL_INSITU and vs.numval > 0 and vs.vtype not in _EIGHT_BYTES
        else ()
        for vs in vsets
    ]
    size = at + sum((4 + len(p) + 7) & ~7 for found in blocks for p in found)
    size += sum(
        16 * vs.numval
        for vs in vsets
        if vs.vtype in _EIGHT_BYTES and vs.numval > 0 and vs.valfmt != c_api.PM_VAL_INSITU
    )
    buffer = ctypes.create_string_buffer(size)
    base = addressof(buffer)
    stamp = result.timestamp
    fraction = stamp.nsec if highres else stamp.nsec // 1000
    _RESULT_HEAD.pack_into(buffer, 0, stamp.sec, fraction, count)
    for n, (vs, place, payloads) in enumerate(zip(vsets, places, blocks, strict=True)):
        struct.pack_into("=Q", buffer, _RESULT_HEAD.size + 8 * n, base + place)
        _VSET_HEAD.pack_into(buffer, place, vs.pmid, vs.numval, vs.valfmt)
        slot = place + _VSET_HEAD.size
        count = vs.numval
        if count <= 0:
            continue
        if vs.valfmt == c_api.PM_VAL_INSITU:  # (each pmValue: inst, its word)
            _layout("I4xI4x", count).pack_into(buffer, slot, *_pairs(vs.insts, vs.values))
            continue
        code = _NATIVE.get(vs.vtype)
        if code in ("q", "Q", "d"):  # (eight-byte numbers: blocks of 16 bytes, one pass)
            places = range(base + at, base + at + 16 * count, 16)
            _layout("I4xQ", count).pack_into(buffer, slot, *_pairs(vs.insts, places))
            header = (vs.vtype << 24) | 12
            _layout("I" + code + "4x", count).pack_into(
                buffer, at, *_pairs([header] * count, vs.values)
            )
            at += 16 * count
            continue
        for inst, payload in zip(vs.insts, payloads, strict=True):
            _BLOCK_VALUE.pack_into(buffer, slot, inst, base + at)
            _BLOCK_HEAD.pack_into(buffer, at, (vs.vtype << 24) | (4 + len(payload)))
            buffer[at + 4 : at + 4 + len(payload)] = payload
            slot += 16
            at += (4 + len(payload) + 7) & ~7
    kind = pmHighResResult if highres else pmResult
    return pointer(kind.from_buffer(buffer))


#: the native reader of each block type whose payload is a number
_READERS = {2: ctypes.c_int64, 3: ctypes.c_uint64, 4: ctypes.c_float, 5: ctypes.c_double}


@functools.cache
def _convert() -> Any:
    """purepcp's pmExtractValue and its conversions (imported once, when first used)."""
    from purepcp.pmapi import convert

    return convert


def _extracted(valfmt: int, value: pmValue, itype: int, otype: int) -> Any:
    """pmExtractValue of a pmValue: its value, of type ITYPE, as OTYPE (numbers read in
    place; anything else through purepcp's pmExtractValue)."""
    if valfmt != c_api.PM_VAL_INSITU:
        at = value.value._address
        reader = _READERS.get(itype)
        if at and reader is not None:
            header = c_uint32.from_address(at).value
            if header >> 24 in (itype, 0) and header & 0xFFFFFF == 4 + ctypes.sizeof(reader):
                number = reader.from_address(at + 4).value
                if otype == c_api.PM_TYPE_DOUBLE:  # (any number converts to a double)
                    return float(number)
                return _convert().extract_value(number, itype, otype)
    elif otype == c_api.PM_TYPE_DOUBLE and itype in (c_api.PM_TYPE_32, c_api.PM_TYPE_U32):
        word = value.value.lval
        return float(word if itype == c_api.PM_TYPE_32 else word & 0xFFFFFFFF)
    return _convert().pmExtractValue(valfmt, _our_value(valfmt, value), itype, otype)


def _our_value(valfmt: int, value: pmValue) -> Any:
    """A pmValue's value as purepcp's pmExtractValue takes it (an int or a ValueBlock)."""
    import struct

    from purepcp.pmapi.values import ValueBlock

    if valfmt == c_api.PM_VAL_INSITU:
        return value.value.lval
    at = ctypes.cast(value.value.pval, c_void_p).value
    if not at:
        raise pmErr(c_api.PM_ERR_CONV)
    header = c_uint32.from_address(at).value
    vlen, vtype = header & 0xFFFFFF, header >> 24
    payload = ctypes.string_at(at + 4, max(vlen - 4, 0))
    code = _NATIVE.get(vtype)
    if code is not None and len(payload) == struct.calcsize(code):
        payload = struct.pack(">" + code, struct.unpack("=" + code, payload)[0])
    return ValueBlock(vtype, payload)


def _our_result(result: Any) -> Any:
    """A pmResult (pointer or structure) as a purepcp Result (for pmStore)."""
    from purepcp.pmapi.values import Result, Timestamp, ValueSet

    r = result.contents if hasattr(result, "contents") else result
    sets = []
    for i in range(r.numpmid):
        vs = r.get_vset(i).contents
        values = cast(vs.vlist, POINTER(pmValue))
        pairs = []
        vtype = None
        for j in range(max(vs.numval, 0)):
            v = _our_value(vs.valfmt, values[j])
            pairs.append((values[j].inst & 0xFFFFFFFF, v))
            vtype = getattr(v, "vtype", None)
        if vs.valfmt == c_api.PM_VAL_INSITU:
            sets.append(
                ValueSet.of_atoms(
                    vs.pmid, c_api.PM_TYPE_U32, [(i, w & 0xFFFFFFFF) for i, w in pairs]
                )
            )
        else:
            sets.append(ValueSet.of_atoms(vs.pmid, vtype, [(i, b.atom()) for i, b in pairs]))
    sec = int(r.timestamp.tv_sec)
    frac = r.timestamp.tv_usec * 1000 if isinstance(r, pmResult) else r.timestamp.tv_nsec
    return Result(Timestamp(sec, int(frac)), tuple(sets))
