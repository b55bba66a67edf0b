"""One pmlogreduce run: the input archive replayed at the interval into a new archive.

Each step: the values interpolated at the step's time (pmFetch in PM_MODE_INTERP);
the scan of the input's records up to that time (scan.py: which metric-instances were
observed, and the <mark>s, copied as met); the rewrite (instances observed in the
interval, or met for the first time; 32-bit counters as 64-bit); the instance domains
that changed; the record; and a temporal index entry when libpcp's rules want one.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import sys
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_EOL, PMError, pmErrStr
from purepcp.pmapi.ids import PM_INDOM_NULL
from purepcp.pmapi.timewindow import pm_ctime
from purepcp.pmapi.types import PMSem, PMType, pmTypeStr
from purepcp.pmapi.values import Result, Timestamp, ValueSet

from .options import PROG, USEC, Options

if TYPE_CHECKING:
    from purepcp.pmapi.archive.context import ArchiveContext
    from purepcp.pmapi.archive.writer import ArchiveWriter

#: types that cannot be reduced (passed over, with a warning)
SKIPPED = frozenset(
    int(t) for t in (PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_AGGREGATE_STATIC,
                     PMType.PM_TYPE_EVENT, PMType.PM_TYPE_HIGHRES_EVENT)
)  # fmt: skip
#: counters written wider: 32-bit types become their 64-bit kin
WIDER = {int(PMType.PM_TYPE_32): int(PMType.PM_TYPE_64),
         int(PMType.PM_TYPE_U32): int(PMType.PM_TYPE_U64)}  # fmt: skip
FLUSH = 100_000


@dataclass
class Metric:
    """A metric of the input (metric_t): its descriptors in and out, how its values go
    (normal, rewritten wider, skipped) and its instances' scan state."""

    pmid: int
    name: str
    idesc: Desc
    odesc: Desc
    mode: str  # "normal", "rewrite" or "skip"
    seen: dict[int, bool] = field(default_factory=dict)  # inst: V_INIT still set
    fresh: set[int] = field(default_factory=set)  # insts seen in this interval


class Failed(Exception):
    """A failure after the output was created: "Archive ... not created." follows."""


#: what goes to stdout: held back, as C's buffered stdout holds it, until the run ends
NOTES: list[str] = []


def run(o: Options) -> int:
    NOTES.clear()
    try:
        return _run(o)
    finally:
        sys.stderr.flush()
        sys.stdout.write("".join(NOTES))
        sys.stdout.flush()


