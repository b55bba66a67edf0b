"""Counter values turned into rates as pmval does it: delta value over delta time.

pmval reads both samples as doubles, subtracts, and divides by the time between
the two results expressed in the counter's own time unit (so a counter of
milliseconds gives a utilization, a counter of bytes gives bytes per second).
A negative difference stays negative (pmval prints "!") unless PCP_COUNTER_WRAP
is set in the environment: then 2^32 (32-bit types) or 2^64 (64-bit types) is
added.  Without a previous value for an instance there is no rate (pmval prints
"?", or nothing at all for its first sample).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from .cnumbers import NEG_NAN, fdiv, float32, long_double
from .convert import extract_value
from .desc import Desc
from .types import PMType
from .units import PM_TIME_SEC, Units, pmUnitsStr
from .values import Timestamp, ValueSet

__all__ = [
    "CounterRates", "counter_rate", "counter_wrap_enabled", "rate_units", "rate_units_str",
    "time_scale", "timestamp_seconds",
]  # fmt: skip

#: What PCP_COUNTER_WRAP adds to a counter's negative difference, per type.
COUNTER_WRAP_SPAN = {
    PMType.PM_TYPE_32: 2.0**32,
    PMType.PM_TYPE_U32: 2.0**32,
    PMType.PM_TYPE_64: 2.0**64,
    PMType.PM_TYPE_U64: 2.0**64,
}


def counter_wrap_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """True when PCP_COUNTER_WRAP is set (to anything): pmval then corrects wrapped counters."""
    return "PCP_COUNTER_WRAP" in environ


def time_scale(units: Units) -> float:
    """Counter time units per second, pmval's factor on the time between samples.

    pmval keeps it in a C float (pmval.h's `scale`), so 1/60 (minutes) and 1/3600
    (hours) are rounded to 32 bits, which shows in the 8th digit of a rate.
    """
    if units.dimTime == 0:
        return 1.0
    if units.scaleTime > PM_TIME_SEC:
        return float32(math.pow(60, PM_TIME_SEC - units.scaleTime))
    return float32(math.pow(1000, PM_TIME_SEC - units.scaleTime))


def rate_units(units: Units) -> Units:
    """The units of a counter's rate: one less time dimension, seconds when it had none."""
    scale_time = PM_TIME_SEC if units.dimTime == 0 else units.scaleTime
    return Units(
        units.dimSpace,
        units.dimTime - 1,
        units.dimCount,
        units.scaleSpace,
        scale_time,
        units.scaleCount,
    )


def rate_units_str(units: Units) -> str:
    """What pmval's header says it converts a counter to: "Kbyte / sec", "time utilization"."""
    rate = rate_units(units)
    if (rate.dimSpace, rate.dimTime, rate.dimCount) == (0, 0, 0):
        return "time utilization"
    return pmUnitsStr(rate) or "none"


def timestamp_seconds(stamp: Timestamp) -> float:
    """A timestamp in seconds as libpcp's pmtimespecToReal computes it (in long double)."""
    return float(long_double(stamp.sec + long_double(Fraction(stamp.nsec, 1_000_000_000))))


def counter_rate(
    prev: Any,
    prev_time: Timestamp,
    value: Any,
    value_time: Timestamp,
    type_: int,
    units: Units,
    wrap: bool = False,
) -> float:
    """The rate of a counter of TYPE_ and UNITS between two samples, as pmval's printrate.

    Values go through pmExtractValue to double (PMError PM_ERR_CONV for strings and
    other non-numeric types); WRAP adds 2^32 or 2^64 to a negative integer difference.
    """
    now = extract_value(value, type_, PMType.PM_TYPE_DOUBLE)
    then = extract_value(prev, type_, PMType.PM_TYPE_DOUBLE)
    v = now - then
    if math.isnan(v) and not (math.isnan(now) or math.isnan(then)):
        v = NEG_NAN  # inf - inf: x86-64's default NaN
    if v < 0.0 and wrap:
        v += COUNTER_WRAP_SPAN.get(PMType(type_), 0.0)
    delta = time_scale(units) * (timestamp_seconds(value_time) - timestamp_seconds(prev_time))
    return fdiv(v, delta)


class CounterRates:
    """The previous sample of each (pmid, instance), giving the rate when the next arrives.

    Feed whole value sets with update_set (as pmval pairs consecutive fetches: an
    instance missing from a sample loses its previous value) or single values with
    update.  WRAP defaults to PCP_COUNTER_WRAP being set in the environment.
    """

    def __init__(self, wrap: bool | None = None) -> None:
        self.wrap = counter_wrap_enabled() if wrap is None else wrap
        self._prev: dict[tuple[int, int], tuple[Any, Timestamp]] = {}

    def update(
        self, pmid: int, inst: int, type_: int, units: Units, value: Any, stamp: Timestamp
    ) -> float | None:
        """Record VALUE at STAMP; the rate since the previous value, None if there was none."""
        prev = self._prev.get((pmid, inst))
        self._prev[(pmid, inst)] = (value, stamp)
        if prev is None:
            return None
        return counter_rate(prev[0], prev[1], value, stamp, type_, units, self.wrap)

    def update_set(self, desc: Desc, vset: ValueSet, stamp: Timestamp) -> dict[int, float | None]:
        """Record a fetched value set; the rate of each of its instances (None: no previous).

        A set with no values or an error forgets the metric, as pmval starts over then.
        """
        old = {inst: prev for (pmid, inst), prev in self._prev.items() if pmid == desc.pmid}
        self.forget(desc.pmid)
        if vset.numval <= 0:
            return {}
        rates: dict[int, float | None] = {}
        for inst, value in zip(vset.insts, vset.atoms(desc.type), strict=True):
            self._prev[(desc.pmid, inst)] = (value, stamp)
            prev = old.get(inst)
            rates[inst] = (
                None
                if prev is None
                else counter_rate(prev[0], prev[1], value, stamp, desc.type, desc.units, self.wrap)
            )
        return rates

    def forget(self, pmid: int | None = None) -> None:
        """Drop the previous samples of PMID (of every metric when None)."""
        if pmid is None:
            self._prev.clear()
        else:
            for key in [key for key in self._prev if key[0] == pmid]:
                del self._prev[key]
