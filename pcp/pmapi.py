"""PCP's ``pcp.pmapi`` on purepcp's client library: ``pmContext`` and its PMAPI calls,
the exceptions ``pmErr`` and ``pmUsageErr``, and the value structures as PCP's binding
hands them to scripts.

The structures are ctypes ones laid out as libpcp's are (``pmResult``, ``pmValueSet``,
``pmValue``, ``pmValueBlock``, ``pmDesc``, ``pmUnits``, ``pmAtomValue``, ``timeval``...),
because scripts reach into them (``result.contents.get_vlist(0, 0)``,
``descs[0].contents.type``, ``atom.ull``); they are filled here from purepcp's own
records, so no C library is involved.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
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
from typing import Any, ClassVar

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
        for arg in self.args:
            pmContext.pmprintf(str(arg))
        return c_api.pmUsageMessage()


def _raised(exc: BaseException, *context: Any) -> pmErr:
    """A purepcp PMError (or an OSError) as PCP's binding raises it."""
    from purepcp.pmapi.errors import PMError

    if isinstance(exc, PMError):
        return pmErr(exc.code, *context)
    if isinstance(exc, OSError) and exc.errno:
        return pmErr(-exc.errno, *context)
    return pmErr(c_api.PM_ERR_GENERIC, *context)


# ---- time structures --------------------------------------------------------------------


class timeval(Structure):
    """struct timeval: seconds and microseconds."""

    _fields_ = [("tv_sec", c_int64), ("tv_usec", c_int64)]

    def __init__(self, sec: int = 0, usec: int = 0) -> None:
        super().__init__(sec, usec)

    @classmethod
    def fromInterval(cls, interval: str | bytes) -> timeval:
        """pmParseInterval of INTERVAL (pmErr with PCP's message if it is none)."""
        seconds = _interval(interval)
        whole = int(seconds)
        return cls(whole, round((seconds - whole) * 1e6))

    def __float__(self) -> float:
        return self.tv_sec + self.tv_usec / 1e6

    def __str__(self) -> str:
        return f"{float(self):.3f}"

    def __int__(self) -> int:
        return int(self.tv_sec)

    __index__ = __int__

    def __complex__(self) -> complex:
        return complex(float(self))

    def sleep(self) -> None:
        time.sleep(float(self))


class timespec(Structure):
    """struct timespec: seconds and nanoseconds."""

    _fields_ = [("tv_sec", c_int64), ("tv_nsec", c_long)]

    def __init__(self, sec: int = 0, nsec: int = 0) -> None:
        super().__init__(sec, nsec)

    @classmethod
    def fromInterval(cls, interval: str | bytes) -> timespec:
        seconds = _interval(interval)
        whole = int(seconds)
        return cls(whole, round((seconds - whole) * 1e9))

    def __float__(self) -> float:
        return self.tv_sec + self.tv_nsec / 1e9

    def __str__(self) -> str:
        return f"{float(self):.3f}"

    def __int__(self) -> int:
        return int(self.tv_sec)

    __index__ = __int__

    def __complex__(self) -> complex:
        return complex(float(self))

    def sleep(self) -> None:
        time.sleep(float(self))


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

        seconds = calendar.timegm(self.struct_time()) - self.tm_gmtoff
        return pmContext.pmCtime(seconds).rstrip()


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

    _fields_ = [("pval", POINTER(pmValueBlock)), ("lval", c_int)]

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
pmValueSetPtr.pmid = property(lambda p: p.contents.pmid)  # type: ignore[attr-defined]
pmValueSetPtr.numval = property(lambda p: p.contents.numval)  # type: ignore[attr-defined]
pmValueSetPtr.valfmt = property(lambda p: p.contents.valfmt)  # type: ignore[attr-defined]
pmValueSetPtr.vlist = property(lambda p: p.contents.vlist)  # type: ignore[attr-defined]


