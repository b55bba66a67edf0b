"""Archive contexts: the PMAPI calls answered from an archive (PCP's PM_CONTEXT_ARCHIVE).

The name may also be a comma-separated list of archives, or a directory of them: a
multi-archive context (multi.py), answered as one archive would be.  Names come from
the archive's own namespace; descriptors, help text and labels from
its metadata; instance domains and labels as they were at the context's current time
(its origin, initially the archive's start), as libpcp answers them.  A fetch in
PM_MODE_FORW or PM_MODE_BACK (the default is FORW, as libpcp's) returns the next
record, in the mode's direction from the origin, holding any of the metrics asked
for, uninterpolated, with the instance profile applied; ``fetch_archive`` returns
every record, marks included.  A fetch in PM_MODE_INTERP returns the values at the
origin by seed 001's interpolation rules (interp.py), then moves the origin on by
the mode's delta; ``replay`` answers a run of such fetches at once, as arrays, and
``replays`` the same run a bounded chunk at a time.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..context import BaseContext, Fetched
from ..desc import Desc
from ..errors import (
    PM_ERR_EOL,
    PM_ERR_INDOM_LOG,
    PM_ERR_INST_LOG,
    PM_ERR_MODE,
    PM_ERR_NOTHOST,
    PM_ERR_PMID_LOG,
    PM_ERR_TEXT,
    PMError,
)
from ..ids import PM_INDOM_NULL
from ..labels import PM_LABEL_COMPOUND, PM_LABEL_CONTEXT, PM_LABEL_OPTIONAL, LabelSet
from ..pmns import PMNS
from ..types import ValFmt
from ..values import NO_BLOCKS, Result, Timestamp, ValueSet
from .format import PM_TEXT_HELP, PM_TEXT_INDOM, PM_TEXT_ONELINE, PM_TEXT_PMID
from .modes import PM_MODE_BACK, PM_MODE_FORW, PM_MODE_INTERP, PM_MODE_LIVE  # noqa: F401
from .multi import ArchiveSet, find_end, open_one, open_source
from .reader import Archive, LogRecord

if TYPE_CHECKING:  # (replay.py needs NumPy: loaded on the first interpolated fetch)
    from .replay import Observations, Replay, Sequel, Span


class ArchiveSource:
    """What a context needs to know of where its metrics come from: here, an archive."""

    kind = "archive"
    features = 0
    generation = 0

    def __init__(self, archive: Archive | ArchiveSet) -> None:
        self.archive = archive
        self.changes = 0

    @property
    def hostname(self) -> str:
        return self.archive.label.hostname

    def close(self) -> None:
        self.archive.close()


#: The archive NAME (PMError(-ENOENT) when nothing of that name exists, as libpcp says).
open_archive = open_one


class ArchiveContext(BaseContext):
    """A synchronous PMAPI context over an archive: ``with ArchiveContext(path) as ctx:``."""

    def __init__(self, name: str, pmns: PMNS | None = None) -> None:
        archive = open_source(name)
        try:
            super().__init__(ArchiveSource(archive), _trimmed(archive, pmns))
        except BaseException:
            archive.close()
            raise
        self.name = name
        self.archive: Archive | ArchiveSet = archive
        self.origin: Timestamp = archive.label.start
        self.mode = PM_MODE_FORW
        self.delta_ns = 0
        self._cursor: Iterator[LogRecord | PMError] | None = None
        self._observations: Observations | None = None
        self._span: Span | None = None
        self._columns: dict[int, Any] = {}  # a set's archives' Columns, once built
        self._ahead: _ReadAhead | None = None
        self._sequel: Sequel | None = None  # what the last interpolated fetch left
        self._lives: dict[int, tuple[int, Any]] = {}  # each domain's lifetimes, as worked out
        #: per instance domain, for as many of its records as it had then: each instance's
        #: name and each name's (and first word's) instance, the latest record's first
        self._inst_maps: dict[int, tuple[int, dict[int, str], dict[str, int]]] = {}

    # -- the context's time -------------------------------------------------------------

    def set_mode(self, mode: int, origin: Timestamp | None = None, delta_ns: int = 0) -> None:
        """pmSetModeHighRes: how later fetches read, the time they start from and (for
        PM_MODE_INTERP) how far each moves the origin on, in nanoseconds (negative:
        backwards).  With no ORIGIN the context's current time stays."""
        if mode not in (PM_MODE_INTERP, PM_MODE_FORW, PM_MODE_BACK):
            raise PMError(PM_ERR_MODE)
        self.mode = mode
        self.delta_ns = int(delta_ns)
        if origin is not None:
            self.origin = origin
        self._cursor = None
        self._sequel = None  # (the fetch before is forgotten, and the fetches read ahead)
        self._ahead = None
        if isinstance(self.archive, ArchiveSet):  # (a replay reads the chain it seeks into)
            self._observations = None

    def _records(self) -> Iterator[LogRecord | PMError]:
        """The records from the origin in the mode's direction; a PMError in the stream
        is an error the next read returns (a set's overlapping archives), after which
        reading goes on, as libpcp's does."""
        if self._cursor is None:
            backwards = self.mode == PM_MODE_BACK
            if isinstance(self.archive, ArchiveSet):
                self._cursor = self.archive.walk(self.origin, backwards)
            else:
                self._cursor = self.archive.records_from(self.origin, backwards=backwards)
        return self._cursor

    def fetch_archive(self) -> Result:
        """pmFetchArchive: the next record in the mode's direction, whatever it holds."""
        if self.mode == PM_MODE_INTERP:
            raise PMError(PM_ERR_MODE)
        for rec in self._records():
            if isinstance(rec, PMError):
                raise rec
            self.origin = rec.stamp
            return rec.result
        raise PMError(PM_ERR_EOL)

    def _real_fetch(self, pmids: Sequence[int]) -> Fetched:
        """pmFetch: in PM_MODE_INTERP the values at the origin (which then moves on by
        the delta); else the next record holding any of PMIDS (the others empty)."""
        if self.mode == PM_MODE_INTERP:
            return self._fetch_interp(pmids)
        wanted = dict.fromkeys(pmids)
        for rec in self._records():
            if isinstance(rec, PMError):
                raise rec
            if rec.is_mark:
                continue
            found = {vs.pmid: vs for vs in rec.result.vsets if vs.pmid in wanted}
            if not found:
                continue
            self.origin = rec.stamp
            vsets = tuple(self._in_profile(found.get(p) or _no_values(p)) for p in pmids)
            descs = {p: self.archive.descs.get(p) for p in pmids}
            return Fetched(Result(rec.stamp, vsets), descs)
        raise PMError(PM_ERR_EOL)

    def _fetch_nothing(self) -> Fetched:
        """A fetch of no real metrics: at the origin (which moves on when interpolating)."""
        if self.mode == PM_MODE_INTERP:
            return self._fetch_interp([])
        return Fetched(Result(self.origin, ()), {})

    # -- interpolation ---------------------------------------------------------------------

    def replay(self, pmids: Sequence[int], count: int) -> Replay:
        """COUNT PM_MODE_INTERP fetches of PMIDS at once: what each would have returned.

        The origin moves on by COUNT deltas, as after the fetches themselves.
        """
        from .replay import concat

        return concat(list(self.replays(pmids, count)))

    def replays(self, pmids: Sequence[int], count: int) -> Iterator[Replay]:
        """replay(PMIDS, COUNT) as successive Replays of bounded size (replay.py's
        chunks), so a long run is answered in bounded memory.  The origin moves on by
        COUNT deltas now; the chunks are read as the iterator is consumed."""
        from .replay import Sequel, replays

        if self.mode != PM_MODE_INTERP:
            raise PMError(PM_ERR_MODE)
        observations, span = self._source()
        if self._sequel is None:
            self._sequel = Sequel()
        origin = self.origin.ns
        self.origin = Timestamp.from_ns(origin + count * self.delta_ns)
        dm = self.derived_among(pmids)
        derived = dm is not None and any(dm.is_derived(p) for p in pmids)
        real = dm.operands(pmids) if derived else pmids
        chunks = replays(observations, self.archive.descs, real, origin, self.delta_ns, count,
                         span, self._candidates, self._sequel, self._lifetimes)  # fmt: skip
        if not derived:
            return chunks
        from .replay import derived_replay

        return (derived_replay(dm, pmids, chunk) for chunk in chunks)

    def _source(self) -> tuple[Observations, Span]:
        """What interpolated fetches read, and where their values lie: the archive's
        Columns; for a set, the chain of archives the origin seeks into."""
        from .columns import Columns
        from .replay import Span

        archive = self.archive
        start = archive.label.start.ns
        if self._observations is None:
            if isinstance(archive, ArchiveSet):
                from .chain import Chain

                seek = archive.seek(self.origin, self.delta_ns >= 0)
                self._observations = Chain(archive, archive.chain(seek), seek, self._columns)
            else:
                self._observations = Columns(archive)
        if self._span is None:
            end = archive.end_stamp if isinstance(archive, ArchiveSet) else find_end(archive)
            # (no end found: libpcp's end stays the start, and every later fetch is EOL)
            self._span = Span(start, end.ns if end is not None else start)
        assert self._observations is not None
        return self._observations, self._span

    def _candidates(self, desc: Desc, observed: Callable[[], Sequence[int]]) -> list[int]:
        """The instances an interpolated fetch of DESC's metric may return, ascending:
        every one the archive's instance domain ever held (the observed ones if it has
        none), that the profile wants."""
        history = self.archive.indoms.get(desc.indom)
        insts = {i for record in history for i in record.insts} if history else set(observed())
        return sorted(i for i in insts if self.profile.wants(desc.indom, i))

    def _lifetimes(self, desc: Desc) -> dict[int, tuple[int, int | None]] | None:
        """When each instance of DESC's domain came and went (replay.lifetimes_of), worked
        out once per domain (and again if its records grow)."""
        from .replay import lifetimes_of

        history = self.archive.indoms.get(desc.indom) or []
        known = self._lives.get(desc.indom)
        if known is None or known[0] != len(history):
            known = self._lives[desc.indom] = (len(history), lifetimes_of(history))
        return known[1]

    def _fetch_interp(self, pmids: Sequence[int]) -> Fetched:
        """One interpolated fetch, answered from a replay computed ahead in chunks."""
        from .replay import Sequel, concat, replays

        origin = self.origin.ns
        key = (tuple(pmids), self.profile.version, self.delta_ns)
        ahead = self._ahead
        k = ahead.row(key, origin) if ahead is not None else None
        if k is None:
            size = 1 if self.delta_ns == 0 else _ahead_size(ahead, key)
            observations, span = self._source()
            # (a run going on from the last one goes on from where it left libpcp's memory)
            goes_on = ahead is not None and ahead.key == key and ahead.stop() == origin
            sequel = ahead.sequel if goes_on else Sequel()  # type: ignore[union-attr]
            chunks = replays(observations, self.archive.descs, pmids, origin, self.delta_ns,
                             size, span, self._candidates, sequel, self._lifetimes)  # fmt: skip
            ahead = self._ahead = _ReadAhead(key, origin, concat(list(chunks)), sequel)
            k = 0
        self.origin = Timestamp.from_ns(origin + self.delta_ns)
        done = ahead.replay
        failure = done.fetch_error(k)
        if failure is not None:
            raise failure
        vsets = tuple(m.value_set(k) for m in done.metrics)
        descs = {m.pmid: m.desc for m in done.metrics}
        return Fetched(Result(Timestamp.from_ns(origin), vsets), descs)

    def _in_profile(self, vs: ValueSet) -> ValueSet:
        desc = self.archive.descs.get(vs.pmid)
        if vs.numval <= 0 or desc is None or desc.indom == PM_INDOM_NULL:
            return vs
        return vs.subset(lambda inst: self.profile.wants(desc.indom, inst))

    # -- metadata -------------------------------------------------------------------------

    def _run(self, op: Generator) -> Any:
        """Exchanges here never send anything: each is answered locally (names)."""
        try:
            next(op)
        except StopIteration as stop:
            return stop.value
        raise PMError(PM_ERR_NOTHOST, "an archive context cannot send requests to pmcd")

    def _real_lookup_desc(self, pmid: int) -> Desc:
        desc = self.archive.descs.get(pmid)
        if desc is None:
            raise PMError(PM_ERR_PMID_LOG)
        self._descs[pmid] = desc
        return desc

    def _real_lookup_descs(self, pmids: Sequence[int]) -> list[Desc | None]:
        descs = [self.archive.descs.get(pmid) for pmid in pmids]
        self._descs.update(zip(pmids, descs, strict=True))
        return descs

    def _indom(self, indom: int):
        record = self.archive.indom_at(indom, self.origin)
        if record is None:
            raise PMError(PM_ERR_INDOM_LOG)
        return record

    def instances(self, indom: int) -> list[tuple[int, str]]:
        record = self._indom(indom)
        return [(i, n or "") for i, n in zip(record.insts, record.names, strict=True)]

    def _instance_name_at(self, indom: int, inst: int, stamp_ns: int) -> str:
        """pmNameInDom as the archive's instance domain was at STAMP_NS."""
        record = self.archive.indom_at(indom, Timestamp.from_ns(stamp_ns))
        if record is not None:
            for i, name in zip(record.insts, record.names, strict=True):
                if i == inst:
                    return name or ""
        raise PMError(PM_ERR_INST_LOG)

    def _instance_id_at(self, indom: int, name: str, stamp_ns: int) -> int:
        """pmLookupInDom as the archive's instance domain was at STAMP_NS."""
        record = self.archive.indom_at(indom, Timestamp.from_ns(stamp_ns))
        pairs = list(zip(record.insts, record.names, strict=True)) if record else []
        return _instance_named(pairs, name)

    def instance_name(self, indom: int, inst: int) -> str:
        for i, name in self.instances(indom):
            if i == inst:
                return name
        raise PMError(PM_ERR_INST_LOG)

    def instance_id(self, indom: int, name: str) -> int:
        return _instance_named(self.instances(indom), name)

    # pmGetInDomArchive and friends: every instance the archive ever saw, newest first

    def _histories(self, indom: int) -> list:
        history = self.archive.indoms.get(indom)
        if not history:
            raise PMError(PM_ERR_INDOM_LOG)
        return history[::-1]

    def instances_archive(self, indom: int) -> list[tuple[int, str]]:
        """pmGetInDomArchive: the union of the instance domain over the whole archive."""
        seen: dict[int, str] = {}
        for record in self._histories(indom):
            for inst, name in zip(record.insts, record.names, strict=True):
                seen.setdefault(inst, name or "")
        return list(seen.items())

    def instance_id_archive(self, indom: int, name: str) -> int:
        """pmLookupInDomArchive: NAME (or its part before a space) anywhere in the archive,
        the latest record's first."""
        inst = self._maps(indom)[2].get(name)
        if inst is None:
            raise PMError(PM_ERR_INST_LOG)
        return inst

    def instance_name_archive(self, indom: int, inst: int) -> str:
        """pmNameInDomArchive: INST's name in the latest record that has it."""
        name = self._maps(indom)[1].get(inst)
        if name is None:
            raise PMError(PM_ERR_INST_LOG)
        return name

    def _maps(self, indom: int) -> tuple[int, dict[int, str], dict[str, int]]:
        """INDOM's names by instance and instances by name, made once for as many records
        as its history holds (a growing archive's refresh adds records: made again)."""
        history = self.archive.indoms.get(indom)
        if not history:
            raise PMError(PM_ERR_INDOM_LOG)
        maps = self._inst_maps.get(indom)
        if maps is None or maps[0] != len(history):
            names: dict[int, str] = {}
            insts: dict[str, int] = {}
            for record in reversed(history):
                for i, n in zip(record.insts, record.names, strict=True):
                    names.setdefault(i, n or "")
                    if n is None:
                        continue
                    insts.setdefault(n, i)
                    if " " in n:
                        insts.setdefault(n.split(" ", 1)[0], i)
            maps = self._inst_maps[indom] = (len(history), names, insts)
        return maps

    def _real_text(self, ident: int, help: bool, indom: bool, direct: bool) -> str:
        target = PM_TEXT_INDOM if indom else PM_TEXT_PMID
        text, code = self._text_of(ident, target | (PM_TEXT_HELP if help else PM_TEXT_ONELINE))
        if not text and help and not direct:  # (libpcp: missing or empty help gives the one-line)
            text, code = self._text_of(ident, target | PM_TEXT_ONELINE)
        if text is None:
            raise PMError(code)
        return text

    def _text_of(self, ident: int, kind: int) -> tuple[str | None, int]:
        """IDENT's text of KIND, or None and libpcp's error: PM_ERR_NOTHOST (its old code)
        when the archive holds no text of that kind at all, else PM_ERR_TEXT."""
        text = self.archive.text(ident, kind)
        if text is not None:
            return text, 0
        if not any(key[0] == kind for key in self.archive.texts):
            return None, PM_ERR_NOTHOST
        return None, PM_ERR_TEXT

    def _real_labels(self, ident: int, kind: int) -> tuple[LabelSet, ...]:
        kind &= ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL)
        if kind == PM_LABEL_CONTEXT:
            ident = 0xFFFFFFFF
        best = None
        for record in self.archive.labels:
            if (
                record.type == kind
                and record.ident == ident
                and record.stamp <= self.origin
                and (best is None or record.stamp >= best.stamp)
            ):
                best = record
        return best.sets if best is not None else ()

    def store(self, result: Result) -> None:
        raise PMError(PM_ERR_NOTHOST)

    def close(self) -> None:
        self.source.close()

    def __enter__(self) -> ArchiveContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ReadAhead:
    """Interpolated fetches computed ahead: fetch k of KEY's run from ORIGIN is row k."""

    def __init__(self, key: tuple, origin: int, replay: Replay, sequel: Sequel) -> None:
        self.key = key
        self.origin = origin
        self.replay = replay
        self.sequel = sequel  # (what the run's last fetch left)

    def stop(self) -> int:
        """The time of the fetch after this run's last."""
        return self.origin + len(self.replay.times) * self.key[-1]

    def row(self, key: tuple, origin: int) -> int | None:
        """The row answering a fetch of KEY at ORIGIN, if this run holds one."""
        if key != self.key:
            return None
        delta = key[-1]
        if delta == 0:
            return 0 if origin == self.origin else None
        k, off = divmod(origin - self.origin, delta)
        return k if off == 0 and 0 <= k < len(self.replay.times) else None


