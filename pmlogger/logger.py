"""The logging loop: groups of metrics fetched at their intervals and written to an archive.

A Logger owns a PMAPI context and an ArchiveWriter.  Each group of the configuration
is fetched on its own schedule; the metrics of one group due at one time go out as
one record.  Before a metric's first value the archive gets its descriptor, names
and help text, and before any value of an instance domain whose membership changed,
a new instance-domain record (with an index entry).  A metric that cannot be fetched
is left out of the record (logged as absent); when pmcd goes away the logger waits,
reconnects, and writes a <mark> so no reader interpolates across the gap.
"""

from __future__ import annotations

import heapq
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from pmapi.archive import ArchiveWriter
from pmapi.archive.format import PM_TEXT_HELP, PM_TEXT_INDOM, PM_TEXT_ONELINE, PM_TEXT_PMID
from pmapi.desc import Desc
from pmapi.errors import PMError
from pmapi.ids import PM_INDOM_NULL
from pmapi.values import Result, Timestamp, ValueSet

from .config import LogGroup

NSEC = 1_000_000_000
#: An index entry at least this often (records), so a reader's seek reads few records.
INDEX_EVERY = 64


@dataclass
class Group:
    """A configured group, resolved: its PMIDs (and instance lists), interval and next due time."""

    interval_ns: int | None  # None: once
    pmids: list[int]
    insts: dict[int, tuple[int, ...]] = field(default_factory=dict)  # pmid -> instances kept
    due: float = 0.0


