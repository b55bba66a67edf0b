"""Following one archive a pmlogger is writing, for pmproxy's discovery, as PCP's does:
the archive stays open, each scan reads only what was written since the last one (the
new .meta records, the records after the last one read), and only what is new goes to
the key server: the source's names once, a metric's description with its first value
set, an instance's keys when it first appears, and one stream entry per record.

What is written is what loading the same records with `load.py` writes (the source as
discovery names it; each entry every instance seen so far with its latest value), the
state carrying over from scan to scan as PCP's cache of the archive's metrics does.
Differences in how, not what: each entry is an XADD with PCP's MAXLEN, and a stream's
EXPIRE is renewed once a minute of sample time rather than with every entry (so a
stream outlives its last sample by up to a minute less than under PCP).
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple

from purepcp.pmapi.archive.damage import ArchiveError
from purepcp.pmapi.archive.reader import Archive, LogRecord
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.types import PMType, ValFmt
from purepcp.pmapi.values import ValueSet

from . import schema
from .metadata import MetadataReplay, MetricPlan
from .source import (
    LoadError,
    LoadReport,
    SourceIdentity,
    discovered_source,
    reason,
    source_commands,
)
from .store import Command, Store, StoreDown

NSEC = 1_000_000_000
#: a stream's EXPIRE is sent again after this much sample time (ns)
EXPIRE_EVERY = 60 * NSEC

_INTEGERS = frozenset(
    (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64)
)
_FLOATS = frozenset((PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE))
_U32, _FLOAT = PMType.PM_TYPE_U32, PMType.PM_TYPE_FLOAT
_INSITU = ValFmt.PM_VAL_INSITU


class _Set(NamedTuple):
    """A value set as the follower reads it: its values as stored (insitu words, or
    the blocks' values), and where its ValueSet is, for a type that needs it."""

    pmid: int
    numval: int
    valfmt: int
    insts: Sequence[int]
    raw: Sequence[Any]
    sets: Sequence[ValueSet]
    at: int  # (its place in SETS)


#: a record as read: its time (ns) and value sets
_Row = tuple[int, Sequence[ValueSet]]
#: how a settled layout's value set is stored: skipped, an error, one number (a metric
#: without instances), or the general way (_Stream.take)
_ERROR, _NUMBER, _GENERAL = range(3)
_WORD, _SINGLE = struct.Struct(">I"), struct.Struct(">f")


def _sets(vsets: Sequence[ValueSet]) -> list[_Set]:
    """VSETS as _Sets; a result read through a learned layout is read from its value
    column, without a ValueSet for each metric (most of a record's cost otherwise)."""
    layout = getattr(vsets, "layout", None)
    if layout is None:
        return [
            _Set(v.pmid, v.numval, v.valfmt, v.insts, v.values, vsets, i)
            for i, v in enumerate(vsets)
        ]
    values = vsets.values  # type: ignore[attr-defined]
    return [
        _Set(s.pmid, s.numval, s.valfmt, s.insts, values[p[0] : p[1]] if p else (), vsets, i)
        for i, (s, p) in enumerate(zip(layout.shape, layout.spans, strict=True))
    ]


@dataclass
class _Stream:
    """One metric as followed: its plan (series ids, instance fields), its instances
    in first-seen order with their latest values, and where its streams are up to."""

    plan: MetricPlan
    order: list[int] = field(default_factory=list)
    latest: dict[int, str] = field(default_factory=dict)
    last_us: int = -1  # the newest record's time (microseconds: a stream id's grain)
    expired_ns: int | None = None  # the sample time EXPIRE was last sent at
    keys: list[str] = field(default_factory=list)  # its streams' keys
    value: str | None = None  # (no instances: the latest value)
    last_insts: object = None  # the instances of the last value set taken
    _kept: list[tuple[bytes, int]] = field(default_factory=list)  # (field, instance)
    _kept_for: tuple[int, int] = (-1, -1)  # the fields and instances _kept was made of

    def take(self, vset: _Set) -> tuple:
        """Take in VSET's values; the entry's field and value pairs: every instance seen
        so far (that has a field) with its latest value."""
        desc = self.plan.desc
        type_ = desc.type
        raw = vset.raw
        if vset.valfmt == _INSITU and type_ != _U32:  # (words: signed, or a float's bits)
            if type_ == _FLOAT:
                raw = array("f", array("I", raw).tobytes())
            else:
                raw = array("i", array("I", raw).tobytes())
        if type_ in _INTEGERS:
            texts = list(map(str, raw))
        elif type_ in _FLOATS:
            texts = [format(v, "e") for v in raw]  # (as %e)
        else:
            texts = schema.value_texts(type_, list(vset.sets[vset.at].atoms(type_)))
        insts = vset.insts
        if desc.indom == PM_INDOM_NULL:  # (its first instance's value: there is one)
            if not self.order:
                self.order.append(insts[0])
                self.value = texts[0]
            elif insts[0] == self.order[0]:
                self.value = texts[0]
            elif self.order[0] in insts:
                self.value = texts[insts.index(self.order[0])]
            return ("", self.value) if self.value is not None else ()
        latest = self.latest
        if insts != self.last_insts:
            new = [i for i in insts if i not in latest]
            if new:
                self.order += sorted(new)
            self.last_insts = insts
        latest.update(zip(insts, texts, strict=True))
        fields = self.plan.fields
        if self._kept_for != (len(fields), len(self.order)):
            self._kept = [(fields[i], i) for i in self.order if i in fields]
            self._kept_for = (len(fields), len(self.order))
        return tuple(x for f, i in self._kept for x in (f, latest[i]))


class ArchiveFollower:
    """One archive followed from its end (where discovery meets an archive): each
    `load()` stores what was written since the last and says what it did."""

    def __init__(self, store: Store, base: str, log: Callable[[str], None] = print) -> None:
        self.store = store
        self.base = base
        self.log = log
        try:
            self.archive = Archive(base)
            end = self.archive.find_end()
        except (ArchiveError, PMError, OSError) as exc:
            raise LoadError(f'cannot open archive "{base}": {reason(exc)}') from None
        if end is None:
            raise LoadError(f'cannot open archive "{base}": no record reads cleanly yet')
        self.vol: int = end.vol
        self.offset: int = end.offset
        self._size = -1  # the size of volume VOL when last read
        self._file: BinaryIO | None = None  # a volume, open (_open)
        self._file_vol = -1
        self._problem = ""
        self._labels_read = len(self.archive.labels)
        self._problems_said = len(self.archive.problems)
        self.identity: SourceIdentity = discovered_source(self.archive, base)
        self.forget()

    def forget(self) -> None:
        """Forget what the key server was sent (it may be a new one, or the source has
        changed): the next records describe their source, metrics and instances again."""
        ident = self.identity
        self._replay = MetadataReplay(self.archive, ident.context, ident.source, ident.name)
        self._streams: dict[int, _Stream] = {}
        self._skipped: set[int] = set()
        self._plans: dict[Any, list[tuple]] = {}  # settled layouts' plans (_plan_of)
        self._source_sent = False

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self.archive.close()

    # -- one scan -------------------------------------------------------------------------

    def load(self) -> LoadReport | None:
        """Store the records written since the last call; None if there were none.
        StoreDown if the key server went away: then this scan's records are read
        again next time, and everything described again."""
        size = self._grown()
        if size is None:
            return None
        was = (self.vol, self.offset, self._size)
        self._size = size
        try:
            chunks = self._appended()  # (before the .meta: records come after theirs)
            self.archive.refresh_meta()
            for problem in self.archive.problems[self._problems_said :]:
                self.log(f"{self.base}: {problem}")
            self._problems_said = len(self.archive.problems)
        except (ArchiveError, PMError, OSError) as exc:
            self.vol, self.offset, self._size = was
            self._say(f'cannot read archive "{self.base}": {reason(exc)}')
            return None
        self._check_source()
        records = self._new_records(chunks)
        if not records:
            return None
        report = LoadReport(self.identity.name, records=len(records))
        rows = [(r.stamp.sec * NSEC + r.stamp.nsec, r.result.vsets) for r in records]
        plans, report.metrics = self._new_metadata(rows)
        commands = [] if self._source_sent else source_commands(self.identity)
        commands += self._replay.replay(plans)
        commands += self._entries(rows, report)
        try:
            report.errors += self.store.send(commands)
        except StoreDown:
            self.vol, self.offset, self._size = was
            self.forget()
            raise
        self._source_sent = True
        return report

    def _grown(self) -> int | None:
        """The size of the volume being read if the archive has grown since the last
        read (that volume has, or the next one is there: records come with their
        metadata), else None.  Two stats: what a scan of an unchanged archive costs."""
        path = self.archive.volume_paths.get(self.vol, f"{self.archive.base}.{self.vol}")
        try:
            size = os.stat(path).st_size
        except OSError:
            return 0  # (let the refresh say what became of it)
        if size != self._size or os.path.exists(f"{self.archive.base}.{self.vol + 1}"):
            return size
        return None

    def _check_source(self) -> None:
        """A new context label record may make the archive another source."""
        if len(self.archive.labels) == self._labels_read:
            return
        self._labels_read = len(self.archive.labels)
        self._problems_said = len(self.archive.problems)
        identity = discovered_source(self.archive, self.base)
        if identity.source != self.identity.source:
            self.identity = identity
            self.forget()

    def _appended(self) -> list[tuple[int, int, bytes]]:
        """What was appended to the volumes since the last read: (volume, where the
        bytes begin in it, the bytes), into a new volume if pmlogger went on to one."""
        chunks = []
        vol, offset = self.vol, self.offset
        while True:
            fd = self._open(vol)
            size = os.fstat(fd).st_size
            chunks.append((vol, offset, os.pread(fd, max(size - offset, 0), offset)))
            if not os.path.exists(f"{self.archive.base}.{vol + 1}"):
                return chunks
            self.archive.refresh_volumes()  # (this volume is whole: on to the next)
            self.archive.volume(vol + 1)  # (its label checked)
            vol, offset = vol + 1, self.archive.label_bytes

    def _open(self, vol: int) -> int:
        """The descriptor of volume VOL, open (one volume at a time)."""
        if self._file is None or self._file_vol != vol:
            if self._file is not None:
                self._file.close()
            self._file = open(f"{self.archive.base}.{vol}", "rb", buffering=0)  # noqa: SIM115
            self._file_vol = vol
        return self._file.fileno()

    def _new_records(self, chunks: list[tuple[int, int, bytes]]) -> list[LogRecord]:
        """The whole records in CHUNKS, marks left out; where the next read starts.  A
        record whose end is not written yet is read next time; damage is said once,
        and waited on (in a volume pmlogger has left, the next volume is read)."""
        out: list[LogRecord] = []
        for i, (vol, base, data) in enumerate(chunks):
            records, used, damage = self.archive.records_in(vol, data, base)
            out += [r for r in records if r.result.vsets]
            self.vol, self.offset = vol, base + used
            last = i == len(chunks) - 1
            if damage is not None:
                self._say(f"{self.base}: {damage}")
                if last:
                    return out
            elif not last and used < len(data):  # (pmlogger left it with a record cut short)
                self._say(f"{self.base}.{vol}: {len(data) - used} bytes at its end are no record")
        self._problem = ""
        return out

    def _say(self, problem: str) -> None:
        """Log PROBLEM unless it is the one last logged (it is met on every read)."""
        if problem != self._problem:
            self._problem = problem
            self.log(problem)

    # -- metadata -------------------------------------------------------------------------

    def _new_metadata(self, rows: list[_Row]) -> tuple[list[MetricPlan], int]:
        """The plans of the metrics RECORDS show something new of (their first value
        set, or instances not seen before), with first and inst_first set to only
        that; and how many metrics are new."""
        fresh: dict[int, dict[int, int]] = {}  # pmid -> its new instances' first times
        started = 0
        for ns, vsets in rows:
            if getattr(vsets, "layout", None) in self._plans:
                continue  # (a settled layout: every metric started, every instance known)
            for vset in _sets(vsets):
                if not vset.numval:  # (no values, no error: PCP passes it by)
                    continue
                pmid = vset.pmid
                stream = self._streams.get(pmid)
                if stream is None:
                    if pmid in self._skipped:
                        continue
                    stream = self._start(pmid, ns, vset.numval < 0)
                    if stream is None:
                        continue
                    started += 1
                    fresh[pmid] = {}
                if (
                    vset.numval < 0
                    or stream.plan.desc.indom == PM_INDOM_NULL
                    or vset.insts == stream.last_insts  # (the usual: nothing new)
                ):
                    continue
                known = stream.latest
                for inst in vset.insts:
                    if inst not in known:
                        news = fresh.setdefault(pmid, {})
                        news.setdefault(inst, ns)
        plans = []
        for pmid in sorted(fresh):
            plan = self._streams[pmid].plan
            plan.inst_first = fresh[pmid]
            if plan.inst_first and plan.pmid in self._replay.started:
                plan.first = min(plan.inst_first.values())
            plans.append(plan)
        return plans, started

    def _start(self, pmid: int, ns: int, error_first: bool) -> _Stream | None:
        """A metric's first value set: followed, unless excluded (None; also when its
        metadata is not there, when it is asked again next time)."""
        desc = self.archive.descs.get(pmid)
        names = self.archive.names.get(pmid, ())
        if desc is None or not names:
            return None
        config = self.store.config
        if config.excluded(names) or (
            desc.indom != PM_INDOM_NULL and desc.indom in config.exclude_indoms
        ):
            self._skipped.add(pmid)
            return None
        stream = self._streams[pmid] = _Stream(MetricPlan(pmid, desc, names, ns, error_first, {}))
        return stream

    # -- values ---------------------------------------------------------------------------

    def _entries(self, rows: list[_Row], report: LoadReport) -> list[Command]:
        """A stream entry per record and metric: every instance seen so far with its
        latest value, or -1 and the code of an error value set.  A record of a settled
        layout (_plan_of) is read by its plan; others value set by value set."""
        out: list[Command] = []
        maxlen = str(self.store.config.maxlen)
        streams, plans = self._streams, self._plans
        values = entries = 0
        for ns, vsets in rows:
            us = ns // 1000
            entry_id = f"{us // 1000}-{us % 1000}"
            layout = getattr(vsets, "layout", None)
            plan = plans.get(layout) if layout is not None else None
            work: Iterator[tuple[_Stream | None, Any]]
            if plan is not None:
                work = self._planned(plan, vsets)
            else:
                work = ((streams.get(v.pmid), v) for v in _sets(vsets) if v.numval)
            for stream, vset in work:
                if stream is None:
                    continue
                if type(vset) is str:  # (a planned number's text)
                    pairs: tuple = ("", vset)
                elif vset.numval < 0:
                    pairs = ("-1", str(vset.numval))
                else:
                    pairs = stream.take(vset)
                if us <= stream.last_us:  # (its values taken, as a load takes them)
                    continue
                stream.last_us = us
                if not pairs:
                    continue
                if pairs[0] != "-1":
                    values += len(pairs) >> 1
                entries += 1
                if not stream.keys:
                    stream.keys = [schema.values_key(sid) for sid in stream.plan.sids]
                for key in stream.keys:
                    out.append(("XADD", key, "MAXLEN", "~", maxlen, entry_id, *pairs))
                if stream.expired_ns is None or ns - stream.expired_ns >= EXPIRE_EVERY:
                    stream.expired_ns = ns
                    out += [self.store.expire(sid) for sid in stream.plan.sids]
            if layout is not None and plan is None:
                found = self._plan_of(layout)
                if found is not None:
                    plans[layout] = found
        report.values += values
        report.entries += entries
        return out

    def _planned(self, plan: list[tuple], vsets: Any) -> Iterator[tuple[_Stream | None, Any]]:
        """A settled layout's record as (stream, what to take) pairs: a number's text
        made here, else the value set (as _Set) for the general way."""
        values = vsets.values
        for stream, kind, i, at, how in plan:
            if kind == _NUMBER:
                v = values[at]
                if how == 1:  # (a signed 32-bit word)
                    v = v - 0x100000000 if v & 0x80000000 else v
                elif how == 2:  # (a float's bits)
                    v = _SINGLE.unpack(_WORD.pack(v))[0]
                stream.value = text = format(v, "e") if how >= 2 else str(v)
                yield stream, text
            elif kind == _ERROR:
                yield stream, _Set(stream.plan.pmid, at, 0, (), (), vsets, i)
            else:
                shape, span = vsets.layout.shape[i], vsets.layout.spans[i]
                raw = values[span[0] : span[1]]
                yield (
                    stream,
                    _Set(shape.pmid, shape.numval, shape.valfmt, shape.insts, raw, vsets, i),
                )

    def _plan_of(self, layout: Any) -> list[tuple] | None:
        """How to read records of LAYOUT once it is settled: every metric in it started
        (or left out) and every instance known, so that nothing in such a record needs
        describing; None while it is not."""
        steps = []
        for i, (shape, span) in enumerate(zip(layout.shape, layout.spans, strict=True)):
            if not shape.numval:
                continue
            stream = self._streams.get(shape.pmid)
            if stream is None:
                if shape.pmid in self._skipped:
                    continue
                return None
            desc = stream.plan.desc
            if shape.numval < 0:
                steps.append((stream, _ERROR, i, shape.numval, 0))
            elif desc.indom != PM_INDOM_NULL:
                if any(inst not in stream.latest for inst in shape.insts):
                    return None
                steps.append((stream, _GENERAL, i, 0, 0))
            elif (desc.type in _INTEGERS or desc.type in _FLOATS) and stream.order[:1] == [
                shape.insts[0]
            ]:
                how = 0 if desc.type in _INTEGERS else 3  # (str, or %e)
                if shape.valfmt == _INSITU:
                    how = {_U32: 0, _FLOAT: 2}.get(desc.type, 1)
                steps.append((stream, _NUMBER, i, span[0], how))
            else:
                steps.append((stream, _GENERAL, i, 0, 0))
        return steps
