"""An archive's observation series, per metric and instance, read as NumPy columns.

What interpolation needs of an archive, each instance's times and values, is what
decoding every record with the reader would give, but got fast: the volumes are viewed
as 32-bit words and framed in one pass; the records of a layout (pmlogger writes few)
are found by one masked compare with a template record that the reader decoded, and a
metric's values are then one gather over them.  Records that fit no template, or whose
layout is not one to trust, are decoded by the reader, so every series is exactly the
record-by-record one (tests/pmapi/test_columns.py holds that plain reading and checks it).

Values are read for a window of time at a time (`block`, `window`): the records in it
and, per instance, the observation just before and just after it, all any value in
the window is interpolated from.  A pass over a mapped volume lets the kernel take
back the pages behind it, so reading a large archive keeps little of it resident.
"""

from __future__ import annotations

import contextlib
import mmap
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from ..errors import PM_ERR_LOGREC, PMError
from ..types import PMType, ValFmt
from .format import LABEL_BYTES, PM_LOG_VERS03, ArchiveError
from .interp import NSEC, NUMERIC_DTYPES, Block, Series
from .reader import Archive, LogRecord

_FRAME = struct.Struct(">i")
_LITTLE = sys.byteorder == "little"
_PAGE = mmap.PAGESIZE
#: How much of a mapped volume a pass reads before letting the kernel take its pages back
#: (in volumes larger than _LARGE: smaller ones are read whole, and let go by release()).
_SPAN = 32 << 20
_LARGE = 128 << 20
_INSITU = int(ValFmt.PM_VAL_INSITU)
#: Words of a record compared against a template in one go (bounds the scratch memory).
_CHUNK_WORDS = 1 << 17
#: Layouts with fewer records than this are not worth a template: they are decoded.
_FEW = 4
#: A template compared with P records of its length should match P / _YIELD of them
#: (a compare costs about that fraction of a careful decode) ...
_YIELD = 64
#: ... and the compares of templates that do not may add up to _WASTE passes over the
#: records of that length; then the rest are decoded one by one.  Many layouts of one
#: length so cost a linear number of compares, not one pass per layout.
_WASTE = 2
#: How insitu words read for a metric's type (other types keep their words as they are).
_INSITU_KINDS = {
    PMType.PM_TYPE_32: ">i4",
    PMType.PM_TYPE_U32: ">u4",
    PMType.PM_TYPE_FLOAT: ">f4",
}
#: Value blocks read as columns: the payload words of each type and how one word reads.
_BLOCK_KINDS = {
    PMType.PM_TYPE_32: (1, ">i4"),
    PMType.PM_TYPE_U32: (1, ">u4"),
    PMType.PM_TYPE_FLOAT: (1, ">f4"),
    PMType.PM_TYPE_64: (2, ""),
    PMType.PM_TYPE_U64: (2, ""),
    PMType.PM_TYPE_DOUBLE: (2, ""),
}


_EMPTY = np.empty(0, np.int64)
_Chunk = tuple[int, Sequence[int], Sequence[Any]]  # record, insts, atoms
#: One instance's values from one source: records (ascending), values, and their times
#: when already known to be ascending (else None).  A record's values all come from one
#: source, whose parts are made in the record's order.
_Part = tuple[np.ndarray, np.ndarray, np.ndarray | None]


@dataclass
class _Group:
    """One value set of a template: its metric, instances, and where its values lie.

    A column group reads value i from word WORDS[i] of each record (two words when
    WIDE); a fixed group's words are all layout, so its ATOMS are the same in every
    record the template matches.
    """

    pmid: int
    insts: list[int]
    dtype: Any
    words: np.ndarray | None = None
    kind: str = ""  # how one value word reads: ">i4", ">u4" or ">f4"
    wide: bool = False
    via_double: bool = False  # a float block, which the reader takes through a Python float
    atoms: Sequence[Any] = ()


@dataclass
class _Template:
    """A layout: its record length, its value sets, and the records having it."""

    length: int
    groups: list[_Group]
    rows: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    stamps: np.ndarray | None = None  # the rows' times, once asked for
    ascending: bool = False  # ... and whether they are in order
    errors: list[tuple[int, int]] = field(default_factory=list)  # (pmid, code) value sets


