"""pmstat's metrics, fetched together from one context and converted as PCP's fetchgroup
converts them: counters become rates over the time between two fetches (none for the
first), sizes are rescaled to kbytes, and every value lands in the type pmstat reads it
as (truncated toward zero, or an error when it does not fit).

Each item keeps the status its last fetch gave (0, or a PCP error code); an item whose
metric could not be found keeps the error of its lookup for good, and is shown as "?".
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from purepcp.pmapi.errors import (
    PM_ERR_AGAIN,
    PM_ERR_CONV,
    PM_ERR_INDOM,
    PM_ERR_SIGN,
    PM_ERR_TRUNC,
    PM_ERR_TYPE,
    PM_ERR_VALUE,
    PMError,
)
from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units

U32, U64, FLOAT = int(PMType.PM_TYPE_U32), int(PMType.PM_TYPE_U64), int(PMType.PM_TYPE_FLOAT)
_NUMERIC = {int(t) for t in (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64,
                             PMType.PM_TYPE_U64, PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE,
                             PMType.PM_TYPE_STRING)}  # fmt: skip
_FLT_MAX = 3.4028234663852886e38
#: the seconds a rate's interval is at least (libpcp's epsilon: no division by zero)
_EPSILON = 0.000000001


@dataclass(frozen=True)
class Item:
    """One of pmstat's values: its metric (then the names tried when it is missing), the
    instance, the scale asked for ("kbyte"; None: rates for counters) and the output type."""

    key: str
    names: tuple[str, ...]
    inst: str | None = None
    scale: str | None = None
    otype: int = U32


#: pmstat's values, in the order pmstat asks for them
ITEMS: tuple[Item, ...] = (
    Item("load_avg", ("kernel.all.load",), "1 minute", None, FLOAT),
    Item("swap_used", ("swap.used",), None, "kbyte"),
    Item("mem_free", ("mem.util.free",), None, "kbyte"),
    Item("mem_buf", ("mem.util.bufmem", "mem.bufmem"), None, "kbyte"),
    Item("mem_cached", ("mem.util.cached",), None, "kbyte"),
    Item("swap_in", ("swap.pagesin", "swap.in")),
    Item("swap_out", ("swap.pagesout", "swap.out")),
    Item("blk_read", ("disk.all.blkread", "disk.all.read")),
    Item("blk_write", ("disk.all.blkwrite", "disk.all.write")),
    Item("interrupts", ("kernel.all.intr",)),
    Item("pswitch", ("kernel.all.pswitch",)),
    Item("cpu_nice", ("kernel.all.cpu.nice",), otype=U64),
    Item("cpu_user", ("kernel.all.cpu.user",), otype=U64),
    Item("cpu_intr", ("kernel.all.cpu.intr",), otype=U64),
    Item("cpu_sys", ("kernel.all.cpu.sys",), otype=U64),
    Item("cpu_idle", ("kernel.all.cpu.idle",), otype=U64),
    Item("cpu_wait", ("kernel.all.cpu.wait.total",), otype=U64),
    Item("cpu_steal", ("kernel.all.cpu.steal",), otype=U64),
)
#: the items whose fallbacks are the old swap metrics (then "si"/"so" head them, not "pi"/"po")
SWAP_ITEMS = ("swap_in", "swap_out")


@dataclass(frozen=True)
class Bound:
    """An item found in a context: its metric, instance and conversions."""

    pmid: int
    desc: Any
    inst: int | None
    rate: bool
    units: Units | None  # rescale to these units (None: no rescaling)
    multiplier: float
    otype: int


class FetchGroup:
    """pmstat's items on one context: bound once, then fetched together."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.bound: dict[str, Bound] = {}
        self.sts: dict[str, int] = {}
        self.values: dict[str, Any] = {}
        self.timestamp: tuple[int, int] = (0, 0)  # (seconds, microseconds), a timeval
        self.fell_back: set[str] = set()  # items whose first name was not found
        self._pmids: list[int] = []
        self._prev: Any = None  # the last result fetched (rates are taken against it)
        self._wrap = os.environ.get("PCP_COUNTER_WRAP") is not None

    def extend(self, items: Sequence[Item] = ITEMS) -> None:
        """Find every item (a missing one keeps its lookup's error for good)."""
        for item in items:
            sts = 0
            for name in item.names:
                sts = self._bind(item, name)
                if sts == 0:
                    break
                self.fell_back.add(item.key)
            self.sts[item.key] = sts

    def resolved(self) -> bool:
        """Whether at least one item was found."""
        return bool(self.bound)

    def _bind(self, item: Item, name: str) -> int:
        try:
            pmid, desc, inst = self._lookup(name, item.inst)
            rate, units, mult = _conversion(desc, item.scale, item.otype)
        except PMError as exc:
            return exc.code
        self.bound[item.key] = Bound(pmid, desc, inst, rate, units, mult, item.otype)
        if pmid not in self._pmids:
            self._pmids.append(pmid)
        return 0

    def _lookup(self, name: str, inst_name: str | None) -> tuple[int, Any, int | None]:
        ctx = self.ctx
        pmid = ctx.lookup_name(name)
        desc = ctx.lookup_desc(pmid)
        if (desc.indom == PM_INDOM_NULL) != (inst_name is None):
            raise PMError(PM_ERR_INDOM)
        if inst_name is None:
            return pmid, desc, None
        try:
            return pmid, desc, ctx.instance_id(desc.indom, inst_name)
        except PMError:
            if ctx.kind != "archive":  # (an archive's instance may come later: look there)
                raise
            return pmid, desc, ctx.instance_id_archive(desc.indom, inst_name)

    def fetch(self) -> int:
        """pmFetchGroup: every item's value and status anew; the fetch's own status."""
        for key, bound in self.bound.items():
            if bound.desc.sem != PMSem.PM_SEM_DISCRETE:
                self.sts[key] = PM_ERR_VALUE
        sts = 0
        try:
            result = self.ctx.fetch(self._pmids).result
        except PMError as exc:
            sts, result = exc.code, None
        if result is None:
            from purepcp.pmapi.values import Timestamp

            stamp, vsets = Timestamp.now(), {}
        else:
            stamp, vsets = result.timestamp, {vs.pmid: vs for vs in result.vsets}
        self.timestamp = (stamp.sec, stamp.nsec // 1000)
        for key, bound in self.bound.items():
            vset = vsets.get(bound.pmid)
            if bound.desc.sem == PMSem.PM_SEM_DISCRETE and vset is not None and vset.numval == 0:
                continue  # (a discrete value is kept until a new one comes)
            try:
                self.values[key] = self._convert(bound, vset, stamp)
                self.sts[key] = 0
            except PMError as exc:
                self.sts[key] = exc.code
        if result is not None:
            self._prev = (stamp, vsets)
        return sts

    def _convert(self, b: Bound, vset: Any, stamp: Any) -> Any:
        from purepcp.pmapi.convert import extract_value, pmConvScale

        if not b.rate and b.units is None:
            return extract_value(_value(b, vset), b.desc.type, b.otype)
        value = float(extract_value(_value(b, vset), b.desc.type, int(PMType.PM_TYPE_DOUBLE)))
        if b.rate:
            if self._prev is None:
                raise PMError(PM_ERR_AGAIN)
            prev_stamp, prev_vsets = self._prev
            before = float(extract_value(_value(b, prev_vsets.get(b.pmid)), b.desc.type,
                                         int(PMType.PM_TYPE_DOUBLE)))  # fmt: skip
            delta_t = max((stamp.ns - prev_stamp.ns) / 1e9, _EPSILON)
            value -= before
            if value < 0.0:
                if not self._wrap:
                    raise PMError(PM_ERR_VALUE)
                value += 2.0**32 if b.desc.type in _32BIT else 2.0**64
            value /= delta_t
        if b.units is not None:
            value = pmConvScale(int(PMType.PM_TYPE_DOUBLE), value, b.desc.units, b.units)
            value *= b.multiplier
        return stuff_double(value, b.otype)

    def close(self) -> None:
        import contextlib

        with contextlib.suppress(PMError, OSError):
            self.ctx.close()


_32BIT = {int(PMType.PM_TYPE_32), int(PMType.PM_TYPE_U32)}


def _value(b: Bound, vset: Any) -> Any:
    """The item's raw value in VSET, or the error there is instead."""
    if vset is None:
        raise PMError(PM_ERR_VALUE)
    if vset.numval < 0:
        raise PMError(vset.numval)
    atoms = vset.atoms(b.desc.type)
    for inst, atom in zip(vset.insts, atoms, strict=True):
        if b.inst is None or inst == b.inst:
            return atom
    raise PMError(PM_ERR_VALUE)


def _conversion(desc: Any, scale: str | None, otype: int) -> tuple[bool, Units | None, float]:
    """pmfg_prep_conversion: (rate-convert, units to rescale to, multiplier)."""
    if int(desc.type) not in _NUMERIC or otype not in _NUMERIC:
        raise PMError(PM_ERR_TYPE)
    if scale is None:
        return desc.sem == PMSem.PM_SEM_COUNTER, None, 1.0
    from purepcp.pmapi.units_parse import parse_units

    try:
        units, mult = parse_units(scale)
    except ValueError:
        raise PMError(PM_ERR_CONV) from None
    have = desc.units
    if (have.dimSpace, have.dimCount) != (units.dimSpace, units.dimCount):
        raise PMError(PM_ERR_CONV)
    if have.dimTime == units.dimTime:
        return False, units, mult
    if have.dimTime == units.dimTime + 1:
        per = {0: 1e-9, 1: 1e-6, 2: 1e-3, 3: 1.0, 4: 60.0, 5: 3600.0}.get(units.scaleTime)
        if per is None:
            raise PMError(PM_ERR_CONV)
        from dataclasses import replace

        return True, replace(units, dimTime=units.dimTime + 1), mult * per
    raise PMError(PM_ERR_CONV)


def stuff_double(value: float, otype: int) -> Any:
    """__pmStuffDoubleValue: VALUE in OTYPE (truncated toward zero), or PM_ERR_TRUNC or
    PM_ERR_SIGN when it does not fit."""
    if otype == FLOAT:
        if abs(value) > _FLT_MAX:
            raise PMError(PM_ERR_TRUNC)
        from purepcp.pmapi.cnumbers import float32

        return float32(value)
    limit = 4294967295.0 if otype == U32 else 18446744073709551616.0
    if value > limit:
        raise PMError(PM_ERR_TRUNC)
    if value < 0.0:
        raise PMError(PM_ERR_SIGN)
    return 0 if math.isnan(value) else int(value)
