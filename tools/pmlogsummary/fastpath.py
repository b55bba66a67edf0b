"""Which metrics columnar.py can sum, read from the archive's columns (Columns).

The archive qualifies as a whole when it was read to its end without damage, its
records are in time order and no <mark> falls in the window; then each metric with a
numeric type and no error value sets is summed from its values, and the rest are named
for walk.py.  Most archives are steady: each metric is in every record of one layout,
and Columns.dense_tables reads its values straight into tables (one for the counters
of a layout, one for the rest) that columnar.py sums whole, instances in the order of
the value lists.  Other metrics are read as blocks, one by one, instances in the order
pmlogsummary first meets them: by the record each first appears in, and within one
record in its value list's order (read from that record itself).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.values import Timestamp

from .columnar import Scratch, spans_of, summarise, summarise_table, window_rows
from .stats import COUNTER, MetricStats
from .walk import NUMERIC

#: nanoseconds a microsecond
_US = 1000

if TYPE_CHECKING:
    from purepcp.pmapi.archive.columns import Dense
    from purepcp.pmapi.archive.reader import Archive, LogRecord

    from .options import Options
    from .report import Window


def columnar_summary(
    o: Options, archive: Archive, window: Window
) -> tuple[dict[int, MetricStats], set[int]] | None:
    """The metrics summed from columns, and the PMIDs left for the record walk; None if
    the archive does not qualify at all."""
    from purepcp.pmapi.archive.columns import Columns

    if window.unknown_end:
        return None
    try:
        c = Columns(archive)
    except Exception:
        return None
    if c.problem is not None:
        return None
    times = c.times
    if len(times) > 1 and (np.diff(times) < 0).any():
        return None
    marks_us = c.marks // 1000
    if ((marks_us >= window.start) & (marks_us <= window.finish)).any():
        return None
    wrap = os.environ.get("PCP_COUNTER_WRAP") is not None
    errors = set(c.error_pmids())
    done: dict[int, MetricStats] = {}
    left: set[int] = set(errors)  # (those with only error value sets too: -v names them)
    firsts = _FirstRecords(archive)
    need = frozenset(name for name, on in o.columns.items() if on)
    wanted: list[int] = []
    for pmid in c.pmids():
        desc = archive.descs.get(pmid)
        if desc is None or pmid in errors or (wrap and desc.sem == COUNTER):
            left.add(pmid)
        elif desc.type in NUMERIC and not c.extractable(pmid):
            left.add(pmid)  # (PCP's pmExtractValue refuses some value: the walk says so)
        elif desc.type in NUMERIC:
            wanted.append(pmid)
    lo, hi = window.start * _US, window.finish * _US + _US - 1
    counter = {pmid: archive.descs[pmid].sem == COUNTER for pmid in wanted}
    tables = c.dense_tables(wanted, lo, hi, np.float64, counter.__getitem__)
    found = _tables(o, archive, tables, need)
    for pmid in wanted:
        m = found[pmid] if pmid in found else _metric(o, c, pmid, window, firsts, need)
        if m is None:
            left.add(pmid)
        elif m.insts:
            done[pmid] = m
    return done, left


def _tables(
    o: Options, archive: Archive, tables: dict[int, Dense], need: frozenset[str]
) -> dict[int, MetricStats | None]:
    """The figures (NEED: the columns printed) of the metrics read as tables
    (Columns.dense_tables), each table's summed together, instances in their value sets'
    order (every record holds every instance); None for a metric that needs the walk."""
    work = Scratch()
    found: dict[int, MetricStats | None] = {}
    shared: dict[int, list[int]] = {}  # (the metrics read into one table)
    for pmid, table in tables.items():
        shared.setdefault(id(table.table), []).append(pmid)
    spans: dict[int, tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]] = {}
    for pmids in shared.values():
        batch: list[tuple[int, MetricStats]] = []
        for pmid in pmids:
            m = MetricStats.of(archive.descs[pmid], o.sumflag)
            if m.desc.indom == PM_INDOM_NULL and len(tables[pmid].insts) > 1:
                found[pmid] = None  # (a singular metric's values are one instance)
            else:
                found[pmid] = m
                batch.append((pmid, m))
        if not batch:
            continue
        first = tables[batch[0][0]]
        if id(first.times) not in spans:  # (the tables of one layout share their times)
            times = first.times // _US
            spans[id(first.times)] = (times, spans_of(times))
        times, gaps = spans[id(first.times)]
        ms = [m for _, m in batch]
        orders = [tables[pmid].insts for pmid, _ in batch]
        if len(batch) == len(pmids):  # (the whole table at once)
            bounds = [tables[pmid].cols for pmid, _ in batch]
            summed = summarise_table(
                ms, times, first.table, bounds, orders, o.nbins, need, gaps, work
            )
        else:
            summed = [
                summarise(m, times, tables[pmid].values, order, o.nbins, need, gaps, work)
                for (pmid, m), order in zip(batch, orders, strict=True)
            ]
        for (pmid, _), ok in zip(batch, summed, strict=True):
            if not ok:
                found[pmid] = None
    return found


def _metric(
    o: Options, c, pmid: int, window: Window, firsts: _FirstRecords, need: frozenset[str]
) -> MetricStats | None:
    block = c.block(pmid, None, None)
    rows = window_rows(block.times, window.start, window.finish)
    m = MetricStats.of(c.archive.descs[pmid], o.sumflag)
    if not len(rows):
        return m
    if m.desc.indom == PM_INDOM_NULL and len(block.insts) > 1:
        return None  # (a singular metric's values are one instance whatever they say)
    times_ns = block.times[rows]
    times = times_ns // _US
    values = block.values[rows].astype(np.float64, copy=False)
    present = block.present[rows]
    first_row = present.argmax(axis=0)
    order = firsts.order(pmid, block.insts, first_row, times_ns)
    column = {int(inst): j for j, inst in enumerate(block.insts.tolist())}
    if present.all():
        picked = [column[inst] for inst in order]
        return m if summarise(m, times, values[:, picked], order, o.nbins, need) else None
    for inst in order:
        j = column[inst]
        keep = present[:, j]
        one = MetricStats(m.desc, m.scale)
        if not summarise(one, times[keep], values[keep, j : j + 1], [inst], o.nbins, need):
            return None
        m.add(one.insts[0])
    return m


class _FirstRecords:
    """The records instances first appear in, decoded once, for their value lists' order."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self._at: dict[int, list[LogRecord]] = {}

    def order(
        self, pmid: int, insts: np.ndarray, first_row: np.ndarray, times_ns: np.ndarray
    ) -> list[int]:
        """INSTS (columns) by the row each first appears in, ties in value-list order."""
        ids = insts.tolist()
        rows = first_row.tolist()
        if len(ids) == 1:
            return ids
        by_row: dict[int, list[int]] = {}
        for inst, row in zip(ids, rows, strict=True):
            by_row.setdefault(row, []).append(inst)
        out: list[int] = []
        for row in sorted(by_row):
            group = by_row[row]
            if len(group) > 1:
                listed = self._vlist(pmid, int(times_ns[row]))
                rank = {inst: k for k, inst in enumerate(listed)}
                group.sort(key=lambda i: rank.get(i, len(rank)))
            out += group
        return out

    def _vlist(self, pmid: int, ns: int) -> list[int]:
        """The instances of PMID's value list in the first record at time NS holding it."""
        recs = self._at.get(ns)
        if recs is None:
            recs = []
            for rec in self.archive.records_from(Timestamp.from_ns(ns)):
                if rec.stamp.ns != ns:
                    break
                recs.append(rec)
            self._at[ns] = recs
        for rec in recs:
            for vs in rec.result.vsets:
                if vs.pmid == pmid and vs.numval > 0:
                    return list(vs.insts)
        return []