class Logger:
    """Fetch the configured groups from CTX and write them with WRITER_FACTORY's writer."""

    def __init__(
        self,
        ctx: Any,
        groups: Sequence[LogGroup],
        default_interval_ms: int,
        make_writer: Callable[[Timestamp], ArchiveWriter],
        log: TextIO = sys.stderr,
    ) -> None:
        self.ctx = ctx
        self.log = log
        self.make_writer = make_writer
        self.writer: ArchiveWriter | None = None
        self.groups = self._resolve(groups, default_interval_ms)
        self.described: set[int] = set()
        self.texts_done: set[tuple[int, int]] = set()
        self.records = 0
        self.samples = 0
        self.need_mark = False
        self.last_stamp: Timestamp | None = None

    # -- configuration ----------------------------------------------------------------------

    def _resolve(self, groups: Sequence[LogGroup], default_ms: int) -> list[Group]:
        """Names to PMIDs for every group that logs (mandatory on), warning about the rest."""
        resolved = []
        for group in groups:
            if not group.mandatory or group.state != "on":
                continue  # off, maybe and advisory: nothing to log (no pmlc here to say otherwise)
            if group.once:
                interval = None
            elif group.default_interval or group.interval_ms is None:
                interval = default_ms * 1_000_000
            else:
                interval = group.interval_ms * 1_000_000
            g = Group(interval, [])
            for spec in group.metrics:
                try:
                    names = self.ctx.traverse(spec.name)
                    pmids = self.ctx.lookup_names(names) if names else []
                except PMError as exc:
                    self.warn(f'Problem with lookup for metric "{spec.name}" ... {exc.message}')
                    continue
                descs = self.ctx.lookup_descs(pmids) if pmids else []
                for name, pmid, desc in zip(names, pmids, descs, strict=True):
                    if pmid in g.pmids:
                        continue
                    if desc is None:
                        self.warn(f'Problem with lookup for metric "{name}" ... no descriptor')
                        continue
                    g.pmids.append(pmid)
                    if spec.instances and desc.indom != PM_INDOM_NULL:
                        g.insts[pmid] = self._instance_ids(desc.indom, spec.instances)
            if g.pmids:
                resolved.append(g)
        return resolved

    def _instance_ids(self, indom: int, wanted: Sequence[str | int]) -> tuple[int, ...]:
        ids = []
        for item in wanted:
            if isinstance(item, int):
                ids.append(item)
                continue
            try:
                ids.append(self.ctx.instance_id(indom, item))
            except PMError as exc:
                self.warn(f'instance "{item}" of InDom {indom:#x}: {exc.message}')
        return tuple(ids)

    def warn(self, text: str) -> None:
        self.log.write(f"Warning: {text}\n")
        self.log.flush()

    # -- one sample ---------------------------------------------------------------------------

    def sample(self, groups: Sequence[Group]) -> bool:
        """Fetch GROUPS once and log what came back as one record; False if pmcd is gone."""
        pmids = list(dict.fromkeys(p for g in groups for p in g.pmids))
        keep = {p: i for g in groups for p, i in g.insts.items()}
        try:
            fetched = self.ctx.fetch(pmids)
        except PMError as exc:
            if not self.need_mark:
                self.warn(f"fetch failed: {exc.message}; waiting for pmcd to return")
            self.need_mark = True
            return False
        stamp = fetched.timestamp
        vsets = []
        for vs in fetched.result.vsets:
            if vs.numval < 0:
                continue  # could not be fetched: absent from this record
            if vs.pmid in keep:
                vs = vs.subset(keep[vs.pmid].__contains__)
            vsets.append(vs)
        self.write(Result(stamp, tuple(vsets)), fetched.descs)
        return True

    def write(self, result: Result, descs: dict[int, Desc | None]) -> None:
        stamp = result.timestamp
        if self.writer is None:
            self.writer = self.make_writer(stamp)
            self.writer.put_index(stamp)
        w = self.writer
        if self.need_mark and self.last_stamp is not None:
            w.put_mark(_after(self.last_stamp))
            w.put_index(stamp)
        self.need_mark = False
        indexed = False
        for vs in result.vsets:
            desc = descs.get(vs.pmid)
            if desc is None:
                continue
            if vs.pmid not in self.described:
                self._describe(desc)
            if desc.indom != PM_INDOM_NULL and vs.numval > 0:
                indexed |= self._note_indom(stamp, desc.indom, vs)
        w.put_result(result)
        self.records += 1
        self.samples += 1
        self.last_stamp = stamp
        if indexed or self.records % INDEX_EVERY == 0:
            w.put_index(stamp)

    def _describe(self, desc: Desc) -> None:
        w = self.writer
        assert w is not None
        names = self.ctx.name_all(desc.pmid)
        w.put_desc(desc, names)
        self.described.add(desc.pmid)
        self._texts(desc.pmid, PM_TEXT_PMID)
        if desc.indom != PM_INDOM_NULL:
            self._texts(desc.indom, PM_TEXT_INDOM)

    def _texts(self, ident: int, target: int) -> None:
        """The one-line and help text of a metric or InDom, once each, when the source has them."""
        w = self.writer
        assert w is not None
        for kind, help_ in ((PM_TEXT_ONELINE, False), (PM_TEXT_HELP, True)):
            if (ident, target | kind) in self.texts_done:
                continue
            self.texts_done.add((ident, target | kind))
            try:
                text = self.ctx.text(ident, help=help_, indom=target == PM_TEXT_INDOM)
            except PMError:
                continue
            w.put_text(target | kind, ident, text)

    def _note_indom(self, stamp: Timestamp, indom: int, vs: ValueSet) -> bool:
        """Write INDOM's members if this sample shows instances the archive has not named."""
        w = self.writer
        assert w is not None
        known = w.indom_members(indom)
        if known is not None and all(i in known for i in vs.insts):
            return False
        try:
            pairs = self.ctx.instances(indom)
        except PMError as exc:
            self.warn(f"instance domain {indom:#x}: {exc.message}")
            return False
        return w.put_indom(stamp, indom, [i for i, _ in pairs], [n for _, n in pairs])

    # -- the loop -------------------------------------------------------------------------------

    def run(
        self,
        samples: int | None = None,
        until: float | None = None,
        stop: Callable[[], bool] = lambda: False,
        on_idle: Callable[[], None] = lambda: None,
        retry: float = 1.0,
    ) -> None:
        """Log until STOP says so, SAMPLES records are out, or the wall clock passes UNTIL."""
        now = time.monotonic()
        heap = [(now, i) for i in range(len(self.groups))]
        heapq.heapify(heap)
        while heap and not stop():
            if samples is not None and self.samples >= samples:
                return
            if until is not None and time.time() >= until:
                return
            due, _ = heap[0]
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(min(wait, 0.1))
                on_idle()
                continue
            batch = []
            while heap and heap[0][0] <= time.monotonic():
                _, i = heapq.heappop(heap)
                batch.append(i)
            ok = self.sample([self.groups[i] for i in batch])
            for i in batch:
                interval = self.groups[i].interval_ns
                if not ok:
                    heapq.heappush(heap, (time.monotonic() + retry, i))
                elif interval is not None:
                    nxt = due + interval / NSEC
                    if nxt < time.monotonic():  # fell behind: skip, do not burst
                        nxt = time.monotonic() + interval / NSEC
                    heapq.heappush(heap, (nxt, i))

    def close(self) -> None:
        if self.writer is not None:
            if self.last_stamp is not None:
                self.writer.put_index(self.last_stamp)
            self.writer.close()
            self.writer = None


def _after(stamp: Timestamp) -> Timestamp:
    """A mark's time: just after the last record before the gap (PCP adds a millisecond)."""
    ns = stamp.sec * NSEC + stamp.nsec + 1_000_000
    return Timestamp(ns // NSEC, ns % NSEC)
