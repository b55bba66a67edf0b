"""What pmval's sources give its one writer: a Heading, then Blocks of rows.

A row is one step of pmval's report: a sample's values (or event records), or what
stood in for them (no values, the metric's error, logging suspended), or the instance
names over the columns.  Each has a time (archive replay prints it first), and a row
of values one cell per column (instance): the value's text, already as wide as the
column, or None where the instance has no value (or no rate yet), which prints as
"?".  Live fetches give one-row blocks; an interpolated replay gives a chunk of rows
at a time, its cells formatted a column at a time in NumPy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.values import Timestamp


class Status(IntEnum):
    """What a row says."""

    VALUES = 0  # its cells (then its note: warnings about instances it has no name for)
    NO_VALUES = 1  # the sample had no values: "No values available"
    LABELS = 2  # the columns' instance names
    ERROR = 3  # the metric gave an error instead of values: the note, on stderr
    SUSPENDED = 4  # an archive's <mark> record: "Archive logging suspended"
    EVENTS = 5  # event records: the note is their dump


class Column(NamedTuple):
    """One instance reported: its identifier (as a C int: PM_IN_NULL is -1) and name."""

    inst: int
    name: str


@dataclass(frozen=True)
class Block:
    """Consecutive rows, a field per aspect: row i says STATUS[i] of the sample at
    TIMES[i] (ns since the epoch); a VALUES row has CELLS[i], one per column (a value's
    text, None for none), other rows an empty sequence; NOTES holds the rows that have
    more to say (their text, by row).  COLUMNS are the instances the cells are of."""

    status: Sequence[Status]
    times: Sequence[int]
    cells: Sequence[Sequence[str | None]]
    notes: Mapping[int, str]
    columns: Sequence[Column]


@dataclass(frozen=True)
class Heading:
    """What the report is of, printed before its rows (pmval's printhdr)."""

    metric: str
    desc: Desc
    events: bool  # an event metric: no metric, semantics or units lines
    rates: bool  # a counter reported as a rate
    hostname: str
    archive: str | None  # the archive named, when replaying one
    start: Timestamp | None  # an archive's time window
    end: Timestamp | None  # (None when open-ended)
    samples: int  # how many, -1 for all there are
    interval_ns: int | None  # the sampling interval, None when not sampled at one
