"""The record loop: the inputs merged in time, as PCP's pmlogextract merges them.

Each input offers its next wanted record (its head); the earliest head is written
(on equal times, the input named first).  An input that runs out offers a <mark>
at the time of its last record, written a millisecond later, unless it is the last
input left, or (without -m) the next input's pmlogger prologue names the pmcd
instance its epilogue named (one pmcd, logged without a break).  Records before the
window are passed over; the first head after it ends the run (or, with -w, moves the
window on a day).  Records go through as their bytes unless a selection or a new
archive version needs them decoded.
"""

from __future__ import annotations

import heapq
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.archive.format import PM_LOG_VERS03
from purepcp.pmapi.archive.writer import encode_record
from purepcp.pmapi.errors import PM_ERR_LOGREC, pmErrStr
from purepcp.pmapi.ids import pmID_build
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, Timestamp

from .abandon import Abandon
from .inputs import Input, tilde_padding
from .metadata import PM_LABEL_CONTEXT, Catalog
from .options import PROG
from .output import Output
from .select import Selection, pick

NSEC = 1_000_000_000
DAY_NS = 86400 * NSEC
MSEC_NS = 1_000_000
PMCD_PID = pmID_build(2, 0, 23)
PMCD_SEQNUM = pmID_build(2, 0, 24)
_WORD = struct.Struct(">I")
_SET = struct.Struct(">Ii")  # pmid, numval


@dataclass
class Head:
    """An input's next record to write: its time (ns), bytes (framed, in the output's
    version) or, when decoded, its pmResult; and its metrics."""

    ns: int
    raw: bytes | memoryview | None
    result: Result | None


@dataclass
class Source:
    """An input being read: where it is, and what PCP's loop keeps of it."""

    input: Input
    index: int
    next: int = 0
    head: Head | None = None
    eof: bool = False
    mark: bool = False
    last_ns: int = 0
    recnum: int = 0
    pmcd_pid: int = -1
    pmcd_seqnum: int = -1
    reported: bool = False
    #: the metrics its records may hold, and the times its records need no metadata
    pmids: list[int] = field(default_factory=list)
    quiet_from: int = 0
    quiet_until: int = 0


@dataclass
class Window:
    """The time window (ns): start None or end None is unbounded; DAILY: -w."""

    start: int | None
    end: int | None
    log_end: int
    daily: bool = False


