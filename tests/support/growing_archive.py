"""A growing archive for discovery's tests: a test writes it a record at a time, as a
pmlogger writes one, with metrics of every kind a follower reads differently (instances
that come and go, an error value set, an empty one, a metric first logged late, an
instance an indom gains, negative 32-bit values, floats in blocks and in words, strings)
and, last, records of one layout again, so that they are read through a learned
layout."""

from __future__ import annotations

from array import array

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.format import LabelRecord
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_AGAIN
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.labels import PM_LABEL_CONTEXT, LabelSet
from purepcp.pmapi.types import PMSem, PMType, ValFmt
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet

T0 = 1_700_000_000
NSEC = 1_000_000_000
INDOM = pmInDom_build(245, 1)
BUSY = pmID_build(245, 0, 1)  # U32 over INDOM
LOAD = pmID_build(245, 0, 2)  # DOUBLE, no instances
HITS = pmID_build(245, 0, 3)  # U64 counter, first logged in the fourth record
NAME = pmID_build(245, 0, 4)  # STRING
DROP = pmID_build(245, 0, 5)  # 32-bit signed, negative values
RATE = pmID_build(245, 0, 6)  # FLOAT
OLD = pmID_build(245, 0, 7)  # FLOAT stored in the value's word, as old pmloggers did
NAMES = {0: "a", 1: "b", 2: "c", 3: "d"}

#: each record's values of BUSY (None: an error value set), and whether HITS is in it
RECORDS = [
    ({0: 1, 1: 2}, False),
    ({0: 11, 1: 12, 2: 13}, False),
    ({0: 21, 2: 23}, False),  # (b missing: its last value stays in the entries)
    (None, True),
    ({0: 41, 1: 42, 2: 43, 3: 44}, True),
    ({0: 51, 4: 55}, True),  # (e: an instance the indom gains with this record)
    ({1: 62, 3: 64}, True),
    ({1: 72, 3: 74}, True),  # (the same layout again: read through the learned layout)
    ({1: 82, 3: 84}, True),
    ({1: 92, 3: 94}, True),
]


class Logger:
    """An archive written a record at a time, as a pmlogger writes one."""

    def __init__(self, base: str, volume_limit: int = 1 << 30) -> None:
        self.w = ArchiveWriter(
            base, hostname="web1", timezone="UTC", start=Timestamp(T0), volume_limit=volume_limit
        )
        self.w.__enter__()
        u32, dbl, text = PMType.PM_TYPE_U32, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
        inst = PMSem.PM_SEM_INSTANT
        self.w.put_desc(Desc(BUSY, u32, INDOM, inst, Units()), ["web.busy"])
        self.w.put_desc(Desc(LOAD, dbl, PM_INDOM_NULL, inst, Units()), ["web.load"])
        self.w.put_desc(Desc(NAME, text, PM_INDOM_NULL, inst, Units()), ["web.name"])
        i32, flt = PMType.PM_TYPE_32, PMType.PM_TYPE_FLOAT
        self.w.put_desc(Desc(DROP, i32, PM_INDOM_NULL, inst, Units()), ["web.drop"])
        self.w.put_desc(Desc(RATE, flt, PM_INDOM_NULL, inst, Units()), ["web.rate"])
        self.w.put_desc(Desc(OLD, flt, PM_INDOM_NULL, inst, Units()), ["web.old"])
        self.w.put_indom(Timestamp(T0), INDOM, list(NAMES), list(NAMES.values()))
        context = LabelSet.from_json('{"hostname":"web1","agent":"test"}')
        self.w.put_labels(LabelRecord(Timestamp(T0), PM_LABEL_CONTEXT, 0xFFFFFFFF, (context,)))
        self.w.put_index(Timestamp(T0))
        self.n = 0

    def record(self) -> None:
        busy, hits = RECORDS[self.n]
        stamp = Timestamp(T0 + self.n, 250_000_000)
        if self.n == 5:
            names = {**NAMES, 4: "e"}
            self.w.put_indom(stamp, INDOM, list(names), list(names.values()))
        if self.n == 3:
            self.w.put_desc(
                Desc(HITS, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER, Units()),
                ["web.hits"],
            )
        if busy is None:
            sets = [ValueSet.of_error(BUSY, PM_ERR_AGAIN)]
        else:
            sets = [ValueSet.of_atoms(BUSY, PMType.PM_TYPE_U32, list(busy.items()))]
        if self.n == 2:  # (a value set with no values)
            sets.append(ValueSet.empty(LOAD))
        else:
            sets.append(
                ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE, [(PM_IN_NULL, 0.5 * self.n)])
            )
        if hits:
            sets.append(ValueSet.of_atoms(HITS, PMType.PM_TYPE_U64, [(PM_IN_NULL, 100 * self.n)]))
        sets.append(ValueSet.of_atoms(NAME, PMType.PM_TYPE_STRING, [(PM_IN_NULL, f"n{self.n}")]))
        sets.append(ValueSet.of_atoms(DROP, PMType.PM_TYPE_32, [(PM_IN_NULL, -7 * self.n)]))
        sets.append(ValueSet.of_atoms(RATE, PMType.PM_TYPE_FLOAT, [(PM_IN_NULL, 0.25 * self.n)]))
        bits = array("I", array("f", [1.5 * self.n]).tobytes())
        sets.append(ValueSet(OLD, 1, ValFmt.PM_VAL_INSITU, 0, array("I", [PM_IN_NULL]), bits))
        self.w.put_result(Result(stamp, tuple(sets)))
        self.w.sync()
        self.n += 1

    def close(self) -> None:
        self.w.__exit__(None, None, None)