class _ResultAccess:
    """What scripts call on a result: its value sets and values by position."""

    def get_vset(self, vset_idx: int) -> Any:
        return cast(self.vset, POINTER(POINTER(pmValueSet)))[vset_idx]  # type: ignore[attr-defined]

    def get_pmid(self, vset_idx: int) -> int:
        return self.get_vset(vset_idx).contents.pmid

    def get_valfmt(self, vset_idx: int) -> int:
        return self.get_vset(vset_idx).contents.valfmt

    def get_numval(self, vset_idx: int) -> int:
        return self.get_vset(vset_idx).contents.numval

    def get_vlist(self, vset_idx: int, vlist_idx: int) -> pmValue:
        return cast(self.get_vset(vset_idx).contents.vlist, POINTER(pmValue))[vlist_idx]

    def get_inst(self, vset_idx: int, vlist_idx: int) -> int:
        return self.get_vlist(vset_idx, vlist_idx).inst

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

_NATIVE = {2: "q", 3: "Q", 4: "f", 5: "d"}  # block types whose bytes are numbers


def _vset_class(count: int) -> type:
    """pmValueSet with room for COUNT values (the same layout up to them)."""
    return type(
        "pmValueSet",
        (Structure,),
        {
            "_fields_": [
                ("pmid", c_uint),
                ("numval", c_int),
                ("valfmt", c_int),
                ("vlist", pmValue * max(count, 1)),
            ]
        },
    )


def _block(vtype: int, payload: bytes, keep: list) -> Any:
    """A pmValueBlock holding PAYLOAD (wire order: numbers turned to this machine's)."""
    import struct

    code = _NATIVE.get(vtype)
    if code is not None and len(payload) == struct.calcsize(code):
        payload = struct.pack("=" + code, struct.unpack(">" + code, payload)[0])
    vlen = c_api.PM_VAL_HDR_SIZE + len(payload)
    buffer = ctypes.create_string_buffer((vlen + 7) & ~7)
    c_uint32.from_buffer(buffer).value = (vtype << 24) | vlen
    ctypes.memmove(addressof(buffer) + 4, payload, len(payload))
    keep.append(buffer)
    return cast(buffer, POINTER(pmValueBlock))


def _c_vset(vs: Any, keep: list) -> Any:
    from purepcp.pmapi.values import block_payload

    count = max(vs.numval, 0)
    c = _vset_class(count)()
    c.pmid, c.numval, c.valfmt = vs.pmid, vs.numval, vs.valfmt
    if count:
        if vs.valfmt == c_api.PM_VAL_INSITU:
            words = vs.values
            for i in range(count):
                c.vlist[i].inst = vs.insts[i]
                c.vlist[i].value.lval = c_int32(words[i]).value
        else:
            for i in range(count):
                c.vlist[i].inst = vs.insts[i]
                payload = block_payload(vs.vtype, vs.values[i])
                c.vlist[i].value.pval = _block(vs.vtype, payload, keep)
    keep.append(c)
    return cast(pointer(c), POINTER(pmValueSet))


def _c_result(result: Any, highres: bool = False) -> Any:
    """A purepcp Result as a pointer to pmResult (pmHighResResult), which keeps every
    structure it points to alive."""
    count = len(result.vsets)
    base = pmHighResResult if highres else pmResult
    kind = (
        type(base.__name__, (base,), {"_fields_": []})
        if count <= 1
        else type(
            base.__name__,
            (_ResultAccess, Structure),
            {
                "_fields_": [
                    ("timestamp", timespec if highres else timeval),
                    ("numpmid", c_int),
                    ("vset", POINTER(pmValueSet) * count),
                ]
            },
        )
    )
    c = kind()
    stamp = result.timestamp
    c.timestamp.tv_sec = stamp.sec
    if highres:
        c.timestamp.tv_nsec = stamp.nsec
    else:
        c.timestamp.tv_usec = stamp.nsec // 1000
    c.numpmid = count
    keep: list = []
    for i, vs in enumerate(result.vsets):
        c.vset[i] = _c_vset(vs, keep)
    c._keep = keep
    return cast(pointer(c), POINTER(base))


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


# ---- contexts -----------------------------------------------------------------------------

_ZONES: list[Any] = []  # the zones made (pmNewZone, pmNewContextZone), by handle
_CURRENT_ZONE = [-1]  # the one in use (-1: the local zone)


