"""PCP's fetchgroups (``pmapi.fetchgroup``): metrics registered once, each registration a
callable that gives its latest value after each ``fetch()``, converted as libpcp's
pmFetchGroup converts them (counters to rates between two fetches, values into the units
asked for, any type to a number or a string).  Registered values, instance domains,
timestamps and event record fields are supported."""

from __future__ import annotations

import datetime
import errno
import math
import os
from typing import Any

import cpmapi as c_api

from .context import pmContext
from .structures import pmErr

_NUMBERS = (
    c_api.PM_TYPE_32,
    c_api.PM_TYPE_U32,
    c_api.PM_TYPE_64,
    c_api.PM_TYPE_U64,
    c_api.PM_TYPE_FLOAT,
    c_api.PM_TYPE_DOUBLE,
)
_CONVERTIBLE = (*_NUMBERS, c_api.PM_TYPE_STRING)
#: how many per second a rate in each time unit is (a rate's scale in scale="... / min")
_PER_SECOND = {0: 1e-9, 1: 1e-6, 2: 1e-3, 3: 1.0, 4: 60.0, 5: 3600.0}
#: the limits __pmStuffDoubleValue checks a converted value against: (low, high)
_LIMITS = {
    c_api.PM_TYPE_32: (-(2**31), 2**31 - 1),
    c_api.PM_TYPE_U32: (0, 2**32 - 1),
    c_api.PM_TYPE_64: (-(2**63), 2**63 - 1),
    c_api.PM_TYPE_U64: (0, 2**64 - 1),
}
_FLT_MAX = 3.4028234663852886e38


class _Conversion:
    """How a registration's values are converted: to a rate, into other units (with a
    multiplier), or not at all."""

    def __init__(self, desc: Any, scale: str | None, otype: int) -> None:
        if desc.type not in _CONVERTIBLE or otype not in _CONVERTIBLE:
            raise pmErr(c_api.PM_ERR_TYPE)
        self.units: Any = None
        self.multiplier = 1.0
        self.unit_convert = False
        if scale is None:
            self.rate = desc.sem == c_api.PM_SEM_COUNTER
        elif scale in ("rate", "instant"):
            self.rate = scale == "rate"
        else:
            self._scaled(desc, scale)

    def _scaled(self, desc: Any, scale: str) -> None:
        """SCALE's units: the metric's dimensions (a change of scale), or one less time
        dimension (a rate in those units per that time unit)."""
        try:
            units, self.multiplier = pmContext.pmParseUnitsStr(scale)
        except pmErr:
            raise pmErr(c_api.PM_ERR_CONV) from None
        have = desc.units
        same = (have.dimSpace, have.dimCount) == (units.dimSpace, units.dimCount)
        if same and have.dimTime == units.dimTime:
            self.rate = False
        elif same and have.dimTime == units.dimTime + 1:
            per = _PER_SECOND.get(units.scaleTime)
            if per is None:
                raise pmErr(c_api.PM_ERR_CONV)
            self.multiplier *= per
            units.dimTime += 1
            self.rate = True
        else:
            raise pmErr(c_api.PM_ERR_CONV)
        self.units = units
        self.unit_convert = True


