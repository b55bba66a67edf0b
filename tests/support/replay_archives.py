"""Archives for the interpolation and replay tests: seed 001's example (its times, counts
and levels), instance churn, random archives (a hypothesis strategy) and a plain
per-value reading of seed 001 to check fetches against; pmval run in-process; PCP's
pmval's unnormalised times made comparable."""

from __future__ import annotations

import io
import itertools
import math
import re
from contextlib import redirect_stdout
from datetime import datetime, timedelta

from hypothesis import strategies as st

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.tools import pmval

S = 1_000_000_000  # the examples' times are seconds
T0 = 1_700_000_000
COUNTER, INSTANT, DISCRETE = PMSem.PM_SEM_COUNTER, PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_DISCRETE
U32, DBL = PMType.PM_TYPE_U32, PMType.PM_TYPE_DOUBLE
NULL = 0xFFFFFFFF
CTR, INS, DIS, COL = 0x0F000001, 0x0F000002, 0x0F000003, 0x0F000004
INDOM = 0x0F000001
#: seed 001's example: record times (s), a counter's values and a level's
TIMES = [10, 20, 30, 40, 50, 60, 70, 80, 90]
COUNTS = [610, 720, 1020, 1020, 1020, 1050, 1100, 1200, 1210]
LEVELS = [400, 880, 650, 1120, 1120, 940, 580, 1200, 850]


def at(sec: float) -> Timestamp:
    ns = T0 * S + round(sec * S)
    return Timestamp(*divmod(ns, S))


def plain(times, values, marks, t, sem, vtype):
    """Seed 001 read literally, one value at a time: (has, value)."""
    prior = max((i for i, x in enumerate(times) if x <= t), default=None)
    nxt = min((i for i, x in enumerate(times) if x >= t), default=None)
    if prior is not None and any(times[prior] < m <= t for m in marks):
        prior = None
    if nxt is not None and any(t <= m < times[nxt] for m in marks):
        nxt = None
    if prior is None or (nxt is None and sem != DISCRETE):
        return False, None
    p = values[prior]
    if nxt is None:
        return True, p
    n = values[nxt]
    if sem == COUNTER:
        if times[prior] == t:
            return True, p
        if times[nxt] == t:
            return True, n
        moved = (t - times[prior]) * (n - p) / (times[nxt] - times[prior])
        return True, p + moved if vtype == PMType.PM_TYPE_DOUBLE else math.trunc(0.5 + p + moved)
    return True, n if t - times[prior] > times[nxt] - t else p


def classic(path, marks=(), tail=False) -> str:
    """Seed 001's example: records at 10..90 s after the label start, marks where asked;
    with TAIL, the archive goes on to 100 s with another metric."""
    base = str(path / "classic")
    with ArchiveWriter(base, hostname="seed", timezone="UTC", start=at(0)) as w:
        w.put_desc(Desc(CTR, U32, sem=COUNTER), ["ex.counter"])
        w.put_desc(Desc(INS, U32, sem=INSTANT), ["ex.instant"])
        w.put_desc(Desc(DIS, U32, sem=DISCRETE), ["ex.discrete"])
        for t, count, level in zip(TIMES, COUNTS, LEVELS, strict=True):
            w.put_result(Result(at(t), (ValueSet.of_atoms(CTR, U32, [(NULL, count)]),
                                        ValueSet.of_atoms(INS, U32, [(NULL, level)]),
                                        ValueSet.of_atoms(DIS, U32, [(NULL, level)]))))  # fmt: skip
            for m in marks:
                if t < m < t + 10:
                    w.put_mark(at(m))
        if tail:
            w.put_desc(Desc(COL, U32, sem=INSTANT), ["ex.other"])
            w.put_result(Result(at(100), (ValueSet.of_atoms(COL, U32, [(NULL, 1)]),)))
    return base


def churn(path) -> str:
    """red (0) throughout; green (1) missing from the records at 3 and 4 s; blue (2) only
    from 5 s, when the instance domain gains it; a mark at 7.5 s."""
    base = str(path / "churn")
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=at(0)) as w:
        w.put_desc(Desc(COL, DBL, INDOM, INSTANT), ["c.level"])
        w.put_indom(at(0), INDOM, [0, 1], ["red", "green"])
        for t in range(1, 11):
            if t == 5:
                w.put_indom(at(5), INDOM, [0, 1, 2], ["red", "green", "blue"])
            insts = [0] + ([1] if t not in (3, 4) else []) + ([2] if t >= 5 else [])
            w.put_result(
                Result(at(t), (ValueSet.of_atoms(COL, DBL, [(i, t + i / 10) for i in insts]),))
            )
            if t == 7:
                w.put_mark(at(7.5))
    return base


@st.composite
def archives(draw):
    """Records at random whole seconds, each with a random subset of 3 instances of a
    counter, an instantaneous and a discrete metric; random marks between records."""
    times = sorted(draw(st.sets(st.integers(1, 60), min_size=0, max_size=15)))
    records = []
    for t in times:
        insts = draw(st.sets(st.integers(0, 2), max_size=3))
        records.append((t, {i: draw(st.integers(0, 10_000)) for i in insts}))
    gaps = [t + 0.5 for t in times if draw(st.booleans()) and draw(st.booleans())]
    return records, gaps


_SERIAL = itertools.count()


def write_records(path, records, marks) -> str:
    base = str(path / f"r{next(_SERIAL)}")
    with ArchiveWriter(base, hostname="h", timezone="UTC", start=at(0)) as w:
        for pmid, sem in ((CTR, COUNTER), (INS, INSTANT), (DIS, DISCRETE)):
            w.put_desc(Desc(pmid, DBL, INDOM, sem), [f"r.m{pmid & 0xFF}"])
        w.put_indom(at(0), INDOM, [0, 1, 2], ["a", "b", "c"])
        for t, values in records:
            pairs = sorted(values.items())
            w.put_result(
                Result(at(t), tuple(ValueSet.of_atoms(p, DBL, pairs) for p in (CTR, INS, DIS)))
            )
            for m in marks:
                if t < m < t + 1:
                    w.put_mark(at(m))
    return base


def run_pmval(monkeypatch, argv, per_fetch=False) -> str:
    if per_fetch:
        from purepcp.tools.pmval import command  # (replay one fetch at a time, not in chunks)

        monkeypatch.setattr(command, "CHUNKED", False)
    monkeypatch.setenv("TZ", "UTC")
    out = io.StringIO()
    with redirect_stdout(out):
        status = pmval.main(argv)
    monkeypatch.undo()
    assert status == 0
    return out.getvalue()


def carried(text: str) -> str:
    """PCP 6.0.3's pmval prints a time whose milliseconds round up to 1000 as "SS.1000"
    (the next second, unnormalised): written here as the next second, as ours prints it."""

    def carry(m: re.Match) -> str:
        then = datetime.strptime(m.group(1), "%H:%M:%S") + timedelta(seconds=1)
        return then.strftime("%H:%M:%S") + ".000"

    return re.sub(r"(\d\d:\d\d:\d\d)\.1000", carry, text)