class Merge:
    """One run of the loop over the inputs, writing to OUT."""

    def __init__(
        self,
        inputs: Sequence[Input],
        out: Output,
        catalog: Catalog,
        window: Window,
        *,
        selection: Selection | None,
        samples: int,
        volume_samples: int,
        old_marks: bool,
    ) -> None:
        self.sources = [Source(i, k, eof=i.empty) for k, i in enumerate(inputs)]
        self._heap: list[tuple[int, int]] = []  # (time, input) of each head or mark
        self._pending = list(self.sources)  # inputs to read a head for
        self._live = sum(not s.eof for s in self.sources)
        for s in self.sources:
            if s.input.archive is not None:
                s.pmids = [p for p in s.input.archive.descs if catalog.wanted_pmid(p)]
        self.out = out
        self.catalog = catalog
        self.window = window
        self.selection = selection
        self.samples = samples
        self.volume_samples = volume_samples
        self.old_marks = old_marks
        self.first = True
        self.current = 0  # ns: the time of the last thing written
        self.v3 = out.version == PM_LOG_VERS03
        versions = {s.input.archive.version for s in self.sources if not s.input.empty}
        self.recode = versions != {out.version}
        #: records may go through in runs (see _copy_run)
        self._simple = (
            not self.recode and selection is None and not catalog.skipped and volume_samples <= 0
        )

    # -- reading ---------------------------------------------------------------------

    def _fill(self) -> bool:
        """nextlog: every input not at its end gets a head (or its end, a mark), in the
        order named; False when every input is at its end."""
        if self._pending:
            for source in sorted(self._pending, key=lambda s: s.index):
                if source.eof or source.mark or source.head is not None:
                    continue
                self._read(source)
                if source.head is not None:
                    heapq.heappush(self._heap, (source.head.ns, source.index))
                elif source.mark:
                    heapq.heappush(self._heap, (source.last_ns, source.index))
                else:
                    self._live -= 1
            self._pending.clear()
        return self._live > 0

    def _read(self, source: Source) -> None:
        inp = source.input
        start = self.window.start
        skipped = self.catalog.skipped
        filtering = self.selection is not None or bool(skipped)
        times, numpmid = inp.times, inp.numpmid
        n = len(times)
        while True:
            i = source.next
            if i >= n:
                self._at_end(source)
                return
            source.next = i + 1
            ns = int(times[i])
            source.last_ns = ns
            source.recnum += 1
            count = int(numpmid[i])
            if count == 5:
                self._prologue(source, i)
            if start is not None and ns < start:
                continue
            if count == 0:
                source.head = Head(ns, self._mark_bytes(inp, i, ns), None)
                return
            if not filtering:
                if self.recode:
                    source.head = Head(ns, None, inp.decode(i))
                else:
                    source.head = Head(ns, inp.view(i), None)
                return
            picked = pick(inp.decode(i), self.selection, skipped)
            if picked is not None:
                source.head = Head(ns, None, picked)
                return

    def _mark_bytes(self, inp: Input, i: int, ns: int) -> bytes:
        if self.recode:
            return encode_record(Result(Timestamp.from_ns(ns), ()), self.out.version)
        return inp.raw(i)

    def _at_end(self, source: Source) -> None:
        """The input is read to its end (or its damage): a mark is due, unless nothing
        has been written yet."""
        problem = source.input.problem
        if problem is not None and not source.reported:
            source.reported = True
            self._report(source, problem)
        if self.first:
            source.eof = True
        else:
            source.mark = True

    def _report(self, source: Source, problem: object) -> None:
        import os

        code = getattr(problem, "code", PM_ERR_LOGREC)
        path = getattr(problem, "file", source.input.name)
        offset = _read_position(problem, path)
        sys.stderr.write(f"{PROG}: Error: __pmLogRead[log {source.input.name}]: {pmErrStr(code)}\n")
        try:
            size = f" {os.stat(path).st_size} bytes.\n"
        except OSError as exc:
            size = f": stat: {exc.strerror}\n"
        sys.stderr.write(
            f"{PROG}: Error occurred at byte offset {offset} into a file of{size}"
            "The last record, and the remainder of this file will not be extracted.\n"
        )
        if code != PM_ERR_LOGREC:
            raise Abandon

    def _prologue(self, source: Source, i: int) -> None:
        """A record of 5 metrics may be pmlogger's prologue or epilogue: note pmcd's
        PID and sequence number from it."""
        inp = source.input
        result = inp.decode(i)
        for vs in result.vsets:
            if vs.pmid not in (PMCD_PID, PMCD_SEQNUM) or vs.numval <= 0:
                continue
            is_pid = vs.pmid == PMCD_PID
            try:
                atoms = vs.atoms(PMType.PM_TYPE_U64 if is_pid else PMType.PM_TYPE_U32)
                value = int(atoms[0])
            except Exception as exc:
                what = "pmcd.pid" if is_pid else "pmcd.seqnum"
                sys.stderr.write(
                    f"{PROG}: Warning: failed to get {what} from {inp.name} at record"
                    f" {source.recnum}: {exc}\n"
                )
                continue
            if is_pid:
                source.pmcd_pid = value
            else:
                source.pmcd_seqnum = value

    # -- the loop --------------------------------------------------------------------

    def run(self) -> None:
        out = self.out
        while self.samples == -1 or out.written < self.samples:
            out.old_meta_offset = out.meta_offset
            if not self._fill():
                break
            picked = self._earliest()
            if picked is None:
                break
            source, now = picked
            if now > self.window.log_end:
                break
            if self.window.end is not None and now > self.window.end:
                if not self._next_day():
                    break
                continue
            self.current = now
            if source.mark:
                self._end_of(source)
            else:
                head = source.head
                assert head is not None
                source.head = None
                self._write(head, source)
                if head.raw is not None and self._simple and not self.catalog.context_pending():
                    self._copy_run(source)

    def _copy_run(self, source: Source) -> None:
        """Go on copying SOURCE's records as they are while nothing else can come
        between: each is earlier than every other input's head (or as early, from an
        input named earlier), in the window, no <mark> or prologue, no metadata due.
        The general loop would write exactly these, one at a time."""
        inp = source.input
        times, numpmid, offsets, lengths, vol_of = (
            inp.times,
            inp.numpmid,
            inp.offsets,
            inp.lengths,
            inp.vol_of,
        )
        views = [memoryview(d) for d in inp.datas]
        out = self.out
        w = self.window
        limit = min(w.log_end, w.end if w.end is not None else w.log_end)
        lowest = w.start if w.start is not None else -(1 << 62)
        if self._heap:
            other_ns, other_index = self._heap[0]
            if other_index < source.index:
                other_ns -= 1  # (a tie goes to the input named first)
            limit = min(limit, other_ns)
        limit = min(limit, source.quiet_until - 1)
        if source.quiet_from > lowest:
            lowest = source.quiet_from
        room = self.samples - out.written if self.samples != -1 else 1 << 62
        i, n = source.next, len(times)
        j = i
        stop = n if room >= n - i else i + room
        while j < stop:
            ns = times[j]
            if ns > limit or ns < lowest or numpmid[j] in (0, 5):
                break
            j += 1
        if j == i:
            return
        if inp.padded:  # (whole stretches of the volumes, as they are)
            done = out.copy_span(views, offsets, lengths, vol_of, times, i, j)
        else:
            done = 0
            for k in range(i, j):
                at = offsets[k]
                record = tilde_padding(views[vol_of[k]][at : at + lengths[k]], inp.v3)
                if not out.put_copy(record, times[k]):
                    break
                done += 1
        if done:
            last = i + done - 1
            source.last_ns = self.current = times[last]
            source.recnum += done
        source.next = i + done

    def _earliest(self) -> tuple[Source, int] | None:
        """checklogtime: the earliest head or mark (ties to the input named first); it
        is taken, and read again at the next fill."""
        if not self._heap:
            return None
        ns, index = heapq.heappop(self._heap)
        source = self.sources[index]
        self._pending.append(source)
        return source, ns

    def _end_of(self, source: Source) -> None:
        """An input's end: a <mark> unless none is needed."""
        if not self._same_pmcd(source):
            last = all(s.eof for s in self.sources if s is not source)
            if not last:
                stamp = source.last_ns + MSEC_NS
                source.last_ns = stamp
                self.out.put_mark(Timestamp.from_ns(stamp))
                self.current = stamp
        source.mark = False
        source.eof = True
        self._live -= 1

    def _same_pmcd(self, source: Source) -> bool:
        """do_not_need_mark: the next input's first record (its prologue) is from the
        pmcd instance SOURCE's epilogue named."""
        if self.old_marks or source.pmcd_pid == -1 or source.pmcd_seqnum == -1:
            return False
        nxt: Source | None = None
        for other in self.sources:
            if other is source or other.head is None:
                continue
            if nxt is None or other.head.ns < nxt.head.ns:  # type: ignore[union-attr]
                nxt = other
        return (
            nxt is not None
            and nxt.pmcd_pid == source.pmcd_pid
            and nxt.pmcd_seqnum == source.pmcd_seqnum
        )

    def _next_day(self) -> bool:
        """-w: the window moves on a day (a mark goes between); False when past the end."""
        w = self.window
        if not w.daily or w.start is None or w.end is None:
            return False
        w.start += DAY_NS
        w.end += DAY_NS
        if w.start > w.log_end:
            return False
        for source in self.sources:
            if source.head is not None and source.head.ns < w.start:
                source.head = None
        self._heap = [(s.head.ns, s.index) for s in self.sources if s.head is not None]
        self._heap += [(s.last_ns, s.index) for s in self.sources if s.mark]
        heapq.heapify(self._heap)
        self._pending = [s for s in self.sources if s.head is None and not s.mark]
        self.out.put_mark(Timestamp.from_ns(self.current + MSEC_NS))
        self.current += MSEC_NS
        return True

    def _write(self, head: Head, source: Source) -> None:
        """writerlist: one record, with what must precede it (nothing, when the record
        is in a stretch of time its input's metrics need no metadata)."""
        out = self.out
        stamp = Timestamp.from_ns(head.ns)
        if self.first:
            self.first = False
            out.first_stamp = stamp
        catalog = self.catalog
        catalog.write_labels(PM_LABEL_CONTEXT, 0xFFFFFFFF, stamp, out)
        quiet = head.raw is not None and source.quiet_from <= head.ns < source.quiet_until
        if head.raw is not None:
            data = head.raw
            pmids = [] if quiet else _pmids(data, self.v3)
        else:
            assert head.result is not None
            data = encode_record(head.result, out.version)
            pmids = [vs.pmid for vs in head.result.vsets]
        if self.volume_samples > 0 and out.written > 0 and out.written % self.volume_samples == 0:
            out.new_volume(stamp)
        if out.needs_volume(len(data)):
            out.new_volume(stamp)
        indexed = False if quiet else catalog.write_for(pmids, stamp, out)
        out.put_record(data, stamp, indexed)
        if not quiet and head.raw is not None:
            source.quiet_from = head.ns
            source.quiet_until = catalog.quiet_until(source.pmids)


def _read_position(problem: object, path: str) -> int:
    """Where libpcp's file descriptor is when a read fails at PROBLEM (PCP reports the
    descriptor's offset): back at the record for one cut short, else where stdio's
    read-ahead got to, a block at a time or to the end."""
    import os

    offset = int(getattr(problem, "offset", 0))
    try:
        size = os.stat(path).st_size
    except OSError:
        return offset
    if "truncated" in str(getattr(problem, "reason", "")):
        return offset
    return min(size, (offset // 4096 + 1) * 4096)


def _pmids(record: bytes | memoryview, v3: bool) -> list[int]:
    """The PMIDs of a framed record's value sets, in order (read without decoding)."""
    at = 20 if v3 else 16
    count = _WORD.unpack_from(record, at - 4)[0]
    pmids = []
    unpack = _SET.unpack_from
    for _ in range(count):
        pmid, numval = unpack(record, at)
        pmids.append(pmid)
        at += 12 + 8 * numval if numval > 0 else 8
    return pmids