class Columns:
    """Every metric-instance's observation series in one archive, and its <mark> times.

    Scans all volumes once (frames, times, layouts); values are read per metric, for
    the window of time asked for.  Damage ends the scan as it ends a walk over
    `Archive.records()`: the records before it are kept and `problem` says where.
    """

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.problem: ArchiveError | None = None
        #: Records read through a template, and records decoded one by one (for tests).
        self.fast_records = 0
        self.careful_records = 0
        self._first = LABEL_BYTES[archive.version]
        self._v3 = archive.version == PM_LOG_VERS03
        self._smallest = 24 if self._v3 else 20
        self._templates: list[_Template] = []
        self._careful: dict[int, list[_Chunk]] = {}
        self._careful_errors: dict[int, list[tuple[int, int]]] = {}
        self._careful_rows: list[int] = []
        self._careful_done: dict[int, tuple[np.ndarray, ...] | None] = {}
        self._sorted: np.ndarray | None = None  # the records' times, ascending
        self._by_pmid: dict[int, list[tuple[_Template, _Group]]] = {}
        self._pmids: list[int] = []
        datas, vol_of, offs, lens, times, numpmid = self._scan()
        self._vols = list(datas)
        self._vol_of = vol_of
        self._words = (offs - self._first) >> 2
        self._count = len(offs)  # records kept: those before the first damaged one
        self._assign(datas, offs, lens, numpmid)
        count = self._count
        self._vol_of, self._words = vol_of[:count], self._words[:count]
        self.times: np.ndarray = times[:count]
        marks = (numpmid[:count] == 0) & (lens[:count] == self._smallest)
        self.marks: np.ndarray = np.sort(self.times[marks])
        self._keep(count)

    # -- scanning --------------------------------------------------------------------

    def _scan(self) -> tuple[Any, ...]:
        """Frame every volume: the volumes' data, and each record's volume (index),
        offset, length, time and numpmid, in file order."""
        datas: dict[int, Any] = {}
        parts: list[tuple[np.ndarray, ...]] = []
        for vol in self.archive.volume_paths:
            try:
                data = self.archive.volume(vol)
            except ArchiveError as exc:
                self.problem = _detached(exc)
                break
            offs, heads = self._frames(vol, data)
            lens = heads[:, 0].astype(np.int64)
            parts.append((np.full(len(offs), len(datas)), offs, lens, *self._heads(heads)))
            if len(data) > _LARGE:
                _release(data, 0, len(data))
            datas[vol] = data
            if self.problem is not None:
                break
        columns = [
            np.concatenate([p[k] for p in parts]).astype(np.int64) if parts else _EMPTY
            for k in range(5)
        ]
        return (datas, *columns)

    def _frames(self, vol: int, data: Any) -> tuple[np.ndarray, np.ndarray]:
        """The offsets of VOL's records, up to any damage (kept in `problem`), and each
        one's first words (length, time, numpmid), read in one pass over the volume."""
        first, end, smallest = self._first, len(data), self._smallest
        nw = 5 if self._v3 else 4
        at = first
        offs: list[np.ndarray] = []
        heads: list[np.ndarray] = []
        if end - first >= 4:  # a run of records of one length: its frames checked at once
            length = _FRAME.unpack_from(data, first)[0]
            count = (end - first) // length if length >= smallest and not length & 3 else 0
            if count > 1:
                rows = np.frombuffer(data, ">i4", count * length >> 2, first)
                rows = rows.reshape(count, length >> 2)
                good = np.empty(count, dtype=bool)
                words = np.empty((count, nw), dtype=np.int32)
                step = max(1, _SPAN // length)
                for c in range(0, count, step):
                    d = min(c + step, count)
                    good[c:d] = (rows[c:d, 0] == length) & (rows[c:d, -1] == length)
                    words[c:d] = rows[c:d, :nw]
                    if end > _LARGE:  # (keep only the stretch being read)
                        _release(data, first + c * length, first + d * length)
                del rows
                count = count if good.all() else int(np.argmin(good))
                offs.append(first + length * np.arange(count, dtype=np.int64))
                heads.append(words[:count])
                at = first + count * length
        head = struct.Struct(f">{nw}i")
        offsets: list[int] = []
        rest: list[tuple[int, ...]] = []
        released = at
        while at < end:  # the rest, one record at a time, checked as the reader checks it
            if end - at >= head.size:
                words_at = head.unpack_from(data, at)
                length = words_at[0]
            else:  # (too few bytes for a record: a bad frame)
                words_at = ()
                length = _FRAME.unpack_from(data, at)[0] if end - at >= 4 else 0
            if self._bad_frame(data, at, length):
                self.problem = self._frame_error(vol, data, at)
                break
            offsets.append(at)
            rest.append(words_at)
            at += length
            if at - released > _SPAN and end > _LARGE:
                _release(data, released, at)
                released = at
        offs.append(np.array(offsets, dtype=np.int64))
        heads.append(np.array(rest, dtype=np.int32).reshape(len(rest), nw))
        return np.concatenate(offs), np.concatenate(heads)

    def _bad_frame(self, data: Any, at: int, length: int) -> bool:
        """Whether the frame of LENGTH at AT in DATA is one the reader refuses."""
        end = len(data)
        if end - at < 4 or length < self._smallest or length & 3 or at + length > end:
            return True
        return _FRAME.unpack_from(data, at + length - 4)[0] != length

    def _frame_error(self, vol: int, data: Any, at: int) -> ArchiveError:
        """The reader's error for the bad frame at AT in VOL (its words, so they agree)."""
        try:
            self.archive.frame_length(vol, data, at)
        except ArchiveError as exc:
            return _detached(exc)
        path = self.archive.volume_paths[vol]
        return ArchiveError(PM_ERR_LOGREC, path, at, "bad record frame")

    def _heads(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The times (ns) and numpmid of records whose first words are WORDS (a row each)."""
        if self._v3:  # 64-bit seconds, low word first (see format.swap_sec)
            low = words[:, 1].view(np.uint32).astype(np.int64)
            sec = words[:, 2].astype(np.int64) << 32 | low
            nsec = words[:, 3].astype(np.int64)
            numpmid = words[:, 4]
        else:
            sec = words[:, 1].astype(np.int64)
            nsec = words[:, 2].astype(np.int64) * 1000
            numpmid = words[:, 3]
        return sec * NSEC + nsec, numpmid

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
                if len(data) > _LARGE:  # (keep only what is being read)
                    _release(data, 0, len(data))
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
                found = self._template(rec, raw)
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
            self._count, self.problem = r, _detached(exc)
            return None

    def _template(
        self, rec: LogRecord, raw: bytes
    ) -> tuple[_Template, np.ndarray, np.ndarray] | None:
        """The template of REC's layout (RAW its bytes), with the mask of its layout words
        and its words under the mask (native uint32); None if it is not one to trust."""
        native = np.frombuffer(raw, np.uint32)
        words = native.byteswap().tolist() if _LITTLE else native.tolist()
        nw = len(words)
        layout = np.ones(nw, dtype=bool)
        o = 5 if self._v3 else 4  # the first value set, after len, timestamp, numpmid
        layout[1 : o - 1] = False
        claims = np.zeros(nw, dtype=np.int64)  # how many value blocks hold each word
        groups: list[_Group] = []
        errors: list[tuple[int, int]] = []
        for vs in rec.result.vsets:
            if o + 2 > nw or words[o] != vs.pmid:
                return None
            n = words[o + 1]
            if n == 0 or n & 0x80000000:
                if n:
                    errors.append((vs.pmid, n - (1 << 32)))
                o += 2
                continue
            stop = o + 3 + 2 * n
            insts = words[o + 3 : stop : 2]
            if stop > nw or n != vs.numval or words[o + 2] != vs.valfmt or insts != list(vs.insts):
                return None
            desc = self.archive.descs.get(vs.pmid)
            vtype = desc.type if desc is not None else None
            slots = list(range(o + 4, stop, 2))
            group = _Group(vs.pmid, insts, NUMERIC_DTYPES.get(vtype, object))
            if vs.valfmt == _INSITU:
                if vtype in _INSITU_KINDS:
                    group.words, group.kind = np.array(slots), _INSITU_KINDS[vtype]
            elif not _blocks(words, slots, stop, claims, group, vtype):
                return None
            if group.words is None:
                group.atoms = vs.atoms(vtype)
            else:
                if not _reads_as(native, group, vs.atoms(vtype)):
                    return None
                layout[group.words] = False
                if group.wide:
                    layout[group.words + 1] = False
            groups.append(group)
            o = stop
        if claims.max(initial=0) > 1:  # blocks sharing words: leave it to the reader
            return None
        mask = np.where(layout, np.uint32(0xFFFFFFFF), np.uint32(0))
        return _Template(len(raw), groups, errors=errors), mask, native & mask

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
            large = len(self._datas[int(vol_of[a])]) > _LARGE
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
                if 4 * (int(starts[d - 1]) - int(starts[released])) > _SPAN and large:
                    lo, hi = int(starts[released:d].min()), int(starts[released:d].max()) + width
                    data = self._datas[int(vol_of[a])]
                    _release(data, self._first + 4 * lo, self._first + 4 * hi)
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

    def error_pmids(self) -> list[int]:
        """The metrics with an error value set in some record."""
        return sorted(self._errors)

    def release(self) -> None:
        """Let the kernel take back every page of the volumes read so far (they are read
        from the file again if needed): for a set's archives, once a window is read."""
        for vol in self._vols:
            with contextlib.suppress(PMError):
                data = self.archive.volume(vol)
                _release(data, 0, len(data))

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

    def block(self, pmid: int, lo: int | None, hi: int | None) -> Block:
        """window(PMID, LO, HI) as a Block: the same observations, one row per record,
        one column per instance (built with a few array operations, not per instance)."""
        desc = self.archive.descs.get(pmid)
        dtype = NUMERIC_DTYPES.get(desc.type if desc is not None else -1, object)
        dense: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for t, g in self._by_pmid.get(pmid, []):
            picked = self._select(t, lo, hi)
            if len(picked):
                rows = t.rows[picked]
                dense.append((rows, np.asarray(g.insts, np.int64), self._gather(t, g, rows)))
        sparse = self._careful_window(pmid, lo, hi)
        if sparse is None and len(dense) == 1:  # (one layout: its rows are the table's)
            rows, ids, vals = dense[0]
            times = self.times[rows]
            if len(set(ids.tolist())) == len(ids) and not (times[1:] < times[:-1]).any():
                order = np.argsort(ids)
                present = np.ones((len(rows), len(ids)), dtype=bool)
                return Block(times, ids[order], np.ascontiguousarray(vals[order].T), present)
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

    def _select(self, t: _Template, lo: int | None, hi: int | None) -> np.ndarray:
        """Which of T's records (positions in t.rows) window(LO, HI) reads."""
        n = len(t.rows)
        if lo is None and hi is None:
            return np.arange(n)
        self._stamps(t)
        stamps = t.stamps
        assert stamps is not None
        return _nearest(stamps, lo, hi, t.ascending)

    def _stamps(self, t: _Template) -> np.ndarray | None:
        """The times of T's records if they are ascending (shared by its series), else None."""
        if t.stamps is None:
            t.stamps = self.times[t.rows]
            t.ascending = not (t.stamps[1:] < t.stamps[:-1]).any()
        return t.stamps if t.ascending else None

    def _gather(self, t: _Template, g: _Group, rows: np.ndarray) -> np.ndarray:
        """Group G's values in ROWS (records of T, in file order): one row per value, one
        column per record."""
        if g.words is None:
            return np.repeat(_column([g.atoms], g.dtype)[:, None], len(rows), axis=1)
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
            pieces.append(_read(span, g.words - low, g))
            del span, view
            if len(data) > _LARGE:
                lo, hi = first + 4 * int(starts.min()), first + 4 * (int(starts.max()) + width)
                _release(data, lo, hi)
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces, axis=1)

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
        values = _column([c[2] for c in chunks], dtype)
        times = self.times[rows]
        order = np.lexsort((rows, times, insts))
        insts, times, rows, values = insts[order], times[order], rows[order], values[order]
        starts = np.flatnonzero(np.diff(insts, prepend=-1)) if len(insts) else _EMPTY
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


def _release(data: Any, start: int, end: int) -> None:
    """Let the kernel take back the pages of DATA (a mapped volume) from START to END:
    they are read from the file again when next needed (the page cache mostly still
    holds them), so a pass over a large archive keeps no more of it resident than the
    part being read."""
    if not isinstance(data, mmap.mmap):
        return
    start -= start % _PAGE
    end = min(end, len(data))
    if end > start:
        with contextlib.suppress(OSError, ValueError):
            data.madvise(mmap.MADV_DONTNEED, start, end - start)


def _detached(exc: ArchiveError) -> ArchiveError:
    """EXC without its traceback and context, whose frames hold views of the volumes
    (an archive cannot close a volume while a view of it lives)."""
    return ArchiveError(exc.code, exc.file, exc.offset, exc.reason)


def _runs(column: np.ndarray) -> list[tuple[int, int]]:
    """The [start, stop) ranges of COLUMN's runs of equal values."""
    cuts = (np.flatnonzero(column[1:] != column[:-1]) + 1).tolist()
    return list(pairwise([0, *cuts, len(column)])) if len(column) else []


def _blocks(
    words: list[int], slots: list[int], stop: int, claims: np.ndarray, g: _Group, vtype: Any
) -> bool:
    """Check the value blocks SLOTS point at and claim their words; make G a column group
    if they are all blocks of VTYPE's own fixed size.  False if one is out of place."""
    nw = len(words)
    kinds = _BLOCK_KINDS.get(vtype)
    header = -1 if kinds is None else (vtype << 24) | (4 + 4 * kinds[0])
    starts = []
    same = True
    for slot in slots:
        at = words[slot] - 2  # a word offset in the PDU the reader rebuilds (header 3 words)
        if not stop <= at < nw - 1:
            return False
        size = ((words[at] & 0xFFFFFF) + 3) >> 2
        if size < 1 or at + size > nw - 1:
            return False
        claims[at : at + size] += 1
        starts.append(at + 1)
        same = same and words[at] == header
    if same and kinds is not None:
        g.words, g.kind = np.array(starts), kinds[1]
        g.wide = kinds[0] == 2
        g.via_double = vtype == PMType.PM_TYPE_FLOAT
    return True


def _read(span: np.ndarray, cols: np.ndarray, g: _Group) -> np.ndarray:
    """Column group G's values: SPAN holds a record's raw words per row, G's value i starts
    at column COLS[i]; one row per value, one column per record."""
    first = span[:, cols].view(">u4").T
    if g.wide:
        values = first.astype(np.uint64, order="C") << np.uint64(32)
        values |= span[:, cols + 1].view(">u4").T
        return values.view(g.dtype)
    values = first.view(g.kind).astype(g.dtype, order="C")
    if g.via_double:
        with np.errstate(invalid="ignore"):
            values = values.astype(np.float64).astype(np.float32)
    return values


def _reads_as(native: np.ndarray, g: _Group, atoms: Sequence[Any]) -> bool:
    """True if column group G, read from record words NATIVE, gives what the reader gives."""
    try:
        want = _column([atoms], g.dtype)
    except (ValueError, OverflowError, TypeError):
        return False
    got = _read(native[None, :], g.words, g)[:, 0]  # type: ignore[arg-type]
    return got.dtype == want.dtype and got.tobytes() == want.tobytes()


def _column(chunks: Sequence[Sequence[Any]], dtype: Any) -> np.ndarray:
    """CHUNKS of atoms as one array of DTYPE (np.asarray's conversion of each atom)."""
    if dtype is object:
        values = np.empty(sum(len(c) for c in chunks), dtype=object)
        values[:] = [v for atoms in chunks for v in atoms]
        return values
    return np.concatenate([np.asarray(atoms, dtype=dtype) for atoms in chunks])


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
