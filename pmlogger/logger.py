"""The logging loop: groups of metrics fetched at their intervals and written to an archive.

A Logger owns a PMAPI context and an ArchiveWriter.  The clauses of the configuration
with one state and interval make one group (PCP's task), fetched on its own schedule;
its metrics are bundled into fetch groups as libpcp's optfetch bundles PCP's, and each
fetch group's fetch goes out as one record.  Before a metric's first value the
archive gets its descriptor, names and help text, and before any value of an instance
domain whose membership changed, a new instance-domain record (with an index entry).
A metric that cannot be fetched is logged with its error code, as PCP's; when
pmcd goes away the logger waits, reconnects, and writes a <mark> so no reader
interpolates across the gap.  A derived metric is logged under its PMID with bit 2048 of
the cluster set, as PCP's pmlogger logs it, so that on replay it is one of the archive's
metrics like any other, and does not clash with derived metrics defined again.
"""

from __future__ import annotations

import dataclasses
import heapq
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from purepcp.pmapi.archive import ArchiveWriter, encode_record
from purepcp.pmapi.archive.format import (
    PM_TEXT_HELP,
    PM_TEXT_INDOM,
    PM_TEXT_ONELINE,
    PM_TEXT_PMID,
    LabelRecord,
)
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_INDOM, PM_ERR_NAME, PM_ERR_PMID, PMError
from purepcp.pmapi.ids import (
    DYNAMIC_PMID,
    PM_ID_NULL,
    PM_IN_NULL,
    PM_INDOM_NULL,
    pmID_domain,
    pmIDStr,
)
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
)
from purepcp.pmapi.pdu.constants import PMCDState
from purepcp.pmapi.pdu.result_layout import ColumnValueSets, ResultLayout
from purepcp.pmapi.values import Result, Timestamp

from . import logue
from .config import LogGroup, MetricSpec
from .optfetch import FetchGroup, OptFetch, Request, rank_of

if TYPE_CHECKING:
    from purepcp.pmapi.context import Context

    from .namecache import NameCache

NSEC = 1_000_000_000
#: How soon a task pmlc starts is first logged (seconds): at once, as PCP's (whose timer
#: fires 100 microseconds later, before pmlc's next request comes).
FIRST_DELAY = 0.0
#: Bytes of records between index entries: PCP's pmlogger writes one when its volume has
#: grown this much past where the last entry left it (callback.c's flushsize), so a
#: reader's seek reads little; the first threshold is this many bytes into the volume.
INDEX_SPACING = 100_000
#: The cluster bit pmlogger sets in a derived metric's PMID (callback.c's SET_DERIVED_LOGGED).
DERIVED_LOGGED = 2048 << 10


def is_derived(pmid: int) -> bool:
    """libpcp's IS_DERIVED: a derived metric's PMID (domain DYNAMIC_PMID, item not 0),
    not one already marked as logged."""
    return pmid >> 22 & 0x1FF == DYNAMIC_PMID and not pmid & DERIVED_LOGGED and pmid & 0x3FF != 0


def logged_pmid(pmid: int) -> int:
    """The PMID pmlogger writes for PMID: a derived metric's with bit 2048 of its cluster
    set (so that on replay it does not look derived), any other as it is."""
    return pmid | DERIVED_LOGGED if is_derived(pmid) else pmid


def as_logged(result: Result) -> Result:
    """RESULT with its derived metrics' PMIDs as pmlogger writes them (logged_pmid)."""
    vsets = result.vsets
    if type(vsets) is ColumnValueSets or not any(is_derived(vs.pmid) for vs in vsets):
        return result  # (a layout's sets come from pmcd: never a derived metric)
    marked = tuple(
        vs._replace(pmid=vs.pmid | DERIVED_LOGGED) if is_derived(vs.pmid) else vs for vs in vsets
    )
    return Result(result.timestamp, marked)


