"""pmdumplog -m: the records in the time window, forwards or (-r) backwards, each one
picked down to the named metrics' value sets."""

from __future__ import annotations

from collections.abc import Iterator

from purepcp.pmapi.values import Result, Timestamp, ValueSet

from .clock import ts_cmp
from .source import Source
from .values import RecordText


def records_text(
    src: Source, pmids: list[int], window: tuple[Timestamp, Timestamp]
) -> Iterator[str]:
    """The text of each record in the time window, one record at a time; each one picked
    down to PMIDS when metrics were named.  Damage raises the reader's PMError.
    """
    backwards = "r" in src.o.flags
    start, finish = window
    bounded = src.o.start is not None or src.o.finish is not None
    if backwards:
        done = start if bounded else Timestamp(0, 0)
    else:
        done = finish if bounded else Timestamp((1 << 31) - 1, 0)
    writer = RecordText(src)
    first = True
    for result in _fetches(src, finish if backwards else start, backwards):
        picked = _pick(result, pmids, "M" in src.o.flags)
        if picked is None:
            continue
        if first and backwards:
            first = False
            when = src.clock.ctime(picked.timestamp.sec)
            yield f"\nLog finished at {when} - dump in reverse order\n"
        if ts_cmp(picked.timestamp, done) * (-1 if backwards else 1) > 0:
            return
        yield "\n" + writer.text(picked)


def _fetches(src: Source, origin: Timestamp, backwards: bool) -> Iterator[Result]:
    """__pmLogFetch, record by record: nothing before the origin (after it, backwards),
    and the origin follows each record returned.
    """
    archive, end = src.archive, src.end
    if backwards:
        if end is not None:
            source = archive.records(end.vol, end.offset, backwards=True)
        else:
            source = archive.records(backwards=True)
    else:
        source = archive.records_from(origin)
    sign = -1 if backwards else 1
    for rec in source:
        if ts_cmp(rec.stamp, origin) * sign < 0:
            continue
        origin = rec.stamp
        yield rec.result


def _pick(result: Result, pmids: list[int], marks: bool) -> Result | None:
    """The value sets of PMIDS from RESULT in PMIDS' order (all of them without names,
    a mark with -M); None when nothing in it is wanted.
    """
    if not pmids or (not result.vsets and marks):
        return result
    by_pmid: dict[int, ValueSet] = {}
    for vset in result.vsets:
        if vset.pmid in pmids and vset.pmid not in by_pmid:
            by_pmid[vset.pmid] = vset
    chosen = [by_pmid.pop(p) for p in pmids if p in by_pmid]
    if not chosen:
        return None
    return Result(result.timestamp, tuple(chosen))
