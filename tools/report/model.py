"""What every output target of pmrep is given: the report's columns, then blocks of rows.

A column is one metric's one instance as pmrep lays it out (its text label, instance
name, unit label, width and precision); a block is a run of consecutive samples, every
value already rate-converted and scaled as PCP's fetchgroup would give it.  Archive
replay hands a writer a few large blocks; a live source hands it one row at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np


class Kind(Enum):
    """How a column's values print: integers, floating point, or text."""

    INT = "int"
    FLOAT = "float"
    STRING = "string"


@dataclass(frozen=True)
class Column:
    """One report column: METRIC's instance INSTANCE (None when singular)."""

    metric: str  # the metric's name, as the spec resolved it (pmrep's key)
    label: str  # pmrep's text label (the spec's, else m.u.free for mem.util.free)
    instance: str | None  # the instance's name; None for a metric without instances
    inst: int  # the instance's identifier (PM_IN_NULL when singular)
    unit: str  # the unit label pmrep prints ("KB/s", "count/s", "" when none)
    width: int  # the column's width on stdout
    precision: int  # digits after the decimal point
    kind: Kind
    indom: int  # the metric's instance domain (PM_INDOM_NULL when singular)
    labels: str = ""  # -m: its PCP labels, "{'name':'value',...}"
    metric_labels: str = ""  # -m: its metric's, without the instance's own (for -X)
    named: bool = False  # LABEL is the user's (a spec's or metricset's), not pmrep's m.u.free


@dataclass(frozen=True)
class Block:
    """Consecutive samples: TIMES (int64 ns since the epoch), and per column whether
    there is a value (HAS) and what it is (VALUES, float64; integers are exact below
    2**53, as PCP's fetchgroup also carries them as doubles).  String columns keep their
    values in STRINGS (column index -> object array of str, same rows)."""

    times: np.ndarray  # int64, (rows,)
    values: np.ndarray  # float64, (rows, columns)
    has: np.ndarray  # bool, (rows, columns)
    strings: dict[int, np.ndarray]

    @property
    def rows(self) -> int:
        return len(self.times)