@dataclass
class Group:
    """A configured group (PCP's task), resolved: its PMIDs, interval, next due time, and
    its fetch groups (libpcp's optfetch)."""

    interval_ns: int | None  # None: once
    pmids: list[int]
    due: float = 0.0
    names: dict[int, str] = field(default_factory=dict)  # pmid -> the name it was found by
    indoms: dict[int, int] = field(default_factory=dict)  # pmid -> its instance domain
    reported: bool = False  # (-r: its record size has been reported)
    plan: OptFetch = field(default_factory=OptFetch)
    seen: set[str] = field(default_factory=set)  # leaf names taken (PCP's t_namelist)
    mandatory: bool = False  # (its logging state, as pmlc sees it)
    on: bool = True

    @property
    def fetches(self) -> list[FetchGroup]:
        """The fetch groups, in the order they are fetched (the newest first)."""
        return self.plan.groups

    def add(self, pmid: int, name: str, indom: int) -> None:
        """PMID (found as NAME, of INDOM) is one of the group's metrics."""
        if pmid not in self.pmids:
            self.pmids.append(pmid)
            self.names[pmid] = name
            self.indoms[pmid] = indom

    def report(self, size: int) -> str:
        """pmlogger -r's lines for this group: its metrics (fetch group by fetch group, a
        metric in two of them twice, as PCP's), and what logging them costs."""
        pmids = [p for fetch in self.fetches for p in fetch.pmids]
        names = [self.names.get(p, pmIDStr(p)) for p in pmids]
        if len(names) > 1:
            derived = sum(1 for p in self.pmids if is_derived(p))  # (PCP's t_dm)
            count = f"{len(names)} metrics" + (f", {derived} derived" if derived else "")
            head = f"\nGroup [{count}] {{\n" + "".join(f"\t{n}\n" for n in names) + "}"
        else:
            head = f"\nMetric {names[0]}"
        if self.interval_ns is None:
            return f"{head} logged once: {size} bytes\n"
        seconds = self.interval_ns / NSEC
        every = f"{int(seconds)}" if self.interval_ns % NSEC == 0 else f"{seconds:.3f}"
        per_day = size * 24 * 60 * 60 / (1024 * 1024 * seconds)
        return f"{head} logged every {every} sec: {size} bytes or {per_day:.2f} Mbytes/day\n"


