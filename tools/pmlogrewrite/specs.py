"""What the rules ask for: the global changes and one spec per metric, instance
domain, help text and label set they touch (PCP's global_t, metricspec_t, ...).

Specs are built up clause by clause as the rules are read, so they are mutable;
each list keeps PCP's order (newest first), which the -v summary follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import IntEnum, IntFlag

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.values import Timestamp

PM_IN_NULL = -1
PM_INDOM_NULL = 0xFFFFFFFF


class GlobalFlag(IntFlag):
    TIME = 1
    HOSTNAME = 2
    TIMEZONE = 4
    ZONEINFO = 8
    FEATURES = 16


class MetricFlag(IntFlag):
    PMID = 1
    NAME = 2
    TYPE = 4
    INDOM = 8
    SEM = 16
    UNITS = 32
    DELETE = 64
    RESCALE = 128


class InstFlag(IntFlag):
    INST = 16
    INAME = 32
    DELETE = 64


INDOM_DUPLICATE = 4


class Output(IntEnum):
    """Which value a metric keeps when its instance domain changes (OUTPUT clause)."""

    ALL = 0
    FIRST = 1
    LAST = 2
    ONE = 3
    MIN = 4
    MAX = 5
    SUM = 6
    AVG = 7


class TextFlag(IntFlag):
    ACTIVE = 1
    ID = 2
    TYPE = 4
    TEXT = 8
    DELETE = 16


@dataclass
class Global:
    flags: GlobalFlag = field(default_factory=lambda: GlobalFlag(0))
    sec: int = 0  # the time shift: seconds (signed) and nanoseconds (never negative)
    nsec: int = 0
    hostname: str = ""
    timezone: str = ""
    zoneinfo: str = ""
    features: int = 0

    def shift(self, stamp: Timestamp) -> Timestamp:
        """STAMP moved by the time clause (unchanged without one)."""
        if not self.flags & GlobalFlag.TIME or self.sec == 0:
            return stamp
        delta = (
            (self.sec * 1_000_000_000 + self.nsec)
            if self.sec > 0
            else (self.sec * 1_000_000_000 - self.nsec)
        )
        return Timestamp.from_ns(stamp.ns + delta)


@dataclass
class IndomSpec:
    """An instance domain's changes: new identifier, and per-instance renames/deletes."""

    old_indom: int
    new_indom: int
    old_inst: list[int]
    old_iname: list[str]
    inst_flags: list[InstFlag]
    new_inst: list[int]
    new_iname: list[str | None]
    indom_flags: int = 0

    @property
    def changes_instances(self) -> bool:
        return any(self.inst_flags)


@dataclass
class MetricSpec:
    old_name: str
    old_desc: Desc
    new_desc: Desc
    new_name: str = ""
    flags: MetricFlag = field(default_factory=lambda: MetricFlag(0))
    output: Output = Output.ALL
    one_inst: int = 0
    one_name: str | None = None
    ip: IndomSpec | None = None

    def change(self, **fields: object) -> None:
        self.new_desc = replace(self.new_desc, **fields)


@dataclass
class TextSpec:
    old_type: int
    old_id: int
    old_text: str
    new_type: int
    new_id: int
    new_text: str | None = None
    flags: TextFlag = field(default_factory=lambda: TextFlag(0))
    ip: IndomSpec | None = None


@dataclass
class Rules:
    """Every spec the rules files made, newest first within each kind."""

    glob: Global = field(default_factory=Global)
    indoms: list[IndomSpec] = field(default_factory=list)
    metrics: list[MetricSpec] = field(default_factory=list)
    texts: list[TextSpec] = field(default_factory=list)
    labels: list = field(default_factory=list)

    def metric(self, pmid: int) -> MetricSpec | None:
        return next((m for m in self.metrics if m.old_desc.pmid == pmid), None)

    def indom(self, indom: int) -> IndomSpec | None:
        return next((i for i in self.indoms if i.old_indom == indom), None)
