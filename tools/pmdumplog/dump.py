"""One pmdumplog run over an archive: open it, settle the zone, the time window and the
named metrics, then write the sections asked for in PCP's order, the records last.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import tzinfo

from purepcp.pmapi.archive import Archive, ArchiveError
from purepcp.pmapi.archive.reader import End
from purepcp.pmapi.errors import PM_ERR_NAME, PM_ERR_NONLEAF, PMError, pmErrStr
from purepcp.pmapi.options import warn_damaged_end
from purepcp.pmapi.timewindow import (
    NSEC,
    PM_MAX_TIME_T,
    TimeParseError,
    new_zone,
    parse_time_window,
    tzinfo_for,
)
from purepcp.pmapi.values import Timestamp

from .clock import Clock
from .descs import descs_text
from .files import open_archive
from .helptext import helptext_text
from .indoms import disk_indoms_text, indoms_text
from .label import label_text
from .labelsets import labelsets_text
from .metadata import Metadata
from .options import PROG, SECTION_LETTERS, Options
from .records import records_text
from .source import Source
from .tindex import temporal_index_text

#: the sections before the records, in PCP's order, each with the letter that asks for it
SECTIONS: tuple[tuple[str, Callable[[Source], str]], ...] = (
    ("l", label_text),
    ("d", descs_text),
    ("e", labelsets_text),
    ("h", helptext_text),
    ("I", disk_indoms_text),
    ("i", indoms_text),
    ("t", temporal_index_text),
)


def dump(o: Options) -> int:
    """Dump the archive the first operand names, as O asks (the records by default)."""
    if not o.flags & SECTION_LETTERS:
        o.flags.add("m")
    name = o.operands.pop(0)
    if "," in name or os.path.isdir(name):
        sys.stderr.write(f"{PROG}: Multiple archives are not supported\n")
        return 1
    archive, meta = _open(name)
    with archive:
        end = archive.find_end()
        zone = _zone(o, archive)
        window = _window(o, name, archive, end, zone)
        pmids = _lookup_metrics(o, archive)
        clock = Clock(zone, archive.version, archive.label.start, o.xflag)
        pmns = o.namespace if o.namespace is not None else archive.pmns
        src = Source(archive, meta, o, clock, end, pmns)
        for letter, section in SECTIONS:
            if letter in o.flags:
                sys.stdout.write(section(src))
        if "m" in o.flags:
            _write_records(src, pmids, window)
    return 0


def _write_records(src: Source, pmids: list[int], window: tuple[Timestamp, Timestamp]) -> None:
    """The records, each written as it is read: damage ends the dump after those before it."""
    try:
        for text in records_text(src, pmids, window):
            sys.stdout.write(text)
    except PMError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{PROG}: pmFetch: {exc}\n")
        raise SystemExit(1) from None


def _open(name: str) -> tuple[Archive, Metadata]:
    """The archive and its metadata, or the one-line complaint pmNewContext's failure gets."""
    try:
        archive = open_archive(name)
    except PMError as exc:
        # PCP's words, then (ours) the file and offset of the damage when there is some
        why = str(exc) if isinstance(exc, ArchiveError) else pmErrStr(exc.code)
        sys.stderr.write(f'{PROG}: Cannot open archive "{name}": {why}\n')
        raise SystemExit(1) from None
    if archive.label.features & ~(1 << 31):
        sys.stderr.write(
            f"{PROG}: Warning: unsupported feature bits, other errors may follow ...\n"
        )
    return archive, Metadata(archive)


def _zone(o: Options, archive: Archive) -> tzinfo:
    """The reporting zone (-Z, -z or local), with the note PCP prints on stdout."""
    if o.hostzone:
        sys.stdout.write(
            f'Note: timezone set to local timezone of host "{archive.label.hostname}" '
            "from archive\n\n"
        )
        return new_zone(archive.label.timezone)
    if o.timezone is not None:
        sys.stdout.write(f'Note: timezone set to "TZ={o.timezone}"\n\n')
        return new_zone(o.timezone)
    return tzinfo_for(None)


def _window(
    o: Options, name: str, archive: Archive, end: End | None, zone: tzinfo
) -> tuple[Timestamp, Timestamp]:
    """The time window -S and -T give within the archive (its whole span by default)."""
    if end is None:
        warn_damaged_end(PROG, name)
    try:
        w = parse_time_window(
            o.start,
            o.finish,
            None,
            None,
            archive.label.start,
            end.stamp if end else None,
            tz=zone,
        )
    except TimeParseError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{PROG}: invalid time window.\n{exc.errmsg}\n")
        raise SystemExit(1) from None
    finish_ns = min(w.end_ns, PM_MAX_TIME_T * NSEC)
    return (
        Timestamp(w.start_ns // NSEC, w.start_ns % NSEC),
        Timestamp(finish_ns // NSEC, finish_ns % NSEC),
    )


def _lookup_metrics(o: Options, archive: Archive) -> list[int]:
    """The PMIDs the metric-name arguments name (a non-leaf names every leaf below it)."""
    if not o.operands:
        return []
    pmns = o.namespace if o.namespace is not None else archive.pmns
    pmids: list[int] = []
    for name in o.operands:
        try:
            pmids.append(pmns.lookup(name))
            continue
        except PMError as exc:
            code = exc.code if exc.code in (PM_ERR_NONLEAF, PM_ERR_NAME) else PM_ERR_NAME
        if code == PM_ERR_NONLEAF:
            pmids += [pmns.lookup(leaf) for leaf in pmns.traverse(name)]
        else:
            sys.stderr.write(f"{PROG}: pmLookupName({name}): {pmErrStr(code)}\n")
    if not pmids:
        sys.stderr.write("No metric names can be translated, dump abandoned\n")
        raise SystemExit(1)
    return pmids
