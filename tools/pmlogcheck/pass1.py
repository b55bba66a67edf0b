"""Pass 1: the temporal index, entry by entry, in PCP's words.

Each entry's time must be sane, not before the label's nor the entry before it; its
volume must not go down (and its file should exist); its offsets must lie after the
label and within their files, and not go down within a volume.  A bad entry marks the
index bad, so pass 3 does not position by it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from purepcp.pmapi.archive.reader import find_file
from purepcp.pmapi.values import Timestamp

from .pass0 import read_whole
from .state import FileState, Run, Sts, err

if TYPE_CHECKING:
    from purepcp.pmapi.archive import Archive, IndexEntry


def _size(path: str | None) -> int:
    """A file's size as __pmFopen and fstat give it (decompressed), -1 if it will not open."""
    if path is None:
        return -1
    try:
        return len(read_whole(path))
    except OSError:
        return -1


def _stamp(entry: IndexEntry) -> str:
    return f"{entry.stamp.sec}.{entry.stamp.nsec:09d}"


def pass1(run: Run, archive: Archive, archname: str) -> Sts:
    """Pass 1 over ARCHIVE's index (ARCHNAME: the archive as messages name it)."""
    if run.vflag:
        err(f"{archname}: start pass1 (check temporal index)\n")
    index = archive.index
    if not index:
        err(f"{archname}: warning temporal index is missing\n")
        return Sts.WARNING
    meta_size = _size(archive.meta_path)
    if meta_size == -1:
        err(f"pmlogcheck: pass1: botch: cannot open metadata file ({archname}.meta)\n")
        raise SystemExit(1)
    label_size = archive.label_bytes
    golden = run.golden_start
    last: IndexEntry | None = None
    log_size = -1
    bad = False

    def say(i: int, text: str) -> None:
        nonlocal bad
        err(f"{archname}.index[entry {i}]: {text}\n")
        bad = True

    for i, tip in enumerate(index, start=1):
        if tip.vol < 0:
            say(i, f"illegal negative volume number {tip.vol}")
            log_size = -1
        elif last is None or tip.vol != last.vol:
            log_size = _size(find_file(archname, f".{tip.vol}"))
            if log_size == -1:
                err(f"{archname}.{tip.vol}: file missing for log volume {tip.vol}\n")
        sec, nsec = tip.stamp.sec, tip.stamp.nsec
        if sec < 0 or nsec < 0:
            say(i, f"illegal negative timestamp value ({sec} sec, {nsec} nsec)")
        if nsec > 999999999:
            say(i, f"illegal timestamp nsec value ({sec} sec, {nsec} nsec)")
        if tip.meta_offset < label_size:
            say(
                i,
                f"offset to metadata ({tip.meta_offset}) before end of label record ({label_size})",
            )
        if meta_size != -1 and tip.meta_offset > meta_size:
            say(i, f"offset to metadata ({tip.meta_offset}) past end of file ({meta_size})")
        if tip.log_offset < label_size:
            say(i, f"offset to log ({tip.log_offset}) before end of label record ({label_size})")
        if log_size != -1 and tip.log_offset > log_size:
            say(i, f"offset to log ({tip.log_offset}) past end of file ({log_size})")
        if golden.sec != 0 and _sub(tip.stamp, golden) < 0:
            say(
                i,
                f"timestamp ({_stamp(tip)}) less than log label timestamp "
                f"({golden.sec}.{golden.nsec:09d})",
            )
        if last is not None:
            _against_last(i, tip, last, say)
        last = tip
    if bad:
        run.index_state = FileState.BAD
    return Sts.OK


def _sub(a: Timestamp, b: Timestamp) -> int:
    """The sign of __pmTimestampSub(A, B)."""
    return (a.sec - b.sec) * 1_000_000_000 + (a.nsec - b.nsec)


def _against_last(
    i: int, tip: IndexEntry, last: IndexEntry, say: Callable[[int, str], None]
) -> None:
    if _sub(tip.stamp, last.stamp) < 0:
        say(
            i,
            f"timestamp ({_stamp(tip)}) went backwards in time "
            f"(from {_stamp(last)} at [entry {i - 1}])",
        )
    if tip.vol < last.vol:
        say(i, f"volume number ({tip.vol}) decreased (from {last.vol} at [entry {i - 1}])")
    if tip.vol == last.vol and tip.meta_offset < last.meta_offset:
        say(
            i,
            f"offset to metadata ({tip.meta_offset}) decreased "
            f"(from {last.meta_offset} at [entry {i - 1}])",
        )
    if tip.vol == last.vol and tip.log_offset < last.log_offset:
        say(
            i,
            f"offset to log ({tip.log_offset}) decreased "
            f"(from {last.log_offset} at [entry {i - 1}])",
        )
