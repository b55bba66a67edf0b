"""The observations of a chain of archives, read as one timeline (for replays of a set).

A replay of an ArchiveSet reads the chain its origin falls in (multi.py says why):
consecutive archives, each after the one before it ends, with a <mark> a millisecond
after each one's end (libpcp's, between archives).  Each archive's Columns are built
only when a replay's window first needs them, so a replay of an hour of a month of
daily archives reads that day's archive and its neighbours, not the month.  An
archive found damaged ends the chain there: reading on, libpcp fails at the damage,
and a replay reading back from after it never gets past it either.
"""

from __future__ import annotations

import numpy as np

from .columns import Columns
from .format import ArchiveError
from .interp import NUMERIC_DTYPES, Block
from .multi import ArchiveSet

_EMPTY = np.zeros(0, dtype=np.int64)


def _empty(archives: ArchiveSet, pmid: int) -> Block:
    desc = archives.descs.get(pmid)
    return Block.empty(NUMERIC_DTYPES.get(desc.type if desc is not None else -1, object))


class Chain:
    """The archives of CHAIN (indices into a set's members), reached from the one at SEEK,
    as one timeline.  COLUMNS holds the archives' Columns, built once per context."""

    def __init__(
        self, archives: ArchiveSet, chain: range, seek: int, columns: dict[int, Columns]
    ) -> None:
        self.set = archives
        self.lo, self.hi = chain.start, chain.stop - 1
        self.seek = seek
        self._columns = columns
        self._damage: int | None = None
        self._marks: np.ndarray | None = None
        self._mark_gaps: np.ndarray | None = None

    # -- the archives, built when needed -------------------------------------------------

    def _built(self, k: int) -> Columns:
        """Archive K's Columns; finding it damaged ends the chain there."""
        cols = self._columns.get(k)
        if cols is None:
            cols = self._columns[k] = Columns(self.set.members[k].archive)
        if cols.problem is not None and self.lo <= k <= self.hi:
            if k >= self.seek:
                self.hi = k
                self._damage = cols.damage
            else:  # (read back into, it fails at its end: nothing of it is seen)
                self.lo = k + 1
            self._marks = None
        return cols

    def _span(self, k: int) -> tuple[int, int]:
        """Where archive K's records lie, as its label and end say (ns)."""
        member = self.set.members[k]
        start = member.start.ns
        end = member.end.ns if member.end is not None else start
        return start, max(start, end)

    def _wanted(self, lo: int | None, hi: int | None) -> list[int]:
        """The archives a window over [LO, HI] reads: those whose records it covers, and
        the nearest on each side (for the observations just outside it)."""
        ks = range(self.lo, self.hi + 1)
        if lo is None or hi is None:
            return list(ks)
        inside = [k for k in ks if self._span(k)[0] <= hi and self._span(k)[1] >= lo]
        before = [k for k in ks if self._span(k)[1] < lo]
        after = [k for k in ks if self._span(k)[0] > hi]
        return sorted(set(inside + before[-1:] + after[:1]))

    def _columns_for(self, lo: int | None, hi: int | None) -> list[Columns]:
        while True:  # (building one may end the chain, and change what is wanted)
            wanted = self._wanted(lo, hi)
            for k in wanted:
                self._built(k)
            if wanted == self._wanted(lo, hi):
                return [self._columns[k] for k in wanted]

    # -- Observations ----------------------------------------------------------------------

    @property
    def marks(self) -> np.ndarray:
        """The archives' own <mark>s (of those read so far) and one after each archive
        of the chain but the set's last."""
        if self._marks is None:
            made = [self.set.mark_after(k) for k in range(self.lo, self.hi + 1)]
            built = [k for k in sorted(self._columns) if self.lo <= k <= self.hi]
            own = [self._columns[k].marks for k in built]
            gaps = [self._columns[k].mark_gaps for k in built]
            extra = np.array([m for m in made if m is not None], dtype=np.int64)
            marks = np.concatenate([*own, extra, _EMPTY])
            order = np.argsort(marks, kind="stable")
            # (the marks between archives are libpcp's own: no records either side are taken)
            every_gap = np.concatenate([*gaps, np.full(len(extra), -1, np.int64), _EMPTY])
            self._marks, self._mark_gaps = marks[order], every_gap[order]
        return self._marks

    @property
    def mark_gaps(self) -> np.ndarray:
        """Per mark, the time between the records either side of it (-1: not known)."""
        self.marks  # noqa: B018  (works both out)
        assert self._mark_gaps is not None
        return self._mark_gaps

    @property
    def damage(self) -> int | None:
        return self._damage

    @property
    def reads_on(self) -> bool:
        """Whether archives of the set follow the damaged one: a fetch past the set's end
        is then no end of the log, as libpcp's fetch past its current archive's end is
        not while another follows, and it reads on into the damage."""
        return self._damage is not None and self.hi < len(self.set.members) - 1

    def misencoded(self, pmid: int) -> int | None:
        """Columns.misencoded of the first archive of the chain (of those read) where PMID's
        values are found misencoded: reading on, libpcp fails there."""
        for k in range(self.lo, self.hi + 1):
            cols = self._columns.get(k)
            found = cols.misencoded(pmid) if cols is not None else None
            if found is not None:
                return found
        return None

    @property
    def problem(self) -> ArchiveError | None:
        cols = self._columns.get(self.hi)
        return cols.problem if cols is not None and self._damage is not None else None

    def block(
        self, pmid: int, lo: int | None, hi: int | None, near: np.ndarray | None = None
    ) -> Block:
        blocks = []  # (NEAR is not used: each archive's whole window is read)
        for cols in self._columns_for(lo, hi):
            blocks.append(cols.block(pmid, lo, hi))
            cols.release()  # (what a set's replay holds of its archives: the window read)
        self._marks = None  # (the archives read may have brought marks of their own)
        full = [b for b in blocks if len(b.times)]
        if len(full) <= 1:
            return full[0] if full else blocks[0] if blocks else _empty(self.set, pmid)
        insts = np.unique(np.concatenate([b.insts for b in full]))
        n = sum(len(b.times) for b in full)
        values = np.zeros((n, len(insts)), dtype=full[0].values.dtype)
        present = np.zeros((n, len(insts)), dtype=bool)
        at = 0
        for b in full:  # (the archives follow each other in time: their rows do too)
            cols = np.searchsorted(insts, b.insts)
            values[at : at + len(b.times), cols] = b.values
            present[at : at + len(b.times), cols] = b.present
            at += len(b.times)
        return Block(np.concatenate([b.times for b in full]), insts, values, present)

    def instances(self, pmid: int) -> list[int]:
        found: set[int] = set()
        for k in range(self.lo, self.hi + 1):
            found.update(self._built(k).instances(pmid))
        return sorted(found)

    def count(self, lo: int, hi: int) -> int:
        return sum(cols.count(lo, hi) for cols in self._columns_for(lo, hi))