class fetchgroup:
    """A fetchgroup on its own context: register metrics with extend_*, then fetch()."""

    class fetchgroup_item:
        """One metric-instance's value: call it for the value (pmErr if it has none)."""

        def __init__(self, pmtype: int) -> None:
            self.pmtype = pmtype
            self.sts = c_api.PM_ERR_VALUE
            self.value: Any = None

        def __call__(self) -> Any:
            if self.sts < 0:
                raise pmErr(self.sts)
            return self.value

    class fetchgroup_indom:
        """A metric's values over its instances: call it for [(inst, name, value())]."""

        def __init__(self, pmtype: int, maxnum: int) -> None:
            self.pmtype = pmtype
            self.maxnum = maxnum
            self.sts = 0
            self.rows: list[tuple[int, str | None, int, Any]] = []

        def __call__(self) -> list[tuple[int, str | None, Any]]:
            if self.sts < 0:
                raise pmErr(self.sts)
            return [(inst, name, _getter(sts, value)) for inst, name, sts, value in self.rows]

    class fetchgroup_timespec:
        """The fetch's time: call it for a (local, naive) datetime."""

        def __init__(self, ctx: pmContext) -> None:
            self.ctx = ctx
            self.sec, self.nsec = 0, 0

        def __call__(self) -> datetime.datetime:
            return _datetime(self.ctx, self.sec, self.nsec)

    fetchgroup_timeval = fetchgroup_timespec
    fetchgroup_timestamp = fetchgroup_timespec

    class fetchgroup_event:
        """One field of an event metric's records: call it for [(time, value())], a
        record's time and its value (pmErr if it could not be converted)."""

        def __init__(self, pmtype: int, maxnum: int, ctx: pmContext) -> None:
            self.pmtype = pmtype
            self.maxnum = maxnum
            self.ctx = ctx
            self.sts = 0
            self.rows: list[tuple[tuple[int, int], int, Any]] = []  # (time, sts, value)

        def __call__(self) -> list[tuple[datetime.datetime, Any]]:
            if self.sts < 0:
                raise pmErr(self.sts)
            return [(_datetime(self.ctx, *when), _getter(sts, value))
                    for when, sts, value in self.rows]  # fmt: skip

    def __init__(self, typed: int = c_api.PM_CONTEXT_HOST, target: Any = "local:") -> None:
        if typed == c_api.PM_CONTEXT_LOCAL and target is None:
            target = ""
        self.ctx = pmContext(typed, target)
        self.items: list[Any] = []
        self._wrap = os.environ.get("PCP_COUNTER_WRAP") is not None
        self._pmids: list[int] = []
        self._indoms: dict[int, dict[int, str] | None] = {}  # names, refreshed on news
        self._handlers: list[Any] = []  # (one a registration: how a fetch fills it)
        self._previous: Any = None  # the last fetch's values, by pmid: for rates

    def get_context(self) -> pmContext:
        """The fetchgroup's own context (other calls on it may upset the group)."""
        return self.ctx

    # -- registrations ---------------------------------------------------------------

    def _describe(self, metric: str) -> Any:
        """METRIC's pmid and descriptor, as libpcp's pmExtendFetchGroup_* look them up:
        a failure is the bare pmErr of its code."""
        try:
            pmid = self.ctx.pmLookupName(metric)[0]
            return pmid, self.ctx.pmLookupDesc(pmid).contents
        except pmErr as exc:
            raise pmErr(exc.code) from None

    def _type_of(self, metric: str, mtype: int | None) -> int:
        """MTYPE, else METRIC's own type, asked as the binding asks it (in Python: its
        pmLookupName's failure carries the pmid array)."""
        if mtype is not None:
            return mtype
        return self.ctx.pmLookupDescs(self.ctx.pmLookupName(metric))[0].type

    def _add_pmid(self, pmid: int) -> None:
        if pmid not in self._pmids:
            self._pmids.append(pmid)

    def extend_item(
        self,
        metric: str | None = None,
        mtype: int | None = None,
        scale: str | None = None,
        instance: str | None = None,
    ) -> fetchgroup_item:
        """One metric (and, if it has instances, the one named INSTANCE), its values of
        MTYPE (the metric's own by default), converted as SCALE says."""
        if metric is None:
            raise pmErr(-errno.EINVAL)
        scale = scale or None  # (the binding hands libpcp an empty scale as none)
        mtype = self._type_of(metric, mtype)
        pmid, desc, inst = self._item_lookup(metric, instance)
        conversion = _Conversion(desc, scale, mtype)
        self._add_pmid(pmid)
        item = fetchgroup.fetchgroup_item(mtype)
        self.items.append(item)
        self._handlers.append(
            lambda now, then, stamp: self._fill_item(
                item, pmid, desc, inst, conversion, now, then, stamp
            )
        )
        return item

    def _instance(self, desc: Any, name: str | None) -> int:
        """NAME's instance id; in an archive, where the instance domain is not known at
        the current time, as it is at the archive's end (libpcp looks there)."""
        try:
            return self.ctx.pmLookupInDom(desc, name)
        except pmErr:
            if self.ctx.type != c_api.PM_CONTEXT_ARCHIVE:
                raise
            return self.ctx.pmLookupInDomArchive(desc, name)

    def _item_lookup(self, metric: str, instance: str | None) -> tuple[int, Any, int]:
        """The metric, its descriptor and INSTANCE's id (added to the profile), refusing an
        instance where it has none and none where it has some (libpcp: PM_ERR_INDOM)."""
        pmid, desc = self._describe(metric)
        if (desc.indom == c_api.PM_INDOM_NULL) != (instance is None):
            raise pmErr(c_api.PM_ERR_INDOM)
        inst = c_api.PM_IN_NULL
        if desc.indom != c_api.PM_INDOM_NULL:
            inst = self._instance(desc, instance)
            self.ctx.pmAddProfile(desc, [inst])
        return pmid, desc, inst

    def extend_indom(
        self,
        metric: str | None = None,
        mtype: int | None = None,
        scale: str | None = None,
        maxnum: int = 100,
    ) -> fetchgroup_indom:
        """Every instance of a metric (at most MAXNUM), with their names."""
        if metric is None or maxnum < 0:
            raise pmErr(-errno.EINVAL)
        scale = scale or None
        mtype = self._type_of(metric, mtype)
        pmid, desc = self._describe(metric)
        if desc.indom != c_api.PM_INDOM_NULL and desc.indom not in self._indoms:
            self._indoms[desc.indom] = None
            self.ctx.pmAddProfile(desc, None)
        conversion = _Conversion(desc, scale, mtype)
        self._add_pmid(pmid)
        item = fetchgroup.fetchgroup_indom(mtype, maxnum)
        self.items.append(item)
        self._handlers.append(
            lambda now, then, stamp: self._fill_indom(
                item, pmid, desc, conversion, now, then, stamp
            )
        )
        return item

    def extend_timestamp(self) -> fetchgroup_timespec:
        """The time of each fetch."""
        stamp = fetchgroup.fetchgroup_timespec(self.ctx)
        self.items.append(stamp)
        self._handlers.append(lambda now, then, when: _set_time(stamp, when))
        return stamp

    extend_timespec = extend_timestamp
    extend_timeval = extend_timestamp

    def extend_event(
        self,
        metric: str | None = None,
        field: str | None = None,
        ftype: int | None = None,
        scale: str | None = None,
        instance: str | None = None,
        maxnum: int = 100,
    ) -> fetchgroup_event:
        """FIELD (a parameter metric) of the records of event METRIC (of INSTANCE, if it
        has instances), at most MAXNUM a fetch, as FTYPE (FIELD's own by default) and
        SCALE (units, or "instant"; not a rate: there is no previous value to refer to)."""
        if metric is None or maxnum < 0:
            raise pmErr(-errno.EINVAL)
        ftype = self._type_of(field, ftype)
        scale = scale or None
        pmid, desc, inst = self._item_lookup(metric, instance)
        field_pmid, field_desc = self._describe(field)
        if field_desc.indom != c_api.PM_INDOM_NULL:
            raise pmErr(c_api.PM_ERR_INDOM)
        if desc.type not in (c_api.PM_TYPE_EVENT, c_api.PM_TYPE_HIGHRES_EVENT):
            raise pmErr(c_api.PM_ERR_TYPE)
        conversion = _Conversion(field_desc, scale, ftype)
        if conversion.rate:
            raise pmErr(c_api.PM_ERR_CONV)
        self._add_pmid(pmid)
        item = fetchgroup.fetchgroup_event(ftype, maxnum, self.ctx)
        self.items.append(item)
        anonymous = {kind: self._anonymous(kind) for kind in ("flags", "missed")}
        self._handlers.append(
            lambda now, then, stamp: _fill_event(
                item, pmid, desc, inst, field_pmid, field_desc, conversion, anonymous, now
            )
        )
        return item

    def _anonymous(self, kind: str) -> int | None:
        """The pmid libpcp gives a record's flags or missed count (event.flags, event.missed:
        its anonymous metrics), None where this context has no such name."""
        try:
            return self.ctx.pmLookupName(f"event.{kind}")[0]
        except pmErr:
            return None

    # -- fetching --------------------------------------------------------------------------

    def fetch(self) -> int:
        """One fetch of every metric registered: each registration takes its value (or
        the reason it has none); the values are kept for the next fetch's rates."""
        import time

        try:
            result = self.ctx._call(self.ctx._our.fetch, self._pmids).result
            status = 0
        except pmErr as exc:
            result, status = None, exc.code
        now = _values(result)
        stamp = (
            (result.timestamp.sec, result.timestamp.nsec)
            if result is not None
            else divmod(time.time_ns(), 10**9)
        )
        for handler in self._handlers:
            handler(now, self._previous, stamp)
        if result is not None:
            self._previous = (now, stamp)
        if status < 0:
            raise pmErr(status)
        return status

    def clear(self) -> None:
        """Every registration forgotten (the context stays)."""
        for indom in self._indoms:
            self.ctx.pmDelProfile(indom, None)
        self.items.clear()
        self._handlers.clear()
        self._pmids.clear()
        self._indoms.clear()
        self._previous = None

    # -- one registration's value ------------------------------------------------------

    def _value(
        self,
        pmid: int,
        desc: Any,
        inst: int,
        conv: _Conversion,
        otype: int,
        now: dict,
        then: Any,
        stamp: tuple[int, int],
    ) -> tuple[int, Any]:
        """(status, value) of PMID's instance INST in this fetch, converted."""
        found = _lookup(now, pmid, desc, inst)
        if found[0] < 0:
            return found
        if not conv.rate:
            return _converted(found[1], desc, conv, otype)
        sts, value = _number(found[1], desc.type)
        if sts < 0:
            return sts, None
        if then is None:
            return c_api.PM_ERR_AGAIN, None
        before = _lookup(then[0], pmid, desc, inst)
        if before[0] < 0:
            return before
        sts, earlier = _number(before[1], desc.type)
        if sts < 0:
            return sts, None
        elapsed = max((stamp[0] - then[1][0]) + (stamp[1] - then[1][1]) / 1e9, 1e-9)
        delta = value - earlier
        if delta < 0.0:
            if not self._wrap:
                return c_api.PM_ERR_VALUE, None
            delta += 2.0**32 if desc.type in (c_api.PM_TYPE_32, c_api.PM_TYPE_U32) else 2.0**64
        return _scaled(delta / elapsed, desc, conv, otype)

    def _fill_item(self, item, pmid, desc, inst, conv, now, then, stamp) -> None:
        found = now.get(pmid)
        if desc.sem == c_api.PM_SEM_DISCRETE and getattr(found, "numval", -1) == 0:
            return  # (a discrete value keeps its last until there is a new one)
        item.sts, item.value = self._value(pmid, desc, inst, conv, item.pmtype, now, then, stamp)

    def _fill_indom(self, item, pmid, desc, conv, now, then, stamp) -> None:
        found = now.get(pmid)
        if desc.sem == c_api.PM_SEM_DISCRETE and getattr(found, "numval", -1) == 0:
            return
        item.rows = []
        if found is None or isinstance(found, int):  # (absent, or the metric's error)
            item.sts = c_api.PM_ERR_VALUE if found is None else found
            return
        item.sts = 0
        insts = sorted(_signed(i) for i in found.insts)
        names = self._names(desc.indom, found.insts)
        for n, inst in enumerate(insts):
            if n >= item.maxnum:
                item.sts = c_api.PM_ERR_TOOBIG
                return
            sts, value = self._value(pmid, desc, inst, conv, item.pmtype, now, then, stamp)
            code = inst & 0xFFFFFFFF  # (the binding hands instance codes over unsigned)
            item.rows.append((code, names.get(code), sts, value))

    def _names(self, indom: int, values: Any) -> dict[int, str]:
        """INDOM's instance names, asked again when an instance is new to them."""
        if indom == c_api.PM_INDOM_NULL:
            return {}
        known = self._indoms.get(indom)
        if known is None or any(inst not in known for inst in values):
            try:
                ids, names = self.ctx.pmGetInDom(indom=indom)  # (None, None: none)
                pairs = zip(ids or [], names or [], strict=True)
                known = {i & 0xFFFFFFFF: name for i, name in pairs}
            except pmErr:
                known = {}
            self._indoms[indom] = known
        return known


