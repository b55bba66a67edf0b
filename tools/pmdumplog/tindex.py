"""pmdumplog -t: the temporal index, with the integrity checks PCP makes of each entry."""

from __future__ import annotations

from purepcp.pmapi.archive.format import PM_LOG_VERS03, IndexEntry

from .clock import Clock, ts_cmp
from .files import stat_size
from .source import Source


def temporal_index_text(src: Source) -> str:
    """dumpTI: each entry, and the integrity errors and warnings PCP checks for."""
    xflag = src.o.xflag
    tabs = ("\t\t" if xflag else "") + ("\t\t" if xflag >= 2 else "")
    tabs += "\t" if src.archive.version == PM_LOG_VERS03 else ""
    parts = ["\nTemporal Index\n", f"{tabs}\t\tLog Vol    end(meta)     end(log)\n"]
    base = src.archive.base
    meta_size: int | None = -1
    log_size: int | None = -1
    last = None
    for i, e in enumerate(src.archive.index):
        parts.append(
            f"{src.clock.stamp(e.stamp)}\t  {e.vol:5d}  {e.meta_offset:11d}  {e.log_offset:11d}\n"
        )
        if i == 0:
            meta_size = stat_size(base + ".meta")
        if last is None or e.vol != last.vol:
            log_size = stat_size(f"{base}.{e.vol}")
            if log_size is None:
                parts.append(f"\t\tWarning: file missing for log volume {e.vol}\n")
        parts += _index_errors(src.clock, e, last, meta_size, log_size)
        last = e
    return "".join(parts)


def _index_errors(
    clock: Clock,
    e: IndexEntry,
    last: IndexEntry | None,
    meta_size: int | None,
    log_size: int | None,
) -> list[str]:
    """The errors PCP reports for entry E after entry LAST, given the files' sizes."""
    errs = []
    if e.stamp.sec < 0 or not 0 <= e.stamp.nsec <= 999999999:
        errs.append(
            f"\t\tError: illegal timestamp value ({e.stamp.sec} sec, {e.stamp.nsec} nsec)\n"
        )
    if meta_size not in (None, -1) and e.meta_offset > meta_size:
        errs.append(f"\t\tError: offset to meta file past end of file ({meta_size})\n")
    if log_size not in (None, -1) and e.log_offset > log_size:
        errs.append(f"\t\tError: offset to log file past end of file ({log_size})\n")
    if last is not None:
        if ts_cmp(e.stamp, last.stamp) < 0:
            errs.append(
                "\t\tError: timestamp went backwards in time "
                f"{clock.hms(last.stamp)} -> {clock.hms(e.stamp)}\n"
            )
        if e.vol < last.vol:
            errs.append("\t\tError: volume number decreased\n")
        if e.vol == last.vol and e.meta_offset < last.meta_offset:
            errs.append("\t\tError: offset to meta file decreased\n")
        if e.vol == last.vol and e.log_offset < last.log_offset:
            errs.append("\t\tError: offset to log file decreased\n")
    return errs