def _run(o: Options) -> int:
    ctx = _open(o)
    archive = ctx.archive
    label = archive.label
    end = _end(ctx, o)
    zone = _zone(o, ctx)
    start_us, end_us = _window(o, ctx, end, zone)
    from purepcp.pmapi.archive.context import PM_MODE_INTERP

    start = Timestamp(start_us // USEC, start_us % USEC * 1000)
    if _traced():
        sys.stderr.write(f"Start time: {pm_ctime(start, zone)}\n")
        sys.stderr.write(f"End time: {pm_ctime(Timestamp(end_us // USEC, 0), zone)}\n")
    ctx.set_mode(PM_MODE_INTERP, start, o.interval_us * 1000)
    oname = o.operands[-1]
    writer = _create(oname, label, start)
    try:
        _reduce(o, ctx, writer, end_us)
    except Failed:
        writer.close()
        sys.stderr.write(f'Archive "{oname}" not created.\n')
        for suffix in (".0", ".meta", ".index"):
            with contextlib.suppress(OSError):
                os.unlink(oname + suffix)
        return 1
    writer.close()
    return 0


def _open(o: Options) -> ArchiveContext:
    from purepcp.pmapi.archive.context import ArchiveContext

    name = o.operands[0]
    try:
        return ArchiveContext(name)
    except PMError as exc:
        sys.stderr.write(
            f'{PROG}: Error: cannot open archive "{name}" (ctx_a): {pmErrStr(exc.code)}\n'
        )
        raise SystemExit(1) from None


def _end(ctx: ArchiveContext, o: Options) -> Timestamp:
    from purepcp.pmapi.archive.multi import end_of
    from purepcp.pmapi.errors import PM_ERR_LOGREC

    end = end_of(ctx.archive)
    if end is None:
        sys.stderr.write(
            f"{PROG}: Error: cannot get end of archive ({o.operands[0]}): "
            f"{pmErrStr(PM_ERR_LOGREC)}\n"
        )
        raise SystemExit(1)
    return end


def _zone(o: Options, ctx: ArchiveContext) -> tzinfo:
    from purepcp.pmapi.timewindow import new_zone, tzinfo_for

    label = ctx.archive.label
    if o.hostzone:
        zone = new_zone(label.timezone)
        NOTES.append(
            f'Note: timezone set to local timezone of host "{label.hostname}" from archive\n\n'
        )
        return zone
    if o.timezone is not None:
        zone = new_zone(o.timezone)
        NOTES.append(f'Note: timezone set to "TZ={o.timezone}"\n\n')
        return zone
    return tzinfo_for(None)


def _window(o: Options, ctx: ArchiveContext, end: Timestamp, zone: tzinfo) -> tuple[int, int]:
    """pmParseTimeWindow over the archive's span, as timevals (microseconds)."""
    from purepcp.pmapi.timewindow import TimeParseError, parse_time_window

    label = ctx.archive.label
    first = Timestamp(label.start.sec, label.start.nsec // 1000 * 1000)
    last = Timestamp(end.sec, end.nsec // 1000 * 1000)
    try:
        w = parse_time_window(o.start, o.finish, o.align, None, first, last, tz=zone)
    except TimeParseError as exc:
        sys.stderr.write(f"{PROG}: Invalid time window specified: {exc.errmsg}")
        raise SystemExit(1) from None
    return w.start_ns // 1000, w.end_ns // 1000


def _create(oname: str, label, start: Timestamp) -> ArchiveWriter:
    from purepcp.pmapi.archive.writer import ArchiveWriter

    try:
        return ArchiveWriter(oname, hostname=label.hostname, timezone=label.timezone,
                             start=start, version=label.version)  # fmt: skip
    except PMError as exc:
        sys.stderr.write(f"{PROG}: Error: __pmLogCreate: {pmErrStr(exc.code)}\n")
        raise SystemExit(1) from None


def _metrics(ctx: ArchiveContext, writer: ArchiveWriter) -> list[Metric]:
    """dometric for every name, in namespace order: the fetch list and output metadata."""
    metrics: list[Metric] = []
    known: set[int] = set()
    indoms: dict[int, int] = {}  # (the trace's address of each domain's record)
    for name in ctx.pmns.traverse(""):
        pmid = ctx.lookup_name(name)
        idesc = ctx.lookup_desc(pmid)
        if idesc.type in SKIPPED:
            sys.stderr.write(f"{PROG}: {name}: Warning: skipping {pmTypeStr(idesc.type)} metric\n")
            metrics.append(Metric(pmid, name, idesc, idesc, "skip"))
            continue
        if pmid in known:
            continue
        known.add(pmid)
        mode, odesc = "normal", idesc
        if idesc.sem == PMSem.PM_SEM_COUNTER and idesc.type in WIDER:
            from dataclasses import replace

            mode, odesc = "rewrite", replace(idesc, type=WIDER[idesc.type])
        names = ctx.pmns.names(pmid)
        if _traced():
            sys.stderr.write(f'metric: "{" or ".join(names)}" ({_pmid_str(pmid)})\n')
            sys.stderr.write(f"input descriptor:\n{idesc.describe()}\n")
            sys.stderr.write(f"output descriptor (added to archive):\n{odesc.describe()}\n")
        writer.put_desc(odesc, names)
        metrics.append(Metric(pmid, name, idesc, odesc, mode))
        if _traced() and idesc.indom != PM_INDOM_NULL:
            shared = indoms.setdefault(idesc.indom, 0x55D0C0DE0000 + 0x40 * len(indoms))
            sys.stderr.write(f"    indom {_indom_str(idesc.indom)} -> ({shared:#x})\n")
    return metrics


def _traced() -> bool:
    """-D appl0: the set-up and metadata trace."""
    from purepcp.pmapi import debug

    return debug.on("appl0")


class Scanner:
    """doscan: the input's records in order, up to each step's time; <mark>s are copied
    to the output as met (a <mark> just past a step is met, and copied, again next time)."""

    def __init__(self, archive, writer: ArchiveWriter, metrics: list[Metric]) -> None:
        self.records = list(_all_records(archive))
        self.stamps = [r[0] for r in self.records]
        self.writer = writer
        self.by_pmid = {m.pmid: m for m in metrics if m.mode != "skip"}
        self.last_ns = 0
        self.at = 0

    def scan(self, end_ns: int) -> None:
        for m in self.by_pmid.values():
            m.fresh.clear()
        i = self.at
        while i < len(self.records):
            stamp, values = self.records[i]
            if values is None:
                self.writer.put_mark(Timestamp.from_ns(stamp))
            if stamp > end_ns:
                self.last_ns = stamp
                break
            for pmid, insts in values or ():
                m = self.by_pmid.get(pmid)
                if m is None:
                    continue
                for inst in insts:
                    m.seen.setdefault(inst, True)
                    m.fresh.add(inst)
            i += 1
        resume = self.last_ns // 1000 * 1000  # (pmSetMode takes a timeval)
        self.at = (
            bisect.bisect_left(self.stamps, resume) if self.stamps == sorted(self.stamps) else 0
        )


def _all_records(archive):
    """(time ns, [(pmid, insts)] or None for a <mark>) for every record, in order."""
    from purepcp.pmapi.archive.reader import Archive

    walk = (
        archive.records()
        if isinstance(archive, Archive)
        else archive.records_from(archive.label.start)
    )
    for rec in walk:
        if rec.is_mark:
            yield rec.stamp.ns, None
        else:
            yield (
                rec.stamp.ns,
                [(vs.pmid, list(vs.insts)) for vs in rec.result.vsets if vs.numval > 0],
            )


def _rewrite(result: Result, metrics: list[Metric]) -> Result | None:
    """The output record: each metric's instances observed in the interval (or new)."""
    out: list[ValueSet] = []
    for m, vs in zip(metrics, result.vsets, strict=True):
        if m.mode == "skip":
            continue
        if vs.numval <= 0:
            out.append(vs)
            continue
        keep: list[int] = []
        for k, inst in enumerate(vs.insts):
            init = m.seen.get(inst)
            if init is None:
                sys.stderr.write(
                    f"{PROG}: rewrite: Arrgh: cannot find inst {inst} in value_t list for "
                    f"{m.name} ({_pmid_str(m.pmid)})\n"
                )
                raise SystemExit(1)
            if init or inst in m.fresh:
                keep.append(k)
                m.seen[inst] = False
        if not keep:
            continue
        if m.mode == "rewrite":
            atoms = vs.atoms(m.idesc.type)
            pairs = [(vs.insts[k], int(atoms[k])) for k in keep]
            out.append(ValueSet.of_atoms(m.pmid, m.odesc.type, pairs))
        else:
            chosen = {vs.insts[k] for k in keep}
            out.append(vs.subset(chosen.__contains__))
    if not out:
        return None
    return Result(result.timestamp, tuple(out))


def _pmid_str(pmid: int) -> str:
    from purepcp.pmapi.ids import pmIDStr

    return pmIDStr(pmid)


def _reduce(o: Options, ctx: ArchiveContext, writer: ArchiveWriter, end_us: int) -> None:
    metrics = _metrics(ctx, writer)
    pmids = [m.pmid for m in metrics]
    by_pmid = {m.pmid: m for m in metrics}
    scanner = Scanner(ctx.archive, writer, metrics)
    indoms: dict[int, tuple[int, ...]] = {}
    written = 0
    flushsize = FLUSH
    current = writer.label.start
    while o.samples == -1 or written < o.samples:
        try:
            fetched = ctx.fetch(pmids)
        except PMError as exc:
            if exc.code == PM_ERR_EOL:
                break
            sys.stderr.write(f"{PROG}: Error: pmFetch failed: {pmErrStr(exc.code)}\n")
            raise SystemExit(1) from None
        result = fetched.result
        stamp = result.timestamp
        if stamp.ns > end_us * 1000:  # (past -T's end)
            break
        old_meta = writer.meta_offset
        needti = written == 0
        scanner.scan(stamp.ns)
        out = _rewrite(result, metrics)
        if out is None:
            continue
        if o.volsamples > 0 and written > 0 and written % o.volsamples == 0:
            writer.new_volume(stamp, index=False)
            sys.stderr.write(f"{PROG}: New log volume {writer.vol}, at {_clock(stamp, writer)}\n")
            needti = True
            flushsize = FLUSH
        current = stamp
        if _indoms(ctx, writer, out, by_pmid, indoms, current):
            needti = True
        old_log = writer.log_offset
        writer.put_result(out)
        written += 1
        if writer.log_offset > flushsize:
            needti = True
        if needti:
            writer.put_index(current, old_meta, old_log)
        if writer.log_offset > flushsize:
            flushsize = writer.log_offset + FLUSH
    writer.put_index(current)


def _clock(stamp: Timestamp, writer: ArchiveWriter) -> str:
    from purepcp.pmapi.timewindow import format_stamp

    return format_stamp(stamp, None, digits=9)  # (__pmPrintTimestamp: always nanoseconds)


def _indoms(
    ctx: ArchiveContext,
    writer: ArchiveWriter,
    out: Result,
    by_pmid: dict[int, Metric],
    indoms: dict[int, tuple[int, ...]],
    current: Timestamp,
) -> bool:
    """doindom: each instance domain of the record, written when its members changed."""
    wrote = False
    for vs in out.vsets:
        if vs.numval <= 0:
            continue
        indom = by_pmid[vs.pmid].idesc.indom
        if indom == PM_INDOM_NULL:
            continue
        try:
            pairs = ctx.instances(indom)
        except PMError as exc:
            sys.stderr.write(
                f"{PROG}: doindom: pmGetInDom ({_indom_str(indom)}) failed: {pmErrStr(exc.code)}\n"
            )
            raise Failed from None
        insts = tuple(i for i, _ in pairs)
        if indoms.get(indom) == insts:
            continue
        if _traced():
            sys.stderr.write(
                f"Add metadata: indom {_indom_str(indom)} for metric {_pmid_str(vs.pmid)}\n"
            )
        indoms[indom] = insts
        names = [n for _, n in pairs]
        wrote |= writer.put_indom(current, indom, insts, names, delta=writer.version == 3)
    return wrote


def _indom_str(indom: int) -> str:
    from purepcp.pmapi.ids import pmInDomStr

    return pmInDomStr(indom)