def _converted(atom: Any, desc: Any, conv: _Conversion, otype: int) -> tuple[int, Any]:
    """(status, value): one value of DESC's type as OTYPE, in CONV's units (no rate)."""
    if not conv.unit_convert:
        return _as_type(atom, desc.type, otype)
    sts, value = _number(atom, desc.type)
    if sts < 0:
        return sts, None
    return _scaled(value, desc, conv, otype)


def _scaled(value: float, desc: Any, conv: _Conversion, otype: int) -> tuple[int, Any]:
    """(status, value): VALUE (in DESC's units) in CONV's units, if any, as OTYPE."""
    if conv.unit_convert:
        atom = _double_atom(value)
        try:
            value = (
                pmContext.pmConvScale(c_api.PM_TYPE_DOUBLE, atom, [_DescRef(desc)], 0, conv.units).d
                * conv.multiplier
            )
        except pmErr as exc:
            return exc.code, None
    return _stuffed(value, otype)


def _fill_event(item, pmid, desc, inst, field_pmid, field_desc, conv, anonymous, now) -> None:
    """pmfg_fetch_event: every record's FIELD values of this fetch's METRIC instance, each
    converted (or its error, with no time), until MAXNUM (then PM_ERR_TOOBIG)."""
    from purepcp.pmapi.errors import PMError
    from purepcp.pmapi.events import unpack_event_records

    item.rows = []
    found = now.get(pmid)
    if found is None or isinstance(found, int):  # (absent, or the metric's error)
        item.sts = c_api.PM_ERR_VALUE if found is None else found
        return
    wanted = inst & 0xFFFFFFFF
    where = next((i for i, have in enumerate(found.insts)
                  if desc.indom == c_api.PM_INDOM_NULL or have == wanted), None)  # fmt: skip
    item.sts = 0
    if where is None:  # (no records for the instance: no values, no error)
        return
    try:
        records = unpack_event_records(
            bytes(found.values[where]), desc.type == c_api.PM_TYPE_HIGHRES_EVENT
        )
    except PMError as exc:
        item.sts = exc.code
        return
    for record in records:
        for param in record.params:
            if (param.pmid if param.kind == "param" else anonymous[param.kind]) != field_pmid:
                continue
            if len(item.rows) >= item.maxnum:
                item.sts = c_api.PM_ERR_TOOBIG
                return
            sts, value = _converted(_param_atom(param, field_desc), field_desc, conv, item.pmtype)
            item.rows.append((record.stamp if sts >= 0 else (0, 0), sts, value))


