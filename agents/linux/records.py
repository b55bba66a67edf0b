"""The linux agent's metadata records: a metric's descriptor, an instance domain, and their units.

Every family of the agent (agents/linux/*.py) declares its metrics as `MetricInfo`
records built from a table, with pmdalinux's cluster and item, type, instance
domain, semantics and units; catalog.py gathers them and the agent and its pmns
and help are made from that one list.  The shorthand constants below are what the
tables use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Space, Time, Units

#: The linux agent's domain number.
DOMAIN = 60


@dataclass(frozen=True, slots=True)
class InDomInfo:
    """One of pmdalinux's instance domains: its serial and how instances are named."""

    serial: int
    name: str  # pmdalinux's enum name
    instances: str  # how the real agent names and numbers the instances

    @property
    def indom(self) -> int:
        """The pmInDom (60.serial)."""
        return pmInDom_build(DOMAIN, self.serial)


@dataclass(frozen=True, slots=True)
class MetricInfo:
    """One metric of PCP's linux agent: its descriptor, and a note on how it is computed."""

    name: str
    cluster: int
    item: int
    type: PMType
    indom: int | None  # serial of the instance domain, None for singular
    sem: PMSem
    units: Units
    help: str = ""  # (older records) pmdalinux's one-liner; ours are in help/linux
    source: str = ""  # how to compute the value, with unit conversions
    labels: Mapping[str, Any] | None = None  # the metric's own (PM_LABEL_ITEM) labels

    @property
    def pmid(self) -> int:
        return pmID_build(DOMAIN, self.cluster, self.item)

    @property
    def pmindom(self) -> int:
        """The pmInDom, or PM_INDOM_NULL."""
        return PM_INDOM_NULL if self.indom is None else pmInDom_build(DOMAIN, self.indom)

    def desc(self) -> Desc:
        return Desc(self.pmid, self.type, self.pmindom, self.sem, self.units)


U32 = PMType.PM_TYPE_U32
I32 = PMType.PM_TYPE_32
I64 = PMType.PM_TYPE_64
U64 = PMType.PM_TYPE_U64
FLOAT = PMType.PM_TYPE_FLOAT
DOUBLE = PMType.PM_TYPE_DOUBLE
STRING = PMType.PM_TYPE_STRING

COUNTER = PMSem.PM_SEM_COUNTER
INSTANT = PMSem.PM_SEM_INSTANT
DISCRETE = PMSem.PM_SEM_DISCRETE

NONE = Units()
COUNT = Units(dimCount=1)
BYTE = Units(dimSpace=1, scaleSpace=Space.PM_SPACE_BYTE)
KBYTE = Units(dimSpace=1, scaleSpace=Space.PM_SPACE_KBYTE)
MBYTE = Units(dimSpace=1, scaleSpace=Space.PM_SPACE_MBYTE)
USEC = Units(dimTime=1, scaleTime=Time.PM_TIME_USEC)
MSEC = Units(dimTime=1, scaleTime=Time.PM_TIME_MSEC)
SEC = Units(dimTime=1, scaleTime=Time.PM_TIME_SEC)
COUNT_PER_SEC = Units(dimTime=-1, dimCount=1, scaleTime=Time.PM_TIME_SEC)
BYTE_PER_SEC = Units(dimSpace=1, dimTime=-1, scaleTime=Time.PM_TIME_SEC)
MBYTE_PER_SEC = Units(
    dimSpace=1, dimTime=-1, scaleSpace=Space.PM_SPACE_MBYTE, scaleTime=Time.PM_TIME_SEC
)


def units_of(text: str) -> Units:
    """Units written as pminfo prints them ("Kbyte", "count / sec", "" for none)."""
    return Units.parse(text)


#: A table row: (name, cluster, item, type, indom serial or None, semantics, units, source).
Row = tuple[str, int, int, PMType, "int | None", PMSem, Units, str]


def records_of(rows: Iterable[Row]) -> tuple[MetricInfo, ...]:
    """The MetricInfo records of a family's table, one per row."""
    return tuple(MetricInfo(n, c, i, t, d, s, u, source=src) for n, c, i, t, d, s, u, src in rows)
