"""An archive's observation series, per metric and instance, read as NumPy columns.

What interpolation needs of an archive, each instance's times and values, is what
decoding every record with the reader would give, but got fast: the volumes are viewed
as 32-bit words and framed in one pass; the records of a layout (pmlogger writes few)
are found by one masked compare with a template record that the reader decoded, and a
metric's values are then one gather over them.  Records that fit no template, or whose
layout is not one to trust, are decoded by the reader, so every series is exactly the
record-by-record one (tests/pmapi/test_columns.py holds that plain reading and checks it).

A steady archive's metrics (each in every record of one layout, the records side by
side) are also read as tables (`dense_tables`): a row per record, a column per value,
several metrics side by side, read a stretch of records at a time.

Values are read for a window of time at a time (`block`, `window`): the records in it
and, per instance, the observation just before and just after it, all any value in
the window is interpolated from.  A pass over a mapped volume lets the kernel take
back the pages behind it, so reading a large archive keeps little of it resident.
Framing is frames.py's, templates are layouts.py's; here records find their template
and series are read.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from ..errors import PMError
from ..types import PMType, ValFmt
from .format import PM_LOG_VERS03, ArchiveError
from .frames import EMPTY, LARGE, SPAN, Frames, detached, release
from .interp import NSEC, NUMERIC_DTYPES, Block, Series
from .layouts import Group, Template, column, read_values, template_of
from .reader import Archive, LogRecord

#: Words of a record compared against a template in one go (bounds the scratch memory).
_CHUNK_WORDS = 1 << 17
#: Bytes of records read at a time when values are copied out of them.
_STRIDED_BYTES = 2 << 20
#: Layouts with fewer records than this are not worth a template: they are decoded.
_FEW = 4
#: A template compared with P records of its length should match P / _YIELD of them
#: (a compare costs about that fraction of a careful decode) ...
_YIELD = 64
#: ... and the compares of templates that do not may add up to _WASTE passes over the
#: records of that length; then the rest are decoded one by one.  Many layouts of one
#: length so cost a linear number of compares, not one pass per layout.
_WASTE = 2

#: The value encodings libpcp's interpolation takes for each type (others: pointers).
_POINTERS = (int(ValFmt.PM_VAL_DPTR), int(ValFmt.PM_VAL_SPTR))
_ENCODINGS = {
    PMType.PM_TYPE_32: (int(ValFmt.PM_VAL_INSITU),),
    PMType.PM_TYPE_U32: (int(ValFmt.PM_VAL_INSITU),),
    PMType.PM_TYPE_FLOAT: (int(ValFmt.PM_VAL_INSITU), *_POINTERS),
}

_Chunk = tuple[int, Sequence[int], Sequence[Any]]  # record, insts, atoms
#: One instance's values from one source: records (ascending), values, and their times
#: when already known to be ascending (else None).  A record's values all come from one
#: source, whose parts are made in the record's order.
_Part = tuple[np.ndarray, np.ndarray, np.ndarray | None]
_LITTLE = sys.byteorder == "little"


@dataclass(frozen=True)
class Dense:
    """One metric's values as a table: a row per record (TIMES, ns, ascending), a column
    per instance (INSTS, in the order of the records' value sets), every value present.
    The columns COLS of TABLE, which the metrics read together share, side by side."""

    times: np.ndarray
    insts: list[int]
    table: np.ndarray  # (records, columns), C order
    cols: slice

    @property
    def values(self) -> np.ndarray:
        """(records, instances): the metric's own columns."""
        return self.table[:, self.cols]


class Columns:
    """Every metric-instance's observation series in one archive, and its <mark> times.

    Scans all volumes once (frames, times, layouts); values are read per metric, for
    the window of time asked for.  Damage ends the scan as it ends a walk over
    `Archive.records()`: the records before it are kept and `problem` says where.
    """

    #: (one archive: a fetch past its end is the end of the log, damaged or not)
    reads_on = False

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        frames = Frames(archive)
        self.problem: ArchiveError | None = frames.problem
        #: Records read through a template, and records decoded one by one (for tests).
        self.fast_records = 0
        self.careful_records = 0
        self._v3 = archive.version == PM_LOG_VERS03
        self._templates: list[Template] = []
        self._careful: dict[int, list[_Chunk]] = {}
        self._careful_errors: dict[int, list[tuple[int, int]]] = {}
        self._careful_rows: list[int] = []
        self._careful_valfmts: dict[int, list[tuple[int, int]]] = {}  # pmid: (row, valfmt)
        self._misencoded: dict[int, int | None] = {}  # (misencoded(), once worked out)
        self._careful_done: dict[int, tuple[np.ndarray, ...] | None] = {}
        self._sorted: np.ndarray | None = None  # the records' times, ascending
        self._by_pmid: dict[int, list[tuple[Template, Group]]] = {}
        self._pmids: list[int] = []
        self._first, self._smallest = frames.first, frames.smallest
        datas, vol_of, offs, lens = frames.volumes, frames.vol_of, frames.offsets, frames.lengths
        times, numpmid = frames.times, frames.numpmid
        self._vols = list(datas)
        self._vol_of = vol_of
        self._words = (offs - self._first) >> 2
        self._count = len(offs)  # records kept: those before the first damaged one
        self._assign(datas, offs, lens, numpmid)
        count = self._count
        self._vol_of, self._words = vol_of[:count], self._words[:count]
        self.times: np.ndarray = times[:count]
        marks = (numpmid[:count] == 0) & (lens[:count] == self._smallest)
        found = _marks(self.times, np.flatnonzero(marks))
        self.marks: np.ndarray = found[0]
        #: per mark, the time between the records either side of it (-1: none one side)
        self.mark_gaps: np.ndarray = found[1]
        self._keep(count)

    # -- layouts ---------------------------------------------------------------------

    def _assign(
        self, datas: dict[int, Any], offs: np.ndarray, lens: np.ndarray, numpmid: np.ndarray
    ) -> None:
        """Give every record with values a template or a careful decode, length by length;
        the first one the reader cannot decode ends the records kept."""
        views = [
            np.frombuffer(d, np.uint32, (len(d) - self._first) >> 2, self._first)
            for d in datas.values()
        ]
        records = np.flatnonzero((numpmid != 0) | (lens != self._smallest))
        by_length = records[np.argsort(lens[records], kind="stable")]
        cuts = np.flatnonzero(np.diff(lens[by_length])) + 1
        self._datas = list(datas.values())  # (while assigning: what `views` view)
        for pending in np.split(by_length, cuts):
            self._assign_length(datas, views, offs, lens, pending)
            for data in self._datas:
                if len(data) > LARGE:  # (keep only what is being read)
                    release(data, 0, len(data))
        del self._datas

    def _assign_length(
        self,
        datas: dict[int, Any],
        views: list[np.ndarray],
        offs: np.ndarray,
        lens: np.ndarray,
        pending: np.ndarray,
    ) -> None:
        """Assign PENDING, the records of one length in file order: the first one left
        is decoded and, while templates pay, becomes the template of those like it."""
        wasted, allowed = 0, _WASTE * len(pending)
        while len(pending) and pending[0] < self._count:
            r = int(pending[0])
            decoded = self._decode(datas, offs, lens, r)
            if decoded is None:
                return
            rec, raw = decoded
            found = None
            if len(pending) >= _FEW and wasted <= allowed:
                found = template_of(rec, raw, self._v3, self.archive.descs)
            if found is None:
                self._add_careful(r, rec)
                pending = pending[1:]
                continue
            template, mask, expect = found
            pending = pending[pending < self._count]
            compared = len(pending)
            same = self._matches(views, pending, template.length, mask, expect)
            template.rows, pending = pending[same], pending[~same]
            if len(template.rows) < max(_FEW, compared // _YIELD):
                wasted += compared
            if len(template.rows) >= _FEW:
                self._templates.append(template)
                continue
            self._add_careful(r, rec)  # too few to be worth a template
            for row in template.rows[1:].tolist():
                decoded = self._decode(datas, offs, lens, row)
                if decoded is None:
                    return
                self._add_careful(row, decoded[0])

    def _decode(
        self, datas: dict[int, Any], offs: np.ndarray, lens: np.ndarray, r: int
    ) -> tuple[LogRecord, bytes] | None:
        """Record R decoded by the reader, and its bytes; None (after keeping the error in
        `problem` and ending the records kept there) if the reader cannot decode it."""
        vol = self._vols[int(self._vol_of[r])]
        at = int(offs[r])
        raw = datas[vol][at : at + int(lens[r])]
        try:
            return self.archive.decode_record(vol, at, raw), raw
        except ArchiveError as exc:
            self._count, self.problem = r, detached(exc)
            return None

    def _matches(
        self, views: list[np.ndarray], rows: np.ndarray, length: int, mask: Any, expect: Any
    ) -> np.ndarray:
        """Which of ROWS (records of LENGTH, in file order) have EXPECT under MASK."""
        width = length >> 2
        step = max(1, _CHUNK_WORDS // width)
        scratch = np.empty(step * width, np.uint32)
        out = np.empty(len(rows), dtype=bool)
        vol_of, starts = self._vol_of[rows], self._words[rows]
        for a, b in _runs(vol_of):
            view = views[int(vol_of[a])]
            released = a  # (pages are let go a stretch of the volume at a time)
            large = len(self._datas[int(vol_of[a])]) > LARGE
            for c in range(a, b, step):
                d = min(c + step, b)
                first = int(starts[c])
                if starts[d - 1] - first == (d - 1 - c) * width:  # adjacent: a view
                    block = view[first : first + (d - c) * width].reshape(d - c, width)
                else:
                    block = view[starts[c:d, None] + np.arange(width)]
                x = scratch[: (d - c) * width].reshape(d - c, width)
                np.bitwise_and(block, mask, out=x)
                np.bitwise_xor(x, expect, out=x)
                # (mostly all equal: one count over the chunk is cheaper than one per row)
                out[c:d] = True if not np.count_nonzero(x) else ~x.any(axis=1)
                del block
                if 4 * (int(starts[d - 1]) - int(starts[released])) > SPAN and large:
                    lo, hi = int(starts[released:d].min()), int(starts[released:d].max()) + width
                    data = self._datas[int(vol_of[a])]
                    release(data, self._first + 4 * lo, self._first + 4 * hi)
                    released = d
        return out

    def _add_careful(self, r: int, rec: LogRecord) -> None:
        """Record R's values as the reader decoded them (REC), kept per metric."""
        self._careful_rows.append(r)
        for vs in rec.result.vsets:
            if vs.numval < 0:
                self._careful_errors.setdefault(vs.pmid, []).append((r, vs.numval))
            if vs.numval <= 0:
                continue
            desc = self.archive.descs.get(vs.pmid)
            atoms = vs.atoms(desc.type if desc is not None else None)
            self._careful.setdefault(vs.pmid, []).append((r, vs.insts, atoms))
            self._careful_valfmts.setdefault(vs.pmid, []).append((r, vs.valfmt))

    def _keep(self, count: int) -> None:
        """Forget what was read of records from COUNT on (after damage); index the rest."""
        for t in self._templates:
            t.rows = t.rows[t.rows < count]
            if len(t.rows):
                self.fast_records += len(t.rows)
                for g in t.groups:
                    self._by_pmid.setdefault(g.pmid, []).append((t, g))
        self._careful = {  # in file order (a stable sort keeps a record's own order)
            pmid: sorted(kept, key=lambda c: c[0])
            for pmid, chunks in self._careful.items()
            if (kept := [c for c in chunks if c[0] < count])
        }
        self.careful_records = sum(r < count for r in self._careful_rows)
        errors: dict[int, list[tuple[np.ndarray, int]]] = {}
        for t in self._templates:
            for pmid, code in t.errors:
                if len(t.rows):
                    errors.setdefault(pmid, []).append((t.rows, code))
        for pmid, found in self._careful_errors.items():
            for r, code in found:
                if r < count:
                    errors.setdefault(pmid, []).append((np.array([r], np.int64), code))
        self._errors = errors
        self._pmids = sorted(set(self._by_pmid) | set(self._careful))

    # -- series ----------------------------------------------------------------------

    def pmids(self) -> list[int]:
        """The metrics with at least one value in the archive."""
        return list(self._pmids)

    def errors(self, pmid: int) -> tuple[np.ndarray, np.ndarray]:
        """The records in which PMID's value set is an error: their rows' times (ns, in
        order) and the error codes (the reader reads them as no values)."""
        found = self._errors.get(pmid, [])
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        rows = np.concatenate([r for r, _ in found])
        codes = np.concatenate([np.full(len(r), c, np.int64) for r, c in found])
        times = self.times[rows]
        order = np.lexsort((rows, times))
        return times[order], codes[order]

    def misencoded(self, pmid: int) -> int | None:
        """Where libpcp's interpolation finds PMID's values misencoded (update_bounds: "valfmt
        changed"), a record it cannot read: the first, in file order, whose value encoding
        differs from the first record's, or the first if that one's does not fit PMID's
        type.  The time of the last record before it (ns; the label's start if none is);
        None if every record's encoding is PMID's own."""
        if pmid not in self._misencoded:
            self._misencoded[pmid] = self._find_misencoded(pmid)
        return self._misencoded[pmid]

    def _find_misencoded(self, pmid: int) -> int | None:
        desc = self.archive.descs.get(pmid)
        rows = [t.rows for t, _ in self._by_pmid.get(pmid, [])]
        fmts = [np.full(len(t.rows), g.valfmt, np.int64) for t, g in self._by_pmid.get(pmid, [])]
        careful = [(r, f) for r, f in self._careful_valfmts.get(pmid, []) if r < self._count]
        if careful:
            rows.append(np.array([r for r, _ in careful], np.int64))
            fmts.append(np.array([f for _, f in careful], np.int64))
        if desc is None or not rows:
            return None
        all_rows, all_fmts = np.concatenate(rows), np.concatenate(fmts)
        if not len(all_rows):
            return None
        order = np.argsort(all_rows, kind="stable")
        all_rows, all_fmts = all_rows[order], all_fmts[order]
        first = int(all_fmts[0])
        if first in _ENCODINGS.get(desc.type, _POINTERS):
            changed = np.flatnonzero(all_fmts != first)
            if not len(changed):
                return None
            bad = int(all_rows[changed[0]])
        else:
            bad = int(all_rows[0])
        if bad == 0:
            start = self.archive.label.start
            return start.sec * NSEC + start.nsec
        return int(self.times[bad - 1])

    def extractable(self, pmid: int) -> bool:
        """Whether every value of PMID reads as pmExtractValue reads a value of its type,
        as far as the layouts tell: encoded as its type needs (misencoded() is None) and,
        in the records read through a template, each in a value block of its type's own
        size and type (libpcp refuses other blocks with PM_ERR_CONV)."""
        desc = self.archive.descs.get(pmid)
        found = self._by_pmid.get(pmid, [])
        if desc is None or any(g.words is None for _, g in found):
            return False
        if len(found) == 1 and pmid not in self._careful_valfmts:  # (one layout: one encoding)
            return found[0][1].valfmt in _ENCODINGS.get(desc.type, _POINTERS)
        return self.misencoded(pmid) is None

    def error_pmids(self) -> list[int]:
        """The metrics with an error value set in some record."""
        return sorted(self._errors)

    def release(self) -> None:
        """Let the kernel take back every page of the volumes read so far (they are read
        from the file again if needed): for a set's archives, once a window is read."""
        for vol in self._vols:
            with contextlib.suppress(PMError):
                data = self.archive.volume(vol)
                release(data, 0, len(data))

    def count(self, lo: int, hi: int) -> int:
        """How many records (marks included) have times in [LO, HI]."""
        if self._sorted is None:
            self._sorted = np.sort(self.times)
        ordered = self._sorted
        return int(np.searchsorted(ordered, hi, "right") - np.searchsorted(ordered, lo, "left"))

    @property
    def last(self) -> int | None:
        """The time of the latest record read (ns), None if there is none."""
        return int(self.times.max()) if len(self.times) else None

    @property
    def damage(self) -> int | None:
        """Where reading the records stopped at damage: the time of the last record read
        before it (the label's start if none was); None when the archive reads to its end."""
        if self.problem is None:
            return None
        last = self.last
        if last is None:
            start = self.archive.label.start
            return start.sec * NSEC + start.nsec
        return last

    def instances(self, pmid: int) -> list[int]:
        """The instances PMID has a value for in some record, ascending (no values read)."""
        insts: set[int] = set()
        for _, g in self._by_pmid.get(pmid, []):
            insts.update(g.insts)
        flat = self._careful_flat(pmid)
        if flat is not None:
            insts.update(np.unique(flat[0]).tolist())
        return sorted(insts)

    def series(self, pmid: int) -> dict[int, Series]:
        """PMID's observations, per instance (an empty dict if it has none)."""
        return self.window(pmid, None, None)

    def window(self, pmid: int, lo: int | None, hi: int | None) -> dict[int, Series]:
        """PMID's observations at times in [LO, HI] (ns; None: unbounded) per instance, and
        each instance's last observation before LO and first after HI: all any value at a
        time in [LO, HI] is interpolated from, read without reading the rest."""
        desc = self.archive.descs.get(pmid)
        dtype = NUMERIC_DTYPES.get(desc.type if desc is not None else -1, object)
        parts: dict[int, list[_Part]] = {}
        for t, g in self._by_pmid.get(pmid, []):
            picked = self._select(t, lo, hi)
            if not len(picked):
                continue
            rows = t.rows[picked]
            values = self._gather(t, g, rows)
            stamps = self._stamps(t)
            if stamps is not None:
                stamps = stamps[picked]
            for i, inst in enumerate(g.insts):
                parts.setdefault(inst, []).append((rows, values[i], stamps))
        self._careful_parts(pmid, dtype, parts, lo, hi)
        return {inst: _merge(parts[inst], self.times) for inst in sorted(parts)}

    def block(
        self, pmid: int, lo: int | None, hi: int | None, near: np.ndarray | None = None
    ) -> Block:
        """window(PMID, LO, HI) as a Block: the same observations, one row per record,
        one column per instance (built with a few array operations, not per instance).
        Given NEAR (times, ns), a block of one layout (every record holding every
        instance) keeps only the records at or either side of each: what interpolation
        at NEAR reads of it (a replay at a longer interval than the logger's reads less)."""
        desc = self.archive.descs.get(pmid)
        dtype = NUMERIC_DTYPES.get(desc.type if desc is not None else -1, object)
        found = []
        for t, g in self._by_pmid.get(pmid, []):
            picked = self._select(t, lo, hi)
            if len(picked):
                found.append((t, g, t.rows[picked]))
        sparse = self._careful_window(pmid, lo, hi)
        if sparse is None and len(found) == 1:  # (one layout: its rows are the table's)
            t, g, rows = found[0]
            ids = np.asarray(g.insts, np.int64)
            times = self.times[rows]
            if len(set(g.insts)) == len(ids) and not (times[1:] < times[:-1]).any():
                if near is not None:
                    keep = _either_side(times, near)
                    rows, times = rows[keep], times[keep]
                order = np.argsort(ids)
                vals = self._gather_rows(t, g, rows)
                if (order != np.arange(len(ids))).any():
                    vals = vals[:, order]
                present = np.ones((len(rows), len(ids)), dtype=bool)
                return Block(times, ids[order], vals, present)
        dense = [(rows, np.asarray(g.insts, np.int64), self._gather(t, g, rows))
                 for t, g, rows in found]  # fmt: skip
        all_rows = [d[0] for d in dense] + ([sparse[0]] if sparse is not None else [])
        if not all_rows:
            return Block.empty(dtype)
        rows = np.unique(np.concatenate(all_rows))
        rows = rows[np.argsort(self.times[rows], kind="stable")]  # (in time, then file order)
        insts = np.unique(
            np.concatenate([d[1] for d in dense] + ([sparse[1]] if sparse is not None else []))
        )
        by_row = np.argsort(rows)
        values = np.zeros((len(rows), len(insts)), dtype=dtype)
        present = np.zeros((len(rows), len(insts)), dtype=bool)
        for r, ids, vals in dense:
            at = by_row[np.searchsorted(rows[by_row], r)]
            cols = np.searchsorted(insts, ids)
            values[at[:, None], cols[None, :]] = vals.T
            present[at[:, None], cols[None, :]] = True
        if sparse is not None:
            r, ids, vals = sparse
            at = by_row[np.searchsorted(rows[by_row], r)]
            cols = np.searchsorted(insts, ids)
            values[at, cols] = vals
            present[at, cols] = True
        return Block(self.times[rows], insts, values, present)

    def dense(self, pmid: int, lo: int, hi: int, dtype: Any = None) -> Dense | None:
        """PMID's values at times in [LO, HI] (ns) as a Dense table, read straight from the
        volumes (strided copies, no transposes) when that is possible: every record
        holding PMID has one layout, whose records are in time order and side by side in
        their volumes (a steady logger's archive).  None otherwise: block() reads any
        archive.  DTYPE: the values cast as astype casts them (else the metric's own
        type, as block() gives it)."""
        return self.dense_tables([pmid], lo, hi, dtype).get(pmid)

    def dense_tables(
        self,
        pmids: Sequence[int],
        lo: int,
        hi: int,
        dtype: Any = None,
        together: Callable[[int], Hashable] | None = None,
    ) -> dict[int, Dense]:
        """dense() of each of PMIDS it can read.  The metrics of one layout that TOGETHER
        gives one key (all, without it) and whose values read alike are read into one
        table, side by side in PMIDS' order: one pass over the records for all of them,
        and one table a caller can work on as a whole."""
        layouts: dict[int, tuple[Template, dict[Hashable, list[tuple[int, Group]]]]] = {}
        for pmid in pmids:
            found = self._by_pmid.get(pmid, [])
            if len(found) != 1 or self._careful_flat(pmid) is not None:
                continue
            t, g = found[0]
            if g.words is None or len(set(g.insts)) != len(g.insts) or self._stamps(t) is None:
                continue
            key = together(pmid) if together is not None else None
            reads = (key, g.wide, g.kind, np.dtype(g.dtype).str, g.via_double)
            layouts.setdefault(id(t), (t, {}))[1].setdefault(reads, []).append((pmid, g))
        tables: dict[int, Dense] = {}
        for t, batches in layouts.values():
            stamps = self._stamps(t)
            assert stamps is not None
            a = int(np.searchsorted(stamps, lo, "left"))
            b = int(np.searchsorted(stamps, hi, "right"))
            times = stamps[a:b]  # (one array: the tables of a layout share their rows)
            groups = [[g for _, g in batch] for batch in batches.values()]
            read = self._read_tables(t, groups, t.rows[a:b], dtype)
            for batch, table in zip(batches.values(), read, strict=False):  # (none: unread)
                at = 0
                for pmid, g in batch:
                    k = len(g.insts)
                    tables[pmid] = Dense(times, list(g.insts), table, slice(at, at + k))
                    at += k
        return tables

    def _read_tables(
        self, t: Template, batches: list[list[Group]], rows: np.ndarray, dtype: Any
    ) -> list[np.ndarray]:
        """For each of BATCHES (groups of T read alike), their values in ROWS side by
        side, as _as_values reads them, all read in one pass over the records; none
        unless each volume's ROWS lie side by side."""
        offsets = [4 * np.concatenate([g.words for g in groups]) for groups in batches]  # type: ignore[misc]
        raws = [np.dtype(np.uint64 if groups[0].wide else np.uint32) for groups in batches]
        outs = [
            np.empty((len(rows), len(o)), groups[0].dtype if dtype is None else dtype)
            for o, groups in zip(offsets, batches, strict=True)
        ]
        # (where the words are the values, as they are, they are picked in place)
        direct = [
            not gs[0].via_double and _as_values(np.zeros((1, 1), r), gs[0], None).dtype == o.dtype
            for r, gs, o in zip(raws, batches, outs, strict=True)
        ]
        width, first = t.length >> 2, self._first
        vol_of = self._vol_of[rows]
        for a, b in _runs(vol_of):
            starts = self._words[rows[a:b]]
            if int(starts[-1]) - int(starts[0]) != (b - a - 1) * width:
                return []
            data = self.archive.volume(self._vols[int(vol_of[a])])
            picker = _Picker(offsets, raws, 4 * width)
            at = first + 4 * int(starts[0])
            into = [out[a:b].view(r) if same else None
                    for out, r, same in zip(outs, raws, direct, strict=True)]  # fmt: skip
            for c, d, picked in picker.chunks(data, at, b - a, into):
                for out, groups, chunk, same in zip(outs, batches, picked, direct, strict=True):
                    if not same:
                        values = _as_values(chunk, groups[0], None)
                        np.copyto(out[a + c : a + d], values, casting="unsafe")
            if len(data) > LARGE:
                release(data, first + 4 * int(starts[0]), first + 4 * (int(starts[-1]) + width))
        return outs

    def _careful_window(
        self, pmid: int, lo: int | None, hi: int | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """PMID's carefully decoded values window(LO, HI) reads: rows, instances, values
        (each instance's in [LO, HI], its last before LO and its first after HI)."""
        flat = self._careful_flat(pmid)
        if flat is None:
            return None
        insts, times, rows, values, starts = flat
        if lo is None and hi is None:
            return rows, insts, values
        n = len(insts)
        ends = np.append(starts[1:], n)
        zero = np.zeros_like(starts)
        before = np.add.reduceat((times < lo).astype(np.int64), starts) if lo is not None else zero
        upto = (
            np.add.reduceat((times <= hi).astype(np.int64), starts)
            if hi is not None
            else ends - starts
        )
        a = starts + np.maximum(before - 1, 0)  # (the last before LO, if any)
        b = np.minimum(starts + upto + 1, ends)  # (the first after HI, if any)
        keep = np.zeros(n + 1, dtype=np.int64)
        np.add.at(keep, a, 1)
        np.add.at(keep, b, -1)
        picked = np.cumsum(keep[:n]) > 0
        return rows[picked], insts[picked], values[picked]

    def _select(self, t: Template, lo: int | None, hi: int | None) -> np.ndarray:
        """Which of T's records (positions in t.rows) window(LO, HI) reads."""
        n = len(t.rows)
        if lo is None and hi is None:
            return np.arange(n)
        self._stamps(t)
        stamps = t.stamps
        assert stamps is not None
        return _nearest(stamps, lo, hi, t.ascending)

    def _stamps(self, t: Template) -> np.ndarray | None:
        """The times of T's records if they are ascending (shared by its series), else None."""
        if t.stamps is None:
            t.stamps = self.times[t.rows]
            t.ascending = not (t.stamps[1:] < t.stamps[:-1]).any()
        return t.stamps if t.ascending else None

    def _gather(self, t: Template, g: Group, rows: np.ndarray) -> np.ndarray:
        """Group G's values in ROWS (records of T, in file order): one row per value, one
        column per record."""
        if g.words is None:
            return np.repeat(column([g.atoms], g.dtype)[:, None], len(rows), axis=1)
        first, width = self._first, t.length >> 2
        low = int(g.words.min())
        high = int(g.words.max()) + (2 if g.wide else 1)
        pieces = []
        vol_of = self._vol_of[rows]
        for a, b in _runs(vol_of):
            data = self.archive.volume(self._vols[int(vol_of[a])])
            view = np.frombuffer(data, np.uint32, (len(data) - first) >> 2, first)
            starts = self._words[rows[a:b]]
            at = int(starts[0])
            if starts[-1] - at == (b - a - 1) * width:  # adjacent records: a strided view
                span = view[at : at + (b - a) * width].reshape(b - a, width)[:, low:high]
            else:
                span = view[starts[:, None] + np.arange(low, high)]
            pieces.append(read_values(span, g.words - low, g))
            del span, view
            if len(data) > LARGE:
                lo, hi = first + 4 * int(starts.min()), first + 4 * (int(starts.max()) + width)
                release(data, lo, hi)
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces, axis=1)

    def _gather_rows(self, t: Template, g: Group, rows: np.ndarray) -> np.ndarray:
        """_gather(T, G, ROWS) turned: one row per record, one column per value (C order).
        Values evenly spaced, in records a whole number of T's lengths apart, are read
        as big-endian numbers through one strided view of each volume (no gather, no
        transposes), else gathered and turned."""
        words = g.words
        step = int(words[1] - words[0]) if words is not None and len(words) > 1 else 1
        even = words is not None and (np.diff(words) == step).all() and step > 0
        if not even or g.via_double or g.dtype is object:
            return np.ascontiguousarray(self._gather(t, g, rows).T)
        assert words is not None
        kind = np.dtype(g.dtype).newbyteorder(">") if g.wide else np.dtype(g.kind)
        first, width = self._first, t.length >> 2
        vol_of = self._vol_of[rows]
        pieces = []
        for a, b in _runs(vol_of):
            starts = self._words[rows[a:b]]
            lo = int(starts[0])
            apart, odd = np.divmod(starts - lo, width)
            if odd.any() or (apart[1:] <= apart[:-1]).any():
                return np.ascontiguousarray(self._gather(t, g, rows).T)
            data = self.archive.volume(self._vols[int(vol_of[a])])
            at = first + 4 * (lo + int(words[0]))
            shape = (int(apart[-1]) + 1, len(words))
            view = np.ndarray(shape, kind, data, at, (4 * width, 4 * step))
            if len(apart) == shape[0]:  # (side by side: the whole view)
                pieces.append(view.astype(g.dtype))
            else:
                pieces.append(view[apart].astype(g.dtype))
            del view
            if len(data) > LARGE:
                release(data, first + 4 * lo, first + 4 * (int(starts[-1]) + width))
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces, axis=0)

    def _careful_flat(self, pmid: int) -> tuple[np.ndarray, ...] | None:
        """PMID's carefully decoded values as arrays sorted by instance, then time, then
        file order: instances, times, rows, values, and where each instance's run starts."""
        flat = self._careful_done.get(pmid)
        if flat is not None or pmid in self._careful_done:
            return flat
        chunks = self._careful.pop(pmid, None)
        if not chunks:
            self._careful_done[pmid] = None
            return None
        desc = self.archive.descs.get(pmid)
        dtype = NUMERIC_DTYPES.get(desc.type if desc is not None else -1, object)
        counts = [len(c[1]) for c in chunks]
        rows = np.repeat(np.array([c[0] for c in chunks], dtype=np.int64), counts)
        insts = np.concatenate([np.asarray(c[1], dtype=np.int64) for c in chunks])
        values = column([c[2] for c in chunks], dtype)
        times = self.times[rows]
        order = np.lexsort((rows, times, insts))
        insts, times, rows, values = insts[order], times[order], rows[order], values[order]
        starts = np.flatnonzero(np.diff(insts, prepend=-1)) if len(insts) else EMPTY
        flat = (insts, times, rows, values, starts)
        self._careful_done[pmid] = flat
        return flat

    def _careful_parts(
        self, pmid: int, dtype: Any, parts: dict[int, list[_Part]], lo: int | None, hi: int | None
    ) -> None:
        """Add PMID's carefully decoded values in window(LO, HI) to PARTS, per instance."""
        flat = self._careful_flat(pmid)
        if flat is None:
            return
        insts, times, rows, values, starts = flat
        bounds = [*starts.tolist(), len(insts)]
        for a, b in pairwise(bounds):
            if lo is None and hi is None:
                picked = slice(a, b)
            else:
                inner = _nearest(times[a:b], lo, hi, True)
                if not len(inner):
                    continue
                picked = slice(a + int(inner[0]), a + int(inner[-1]) + 1)
            parts.setdefault(int(insts[a]), []).append((rows[picked], values[picked], None))


class _Picker:
    """Values at byte offsets (in a record PITCH bytes long) out of a run of records side
    by side, a stretch of records at a time: each record's span of values copied whole
    (a plain copy, quick to read) into a small buffer, and each set of OFFSETS picked
    from there as native integers of the words (RAWS), in its order: one strided copy
    where the offsets are evenly spaced, or runs of them are (a strided read straight
    from a large mapping is several times slower, and each record is read once)."""

    def __init__(self, offsets: list[np.ndarray], raws: list[Any], pitch: int) -> None:
        self.raws = [np.dtype(r) for r in raws]
        self.low = min(int(o.min()) for o in offsets)
        ends = [int(o.max()) + r.itemsize for o, r in zip(offsets, self.raws, strict=True)]
        self.span = max(ends) - self.low
        self.offsets = [o - self.low for o in offsets]
        self.patterns = [_pattern(o) for o in self.offsets]
        self.pitch = pitch
        self.rows = max(1, _STRIDED_BYTES // pitch)

    def chunks(
        self, data: Any, at: int, n: int, into: list[np.ndarray | None]
    ) -> Iterator[tuple[int, int, list[np.ndarray]]]:
        """For each stretch [C, D) of the N records from byte AT of DATA on: C, D and the
        values of each set of offsets (records x values), picked into rows C to D of its
        INTO array if it has one, else into a work array."""
        rows, span = min(n, self.rows), self.span
        buf = np.empty((rows, span), np.uint8)
        outs = [
            np.empty((rows, len(o)), r) if dest is None else dest
            for o, r, dest in zip(self.offsets, self.raws, into, strict=True)
        ]
        for c in range(0, n, self.rows):
            d = min(c + self.rows, n)
            stretch = np.ndarray((d - c, span), np.uint8, data, at + self.low + c * self.pitch,
                                 (self.pitch, 1))  # fmt: skip
            np.copyto(buf[: d - c], stretch)
            picked = []
            for out, dest, offsets, raw, (shape, strides) in zip(
                outs, into, self.offsets, self.raws, self.patterns, strict=True
            ):
                mine = out[: d - c] if dest is None else out[c:d]
                if shape is not None:
                    view = np.ndarray((d - c, *shape), raw, buf, int(offsets[0]), (span, *strides))
                    np.copyto(mine.reshape(d - c, *shape), view)
                else:
                    for j, off in enumerate(offsets.tolist()):
                        np.copyto(mine[:, j], np.ndarray((d - c,), raw, buf, off, (span,)))
                if _LITTLE:  # (the words are big-endian)
                    mine.byteswap(inplace=True)
                picked.append(mine)
            yield c, d, picked


def _pattern(offsets: np.ndarray) -> tuple[tuple[int, ...] | None, tuple[int, ...]]:
    """The shape and byte strides of a view picking OFFSETS (ascending or not) from a row:
    one evenly spaced run, or runs of one length evenly spaced; (None, ()) if neither."""
    k = len(offsets)
    if k == 1:
        return (1,), (8,)
    steps = np.diff(offsets)
    if (steps == steps[0]).all():
        return (k,), (int(steps[0]),)
    breaks = np.flatnonzero(steps != steps[0])
    run = int(breaks[0]) + 1
    if k % run:
        return None, ()
    grid = offsets.reshape(k // run, run)
    inner, outer = np.diff(grid, axis=1), np.diff(grid[:, 0])
    if (inner == inner[0, 0]).all() and len(outer) and (outer == outer[0]).all():
        return (k // run, run), (int(outer[0]), int(inner[0, 0]))
    return None, ()


def _as_values(raw: np.ndarray, g: Group, dtype: Any) -> np.ndarray:
    """Group G's values from their RAW words (native unsigned integers), as read_values
    reads them, cast to DTYPE if given."""
    if g.wide:
        values = raw.view(g.dtype)
    else:
        values = raw.view(np.dtype(g.kind).newbyteorder("=")).astype(g.dtype, copy=False)
        if g.via_double:  # (as read_values reads a float block)
            with np.errstate(invalid="ignore"):
                values = values.astype(np.float64).astype(np.float32)
    return values if dtype is None else values.astype(dtype, copy=False)


def _marks(times: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The times of the <mark>s at ROWS of TIMES (the records' times, in file order),
    ascending, and for each the time from the record before it to the record after
    it (ns; -1 where the mark is the first or last record)."""
    n = len(times)
    has_both = (rows > 0) & (rows < n - 1)
    before = times[np.clip(rows - 1, 0, max(n - 1, 0))] if n else rows
    after = times[np.clip(rows + 1, 0, max(n - 1, 0))] if n else rows
    gaps = np.where(has_both, after - before, -1).astype(np.int64)
    order = np.argsort(times[rows], kind="stable")
    return times[rows][order].astype(np.int64), gaps[order]


def _either_side(times: np.ndarray, near: np.ndarray) -> np.ndarray:
    """Positions in TIMES (ascending) of the last at or before each of NEAR and the first
    at or after it (of equal times, the last and the first), ascending, once each."""
    before = np.searchsorted(times, near, "right") - 1
    after = np.searchsorted(times, near, "left")
    both = np.concatenate([before[before >= 0], after[after < len(times)]])
    return np.unique(both)


def _nearest(stamps: np.ndarray, lo: int | None, hi: int | None, ascending: bool) -> np.ndarray:
    """Positions of STAMPS in [LO, HI], with the last one before LO and the first after
    HI (of equal times, the last and the first in order)."""
    n = len(stamps)
    if ascending:
        a = int(np.searchsorted(stamps, lo, "left")) if lo is not None else 0
        b = int(np.searchsorted(stamps, hi, "right")) if hi is not None else n
        return np.arange(max(a - 1, 0), min(b + 1, n))
    keep = np.ones(n, dtype=bool)
    if lo is not None:
        keep &= stamps >= lo
    if hi is not None:
        keep &= stamps <= hi
    if lo is not None:
        before = np.flatnonzero(stamps < lo)
        if len(before):  # the latest; of equal ones, the last in order
            keep[before[stamps[before] == stamps[before].max()][-1]] = True
    if hi is not None:
        after = np.flatnonzero(stamps > hi)
        if len(after):  # the earliest; of equal ones, the first in order
            keep[after[stamps[after] == stamps[after].min()][0]] = True
    return np.flatnonzero(keep)


def _runs(column: np.ndarray) -> list[tuple[int, int]]:
    """The [start, stop) ranges of COLUMN's runs of equal values."""
    cuts = (np.flatnonzero(column[1:] != column[:-1]) + 1).tolist()
    return list(pairwise([0, *cuts, len(column)])) if len(column) else []


def _merge(parts: list[_Part], times: np.ndarray) -> Series:
    """One instance's series from its PARTS: by time, ties in file order."""
    if len(parts) == 1:
        rows, values, stamps = parts[0]
        if stamps is not None:
            return Series(stamps, values)
    else:
        rows = np.concatenate([p[0] for p in parts])
        values = np.concatenate([p[1] for p in parts])
        order = np.argsort(rows, kind="stable")
        rows, values = rows[order], values[order]
    stamps = times[rows]
    if len(stamps) > 1 and (stamps[1:] < stamps[:-1]).any():
        order = np.argsort(stamps, kind="stable")
        stamps, values = stamps[order], values[order]
    return Series(stamps, values)