def _param_atom(param: Any, desc: Any) -> Any:
    """An event parameter's value as an atom of its metric's type."""
    value = param.value
    if isinstance(value, int):  # (a 32-bit word, insitu)
        return value & 0xFFFFFFFF if desc.type == c_api.PM_TYPE_U32 else value
    if value.vtype == c_api.PM_TYPE_STRING:
        from purepcp.pmapi.values import string_value

        return string_value(value.vbuf)
    return value.atom()


def _datetime(ctx: pmContext, sec: int, nsec: int) -> datetime.datetime:
    """A time as the binding gives it: a naive datetime in the context's local time."""
    when = ctx.pmLocaltime(sec)
    return datetime.datetime(
        when.tm_year + 1900,
        when.tm_mon + 1,
        when.tm_mday,
        when.tm_hour,
        when.tm_min,
        when.tm_sec,
        nsec // 1000,
    )


class _DescRef:
    """What pmConvScale reads of a descriptor list's entry (its contents' units)."""

    def __init__(self, desc: Any) -> None:
        self.contents = desc


def _double_atom(value: float) -> Any:
    from .structures import pmAtomValue

    atom = pmAtomValue()
    atom.d = value
    return atom


def _getter(sts: int, value: Any):
    def get() -> Any:
        if sts < 0:
            raise pmErr(sts)
        return value

    return get


