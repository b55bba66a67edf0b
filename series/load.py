"""Loading an archive into the key server as PCP 6's `pmseries --load` does.

The same identifiers (the source from the context labels at the archive's start, or
the host name when it has none; metrics and instances with the labels their first
value's record sees, instance label records not yet read: PCP's order of calls), the
same keys, and one stream entry per record in which a metric has values, carrying
every instance seen so far with its latest value (as PCP writes them).

The archive is read by columns (pmapi.archive.columns), a metric at a time, and
what goes to Redis is formatted a table at a time.  Differences in how, not what: of a
stream's entries only the newest `stream.maxlen` are sent, since MAXLEN would drop the
older ones as soon as they were written; the trim (XTRIM MAXLEN ~) and the EXPIRE are
sent once per stream after its entries, where PCP adds both to each entry.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from purepcp.pmapi.archive.columns import Columns
from purepcp.pmapi.archive.format import ArchiveError
from purepcp.pmapi.archive.reader import Archive
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.ids import PM_INDOM_NULL

from . import schema
from .metadata import MetadataReplay, MetricPlan, first_seen, stamp_of
from .source import (
    LoadError,
    LoadReport,
    archive_source,
    discovered_source,
    reason,
    source_commands,
)
from .store import NO_SCRIPT, Command, Store, StoreDown

NSEC = 1_000_000_000


#: entries per call of entries.lua, and the widest entry it takes (Lua unpacks at most
#: some 8000 words; a metric with more instances has its entries sent one by one)
BATCH_ENTRIES = 1000
SCRIPT_WIDTH = 3000


class _Resumed(Exception):
    """The key server came back after a break: the load starts over."""


class ArchiveLoader:
    """Loads one archive; `run` returns a LoadReport or raises LoadError."""

    def __init__(
        self,
        store: Store,
        path: str,
        *,
        wanted: Sequence[str] = (),
        start_ns: int | None = None,
        finish_ns: int | None = None,
        metadata_only: bool = False,
        reconnect: Callable[[], Store] | None = None,
        resume_for: float = 0.0,
        discovered: bool = False,
    ) -> None:
        self.store = store
        self.path = path
        self.wanted = tuple(wanted)
        self.lo, self.hi = start_ns, finish_ns
        self.metadata_only = metadata_only
        self.reconnect = reconnect
        self.resume_for = resume_for
        try:
            self.archive = Archive(path)
        except (ArchiveError, PMError, OSError) as exc:
            why = reason(exc)
            if not any(os.path.exists(path + end) for end in ("", ".meta", ".0", ".index")):
                why = os.strerror(errno.ENOENT)  # (as libpcp says it)
            raise LoadError(f'cannot open archive "{path}": {why}') from None
        self.identity = (discovered_source if discovered else archive_source)(self.archive, path)
        self.report = LoadReport(self.identity.name)

    # -- the whole load -------------------------------------------------------------------

    def run(self) -> LoadReport:
        try:
            cols = Columns(self.archive)
        except (ArchiveError, PMError) as exc:
            raise LoadError(f'cannot read archive "{self.path}": {reason(exc)}') from None
        start = self.archive.label.start
        lo = self.lo if self.lo is not None else start.sec * NSEC + start.nsec
        hi = self.hi if self.hi is not None else (cols.last if cols.last is not None else lo)
        self.report.records = cols.count(lo, hi) if hi >= lo else 0
        plans = [p for p in (self._plan(cols, pmid, lo, hi) for pmid in self._pmids(cols)) if p]
        replay = MetadataReplay(self.archive, self.identity.context, self.identity.source,
                                self.identity.name)  # fmt: skip
        metadata = replay.replay(plans)
        while True:
            try:
                self._send(source_commands(self.identity), "the source's names")
                self._send(metadata, "the metrics' metadata")
                self._script()
                self.report.metrics = len(plans)
                if not self.metadata_only:
                    # (one stream of commands: a metric's values are worked out while the
                    # server adds the last one's)
                    first = plans[0] if plans else None
                    self._send(
                        self._every_value(cols, plans, lo, hi),
                        f"metric {first.names[0]}" if first else "values",
                        np.array([first.first]) if first else None,
                    )
                break
            except _Resumed:  # (from the top: what is stored already is refused as stale)
                self.report.metrics = self.report.values = self.report.entries = 0
        if cols.problem is not None:
            self.report.errors.append(str(cols.problem))
        return self.report

    def _window(self, cols: Columns, pmid: int, lo: int, hi: int):
        """PMID's values and error value sets in [LO, HI]."""
        block = cols.block(pmid, self.lo, self.hi)
        keep = (block.times >= lo) & (block.times <= hi)
        if not keep.all():
            block = type(block)(
                block.times[keep], block.insts, block.values[keep], block.present[keep]
            )
        err_times, err_codes = cols.errors(pmid)
        inside = (err_times >= lo) & (err_times <= hi)
        return block, (err_times[inside], err_codes[inside])

    def _plan(self, cols: Columns, pmid: int, lo: int, hi: int) -> MetricPlan | None:
        """When PMID first has a value set and each instance its first value."""
        block, (err_times, _) = self._window(cols, pmid, lo, hi)
        if not len(block.times) and not len(err_times):
            return None
        starts = [int(t[0]) for t in (block.times, err_times) if len(t)]
        error_first = not len(block.times) or bool(len(err_times) and err_times[0] < block.times[0])
        inst_first = {}
        if self.archive.descs[pmid].indom != PM_INDOM_NULL:
            inst_first = first_seen(block.times, block.insts, block.present)
        return MetricPlan(
            pmid, self.archive.descs[pmid], tuple(self.archive.names[pmid]), min(starts),
            error_first, inst_first,
        )  # fmt: skip

    def _every_value(
        self, cols: Columns, plans: Sequence[MetricPlan], lo: int, hi: int
    ) -> Iterator[Command]:
        for plan in plans:
            yield from self._values_of(cols, plan, lo, hi)

    def _values_of(self, cols: Columns, plan: MetricPlan, lo: int, hi: int) -> list[Command]:
        block, errors = self._window(cols, plan.pmid, lo, hi)
        if plan.desc.indom == PM_INDOM_NULL:
            order = np.arange(len(block.insts))[:1]
            fields = [b""]
        else:
            present = block.present
            if present.size:
                first_row = np.where(present.any(axis=0), present.argmax(axis=0), len(block.times))
                ranked = np.lexsort((block.insts, first_row)).tolist()
            else:
                ranked = []
            cols_kept = [c for c in ranked if int(block.insts[c]) in plan.fields]
            order = np.asarray(cols_kept, dtype=np.int64)
            fields = [plan.fields[int(block.insts[c])] for c in cols_kept]
        return self._load_values(plan, block, order, fields, errors)

    def _pmids(self, cols: Columns) -> list[int]:
        chosen = []
        for pmid in sorted(set(cols.pmids()) | set(cols.error_pmids())):
            desc = self.archive.descs.get(pmid)
            names = self.archive.names.get(pmid, ())
            if desc is None or not names:
                continue
            if self.wanted and not any(_under(n, w) for n in names for w in self.wanted):
                continue
            if self.store.config.excluded(names):
                continue
            if desc.indom != PM_INDOM_NULL and desc.indom in self.store.config.exclude_indoms:
                continue
            chosen.append(pmid)
        return sorted(chosen)

    # -- the values -----------------------------------------------------------------------

    def _load_values(
        self,
        metric: MetricPlan,
        block,
        order: np.ndarray,
        fields: list[bytes],
        errors: tuple[np.ndarray, np.ndarray],
    ) -> list[Command]:
        """One stream entry per record, every instance seen so far with its latest value;
        a record where the metric's value set is an error gets the pair -1, its code."""
        times = block.times.astype(np.int64)
        rows = len(times)
        width = len(order)
        present = block.present[:, order]
        values = block.values[:, order]
        # each record's latest row per instance (-1: not seen yet)
        seen = np.where(present, np.arange(rows)[:, None], -1)
        latest = np.maximum.accumulate(seen, axis=0) if rows else seen
        active = (latest >= 0).sum(axis=1)  # instances seen so far (first-seen order)
        err_times, err_codes = errors
        # the records in time order, values' and errors' merged (-1 - k: error k)
        ns = np.concatenate((times, err_times))
        which = np.concatenate((np.arange(rows), -1 - np.arange(len(err_times))))
        by_time = np.argsort(ns, kind="stable")
        ns, which = ns[by_time], which[by_time]
        stamp = ns // 1000  # (a stream id keeps microseconds)
        newer = np.ones(len(ns), dtype=bool)
        if len(ns) > 1:
            newer[1:] = stamp[1:] > np.maximum.accumulate(stamp)[:-1]
        is_value = which >= 0
        usable = newer & (~is_value | (active[np.maximum(which, 0)] > 0) if rows else newer)
        keep = np.flatnonzero(usable)
        maxlen = self.store.config.maxlen
        if maxlen > 0 and len(keep) > maxlen:
            keep = keep[-maxlen:]
        if not len(keep):
            return []
        value_rows = which[keep][is_value[keep]]
        texts: list[str] = []
        if width and len(value_rows):
            cols = np.arange(width)
            picked = values[np.maximum(latest[value_rows], 0), cols[None, :]]
            texts = schema.value_texts(metric.desc.type, picked.ravel())
        ids = schema.stream_ids(ns[keep])
        counts = [int(active[w]) if w >= 0 else -1 for w in which[keep].tolist()]
        codes = err_codes.tolist()
        self._at = (f"metric {metric.names[0]}", ns[keep])
        out: list[Command] = []
        for sid in metric.sids:
            if width <= SCRIPT_WIDTH:
                commands = self._batches(sid, ids, texts, fields, width, counts, which[keep], codes)
            else:
                commands = self._entries(sid, ids, texts, fields, width, counts, which[keep], codes)
            commands.append(self.store.trim(sid))
            commands.append(self.store.expire(sid))
            out += commands
        self.report.values += sum(c for c in counts if c > 0)
        self.report.entries += len(keep)
        return out

    def _batches(self, sid, ids, texts, fields, width, counts, which, codes) -> list[Command]:
        """The entries as batches for entries.lua: ids, counts and values as text."""
        blob = b"" if fields == [b""] else b"".join(fields)
        out = []
        whole = width > 0 and all(c == width for c in counts)
        at = 0  # (the next value row's place in TEXTS)
        for lo in range(0, len(ids), BATCH_ENTRIES):
            hi = min(lo + BATCH_ENTRIES, len(ids))
            if whole:
                parts = texts[lo * width : hi * width]
                line_counts = " ".join([str(width)] * (hi - lo))
            else:
                parts = []
                for i in range(lo, hi):
                    n = counts[i]
                    if n < 0:
                        parts.append(str(codes[-1 - int(which[i])]))
                        continue
                    parts += texts[at * width : at * width + n]
                    at += 1
                line_counts = " ".join(map(str, counts[lo:hi]))
            values = "\n".join(parts) + "\n" if parts else ""
            out.append(self.store.entries(sid, blob, " ".join(ids[lo:hi]), line_counts, values))
        return out

    def _entries(self, sid, ids, texts, fields, width, counts, which, codes) -> list[Command]:
        head = ("XADD", schema.values_key(sid))
        if width and all(c == width for c in counts):  # (the usual table: every record whole)
            table = np.empty((len(ids), 2 * width + 1), dtype=object)
            table[:, 0] = ids
            table[:, 1::2] = fields
            table[:, 2::2] = np.asarray(texts, dtype=object).reshape(len(ids), width)
            return [head + tuple(row) for row in table.tolist()]
        out = []
        at = 0  # (the next value row's place in TEXTS)
        for i, entry in enumerate(ids):
            n = counts[i]
            if n < 0:
                out.append((*head, entry, "-1", str(codes[-1 - int(which[i])])))
                continue
            row = texts[at * width : at * width + n]
            at += 1
            pairs = (x for pair in zip(fields[:n], row, strict=True) for x in pair)
            out.append((*head, entry, *pairs))
        return out

    # -- sending, and resuming after the server comes back ---------------------------------

    def _script(self) -> None:
        try:
            self.store.load_entries_script()
        except StoreDown as exc:
            if not self._resume():
                raise LoadError(self._stopped("the stream script", None, str(exc))) from None
            raise _Resumed from None

    def _send(
        self, commands: Iterable[Command], what: str, times: np.ndarray | None = None
    ) -> None:
        self._at = (what, times)
        try:
            errors = self.store.send(commands)
            if any(NO_SCRIPT in e for e in errors):  # (a server restarted in between)
                self._script()
                self.report.resumed += 1
                raise _Resumed
            self.report.errors += errors
        except StoreDown as exc:
            if not self._resume():
                raise LoadError(self._stopped(*self._at, str(exc))) from None
            raise _Resumed from None

    def _resume(self) -> bool:
        """Connect again, for up to resume_for seconds.  The load then starts over: a
        restart may have lost the last writes (or, without persistence, everything),
        and what is stored already is refused as stale, so nothing is doubled."""
        if self.reconnect is None or self.resume_for <= 0:
            return False
        deadline = time.monotonic() + self.resume_for
        while time.monotonic() < deadline:
            try:
                fresh = self.reconnect()
            except StoreDown:
                time.sleep(0.1)
                continue
            with contextlib.suppress(Exception):  # (its connections are broken anyway)
                self.store.close()
            self.store = fresh
            self.report.resumed += 1
            return True
        return False

    def _stopped(self, what: str, times: np.ndarray | None, why: str) -> str:
        where = ""
        if times is not None and len(times):
            vol = self._volume_at(int(times[0]))
            where = f", volume {vol}" if vol is not None else ""
        return f"{self.path}: stopped at {what}{where}: {why}"

    def _volume_at(self, ns: int) -> int | None:
        """The volume holding the first record at or after NS."""
        stamp = stamp_of(ns)
        vol = None
        for entry in self.archive.index:
            if entry.stamp <= stamp:
                vol = entry.vol
        if vol is None and self.archive.volume_paths:
            vol = min(self.archive.volume_paths)
        return vol


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")