def _ahead_size(ahead: _ReadAhead | None, key: tuple) -> int:
    """How many fetches to answer ahead: more each time the same run goes on."""
    if ahead is None or ahead.key != key:
        return 16
    return min(4 * len(ahead.replay.times), 4096)


def _instance_named(pairs: Sequence[tuple[int, str | None]], name: str) -> int:
    """The instance called NAME among PAIRS (or, as libpcp, up to its first space)."""
    for i, n in pairs:
        if n == name:
            return i
    for i, n in pairs:
        if n and " " in n and n.split(" ", 1)[0] == name:
            return i
    raise PMError(PM_ERR_INST_LOG)


def _no_values(pmid: int) -> ValueSet:
    """A set with no values: what a fetch gives for a metric missing from the record."""
    return ValueSet(pmid, 0, ValFmt.PM_VAL_INSITU, NO_BLOCKS, array("I"), array("I"))


def _trimmed(archive: Archive | ArchiveSet, pmns: PMNS | None) -> PMNS:
    """The namespace to answer names from: the archive's, or -n's whole (libpcp answers
    every context from a namespace loaded explicitly: a name the archive has no metric
    for is found, and its descriptor is PM_ERR_PMID_LOG, as QA 403 has it)."""
    return archive.pmns if pmns is None else pmns