def _set_time(stamp: Any, when: tuple[int, int]) -> None:
    stamp.sec, stamp.nsec = when


def _signed(inst: int) -> int:
    return inst - 2**32 if inst >= 2**31 else inst


def _values(result: Any) -> dict[int, Any]:
    """A result's value sets by PMID (a set's error code instead, if it failed)."""
    if result is None:
        return {}
    return {vs.pmid: vs.numval if vs.numval < 0 else vs for vs in result.vsets}


def _lookup(now: dict, pmid: int, desc: Any, inst: int) -> tuple[int, Any]:
    """(0, PMID's value for INST in this fetch), or the error to report for it."""
    vs = now.get(pmid)
    if vs is None:
        return c_api.PM_ERR_VALUE, None
    if isinstance(vs, int):
        return vs, None
    wanted = inst & 0xFFFFFFFF
    for i, have in enumerate(vs.insts):
        if desc.indom == c_api.PM_INDOM_NULL or have == wanted:
            return 0, vs.atoms(desc.type)[i]
    return c_api.PM_ERR_VALUE, None


def _number(atom: Any, vtype: int) -> tuple[int, Any]:
    """(status, ATOM as a double): a string read as libpcp reads it (__pmStringValue)."""
    if vtype == c_api.PM_TYPE_STRING:
        return _as_type(atom, vtype, c_api.PM_TYPE_DOUBLE)
    return 0, float(atom)