class Logger:
    """Fetch the configured groups from CTX and write them with WRITER_FACTORY's writer."""

    def __init__(
        self,
        ctx: Context,
        groups: Sequence[LogGroup],
        default_interval_ms: int,
        make_writer: Callable[[Timestamp, logue.SourceFacts], ArchiveWriter],
        log: TextIO = sys.stderr,
        report: bool = False,
        debug: frozenset[str] = frozenset(),
        name_cache: NameCache | None = None,
    ) -> None:
        self.ctx = ctx
        self.log = log
        self.name_cache = name_cache  # -D appl6: PCP's name cache, for its lookups' trace
        #: -D optfetch,desperate: each task's fetch groups after each metric joins them
        self.trace_optfetch = {"optfetch", "desperate"} <= debug
        self.report = report  # -r: each group's record size, the first time it is logged
        self.make_writer = make_writer
        self.writer: ArchiveWriter | None = None
        #: PMID -> its place in the order PCP's pmlogger would describe it (optfetch)
        self.describe_rank: dict[int, int] = {}
        self._held: list[tuple[int, str]] | None = None  # warnings of the statement resolving
        self._last_insts: dict[int, frozenset[int]] = {}  # pmid -> instances last logged
        self._profile: tuple[tuple[int, tuple[int, ...]], ...] = ()  # the context's, as set
        self._indom_stamps: dict[int, Timestamp] = {}  # indom -> its last record's time
        self._spec_no: dict[int, int] = {}  # id(spec) -> its place in that statement
        self.tasks: list[Group] = []  # every task, logged or not (pmlc's view)
        #: pmid -> {inst: whether its last fetch had a value}, for what has been logged
        self.history: dict[int, dict[int, bool]] = {}
        self._history_settled: dict[int, object] = {}  # id(fetch group) -> its last layout
        self.schedule_changed = False  # (pmlc changed the tasks: run() reschedules)
        self.groups = self._resolve(groups, default_interval_ms)
        self.described: set[int] = set()
        self.texts_done: set[tuple[int, int]] = set()
        self.labels_done: set[tuple[int, int]] = set()
        self.records = 0
        #: the volume offset past which the next record gets an index entry (PCP keeps it
        #: across volumes and archives, as this does)
        self.index_at = INDEX_SPACING
        self.samples = 0
        self.need_mark = False
        self.last_stamp: Timestamp | None = None
        self._logue: tuple[str, str] | None = None  # (archive, host) once begin() has run
        self._settled: ResultLayout | None = None  # the last record's layout, if it had one

    # -- configuration ----------------------------------------------------------------------

    def _resolve(self, groups: Sequence[LogGroup], default_ms: int) -> list[Group]:
        """Names to PMIDs for every statement, warning about those that cannot be logged;
        the groups that log ("on", mandatory or advisory, as PCP logs both).

        PCP makes one task of the clauses with the same state and interval (gram.y's
        findtask), in the order they first appear, and starts the "once" tasks before the
        others; at start-up each task's fetch groups (pmlogger.optfetch) are described in
        turn: describe_rank is that order.
        """
        # (state, interval) -> a task; off and maybe ones are not logged, but pmlc sees them
        merged: dict[tuple[bool, str, int | None], Group] = {}
        for group in groups:
            on = group.state == "on"
            if group.once or not on:
                interval = None
            elif group.default_interval or group.interval_ms is None:
                interval = default_ms * 1_000_000
            else:
                interval = group.interval_ms * 1_000_000
            key = (group.mandatory, group.state, interval)
            if key not in merged:
                mandatory = group.mandatory and group.state != "maybe"
                merged[key] = Group(interval, [], mandatory=mandatory, on=on)
            g = merged[key]
            g.plan.tracing = self.trace_optfetch and on
            self._held = []
            try:
                self._resolve_statement(group, g, group.state == "on")
            finally:
                held, self._held = self._held, None
                for _, text in sorted(held, key=lambda h: h[0]):  # (in the statement's order)
                    self.log.write(text)
                self.log.flush()
        self.tasks = list(merged.values())  # (PCP's task list, in the configuration's order)
        # (the "once" tasks first: PCP starts them before the others)
        once_first = sorted(
            (g for g in merged.values() if g.on), key=lambda g: g.interval_ns is not None
        )
        tasks = [g for g in once_first if g.fetches]
        self.describe_rank = rank_of([[f.pmids for f in g.fetches] for g in tasks])
        return tasks

    def _resolve_statement(self, group: LogGroup, g: Group, on: bool) -> None:
        """One statement's metrics into G (into its fetch groups if ON): every name
        traversed, then every leaf named and described in one exchange each."""
        self._spec_no = {id(spec): k for k, spec in enumerate(group.metrics)}
        found = []  # (spec, its leaf names), each spec traversed in turn
        for spec in group.metrics:
            try:
                names = self.ctx.traverse(spec.name)
            except PMError as exc:
                self._trace_lookups(spec, g, [])
                self.not_logged(spec, spec.name, exc.message)
                continue
            self._trace_lookups(spec, g, names)
            if not names:
                self.not_logged(spec, spec.name, PMError(PM_ERR_NAME).message)
            found.append((spec, names))
        leaves = list(dict.fromkeys(name for _, names in found for name in names))
        try:
            pmids = [pmid for part in _parts(leaves) for pmid in self.ctx.lookup_names(part)]
            ids = dict(zip(leaves, pmids, strict=True))
            known = [pmid for pmid in ids.values() if pmid != PM_ID_NULL]
            descs = dict(zip(known, self.ctx.lookup_descs(known) if known else [], strict=True))
        except PMError as exc:
            for spec, _names in found:
                self.not_logged(spec, spec.name, exc.message)
            return
        for spec, names in found:
            for name in names:
                pmid = ids.get(name, PM_ID_NULL)
                if pmid == PM_ID_NULL:
                    reason = PMError(PM_ERR_NAME).message
                    text = f'Metric "{name}" is unknown ... not logged'
                    self.warn_at(spec, f"{text}\nReason: {reason}")
                    continue
                desc = descs.get(pmid)
                if desc is None:
                    reason = PMError(PM_ERR_PMID).message
                    text = f'Description unavailable for metric "{name}" ... not logged'
                    self.warn_at(spec, f"{text}\nReason: {reason}")
                    continue
                insts = None
                if spec.instances:
                    insts = self._instance_ids(spec, name, desc.indom)
                    if not insts:  # (none of its instances known: not logged, as PCP)
                        continue
                g.add(pmid, name, desc.indom)
                added = g.plan.request(Request(pmid, desc.indom, insts))
                if on and added:
                    self._trace_fetches(spec, g)

    def _instance_ids(self, spec: MetricSpec, name: str, indom: int) -> tuple[int, ...]:
        """The instances of SPEC's list that metric NAME (of INDOM) has, each checked with
        pmcd as PCP's pmlogger checks them; a warning for each one it does not have."""
        ids = []
        for item in spec.instances:
            try:
                if indom == PM_INDOM_NULL:  # (a singular metric has no instance to name)
                    raise PMError(PM_ERR_INDOM)
                if isinstance(item, int):
                    self.ctx.instance_name(indom, item)
                    inst = item
                else:
                    inst = self.ctx.instance_id(indom, item)
            except PMError:
                self.warn_at(spec, f'Instance "{item}" is not defined for the metric "{name}"')
                continue
            if inst not in ids:
                ids.append(inst)
        return tuple(ids)

    def _trace_lookups(self, spec: MetricSpec, g: Group, leaves: list[str]) -> None:
        """-D appl6: the name cache lookups PCP's pmlogger makes for SPEC (gram.y): none
        for a name its task has taken, two for a leaf found, else one for each leaf below
        (LEAVES) that the task has not taken."""
        cache = self.name_cache
        if cache is None or spec.name in g.seen:
            return
        found, line = cache.lookup(spec.name)
        lines = [line]
        if found:
            lines.append(line)
            g.seen.add(spec.name)
        else:
            for leaf in leaves:
                if leaf in g.seen:
                    continue
                found, line = cache.lookup(leaf)
                lines.append(line)
                if found or line.endswith("not in cache\n"):
                    g.seen.add(leaf)
        self.tell_at(spec, "".join(lines))

    def _trace_fetches(self, spec: MetricSpec, g: Group) -> None:
        """-D optfetch,desperate: libpcp's bundling of the metric just added, then the
        task's fetch groups, as PCP's pmlogger (gram.y) and libpcp's optfetch print them."""
        if not self.trace_optfetch:
            return
        text = "".join(g.plan.trace) + f"Task 0x{id(g):x} -> t_fetch ...\n" + g.plan.dump()
        g.plan.trace.clear()
        self.tell_at(spec, text)

    def not_logged(self, spec: MetricSpec, name: str, reason: str) -> None:
        """pmlogger's warning for a configured name that cannot be logged, and why."""
        self.warn_at(
            spec,
            f'Problem with lookup for metric "{name}" ... logging not activated\nReason: {reason}',
        )

    def warn_at(self, spec: MetricSpec, text: str) -> None:
        """pmlogger's warning about the configuration at SPEC: where, then TEXT (gram.y's
        yywarn)."""
        file, line = spec.where
        self.tell_at(spec, f"Warning [{file}, line {line}]\n{text}\n")

    def tell_at(self, spec: MetricSpec, message: str) -> None:
        """MESSAGE for the log about the configuration at SPEC (while a statement resolves,
        told after it, in the statement's order)."""
        if self._held is not None:
            self._held.append((self._spec_no.get(id(spec), 0), message))
            return
        self.log.write(message)
        self.log.flush()

    def warn(self, text: str) -> None:
        self.log.write(f"Warning: {text}\n")
        self.log.flush()

    # -- one sample ---------------------------------------------------------------------------

    def sample(self, group: Group) -> bool:
        """Fetch GROUP once, a fetch and a record for each of its fetch groups (the newest
        first, as PCP's); False if pmcd did not answer one.  Either way it is a sample
        (-s counts it), as PCP's pmlogger counts its callbacks."""
        sizes = []
        failed = False
        for fetch in group.fetches:
            try:
                self._use_profile(fetch.profile())
                fetched = self.ctx.fetch(fetch.pmids)
            except PMError as exc:
                if not self.need_mark:
                    self.warn(f"fetch failed: {exc.message}; waiting for pmcd to return")
                self.need_mark = True
                failed = True
                continue  # (the next fetch group is tried, as PCP's callback does)
            if getattr(self.ctx.source, "fetch_news", 0) & PMCDState.PMCD_ADD_AGENT:
                self._agent_added()
            # (as it came: a metric that could not be fetched is logged with its error)
            self.write(fetched.result, fetched.descs, self.describe_rank)
            self._note_history(fetch, fetched.result)
            if self.report and not group.reported and self.writer is not None:
                sizes.append(len(encode_record(fetched.result, self.writer.version)))
        self.samples += 1  # (a sample whether pmcd answered or not: PCP's exit_samples)
        if sizes:  # -r: the first time the group is logged, the size of its records
            group.reported = True
            self.log.write(group.report(sum(sizes)))
            self.log.flush()
        return not failed

    def _agent_added(self) -> None:
        """pmcd started an agent (PMCD_ADD_AGENT came with the fetch): a gap in its
        metrics' values, maybe counters reset, so a <mark> goes first, as PCP's myFetch
        writes one (none before the first record)."""
        w = self.writer
        if w is not None and self.last_stamp is not None and not self.need_mark:
            w.put_mark(_after(self.last_stamp))

    def _use_profile(self, profile: tuple[tuple[int, tuple[int, ...]], ...]) -> None:
        """Make PROFILE the context's (sent with the next fetch) unless it is already."""
        if profile == self._profile:
            return
        self.ctx.profile.add(PM_INDOM_NULL)  # (everything, and no instance domain's entry)
        for indom, insts in profile:
            self.ctx.profile.delete(indom)
            self.ctx.profile.add(indom, insts)
        self._profile = profile

    # -- prologue and epilogue ------------------------------------------------------------------

    def begin(self, archive: str, host: str, facts: logue.SourceFacts | None = None) -> None:
        """Create the archive and write the prologue record, as PCP's pmlogger does.

        The archive starts at pmcd's time and is labelled with pmcd's hostname and
        timezone (when pmcd has a pmcd agent to ask; this machine's otherwise).
        """
        if facts is None:
            facts = logue.source_facts(self.ctx)
        stamp = facts.stamp or Timestamp.now()
        # (pmcd asked first: the files then get their prologue at once, leaving the least
        # time in which a SIGKILL finds a volume with a label and no record)
        _, pmcd_pid, seqnum = logue.pmcd_identity(self.ctx)
        self.writer = w = self.make_writer(stamp, facts)
        self._logue = (archive, host)
        w.put_index(stamp)  # (at the start: a reader's seek to the start lands on the prologue)
        w.put_result(self._logue_record(stamp, pmcd_pid, seqnum))
        self.last_stamp = stamp

    def _logue_record(self, stamp: Timestamp, pmcd_pid: int, seqnum: int) -> Result:
        w = self.writer
        assert w is not None and self._logue is not None
        for desc, name in logue.METRICS:  # each InDom after its first metric, as PCP's logue.c
            if desc.pmid not in w.descs:
                w.put_desc(desc, [name])
            if desc.indom != PM_INDOM_NULL and w.indom_members(desc.indom) is None:
                w.put_indom(stamp, desc.indom, *logue.logger_instances())
        archive, host = self._logue
        return logue.logue_result(stamp, host, archive, pmcd_pid, seqnum)

    def end(self) -> None:
        """The epilogue record (at pmcd's time if it answers) and the closing index entry."""
        w = self.writer
        if w is None or self._logue is None or self.last_stamp is None:
            return
        stamp, pmcd_pid, seqnum = logue.pmcd_identity(self.ctx)
        if stamp is None or stamp <= self.last_stamp:
            stamp = _after(self.last_stamp)
        record = self._logue_record(stamp, pmcd_pid, seqnum)
        # (pmcd gone and not back: no <mark>, as PCP's pmlogger marks only a gap it saw end)
        w.put_index(stamp)  # (the index's last entry points at the epilogue, as PCP's does)
        w.put_result(record)
        self.last_stamp = stamp

    # -- records ----------------------------------------------------------------------------------

    def write(
        self, result: Result, descs: dict[int, Desc | None], rank: dict[int, int] | None = None
    ) -> None:
        """RESULT as the next record, after the metadata its metrics need that the archive
        lacks: new metrics' descriptors (in RANK's order, PCP's; else the record's) and
        instance domains whose membership changed."""
        stamp = result.timestamp
        if self.writer is None:
            self.writer = self.make_writer(stamp, logue.SourceFacts())
            self.writer.put_index(stamp)
        w = self.writer
        if self.need_mark and self.last_stamp is not None:
            w.put_mark(_after(self.last_stamp))
            w.put_index(stamp)
        self.need_mark = False
        indexed = False
        vol, meta_at, log_at = w.vol, w.meta_offset, w.log_offset  # (before this record)
        vsets = result.vsets
        layout = vsets.layout if type(vsets) is ColumnValueSets else None
        if layout is None or layout is not self._settled:
            # (the same layout as the last record: the same metrics and instances, all
            # described and named already, so there is nothing to check)
            sets = layout.shape if layout is not None else vsets
            if rank is not None and any(vs.pmid not in self.described for vs in sets):
                last = len(rank)
                sets = sorted(sets, key=lambda vs: rank.get(vs.pmid, last))
            for vs in sets:
                desc = descs.get(vs.pmid)
                if desc is None:
                    continue
                if vs.pmid not in self.described:
                    self._describe(desc, stamp)
                if desc.indom != PM_INDOM_NULL and vs.numval > 0:
                    indexed |= self._note_indom(stamp, desc.indom, vs.pmid, vs.insts)
            self._settled = layout
        w.put_result(as_logged(result))
        self.records += 1
        self.last_stamp = stamp
        if w.vol != vol:  # (a volume switch put its own entry, at the new volume's start)
            self.index_at = w.log_offset + INDEX_SPACING
        elif indexed or w.log_offset > self.index_at:
            # (pointing at the record and its metadata)
            w.put_index(stamp, meta_at, log_at)
            self.index_at = w.log_offset + INDEX_SPACING

    def _note_history(self, fetch: FetchGroup, result: Result) -> None:
        """What pmlc's query shows as "in the log" and "available" (PCP's clearavail and
        setavail): each fetch first marks its metrics' known instances unavailable, then
        those in the result available, a metric new to the history added whole, and, as
        PCP's does, nothing more of that result looked at after one such addition.  A
        fetch with the same layout as the last, which added nothing, changes nothing."""
        vsets = result.vsets
        layout = vsets.layout if type(vsets) is ColumnValueSets else None
        key = id(fetch)
        if layout is not None and self._history_settled.get(key) is layout:
            return
        sets = layout.shape if layout is not None else vsets
        history = self.history
        for pmid in fetch.pmids:
            seen = history.get(pmid)
            if seen:
                for inst in seen:
                    seen[inst] = False
        added = False
        for vs in sets:
            seen = history.get(vs.pmid)
            if seen is None:
                if vs.numval <= 0:
                    continue
                history[vs.pmid] = dict.fromkeys(vs.insts, True)
                added = True
                break
            if vs.numval > 0:
                for inst in vs.insts:
                    seen[inst] = True
        if layout is not None and not added:
            self._history_settled[key] = layout
        else:
            self._history_settled.pop(key, None)

    def _describe(self, desc: Desc, stamp: Timestamp) -> None:
        """A metric's first value is coming: its descriptor, names, labels and help text.

        A derived metric's go under its logged PMID (logged_pmid), and again with each
        record that holds it, as PCP's pmlogger writes them: its check for a descriptor
        already logged looks for the unmarked PMID, and never finds it.
        """
        w = self.writer
        assert w is not None
        pmid = desc.pmid
        names = self.ctx.name_all(pmid)
        derived = is_derived(pmid)
        w.put_desc(dataclasses.replace(desc, pmid=logged_pmid(pmid)) if derived else desc, names)
        if not derived:
            self.described.add(pmid)
        self._labels(desc, stamp)
        # in pmlogger's order: one-line texts, then help, the metric's before its InDom's
        for kind in (PM_TEXT_ONELINE, PM_TEXT_HELP):
            self._text(pmid, PM_TEXT_PMID | kind, once=not derived)
            if desc.indom != PM_INDOM_NULL:
                self._text(desc.indom, PM_TEXT_INDOM | kind)

    def _labels(self, desc: Desc, stamp: Timestamp) -> None:
        """The label sets a metric's values carry, each (kind, identifier) logged once (a
        derived metric's item under its logged PMID, as PCP's manageLabels asks)."""
        pmid = desc.pmid
        wanted = [
            (PM_LABEL_CONTEXT, PM_IN_NULL),
            (PM_LABEL_DOMAIN, pmID_domain(pmid)),
            (PM_LABEL_INDOM, desc.indom),
            (PM_LABEL_CLUSTER, pmid & ~0x3FF),  # (the domain and cluster, item 0)
            (PM_LABEL_ITEM, logged_pmid(pmid)),
            (PM_LABEL_INSTANCES, desc.indom),
        ]
        for kind, ident in wanted:
            if kind in (PM_LABEL_INDOM, PM_LABEL_INSTANCES) and desc.indom == PM_INDOM_NULL:
                continue
            self._label_set(kind, ident, stamp)

    def _label_set(self, kind: int, ident: int, stamp: Timestamp) -> None:
        """The label sets of one (KIND, IDENT), logged if there are any, unless some are
        logged already; asked again next time when there are none (PCP's pmlogger looks
        for them in the archive it writes)."""
        if (kind, ident) in self.labels_done:
            return
        try:
            sets = self.ctx.labels(ident, kind)
        except PMError:
            return
        if sets:
            self.labels_done.add((kind, ident))
            w = self.writer
            assert w is not None
            w.put_labels(LabelRecord(stamp, kind, ident, tuple(sets)))

    def _text(self, ident: int, kind: int, once: bool = True) -> None:
        """One help text (KIND: PM_TEXT_* bits) of a metric or InDom, if the source has it;
        ONCE: not again (a derived metric's go with each of its descriptors, under its
        logged PMID)."""
        w = self.writer
        assert w is not None
        if once:
            if (ident, kind) in self.texts_done:
                return
            self.texts_done.add((ident, kind))
        try:
            help_, indom = bool(kind & PM_TEXT_HELP), bool(kind & PM_TEXT_INDOM)
            text = self.ctx.text(ident, help=help_, indom=indom, direct=True)
        except PMError:
            return
        w.put_text(kind, ident if kind & PM_TEXT_INDOM else logged_pmid(ident), text)

    def _note_indom(self, stamp: Timestamp, indom: int, pmid: int, insts: Sequence[int]) -> bool:
        """Write INDOM's members if PMID's values at STAMP show instances the archive has not
        named, or other instances than its last values showed (one gone), as PCP's callback
        decides; never twice at one time (a metric after another of the same domain).  A
        derived metric's instances are not compared with its last values: PCP's check_inst
        looks for its PMID in the last record, where it was written marked, in vain."""
        w = self.writer
        assert w is not None
        before = None if is_derived(pmid) else self._last_insts.get(pmid)
        now = self._last_insts[pmid] = frozenset(insts)
        known = w.indom_members(indom)
        if known is not None:
            at = self._indom_stamps.get(indom)
            if at is not None and stamp <= at:
                return False
            if all(i in known for i in insts) and (before is None or before == now):
                return False
        try:
            pairs = self.ctx.instances(indom)
        except PMError as exc:
            self.warn(f"instance domain {indom:#x}: {exc.message}")
            return False
        pairs = sorted(pairs, key=lambda pair: pair[0])  # (ascending, as pmaSortInDom)
        insts_, names = [i for i, _ in pairs], [n for _, n in pairs]
        if not w.put_indom(stamp, indom, insts_, names, delta=True):  # (v3: changes alone)
            return False
        self._indom_stamps[indom] = stamp
        # (its instances' labels, unless some are logged: PCP's manageLabels asks again
        # after a new instance-domain record)
        self._label_set(PM_LABEL_INSTANCES, indom, stamp)
        return True

    # -- the loop -------------------------------------------------------------------------------

    def run(
        self,
        samples: int | None = None,
        until: float | None = None,
        stop: Callable[[], bool] = lambda: False,
        on_idle: Callable[[], None] = lambda: None,
        retry: float = 1.0,
        max_bytes: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> str | None:
        """Log until STOP says so, SAMPLES samples are taken (a group's fetches are one),
        the volumes hold MAX_BYTES, or the wall clock passes UNTIL; the reason in pmlogger's
        words (None: STOP).  With only "once" groups left, logging goes on (as PCP's) until
        one of those."""
        now = time.monotonic()
        heap: list[tuple[float, int, Group]] = [(now, i, g) for i, g in enumerate(self.groups)]
        heapq.heapify(heap)
        self._ever_scheduled = {id(g) for g in self.groups}
        self._seq = len(heap)
        while not stop():
            reason = self._limit(samples, until, max_bytes)
            if reason is not None:
                return reason
            if self.schedule_changed:
                heap = self._reschedule(heap)
            if not heap:  # (only "once" groups, all logged: on until a limit or STOP)
                sleep(0.1)
                on_idle()
                continue
            due, _, _ = heap[0]
            wait = due - time.monotonic()
            if wait > 0:
                sleep(min(wait, 0.1))
                on_idle()
                continue
            _, seq, group = heapq.heappop(heap)  # (each its own fetches and records, as tasks)
            ok = self.sample(group)
            interval = group.interval_ns
            if not ok and interval is None:  # (a "once" group is tried until it is logged)
                heapq.heappush(heap, (time.monotonic() + retry, seq, group))
            elif interval is not None:  # (at its interval, pmcd there or not, as PCP's tasks)
                nxt = due + interval / NSEC
                if nxt < time.monotonic():  # fell behind: skip, do not burst
                    nxt = time.monotonic() + interval / NSEC
                heapq.heappush(heap, (nxt, seq, group))
        return None

    def _reschedule(self, heap: list[tuple[float, int, Group]]) -> list[tuple[float, int, Group]]:
        """pmlc changed the tasks: those still logged keep their times, a new one is
        due at once (then at its interval), a gone one is dropped."""
        self.schedule_changed = False
        now = time.monotonic()
        live = {id(g) for g in self.groups}
        kept = [entry for entry in heap if id(entry[2]) in live]
        for g in self.groups:
            if id(g) in self._ever_scheduled:
                continue
            self._ever_scheduled.add(id(g))
            # (at once, as PCP's __pmAFsetup(NULL, ...); requests already waiting first)
            kept.append((now + FIRST_DELAY, self._seq, g))
            self._seq += 1
        heapq.heapify(kept)
        return kept

    def _limit(self, samples: int | None, until: float | None, max_bytes: int | None) -> str | None:
        """The limit logging has reached (SAMPLES samples, MAX_BYTES in the volumes, the
        wall clock past UNTIL) in pmlogger's words, else None."""
        if samples is not None and self.samples >= samples:
            return "Sample limit reached"
        w = self.writer
        if max_bytes is not None and w is not None and w.volume_bytes >= max_bytes:
            return "Byte limit reached"
        if until is not None and time.time() >= until:
            return "End of run time"
        return None

    def close(self) -> None:
        """Finish the archive: the epilogue (if it has a prologue) or a last index entry.

        After a failed write nothing more is written (PCP's pmlogger exits there): the
        archive ends at its last whole record.  A write that fails here raises PMError.
        """
        w = self.writer
        if w is None:
            return
        try:
            if w.failed is None:
                if self._logue is not None:
                    self.end()
                elif self.last_stamp is not None:
                    w.put_index(self.last_stamp)
        finally:
            self.writer = None
            w.close()  # (raises only if nothing failed before: a failure is told once)

    def reset(self) -> None:
        """Forget the archive just closed, so that begin() starts a new one from scratch
        (SIGUSR2): its metadata, record counts and -r reports go; the groups stay."""
        self.described.clear()
        self.history.clear()
        self._history_settled.clear()
        self.texts_done.clear()
        self.labels_done.clear()
        self._last_insts.clear()
        self._indom_stamps.clear()
        self.records = self.samples = 0
        self.need_mark = False
        self.last_stamp = None
        self._logue = None
        self._settled = None
        for group in self.groups:
            group.reported = False


#: the most bytes of names one lookup sends (pmcd takes requests up to 64 KB)
LOOKUP_BYTES = 32 * 1024


def _parts(names: Sequence[str]) -> Iterator[list[str]]:
    """NAMES in lists that each fit one name lookup request under pmcd's size limit (a
    statement may name thousands of metrics; PCP's pmlogger looks each up alone)."""
    part: list[str] = []
    size = 0
    for name in names:
        if part and size + len(name) + 8 > LOOKUP_BYTES:
            yield part
            part, size = [], 0
        part.append(name)
        size += len(name) + 8  # (its length word and padding)
    if part:
        yield part


def _after(stamp: Timestamp) -> Timestamp:
    """A mark's time: just after the last record before the gap (PCP adds a millisecond)."""
    ns = stamp.sec * NSEC + stamp.nsec + 1_000_000
    return Timestamp(ns // NSEC, ns % NSEC)