def _zone() -> Any:
    from purepcp.pmapi.timewindow import tzinfo_for

    return _ZONES[_CURRENT_ZONE[0]] if _CURRENT_ZONE[0] >= 0 else tzinfo_for(None)


def _add_zone(zone: Any) -> int:
    _ZONES.append(zone)
    _CURRENT_ZONE[0] = len(_ZONES) - 1
    return _CURRENT_ZONE[0]


class pmContext:
    """A source of metrics (a pmcd, an archive, or this process's agents) and the PMAPI
    calls made on it: ``pmContext(PM_CONTEXT_HOST, "local:")``,
    ``pmContext(PM_CONTEXT_ARCHIVE, "path")``, ``pmContext.fromOptions(opts, argv)``."""

    def __init__(self, typed: int = c_api.PM_CONTEXT_HOST, target: Any = "local:") -> None:
        from cpmapi import contexts

        self._type = typed
        self._target = target
        self._ctx = c_api.PM_ERR_NOCONTEXT
        name = target.decode() if isinstance(target, bytes) else target
        try:
            self._our = _new_context(typed, name)
        except Exception as exc:  # (what libpcp's pmNewContext fails with, as pmErr)
            raise _raised(exc, [target]) from None
        self._ctx = contexts.register(self._our)

    type = property(lambda self: self._type)
    target = property(lambda self: self._target)
    ctx = property(lambda self: self._ctx)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # (at interpreter exit: nothing left to close)
            self.pmDestroyContext()

    @classmethod
    def fromOptions(
        cls, options: Any, argv: list[str], typed: int = 0, index: int = 0
    ) -> pmContext:
        """A context made from a command line parsed as pmGetOptions parses it (the
        options set up with pmOptions first): the host, archive or local context it
        names (local: by default), its time window and zone applied."""
        if typed is None or typed <= 0:
            options.need_reset = True
            if c_api.pmGetOptionsFromList(argv):
                raise pmUsageErr
            typed = options.pmGetOptionContext()
        if typed == c_api.PM_CONTEXT_ARCHIVE:
            source = options.pmGetOptionArchives()[index]
        elif typed == c_api.PM_CONTEXT_HOST:
            source = options.pmGetOptionHosts()[index]
        elif typed == c_api.PM_CONTEXT_LOCAL:
            source = None
        elif options.pmGetOptionOrigin() is not None:
            typed, source = c_api.PM_CONTEXT_ARCHIVE, options.pmGetOptionArchives()[index]
        else:
            typed, source = c_api.PM_CONTEXT_HOST, "local:"
        context = cls(typed, source)
        if c_api.pmSetContextOptions(context.ctx, options.mode, options.delta):
            raise pmUsageErr
        return context

    def _call(self, call: Any, *args: Any) -> Any:
        """CALL(*ARGS) on the purepcp context, its failures raised as pmErr."""
        try:
            return call(*args)
        except pmErr:
            raise
        except Exception as exc:
            from purepcp.pmapi.errors import PMError

            if isinstance(exc, (PMError, OSError)):
                raise _raised(exc) from None
            raise

    # -- the namespace -----------------------------------------------------------------

    def pmGetChildren(self, name: str) -> list[str]:
        return [child for child, _ in self._call(self._our.children, name)]

    def pmGetChildrenStatus(self, name: str) -> tuple[list[str], list[int]]:
        found = self._call(self._our.children, name)
        return (
            [child for child, _ in found],
            [c_api.PMNS_LEAF_STATUS if leaf else c_api.PMNS_NONLEAF_STATUS for _, leaf in found],
        )

    def pmGetPMNSLocation(self) -> int:
        if getattr(self._our, "kind", "host") == "archive":
            return c_api.PMNS_ARCHIVE
        return c_api.PMNS_LOCAL if self._our.pmns is not None else c_api.PMNS_REMOTE

    def pmLoadNameSpace(self, filename: str) -> int:
        from purepcp.pmapi.pmns import PMNS

        self._our.pmns = self._call(PMNS.from_file, filename)
        return 0

    def pmUnLoadNameSpace(self) -> None:
        self._our.pmns = None

    def pmLookupName(self, nameA: Any, relaxed: int = 0) -> Any:
        """The PMIDs of the names (an array of pmID); with RELAXED, PM_ID_NULL for the
        unknown ones, else pmErr(PM_ERR_NAME) naming the first."""
        names = [nameA] if isinstance(nameA, (str, bytes)) else list(nameA)
        texts = [n.decode() if isinstance(n, bytes) else n for n in names]
        pmids = (c_uint * len(texts))()
        try:
            found = self._our.lookup_names(texts)
        except Exception as exc:  # (libpcp's status for the call: the array goes with it)
            raise _raised(exc, pmids) from None
        pmids[:] = found
        missing = [n for n, pmid in zip(names, found, strict=True) if pmid == c_api.PM_ID_NULL]
        if missing and len(texts) == 1:
            raise pmErr(c_api.PM_ERR_NAME, pmids)
        if missing and not relaxed:
            raise pmErr(c_api.PM_ERR_NAME, missing)
        return pmids

    def pmNameAll(self, pmid: int) -> list[str]:
        return self._call(self._our.name_all, pmid)

    def pmNameID(self, pmid: int) -> str:
        return self.pmNameAll(pmid)[0]

    def pmTraversePMNS(self, name: str, callback: Any) -> int:
        names = self._call(self._our.traverse, name)
        for leaf in names:
            callback(leaf)
        return len(names)

    def pmRegisterDerived(self, name: str, expr: str) -> None:
        """A derived metric for every context (pmErr PM_ERR_CONV with libpcp's message
        when the expression is refused)."""
        from purepcp.pmapi.derived.registry import default_registry, register_metric_message

        try:
            default_registry().register(name, expr)
        except Exception as exc:
            if not hasattr(exc, "offset"):
                raise
            raise pmErr(c_api.PM_ERR_CONV, register_metric_message(name, expr, exc)) from None

    def pmLoadDerivedConfig(self, fname: str) -> int:
        from purepcp.pmapi.derived.registry import default_registry, load_config

        status = load_config(default_registry(), fname, sys.stderr)
        if status < 0:
            raise pmErr(status)
        return status

    # -- descriptors, instances, text -----------------------------------------------------

    def pmLookupDesc(self, pmid_p: Any) -> Any:
        pmid = pmid_p.value if hasattr(pmid_p, "value") else int(pmid_p)
        return _c_desc(self._call(self._our.lookup_desc, pmid))

    def pmLookupDescs(self, pmids_p: Any) -> list[Any]:
        pmids = [pmids_p] if isinstance(pmids_p, int) else list(pmids_p)
        descs = self._call(self._our.lookup_descs, pmids)
        out = []
        for pmid, desc in zip(pmids, descs, strict=True):
            if desc is None:
                raise pmErr(c_api.PM_ERR_PMID, f"{pmid:#x}")
            out.append(_c_desc(desc))
        return out

    def pmLookupText(self, pmid: int, kind: int = c_api.PM_TEXT_ONELINE) -> bytes:
        """A metric's one-line (or, with PM_TEXT_HELP, full) help text, as bytes (as PCP's
        binding returns it)."""
        text = self._call(
            self._our.text,
            pmid,
            bool(kind & c_api.PM_TEXT_HELP),
            False,
            bool(kind & c_api.PM_TEXT_DIRECT),
        )
        return text.encode("utf-8", "surrogateescape")

    def pmLookupInDomText(self, pmdesc: Any, kind: int = c_api.PM_TEXT_ONELINE) -> str:
        return self._call(
            self._our.text,
            get_indom(pmdesc),
            bool(kind & c_api.PM_TEXT_HELP),
            True,
            bool(kind & c_api.PM_TEXT_DIRECT),
        )

    def pmGetInDom(self, pmdescp: Any) -> tuple[list[int], list[str]]:
        """The instances of a descriptor's domain: ([ids], [names]) (([], []) for none)."""
        indom = get_indom(pmdescp)
        if indom == c_api.PM_INDOM_NULL:
            return [], []
        pairs = self._call(self._our.instances, indom)
        return [i for i, _ in pairs], [n for _, n in pairs]

    def pmGetInDomDict(self, pmdescp: Any) -> dict[int, str]:
        ids, names = self.pmGetInDom(pmdescp)
        return dict(zip(ids, names, strict=True))

    def pmLookupInDom(self, pmdesc: Any, name: str) -> int:
        return self._call(self._our.instance_id, get_indom(pmdesc), name)

    def pmNameInDom(self, pmdesc: Any, instval: int) -> str:
        if instval == c_api.PM_IN_NULL:
            return "PM_IN_NULL"
        return self._call(self._our.instance_name, get_indom(pmdesc), instval)

    def pmGetInDomArchive(self, pmdescp: Any) -> tuple[list[int], list[str]]:
        indom = get_indom(pmdescp)
        if indom == c_api.PM_INDOM_NULL:
            return [], []
        pairs = self._call(self._archive().instances_archive, indom)
        return [i for i, _ in pairs], [n for _, n in pairs]

    def pmLookupInDomArchive(self, pmdesc: Any, name: str) -> int:
        return self._call(self._archive().instance_id_archive, get_indom(pmdesc), name)

    def pmNameInDomArchive(self, pmdesc: Any, inst: int) -> str:
        return self._call(self._archive().instance_name_archive, get_indom(pmdesc), inst)

    def _archive(self) -> Any:
        if getattr(self._our, "kind", None) != "archive":
            raise pmErr(c_api.PM_ERR_NOTARCHIVE)
        return self._our

    # -- the context itself ---------------------------------------------------------------

    def pmDestroyContext(self) -> None:
        from cpmapi import contexts

        if self._ctx >= 0:
            contexts.forget(self._ctx)
            self._ctx = c_api.PM_ERR_NOCONTEXT
            close = getattr(self._our, "close", None)
            if close is not None:
                close()

    def pmDupContext(self) -> int:
        dup = pmContext(self._type, self._target)
        self._dups = [*getattr(self, "_dups", []), dup]
        return dup.ctx

    def pmUseContext(self, handle: int) -> int:
        return 0

    def pmWhichContext(self) -> int:
        return self._ctx

    def pmAddProfile(self, pmdesc: Any, instl: Any) -> int:
        self._call(self._our.profile.add, get_indom(pmdesc), list(instl or []))
        return 0

    def pmDelProfile(self, pmdesc: Any, instl: Any) -> int:
        self._call(self._our.profile.delete, get_indom(pmdesc), list(instl or []))
        return 0

    def pmSetMode(self, mode: int, timeVal: Any, delta: int) -> int:
        """pmSetMode: MODE (PM_MODE_*, with an extended time base in its top bits), the
        origin (a timeval, or None: where the context is), DELTA (milliseconds unless the
        time base says otherwise)."""
        from purepcp.pmapi.values import Timestamp

        base = c_api.PM_XTB_GET(mode)
        unit_ns = {0: 1, 1: 1000, 2: 1_000_000, 3: 10**9, 4: 60 * 10**9, 5: 3600 * 10**9}
        step = int(delta) * unit_ns.get(base, 1_000_000)
        origin = None
        if timeVal is not None:
            origin = Timestamp(int(timeVal.tv_sec), int(timeVal.tv_usec) * 1000)
        self._call(self._archive().set_mode, mode & 0xFFFF, origin, step)
        return 0

    def pmSetModeHighRes(self, mode: int, timespec_: Any, delta: Any) -> int:
        from purepcp.pmapi.values import Timestamp

        origin = None
        if timespec_ is not None:
            origin = Timestamp(int(timespec_.tv_sec), int(timespec_.tv_nsec))
        step = (
            int(delta.tv_sec) * 10**9 + int(delta.tv_nsec)
            if hasattr(delta, "tv_sec")
            else int(delta)
        )
        self._call(self._archive().set_mode, mode & 0xFFFF, origin, step)
        return 0

    def pmReconnectContext(self) -> int:
        reconnect = getattr(self._our.source, "reconnect", None)
        if reconnect is not None:
            self._call(reconnect)
        return self._ctx

    def pmGetContextHostName(self) -> str:
        return self._call(lambda: self._our.hostname)

    def pmGetContextHostname(self) -> str:
        return self.pmGetContextHostName()

    # -- time zones -----------------------------------------------------------------------

    def pmNewContextZone(self) -> int:
        from purepcp.pmapi.zone import context_zone

        return _add_zone(self._call(context_zone, self._our))

    @staticmethod
    def pmNewZone(tz: str) -> int:
        from purepcp.pmapi.timewindow import new_zone

        try:
            return _add_zone(new_zone(tz))
        except Exception:
            raise pmErr(c_api.PM_ERR_GENERIC, tz) from None

    @staticmethod
    def pmUseZone(tz_handle: int) -> int:
        if not 0 <= tz_handle < len(_ZONES):
            raise pmErr(-22)  # (EINVAL, as libpcp)
        previous = _CURRENT_ZONE[0]
        _CURRENT_ZONE[0] = tz_handle
        return previous

    @staticmethod
    def pmWhichZone() -> str:
        return str(_zone())

    @staticmethod
    def pmLocaltime(seconds: Any) -> tm:
        """struct tm of SECONDS in the zone in use (the local one until one is made)."""
        from datetime import datetime

        return _tm_of(datetime.fromtimestamp(int(seconds), _zone()))

    @staticmethod
    def pmCtime(seconds: Any) -> str:
        """ctime(3)'s text of SECONDS in the zone in use, with its newline."""
        from datetime import datetime

        return datetime.fromtimestamp(int(seconds), _zone()).strftime("%a %b %e %H:%M:%S %Y\n")

    # -- values ---------------------------------------------------------------------------

    def pmFetch(self, pmidA: Any) -> Any:
        """The values of the PMIDs now: a pointer to a pmResult."""
        pmids = [pmidA] if isinstance(pmidA, int) else [int(p) for p in pmidA]
        return _c_result(self._call(self._our.fetch, pmids).result)

    def pmFetchHighRes(self, pmidA: Any) -> Any:
        pmids = [pmidA] if isinstance(pmidA, int) else [int(p) for p in pmidA]
        return _c_result(self._call(self._our.fetch, pmids).result, highres=True)

    pmHighResFetch = pmFetchHighRes

    def pmFetchArchive(self) -> Any:
        return _c_result(self._call(self._archive().fetch_archive))

    def pmFetchHighResArchive(self) -> Any:
        return _c_result(self._call(self._archive().fetch_archive), highres=True)

    @staticmethod
    def pmFreeResult(result: Any) -> None:
        """(Nothing to free: the structures go when the last reference does.)"""

    pmFreeHighResResult = pmFreeResult

    def pmStore(self, result: Any) -> Any:
        self._call(self._our.store, _our_result(result))
        return result

    pmStoreHighRes = pmStore

    # -- archives -------------------------------------------------------------------------

    def pmGetArchiveLabel(self) -> pmLogLabel:
        label = self._archive().archive.label
        return pmLogLabel(
            c_api.PM_LOG_MAGIC | self._archive().archive.version,
            label.pid,
            timeval(label.start.sec, label.start.nsec // 1000),
            label.hostname.encode()[: c_api.PM_LOG_MAXHOSTLEN - 1],
            label.timezone.encode()[: c_api.PM_TZ_MAXLEN - 1],
        )

    def pmGetHighResArchiveLabel(self) -> pmHighResLogLabel:
        label = self._archive().archive.label
        zoneinfo = getattr(label, "zoneinfo", "") or ""
        return pmHighResLogLabel(
            c_api.PM_LOG_MAGIC | self._archive().archive.version,
            label.pid,
            timespec(label.start.sec, label.start.nsec),
            label.hostname.encode(),
            label.timezone.encode(),
            zoneinfo.encode(),
        )

    def pmGetArchiveEnd(self) -> timeval:
        end = self._end()
        return timeval(end.sec, end.nsec // 1000)

    def pmGetHighResArchiveEnd(self) -> timespec:
        end = self._end()
        return timespec(end.sec, end.nsec)

    def _end(self) -> Any:
        from purepcp.pmapi.archive.multi import end_of

        end = self._call(end_of, self._archive().archive)
        if end is None:
            raise pmErr(c_api.PM_ERR_LOGREC)
        return end

    # -- labels ---------------------------------------------------------------------------

    def pmLookupLabels(self, pmid: int) -> dict[str, Any]:
        """Every label of PMID, merged from the context down to the metric."""
        import json

        merged: dict[str, Any] = {}
        for kind, ident in self._label_levels(pmid):
            for lset in self._call(self._our.labels, ident, kind):
                merged.update(json.loads(lset.json) if lset.json else {})
        return merged

    def _label_levels(self, pmid: int) -> list[tuple[int, int]]:
        from purepcp.pmapi.ids import pmID_domain

        desc = self._call(self._our.lookup_desc, pmid)
        levels = [(c_api.PM_LABEL_CONTEXT, 0), (c_api.PM_LABEL_DOMAIN, pmID_domain(pmid))]
        if desc.indom != c_api.PM_INDOM_NULL:
            levels.append((c_api.PM_LABEL_INDOM, desc.indom))
        levels += [(c_api.PM_LABEL_CLUSTER, pmid), (c_api.PM_LABEL_ITEM, pmid)]
        return levels

    def pmGetInstancesLabels(self, indom: int) -> dict[int, dict[str, Any]]:
        import json

        return {
            lset.inst: json.loads(lset.json) if lset.json else {}
            for lset in self._call(self._our.labels, get_indom(indom), c_api.PM_LABEL_INSTANCES)
        }

    # -- conversions and text (libpcp's helpers, as the binding's static methods) ---------

    @staticmethod
    def pmGetConfig(variable: str) -> str | None:
        """A PCP_* setting: the environment's, else this installation's layout (None:
        no such setting)."""
        import os

        from purepcp.pmapi.paths import paths

        found = os.environ.get(variable)
        return found if found is not None else paths(missing_ok=True).values.get(variable)

    @staticmethod
    def pmErrStr(code: int) -> str:
        from purepcp.pmapi.errors import pmErrStr

        return pmErrStr(code)

    @staticmethod
    def pmExtractValue(valfmt: int, vlist: pmValue, intype: int, outtype: int) -> pmAtomValue:
        """The value in VLIST (a pmValue of a set of VALFMT) of type INTYPE as OUTTYPE."""
        from purepcp.pmapi.convert import pmExtractValue
        from purepcp.pmapi.errors import PMError

        try:
            value = pmExtractValue(valfmt, _our_value(valfmt, vlist), intype, outtype)
        except PMError as exc:
            raise pmErr(exc.code) from None
        return _atom(value, outtype)

    @staticmethod
    def pmConvScale(
        inType: int, inAtom: pmAtomValue, desc: Any, metric_idx: int, outUnits: pmUnits
    ) -> pmAtomValue:
        from purepcp.pmapi.convert import pmConvScale
        from purepcp.pmapi.errors import PMError

        units = desc[metric_idx].contents.units
        try:
            value = pmConvScale(inType, inAtom.dref(inType), units._units(), outUnits._units())
        except PMError as exc:
            raise pmErr(exc.code) from None
        return _atom(value, inType)

    @staticmethod
    def pmUnitsStr(units: pmUnits) -> str:
        return str(units)

    @staticmethod
    def pmNumberStr(value: float) -> str:
        from purepcp.pmapi.printvalue import pmNumberStr

        return pmNumberStr(value)

    @staticmethod
    def pmIDStr(pmid: int) -> str:
        from purepcp.pmapi.ids import pmIDStr

        return pmIDStr(int(pmid))

    @staticmethod
    def pmInDomStr(pmdescp: Any) -> str:
        from purepcp.pmapi.ids import pmInDomStr

        return pmInDomStr(get_indom(pmdescp))

    @staticmethod
    def pmTypeStr(typed: int) -> str:
        from purepcp.pmapi.types import pmTypeStr

        return pmTypeStr(typed)

    @staticmethod
    def pmSemStr(sem: int) -> str:
        from purepcp.pmapi.types import pmSemStr

        return pmSemStr(sem)

    @staticmethod
    def pmAtomStr(atom: pmAtomValue, typed: int) -> str:
        from purepcp.pmapi.printvalue import pmAtomStr

        return pmAtomStr(atom.dref(typed), typed)

    @staticmethod
    def pmID_build(domain: int, cluster: int, item: int) -> int:
        from purepcp.pmapi.ids import pmID_build

        return pmID_build(domain, cluster, item)

    @staticmethod
    def pmID_domain(pmid: int) -> int:
        return (int(pmid) >> 22) & 0x1FF

    @staticmethod
    def pmID_cluster(pmid: int) -> int:
        return (int(pmid) >> 10) & 0xFFF

    @staticmethod
    def pmID_item(pmid: int) -> int:
        return int(pmid) & 0x3FF

    @staticmethod
    def pmInDom_build(domain: int, serial: int) -> int:
        from purepcp.pmapi.ids import pmInDom_build

        return pmInDom_build(domain, serial)

    @staticmethod
    def pmInDom_domain(indom: int) -> int:
        return (int(indom) >> 22) & 0x1FF

    @staticmethod
    def pmInDom_serial(indom: int) -> int:
        return int(indom) & 0x3FFFFF

    @staticmethod
    def pmParseInterval(interval: str) -> tuple[timeval, str]:
        return timeval.fromInterval(interval), ""

    @staticmethod
    def pmParseUnitsStr(string: str) -> tuple[pmUnits, float]:
        from purepcp.pmapi.units import parse_units_mult

        try:
            units, mult = parse_units_mult(string)
        except Exception as exc:
            raise pmErr(c_api.PM_ERR_CONV, str(exc)) from None
        return _c_units(units), mult

    @staticmethod
    def pmtimevalSleep(tvp: timeval) -> None:
        time.sleep(float(tvp))

    @staticmethod
    def pmtimespecSleep(tsp: timespec) -> None:
        time.sleep(float(tsp))

    _printed: ClassVar[list[str]] = []

    @staticmethod
    def pmprintf(text: str) -> None:
        """pmprintf: text kept until pmflush writes it (to standard error)."""
        pmContext._printed.append(text)

    @staticmethod
    def pmflush() -> int:
        text = "".join(pmContext._printed)
        pmContext._printed.clear()
        sys.stderr.write(text)
        sys.stderr.flush()
        return len(text)

    @staticmethod
    def pmProgname() -> str:
        from purepcp.pmapi import progname

        return progname()

    @staticmethod
    def pmDebug(flags: Any) -> int:
        from purepcp.pmapi import debug

        return int(bool(debug.enabled))


def _new_context(typed: int, name: str | None) -> Any:
    """The purepcp context pmNewContext makes for TYPED and NAME (connected now, as
    libpcp's connects at once)."""
    kind = typed & c_api.PM_CONTEXT_TYPEMASK
    if kind == c_api.PM_CONTEXT_HOST:
        from purepcp.pmapi.context import Context

        ctx = Context.host(name or "local:")
        ctx.source.ensure()
        return ctx
    if kind == c_api.PM_CONTEXT_ARCHIVE:
        from purepcp.pmapi.archive.context import ArchiveContext

        if not name:
            raise pmErr(c_api.PM_ERR_NOCONTEXT)
        return ArchiveContext(name)
    if kind == c_api.PM_CONTEXT_LOCAL:
        from purepcp.pmapi.context import Context

        return Context.local()
    raise pmErr(c_api.PM_ERR_NOCONTEXT)


def __getattr__(name: str) -> Any:
    """pmOptions (pcp.pmoptions) and fetchgroup (pcp.fetchgroup), imported when a script
    first asks for them."""
    if name == "pmOptions":
        from .pmoptions import pmOptions

        return pmOptions
    if name == "fetchgroup":
        from .fetchgroup import fetchgroup

        return fetchgroup
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