def _as_type(atom: Any, itype: int, otype: int) -> tuple[int, Any]:
    """pmExtractValue's conversion, with numbers to strings and back as libpcp's
    fetchgroups add them."""
    from purepcp.pmapi.convert import extract_value
    from purepcp.pmapi.errors import PMError

    if itype != c_api.PM_TYPE_STRING and otype == c_api.PM_TYPE_STRING:
        return 0, _number_text(atom, itype)
    if itype == c_api.PM_TYPE_STRING and otype != c_api.PM_TYPE_STRING:
        from purepcp.pmapi.convert import StoreValueError, parse_typed_value

        try:  # (__pmStringValue: strtol and friends, all of it a number, or PM_ERR_TYPE)
            return 0, parse_typed_value(atom, otype)
        except StoreValueError as exc:
            return exc.code, None
    try:
        return 0, extract_value(atom, itype, otype)
    except PMError as exc:
        return exc.code, None


def _number_text(atom: Any, itype: int) -> str:
    if itype == c_api.PM_TYPE_FLOAT:
        return f"{atom:.9e}"
    if itype == c_api.PM_TYPE_DOUBLE:
        return f"{atom:.17e}"
    return str(int(atom))


def _stuffed(value: float, otype: int) -> tuple[int, Any]:
    """A double into OTYPE as __pmStuffDoubleValue does: PM_ERR_TRUNC or PM_ERR_SIGN when
    it does not fit."""
    if otype == c_api.PM_TYPE_DOUBLE:
        return 0, value
    if otype == c_api.PM_TYPE_STRING:
        return 0, f"{value:.17e}"
    if otype == c_api.PM_TYPE_FLOAT:
        if math.fabs(value) > _FLT_MAX:
            return c_api.PM_ERR_TRUNC, None
        import struct

        return 0, struct.unpack("f", struct.pack("f", value))[0]
    low, high = _LIMITS[otype]
    if value > high or (low < 0 and value < low):
        return c_api.PM_ERR_TRUNC, None
    if low == 0 and value < 0.0:
        return c_api.PM_ERR_SIGN, None
    return 0, int(value)
