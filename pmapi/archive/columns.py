"""An archive's observation series, per metric and instance, read as NumPy columns.

What interpolation needs of an archive, each instance's times and values, is what
decoding every record with the reader would give, but got fast: the volumes are viewed
as 32-bit words and framed in one pass; the records of a layout (pmlogger writes few)
are found by one masked compare with a template record that the reader decoded, and a
metric's values are then one gather over them.  Records that fit no template, or whose
layout is not one to trust, are decoded by the reader, so every series is exactly the
record-by-record one (tests/test_columns.py holds that plain reading and checks it).
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from ..errors import PM_ERR_LOGREC  # type: ignore[attr-defined]
from ..types import PMType, ValFmt
from .format import LABEL_BYTES, PM_LOG_VERS03, ArchiveError
from .interp import NSEC, NUMERIC_DTYPES, Series
from .reader import Archive, LogRecord

_FRAME = struct.Struct(">i")
_LITTLE = sys.byteorder == "little"
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


class Columns:
    """Every metric-instance's observation series in one archive, and its <mark> times.

    Scans all volumes once (frames, times, layouts); values are read per metric when
    its series are first asked for.  Damage ends the scan as it ends a walk over
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
        self._careful_rows: list[int] = []
        self._series: dict[int, dict[int, Series]] = {}
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
            offs, lens = self._frames(vol, data)
            parts.append((np.full(len(offs), len(datas)), offs, lens, *self._heads(data, offs)))
            datas[vol] = data
            if self.problem is not None:
                break
        columns = [
            np.concatenate([p[k] for p in parts]).astype(np.int64) if parts else _EMPTY
            for k in range(5)
        ]
        return (datas, *columns)

    def _frames(self, vol: int, data: Any) -> tuple[np.ndarray, np.ndarray]:
        """The offsets and lengths of VOL's records, up to any damage (kept in `problem`)."""
        first, end, smallest = self._first, len(data), self._smallest
        at = first
        runs: list[np.ndarray] = []
        if end - first >= 4:  # a run of records of one length: its frames checked at once
            length = _FRAME.unpack_from(data, first)[0]
            count = (end - first) // length if length >= smallest and not length & 3 else 0
            if count > 1:
                rows = np.frombuffer(data, ">i4", count * length >> 2, first)
                rows = rows.reshape(count, length >> 2)
                good = (rows[:, 0] == length) & (rows[:, -1] == length)
                count = count if good.all() else int(np.argmin(good))
                runs.append(first + length * np.arange(count, dtype=np.int64))
                at = first + count * length
        offsets: list[int] = []
        while at < end:  # the rest, one record at a time, checked as the reader checks it
            length = _FRAME.unpack_from(data, at)[0] if end - at >= 4 else 0
            detail = self._bad_frame(data, at, length)
            if detail is not None:
                path = self.archive.volume_paths[vol]
                self.problem = ArchiveError(PM_ERR_LOGREC, path, at, detail)
                break
            offsets.append(at)
            at += length
        runs.append(np.array(offsets, dtype=np.int64))
        offs = np.concatenate(runs)
        words = np.frombuffer(data, ">i4", (end - first) >> 2, first)
        return offs, words[(offs - first) >> 2].astype(np.int64)

    def _bad_frame(self, data: Any, at: int, length: int) -> str | None:
        """What is wrong with the frame of LENGTH at AT in DATA (Archive._frame_at's words)."""
        end = len(data)
        if end - at < 4:
            return f"truncated record ({end - at} bytes)"
        if length < self._smallest or length & 3:
            return f"bad record length {length}"
        if at + length > end:
            return f"truncated record: {length} bytes, {end - at} left"
        if _FRAME.unpack_from(data, at + length - 4)[0] != length:
            return "record trailer does not match its header"
        return None

    def _heads(self, data: Any, offs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The times (ns) and numpmid of the records at OFFS in DATA, read as columns."""
        first = self._first
        signed = np.frombuffer(data, ">i4", (len(data) - first) >> 2, first)
        at = (offs - first) >> 2
        if self._v3:  # 64-bit seconds, low word first (see format.swap_sec)
            low = signed[at + 1].view(">u4").astype(np.int64)
            sec = signed[at + 2].astype(np.int64) << 32 | low
            nsec = signed[at + 3].astype(np.int64)
            numpmid = signed[at + 4]
        else:
            sec = signed[at + 1].astype(np.int64)
            nsec = signed[at + 2].astype(np.int64) * 1000
            numpmid = signed[at + 3]
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
        for pending in np.split(by_length, cuts):
            self._assign_length(datas, views, offs, lens, pending)

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
        for vs in rec.result.vsets:
            if o + 2 > nw or words[o] != vs.pmid:
                return None
            n = words[o + 1]
            if n == 0 or n & 0x80000000:
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
        return _Template(len(raw), groups), mask, native & mask

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
        return out

    def _add_careful(self, r: int, rec: LogRecord) -> None:
        """Record R's values as the reader decoded them (REC), kept per metric."""
        self._careful_rows.append(r)
        for vs in rec.result.vsets:
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
        self._pmids = sorted(set(self._by_pmid) | set(self._careful))

    # -- series ----------------------------------------------------------------------

    def pmids(self) -> list[int]:
        """The metrics with at least one value in the archive."""
        return list(self._pmids)

    def series(self, pmid: int) -> dict[int, Series]:
        """PMID's observations, per instance (an empty dict if it has none)."""
        done = self._series.get(pmid)
        if done is not None:
            return done
        desc = self.archive.descs.get(pmid)
        dtype = NUMERIC_DTYPES.get(desc.type if desc is not None else -1, object)
        parts: dict[int, list[_Part]] = {}
        for t, g in self._by_pmid.get(pmid, []):
            values = self._gather(t, g)
            stamps = self._stamps(t)
            for i, inst in enumerate(g.insts):
                parts.setdefault(inst, []).append((t.rows, values[i], stamps))
        self._careful_parts(pmid, dtype, parts)
        out = {inst: _merge(parts[inst], self.times) for inst in sorted(parts)}
        self._series[pmid] = out
        return out

    def _stamps(self, t: _Template) -> np.ndarray | None:
        """The times of T's records if they are ascending (shared by its series), else None."""
        if t.stamps is None:
            t.stamps = self.times[t.rows]
            t.ascending = not (t.stamps[1:] < t.stamps[:-1]).any()
        return t.stamps if t.ascending else None

    def _gather(self, t: _Template, g: _Group) -> np.ndarray:
        """Group G's values in every record of T: one row per value, one column per record."""
        if g.words is None:
            return np.repeat(_column([g.atoms], g.dtype)[:, None], len(t.rows), axis=1)
        first, width = self._first, t.length >> 2
        low = int(g.words.min())
        high = int(g.words.max()) + (2 if g.wide else 1)
        pieces = []
        vol_of = self._vol_of[t.rows]
        for a, b in _runs(vol_of):
            data = self.archive.volume(self._vols[int(vol_of[a])])
            view = np.frombuffer(data, np.uint32, (len(data) - first) >> 2, first)
            starts = self._words[t.rows[a:b]]
            at = int(starts[0])
            if starts[-1] - at == (b - a - 1) * width:  # adjacent records: a strided view
                span = view[at : at + (b - a) * width].reshape(b - a, width)[:, low:high]
            else:
                span = view[starts[:, None] + np.arange(low, high)]
            pieces.append(_read(span, g.words - low, g))
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces, axis=1)

    def _careful_parts(self, pmid: int, dtype: Any, parts: dict[int, list[_Part]]) -> None:
        """Add PMID's carefully decoded values to PARTS, per instance."""
        chunks = self._careful.get(pmid)
        if not chunks:
            return
        counts = [len(c[1]) for c in chunks]
        rows = np.repeat(np.array([c[0] for c in chunks], dtype=np.int64), counts)
        insts = np.concatenate([np.asarray(c[1], dtype=np.int64) for c in chunks])
        values = _column([c[2] for c in chunks], dtype)
        order = np.argsort(insts, kind="stable")
        insts, rows, values = insts[order], rows[order], values[order]
        for a, b in _runs(insts):
            parts.setdefault(int(insts[a]), []).append((rows[a:b], values[a:b], None))


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
