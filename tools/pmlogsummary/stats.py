"""What pmlogsummary keeps per metric and instance, and the arithmetic it does on it.

Times are libpcp's struct timeval, held as integer microseconds since the epoch; a span
of time becomes seconds as pmtimevalToReal makes it (in long double, then rounded to a
double), so the averages round as PCP's do.  Divisions are NumPy's doubles: a zero
count gives the machine's NaN ("-nan" as printf prints it), not an exception.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.types import PMSem

USEC = 1_000_000
PM_TIME_SEC = 3
COUNTER = int(PMSem.PM_SEM_COUNTER)
DISCRETE = int(PMSem.PM_SEM_DISCRETE)


def tsub(a: int, b: int) -> int:
    """tsub: A - B (microseconds), clipped at zero as pmlogsummary clips it."""
    return a - b if a > b else 0


def seconds(us: int) -> float:
    """pmtimevalToReal of a timeval US microseconds long: sec + usec/1e6 in long double."""
    import numpy as np

    sec, usec = divmod(us, USEC)
    if not usec:
        return float(sec)
    ld = np.longdouble
    return float(np.float64(ld(sec) + ld(usec) / ld(USEC)))


def div(a: float, b: float) -> float:
    """A / B as C's double division: NaN or an infinity where B is zero."""
    if b:  # (Python's division is the machine's but for a zero divisor)
        return a / b
    import numpy as np

    with np.errstate(all="ignore"):
        return float(np.float64(a) / np.float64(b))


def counter_wrap() -> bool:
    """$PCP_COUNTER_WRAP set: a decreasing counter has wrapped (pmlogsummary's unwrap)."""
    return os.environ.get("PCP_COUNTER_WRAP") is not None


@dataclass(slots=True)
class InstStats:
    """One instance's running figures (instData), as calcaverage keeps them."""

    inst: int
    count: int
    stocave: float
    timeave: float
    min: float
    max: float
    sum: float
    lastval: float
    firsttime: int
    lasttime: int
    mintime: int
    maxtime: int
    markcount: int = 0
    marked: bool = False
    bintotal: int = 0
    bins: list[int] = field(default_factory=list)

    @classmethod
    def first(cls, inst: int, value: float, stamp: int, counter: bool, nbins: int) -> InstStats:
        """newHashInst: a counter starts from nothing, other metrics from VALUE."""
        if counter:
            return cls(inst, 0, 0.0, 0.0, 0.0, 0.0, 0.0, value, stamp, stamp, stamp, stamp,
                       bins=[0] * nbins)  # fmt: skip
        return cls(inst, 1, value, 0.0, value, value, value, value, stamp, stamp, stamp, stamp,
                   bins=[0] * nbins)  # fmt: skip

    def skip_slice(self, stamp: int) -> None:
        """Leave the time since the last value out of the time-based figures."""
        self.firsttime = tsub(self.firsttime + stamp, self.lasttime)


@dataclass
class MetricStats:
    """One metric's figures (aveData): its descriptor (a counter's units made a rate),
    the time scale of its rates, and its instances in the order first seen."""

    desc: Desc
    scale: float
    insts: list[InstStats] = field(default_factory=list)
    _where: dict[int, int] = field(default_factory=dict, repr=False)

    @property
    def counter(self) -> bool:
        return self.desc.sem == COUNTER

    @classmethod
    def of(cls, desc: Desc, sumflag: bool) -> MetricStats:
        """newHashItem: a counter's rate units (one less time dimension) and time scale."""
        if desc.sem != COUNTER:
            return cls(desc, 0.0)
        if sumflag:
            return cls(desc, 1.0)
        units = desc.units
        if units.dimTime == 0:
            scale = 1.0
            units = replace(units, scaleTime=PM_TIME_SEC)
        elif units.scaleTime > PM_TIME_SEC:
            scale = 60.0 ** (PM_TIME_SEC - units.scaleTime)
        else:
            scale = 1000.0 ** (PM_TIME_SEC - units.scaleTime)
        if units.dimTime > -8:
            units = replace(units, dimTime=units.dimTime - 1)
        return cls(replace(desc, units=units), scale)

    def find(self, inst: int) -> InstStats | None:
        at = self._where.get(inst)
        return None if at is None else self.insts[at]

    def add(self, stats: InstStats) -> None:
        self._where.setdefault(stats.inst, len(self.insts))
        self.insts.append(stats)


def findbin(value: float, lo: float, hi: float, nbins: int) -> int:
    """findbin: the first bin whose bounds hold VALUE (bounds by repeated addition), else
    the last."""
    binsize = (hi - lo) / nbins
    bound = lo
    for index in range(nbins - 1):
        following = bound + binsize
        if bound <= value <= following:
            return index
        bound = following
    return nbins - 1
