"""Several archives read as one: PCP 6's multi-archive contexts (``-a DIR``, ``-a A,B,C``).

An archive name may be a comma-separated list, and any part of it a directory, which
stands for every archive in it (each file whose name ends in ``.meta``, compressed or
not; other files are ignored), in the directory's own order, as libpcp's
expandArchiveList reads it.  The archives are opened in that order and then taken in
order of their labels' start times.  As libpcp's initarchive and __pmLogOpen check:

- every archive must be from the host of the earliest one opened so far
  (PM_ERR_LOGHOST); a metric described in two of them must be described alike
  (PM_ERR_LOGCHANGETYPE, ...SEM, ...INDOM, ...UNITS);
- two archives starting at the same time are one archive named twice (the second is
  ignored) or overlap (PM_ERR_LOGOVERLAP).

The set answers as one archive: the first archive's label, the last one's end, and
the union of their metadata (descriptors, names, instance domains merged in time,
labels, help text).  Read in time, the archives follow each other; where one ends and
the next begins libpcp puts a <mark> a millisecond after the end of the first, so no
value is interpolated across the gap.  An archive starting before the one before it
ends (they overlap in time) cannot be crossed into: libpcp's read fails there with
PM_ERR_LOGOVERLAP, and an interpolated replay sees no values beyond.  A replay
therefore reads the *chain* of archives its origin falls in: archives joined by
crossings that do not overlap, broken where one overlaps the next or where one is
damaged (libpcp's reads cannot get past the damage either).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass

from ..desc import Desc
from ..errors import (
    PM_ERR_LOGCHANGEINDOM,
    PM_ERR_LOGCHANGESEM,
    PM_ERR_LOGCHANGETYPE,
    PM_ERR_LOGCHANGEUNITS,
    PM_ERR_LOGFILE,
    PM_ERR_LOGHOST,
    PM_ERR_LOGOVERLAP,
    PM_ERR_LOGREC,
    PMError,
)
from ..ids import pmIDStr
from ..pmns import PMNS
from ..values import Result, Timestamp
from .format import DescRecord, InDomRecord, LabelRecord, LogLabel
from .reader import Archive, LogRecord, base_name, find_file

#: How far from an archive's end (or before its start) libpcp puts the <mark> it makes
#: between two archives of a set.
MARK_GAP_NS = 1_000_000

#: libpcp's compressed-file suffixes (io.c's compress_ctl), stripped before ".meta".
_COMPRESSED = (".xz", ".lzma", ".bz2", ".bz", ".gz", ".Z", ".z")
#: What a second descriptor of a metric may not change, and libpcp's code if it does.
_DESC_CHANGES = (
    ("type", PM_ERR_LOGCHANGETYPE),
    ("sem", PM_ERR_LOGCHANGESEM),
    ("indom", PM_ERR_LOGCHANGEINDOM),
    ("units", PM_ERR_LOGCHANGEUNITS),
)


# -- names ---------------------------------------------------------------------------------


def _meta_stem(entry: str) -> str | None:
    """The archive base name of directory entry ENTRY if it is an archive's .meta file
    (possibly compressed), as __pmLogBaseName and expandArchiveList decide it."""
    name = entry
    for suffix in _COMPRESSED:
        if name.endswith(suffix) and "." in name[: -len(suffix)]:
            name = name[: -len(suffix)]
            break
    if name.endswith(".meta") and len(name) > len(".meta"):
        return name[: -len(".meta")]
    return None


def expand_names(spec: str) -> list[str]:
    """The archives SPEC names: its comma-separated parts, each directory replaced by
    the archives in it (in the directory's order, as readdir gives them)."""
    names: list[str] = []
    parts = spec.split(",")
    if len(parts) > 1 and not parts[-1]:
        parts.pop()  # (a trailing comma names nothing)
    for part in parts:
        try:
            entries = os.listdir(part)
        except OSError:
            names.append(part)
            continue
        names += [f"{part}/{stem}" for e in entries if (stem := _meta_stem(e)) is not None]
    return names


def is_multi(spec: str) -> bool:
    """Whether SPEC names more than one archive (a list, or a directory)."""
    return "," in spec or os.path.isdir(spec)


def open_one(name: str) -> Archive:
    """The archive NAME; PMError(-ENOENT) when nothing of that name exists, as libpcp says.

    As __pmLogFindOpen: a name that is a file (or a compressed one) is one of the
    archive's, cut to the base name; any other is the base name itself (so a volume
    that is not there, "a.10", is not archive "a").
    """
    base = base_name(name) if find_file(name, "") is not None else name
    if not any(find_file(base, s) is not None for s in (".meta", ".0", ".index")):
        raise PMError(-errno.ENOENT)
    return Archive(base)


def open_source(spec: str) -> Archive | ArchiveSet:
    """What ``-a SPEC`` names: one archive, or the set a list or directory stands for."""
    if not is_multi(spec):
        return open_one(spec)
    names = expand_names(spec)
    if not names:
        raise PMError(PM_ERR_LOGFILE, f"{spec}: no archives here")
    if len(names) == 1:  # (libpcp too: one name left is a plain archive context)
        return open_one(names[0])
    return ArchiveSet(spec, names)


# -- the end of an archive -----------------------------------------------------------------


def find_end(archive: Archive) -> Timestamp | None:
    """The time of ARCHIVE's last record that reads cleanly, as libpcp's
    __pmGetArchiveEnd finds it (Archive.find_end); None when there is none."""
    found = archive.find_end()
    return found.stamp if found is not None else None


def end_of(source: Archive | ArchiveSet) -> Timestamp | None:
    """pmGetArchiveEnd for an archive or a set (its last archive's end)."""
    if isinstance(source, ArchiveSet):
        return source.end_stamp
    return find_end(source)


# -- the set -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    """One archive of a set: its name as listed, the archive, and where it ends."""

    name: str
    archive: Archive
    end: Timestamp | None  # its last good record (None: no record reads cleanly)

    @property
    def start(self) -> Timestamp:
        return self.archive.label.start


def mark_record(ns: int) -> LogRecord:
    """The <mark> libpcp makes between two archives of a set (it is in no file)."""
    return LogRecord(-1, -1, 0, Result(Timestamp.from_ns(ns), ()))


class ArchiveSet:
    """Several archives of one host, opened and checked as libpcp's initarchive does,
    answering as one archive would (see the module's docstring)."""

    def __init__(self, spec: str, names: list[str]) -> None:
        self.spec = spec
        self.members: list[Member] = []
        self.descs: dict[int, Desc] = {}
        self.names: dict[int, tuple[str, ...]] = {}
        self.pmns = PMNS()
        self.indoms: dict[int, list[InDomRecord]] = {}
        self.labels: list[LabelRecord] = []
        self.texts: dict[tuple[int, int], str] = {}
        self.problems: list = []
        loaded: list[Archive] = []
        try:
            for name in names:
                archive = open_one(name)
                loaded.append(archive)
                self._check_host(name, archive)
                self._merge_descs(name, archive)
                if self._insert(name, archive):
                    self._merge(archive)
                else:
                    loaded.pop()
                    archive.close()
        except BaseException:
            for archive in loaded:
                archive.close()
            raise
        if len(self.members) > 1:
            # (libpcp then reopens the earliest archive, whose metadata is loaded again)
            self._merge(self.members[0].archive, again=True)
        self.members = [Member(m.name, m.archive, find_end(m.archive)) for m in self.members]
        last = self.members[-1]
        self.end_stamp = last.end
        self.label: LogLabel = self.members[0].archive.label
        self.version = self.label.version
        self._stamps = {indom: [r.stamp for r in h] for indom, h in self.indoms.items()}

    # -- opening ------------------------------------------------------------------------

    def _check_host(self, name: str, archive: Archive) -> None:
        if not self.members:
            return
        first = self.members[0]
        host = archive.label.hostname
        if host != first.archive.label.hostname:
            what = f"{name} is from {host!r}, {first.name} from {first.archive.label.hostname!r}"
            raise PMError(PM_ERR_LOGHOST, what)

    def _merge_descs(self, name: str, archive: Archive) -> None:
        for pmid, desc in archive.descs.items():
            known = self.descs.get(pmid)
            if known is None:
                continue
            for field, code in _DESC_CHANGES:
                was, now = getattr(known, field), getattr(desc, field)
                if field == "units":  # (the pad byte is no part of the units)
                    was, now = was.pack() & ~0xFF, now.pack() & ~0xFF
                if was != now:
                    what = f"{name}: metric {pmIDStr(pmid)} is described with another {field}"
                    raise PMError(code, what)

    def _insert(self, name: str, archive: Archive) -> bool:
        """Put ARCHIVE in its place by start time: False for one already there."""
        start = archive.label.start
        at = 0
        for at, member in enumerate(self.members):  # noqa: B007
            if start < member.start:
                break
            if start == member.start:
                if name == member.name:
                    return False
                what = f"{name} and {member.name} both start at {start.sec}.{start.nsec:09d}"
                raise PMError(PM_ERR_LOGOVERLAP, what)
        else:
            at = len(self.members)
        self.members.insert(at, Member(name, archive, None))
        return True

    def _merge(self, archive: Archive, again: bool = False) -> None:
        """Add ARCHIVE's metadata to the set's, as libpcp loads one archive's after another's."""
        for pmid, desc in archive.descs.items():
            self.descs.setdefault(pmid, desc)
            names = self.names.get(pmid, ())
            self.names[pmid] = names + tuple(
                n for n in archive.names.get(pmid, ()) if n not in names
            )
        for _, record in archive.meta:
            if isinstance(record, DescRecord):
                for name in record.names:
                    if name not in self.pmns:
                        with contextlib.suppress(PMError):
                            self.pmns.add(name, record.desc.pmid, at_front=True, checked=False)
        for indom, history in archive.indoms.items():
            merged = self.indoms.setdefault(indom, [])
            for record in history:
                _add_indom(merged, record)
        for record in archive.labels:
            if record not in self.labels:
                self.labels.append(record)
            elif again:  # (a duplicate moves to the head of its time, as libpcp's)
                self.labels.remove(record)
                self.labels.append(record)
        self.texts.update(archive.texts)
        self.problems += [p for p in archive.problems if p not in self.problems]

    # -- what an Archive answers --------------------------------------------------------

    @property
    def base(self) -> str:
        return self.spec

    def indom_at(self, indom: int, stamp: Timestamp | None = None) -> InDomRecord | None:
        """The instance domain in force at STAMP (the latest record at or before it)."""
        history = self.indoms.get(indom)
        if not history:
            return None
        if stamp is None:
            return history[-1]
        pos = bisect.bisect_right(self._stamps[indom], stamp)
        return history[pos - 1] if pos else None

    def text(self, ident: int, type_: int) -> str | None:
        return self.texts.get((type_, ident))

    def end(self) -> Timestamp:
        """The time of the last archive's last record; PMError when it cannot be found."""
        if self.end_stamp is None:
            raise PMError(PM_ERR_LOGREC, f"{self.members[-1].name}: no record reads cleanly")
        return self.end_stamp

    def close(self) -> None:
        for member in self.members:
            member.archive.close()

    def __enter__(self) -> ArchiveSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- time: crossings and chains -------------------------------------------------------

    def overlaps(self, i: int) -> bool:
        """Whether archive I+1 starts before archive I ends (libpcp's PM_ERR_LOGOVERLAP)."""
        end = self.members[i].end
        return end is not None and end > self.members[i + 1].start

    def seek(self, origin: Timestamp, forwards: bool) -> int:
        """The archive libpcp positions in for ORIGIN (__pmLogSetTime): going forwards,
        the last one starting before it; backwards, the first starting at or after it
        (the last if none does)."""
        n = len(self.members)
        i = next((k for k, m in enumerate(self.members) if m.start >= origin), n)
        return max(i - 1, 0) if forwards else min(i, n - 1)

    def chain(self, i: int, damaged: frozenset[int] | set[int] = frozenset()) -> range:
        """The archives reachable from archive I reading either way: up to an overlap or
        past a damaged archive (DAMAGED: indices of archives with unreadable records)."""
        lo = i
        while lo > 0 and not self.overlaps(lo - 1) and lo - 1 not in damaged:
            lo -= 1
        hi = i
        while hi < len(self.members) - 1 and not self.overlaps(hi) and hi not in damaged:
            hi += 1
        return range(lo, hi + 1)

    def mark_after(self, i: int) -> int | None:
        """When (ns) the <mark> after archive I is, reading forwards: a millisecond after
        its end (None for the last archive, or one whose end cannot be found)."""
        if i >= len(self.members) - 1:
            return None
        end = self.members[i].end
        if end is None:
            return None
        return end.ns + MARK_GAP_NS

    # -- records --------------------------------------------------------------------------

    def walk(self, origin: Timestamp, backwards: bool = False) -> Iterator[LogRecord | PMError]:
        """Records at or after ORIGIN (at or before, BACKWARDS) across the archives, with
        the <mark> libpcp makes at each crossing; where a crossing is into an archive that
        overlaps, or a read fails, a PMError in the stream (the walk goes on after an
        overlap, as libpcp's does, and ends after a failed read)."""
        i = self.seek(origin, not backwards)
        n = len(self.members)
        while 0 <= i < n:
            member = self.members[i]
            try:
                yield from member.archive.records_from(origin, backwards=backwards)
            except PMError as exc:
                yield exc
                return
            nxt = i - 1 if backwards else i + 1
            if not 0 <= nxt < n:
                return
            if backwards:
                at = member.start.ns - MARK_GAP_NS
                if at <= origin.ns:
                    yield mark_record(at)
                if self.overlaps(nxt):
                    yield PMError(PM_ERR_LOGOVERLAP)
            else:
                at = self.mark_after(i)
                if at is not None and at >= origin.ns:
                    yield mark_record(at)
                if self.overlaps(i):
                    yield PMError(PM_ERR_LOGOVERLAP)
            i = nxt

    def records_from(self, stamp: Timestamp, *, backwards: bool = False) -> Iterator[LogRecord]:
        """walk(), failing at the first PMError (for callers that want plain records)."""
        for item in self.walk(stamp, backwards):
            if isinstance(item, PMError):
                raise item
            yield item


def _add_indom(history: list[InDomRecord], record: InDomRecord) -> None:
    """Add RECORD to HISTORY (ascending by time): an identical record already there at
    that time moves to the end of its time's records (it is the one in force), as
    libpcp's addindom moves a duplicate to the head of its time slot."""
    for k, known in enumerate(history):
        if (
            known.stamp == record.stamp
            and known.insts == record.insts
            and known.names == record.names
        ):
            del history[k]
            break
    pos = len(history)
    while pos > 0 and history[pos - 1].stamp > record.stamp:
        pos -= 1
    history.insert(pos, record)
