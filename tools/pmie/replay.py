"""pmie's evaluation loop: tasks, their schedule, and what -v/-V/-W print.

Rules are grouped into tasks by their sampling interval (a ``delta = ...``
statement starts a new one for the rules after it, as pmie's pragmatics do).
Tasks are scheduled by their next evaluation time, and the run ends at the
first one past the window's end.  :class:`Engine` is that loop; where the
values come from and how time passes is its :class:`Feed`'s business: an
archive replayed (:class:`ArchiveFeed`, here: each task interpolates on its
own context, and time is the schedule's), or live hosts (``live.LiveFeed``:
the wall clock, and hosts that come and go).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from itertools import pairwise
from typing import TYPE_CHECKING, Protocol

from . import operators as ops
from . import show
from . import values as v
from .bind import Binder, BindError, Unsupported
from .values import Bound, Node

if TYPE_CHECKING:
    from purepcp.pmapi.archive.context import ArchiveContext

    from .check import CheckResult
    from .options import Options

PROG = "pmie"
RETRY = 5.0  # the first retry interval for a task with hosts down or metrics missing
NSEC = 1_000_000_000
SECS_IN_24_DAYS = 2073600.0
SHOW = {1: show.show_value, 2: show.show_annotated, 3: show.show_satisfying}


@dataclass(eq=False)
class Task:
    """Rules evaluated at one interval, with their own replay of the archive."""

    delta: float
    rules: list[tuple[str, Node]] = field(default_factory=list)
    metrics: list[Bound] = field(default_factory=list)
    clocks: list[Node] = field(default_factory=list)
    waits: list[Bound] = field(default_factory=list)  # live metrics not bound yet
    ctx: ArchiveContext | None = None  # (replaying: the task's context of the default host)
    ctxs: dict[int, ArchiveContext] = field(default_factory=dict)  # ... and of every archive
    epoch: float = 0.0
    eval: float = 0.0
    tick: int = 0
    retry: float = 0.0  # > 0: hosts or metrics are missing, try them again this soon


def _fail(text: str) -> SystemExit:
    sys.stdout.flush()
    sys.stderr.write(text)
    return SystemExit(1)


def _seconds(stamp) -> float:
    """A timestamp as pmie keeps it: a double from a timeval (whole microseconds)."""
    return stamp.sec + (stamp.nsec // 1000) / 1e6


def _count_rules(x: Node | None) -> int:
    """How many rules (condition -> action) a statement holds (rule sets hold several)."""
    if x is None:
        return 0
    return (x.op == "rule") + _count_rules(x.a1) + _count_rules(x.a2)


def _metrics(x: Node | None, into: list[Bound]) -> None:
    if x is None:
        return
    if x.op == "fetch":
        into.extend(v.bounds(x))
    _metrics(x.a1, into)
    _metrics(x.a2, into)


class Feed(Protocol):
    """What the engine needs from where values come from."""

    live: bool
    zone: tzinfo
    start: float
    stop: float

    def binder(self, notify, warn) -> Binder: ...
    def begin(self) -> None: ...
    def open(self, t: Task, first: bool) -> None: ...
    def sleep_until(self, when: float) -> None: ...
    def fetch(self, t: Task) -> None: ...
    def waiting(self, t: Task) -> bool: ...
    def enable(self, t: Task, binder: Binder) -> None: ...
    def ctime(self, now: float) -> str: ...


class Engine:
    """The rules of RESULT evaluated, as the options O ask, on values FEED gives."""

    def __init__(self, feed: Feed, o: Options, result: CheckResult) -> None:
        from purepcp.pmapi.rate import counter_wrap_enabled

        self.feed = feed
        self.o = o
        self.result = result
        self.tasks: list[Task] = []
        self.binder: Binder | None = None
        self.refused = False  # a statement was refused once bound (pmie -C exits 1)
        self.delta = interval(o)
        ops.CLOCK.write = sys.stdout.write
        ops.CLOCK.ctime = feed.ctime
        ops.CLOCK.dowrap = counter_wrap_enabled()

    def bind_all(self) -> None:
        """Bind every rule, in order, to the task of the interval then current."""
        self.bind(self.result, self._source_name())

    def bind(self, result: CheckResult, source: str | None) -> None:
        """Bind RESULT's rules (read from SOURCE, None: standard input), in order, to the
        task of the interval then current (the interval a file sets stays set)."""
        delta = self.delta
        for stmt in result.statements:
            if stmt.variable:
                if stmt.name == "delta" and hasattr(stmt.expr, "value"):
                    delta = self.delta = float(stmt.expr.value)  # type: ignore[union-attr]
                continue
            binder = self.feed.binder(notify, sys.stderr.write)
            try:
                node = binder.build(stmt.expr)
            except BindError:
                continue
            except Unsupported as exc:
                raise _fail(
                    f"{PROG}: rule {stmt.name}: {exc}: not available in purepcp\n"
                ) from None
            if binder.errors:
                self._syntax_errors(stmt.line, binder.errors, source)
                # (pmie -C's status is the last statement's)
                self.refused = stmt is result.statements[-1]
                continue
            if node.op == "nop":  # (a constant: pragmatics gives it no task)
                continue
            task = self._task(delta)
            task.rules.append((stmt.name, node))
            perf = ops.CLOCK.perf
            perf.eval_expected += 1 / delta
            perf.numrules += _count_rules(node)
            _metrics(node, task.metrics)
            task.clocks.extend(binder.clocks)
            task.waits.extend(binder.waiting)
            self.binder = binder

    def _source_name(self) -> str | None:
        o = self.o
        return o.config if o.config is not None else (o.operands[0] if o.operands else None)

    def _syntax_errors(
        self, line: int, errors: list[tuple[str, int | None]], source: str | None
    ) -> None:
        """synerr's report for a statement refused after binding (and -C's status):
        where the parse was when the refusing action ran."""
        named = f"file {source}" if source is not None else "standard input"
        for message, at in errors:
            at = line if at is None else at
            where = f"near line {at} of {named}" if at else "at end of file"
            sys.stderr.write(f"{PROG}: syntax error - {where}\n{message}\n")

    def _task(self, delta: float) -> Task:
        if not self.tasks or self.tasks[-1].delta != delta:
            self.tasks.append(Task(delta))
        return self.tasks[-1]

    # -- the run --------------------------------------------------------------------------------

    def run(self, window: tuple[float, float] | None = None) -> None:
        """pmie's run(): evaluate each task when due, retrying what is missing sooner
        (no rules, no run: nothing is said).  WINDOW (start, stop) is the interactive
        debugger's run: an archive's tasks go on reading where they were (pmie sets an
        archive's position once, when a task first fetches)."""
        feed = self.feed
        if window is None:
            feed.begin()
        else:
            feed.start, feed.stop = window
        queue = [t for t in self.tasks if t.rules]
        if not queue:
            return
        for n, t in enumerate(queue):
            t.eval = t.epoch = feed.start
            t.tick = 0
            if window is None or feed.live or t.ctx is None:
                feed.open(t, n == 0 and window is None)
            t.retry = min(t.delta, RETRY) if feed.waiting(t) else 0.0
        if window is None and self._columns(queue):
            queue = []
        while queue:
            t = queue.pop(0)
            now = t.eval
            if now > feed.stop:
                break
            feed.sleep_until(now)
            if t.retry and self.binder is not None:
                feed.enable(t, self.binder)
            ops.CLOCK.now = now
            self._evaluate(t, now)
            self._reschedule(t, now)
            at = next((i for i, q in enumerate(queue) if t.eval <= q.eval), len(queue))
            queue.insert(at, t)
        sys.stdout.flush()
        if not self.o.quiet:
            notify("Info", "evaluator exiting\n")

    def _columns(self, queue: list[Task]) -> bool:
        """Replaying an archive with nothing shown at each evaluation, one task's rules
        evaluated for all its times at once (vector.py), when they are of the kinds that
        can be: whether they were."""
        if self.feed.live or self.o.verbose or len(queue) != 1:
            return False
        if len(getattr(self.feed, "sources", ())) != 1:
            return False
        from . import vector

        t = queue[0]
        when = vector.times(t, self.feed.stop)
        memo = vector.plan(t, when) if when else None
        if memo is None:
            self.feed.open(t, True)  # (the replay tried moved the context on: back)
            return False
        vector.run(t, when, memo)
        return True

    def _reschedule(self, t: Task, now: float) -> None:
        if self.feed.waiting(t) and t.retry == 0:
            t.retry = min(t.delta, RETRY)  # (just lost a host or a metric)
        if t.retry > 0:
            if t.retry < t.delta:  # (back off exponentially up to the interval)
                t.eval = now + t.retry
                t.retry = min(t.retry * 2, t.delta)
            else:
                t.eval = now + t.delta
        else:
            t.tick += 1
            t.eval = t.epoch + t.tick * t.delta

    def _evaluate(self, t: Task, now: float) -> None:
        if "appl2" in self.o.debug:
            sys.stderr.write("Evaluating task:\n" + self._dump_task(t))
        self._reflect(t, now)
        self.feed.fetch(t)
        for _, node in t.rules:
            ops.CLOCK.curr = node
            node.run()
        perf = ops.CLOCK.perf
        perf.eval_actual += len(t.rules)
        perf.flush()
        if not self.o.verbose:
            return
        stamp = self.o.show_time or not self.feed.live
        out = []
        for name, node in t.rules:
            when = f" ({self.feed.ctime(now)})" if stamp else ""
            out.append(f"{name}{when}: {SHOW[self.o.verbose](node)}\n")
        out.append("\n")
        sys.stdout.write("".join(out))
        if self.feed.live:
            sys.stdout.flush()

    def _dump_task(self, t: Task) -> str:
        """dumpTask, as -D appl2 shows each task before it is evaluated (the task's
        first host, as pmie's, and its rules)."""
        nth = self.tasks.index(t)
        later = self.tasks[nth + 1] if nth + 1 < len(self.tasks) else None
        earlier = self.tasks[nth - 1] if nth > 0 else None
        lines = [
            f"Task dump @ {_address(t)}",
            f"  nth={nth} delta={t.delta:.3f} tick={t.tick} next={_address(later)} "
            f"prev={_address(earlier)}",
            f"  eval time: {_full_time(t.eval, self.feed.zone)}",
        ]
        retry = "N/A" if t.retry == 0 else f"{t.retry:.3f}"
        src = t.metrics[0].source if t.metrics else None
        if src is None:
            lines.append(f"  retry delta: {retry}  host: <null>")
        else:
            missing = " metric/instances missing" if t.waits else ""
            lines.append(f"  retry delta: {retry} host: {src.hname}{missing}")
            state = "down" if getattr(src, "down", False) else "up"
            lines.append(f"  via={src.conn} ({state})")
        lines.append("  rules:")
        lines.extend(f"    {name}" for name, _ in t.rules)
        return "\n".join(lines) + "\n"

    def _reflect(self, t: Task, now: float) -> None:
        """reflectTime: $delta and the calendar variables at NOW."""
        if not t.clocks:
            return
        when = datetime.fromtimestamp(int(now), self.feed.zone)
        values = {
            "delta": t.delta,
            "minute": when.minute,
            "hour": when.hour,
            "day": when.day,
            "month": when.month - 1,
            "year": when.year,
            "day_of_week": (when.weekday() + 1) % 7,
        }
        for x in t.clocks:
            x.sample()[0] = float(values[x.extra])


def _address(t: Task | None) -> str:
    """A task as C prints its pointer (nil for none)."""
    return "(nil)" if t is None else hex(id(t))


def _full_time(when: float, zone: tzinfo) -> str:
    """showFullTime: the date with microseconds before the year."""
    stamp = datetime.fromtimestamp(int(when), zone).ctime()
    return f"{stamp[:19]}.{int((when - int(when)) * 1000000):06d} {stamp[20:]}"


def use_zone(spec: str) -> None:
    """pmNewZone's effect on the process: local time is SPEC's from now on (libpcp's
    traces and pmNotifyErr's stamps follow it)."""
    import os
    import time

    os.environ["TZ"] = spec
    time.tzset()


def interval(o: Options) -> float:
    """-t as pmie keeps it: a double from a timeval (10 seconds by default)."""
    from purepcp.pmapi.timewindow import parse_interval_ns

    if o.interval is None:
        return 10.0
    us = parse_interval_ns(o.interval) // 1000  # (checked with the options)
    return us // 1_000_000 + (us % 1_000_000) / 1e6


def notify(level: str, message: str) -> None:
    """pmNotifyErr to standard error: "[ctime] pmie(PID) Level: message"."""
    import os
    import time

    sys.stdout.flush()
    sys.stderr.write(f"[{time.ctime()[:19]}] {PROG}({os.getpid()}) {level}: {message}")
    sys.stderr.flush()


class ArchiveFeed:
    """Archives replayed (one per host; the first named is the default host's): each
    task interpolates on contexts of its own, and the time is the schedule's."""

    live = False

    def __init__(self, archives: list[tuple[ArchiveContext, str]], o: Options) -> None:
        from .sources import ArchiveSource

        self.sources = [ArchiveSource(ctx, path) for ctx, path in archives]
        self.source = self.sources[0]
        self.ctx, self.path = self.source.ctx, self.source.conn
        self.o = o
        self.zone = self._zone()
        self.start, self.stop = self._window()

    def _zone(self) -> tzinfo:
        from purepcp.pmapi.timewindow import new_zone, tzinfo_for
        from purepcp.pmapi.zone import context_zone

        if self.o.timezone is not None:
            zone = new_zone(self.o.timezone)
            use_zone(self.o.timezone)
            return zone
        if self.o.hostzone:
            sys.stdout.write(f"{PROG}: timezone set to local timezone from {self.path}\n")
            use_zone(self.ctx.archive.label.timezone)
            return context_zone(self.ctx)
        return tzinfo_for(None)

    def _window(self) -> tuple[float, float]:
        """From the earliest archive's start to the latest one's end."""
        from purepcp.pmapi.options import archive_end
        from purepcp.pmapi.timewindow import TimeParseError, parse_time_window
        from purepcp.pmapi.values import Timestamp

        firsts, ends = [], []
        for src in self.sources:
            label = src.ctx.archive.label
            first = Timestamp(label.start.sec, label.start.nsec - label.start.nsec % 1000)
            firsts.append(first)
            ends.append(archive_end(PROG, src.conn, src.ctx.archive) or first)
        first, end = min(firsts, key=_ns), max(ends, key=_ns)
        self.last = _real(_ns(end))  # (the latest end: where an interactive S counts back from)
        o = self.o
        try:
            w = parse_time_window(o.start, o.finish, o.align, o.origin, first, end, tz=self.zone)
        except TimeParseError as exc:
            text = exc.errmsg
            raise _fail(text if text.endswith("\n") else text + "\n") from None
        return _real(w.origin_ns), _real(w.end_ns)

    def binder(self, notify, warn) -> Binder:
        return Binder(self.source, notify, warn, pick=self._pick)

    def _pick(self, host: str):
        """The archive of a ':host' qualifier's host (pmie's search by host name)."""
        for src in self.sources:
            if src.hname == host:
                return src
        raise _fail(f"{PROG}: cannot open archive unknown archive\n"
                    "pmNewContext: No such file or directory\n")  # fmt: skip

    def begin(self) -> None:
        """(The window is the archives', read once.)"""

    def open(self, t: Task, first: bool) -> None:
        """The task's contexts, one per archive, interpolating from the window's start
        every interval, as pmSetMode is handed them: the start as a timeval, the
        interval in whole milliseconds (the first task replays on the contexts the
        rules were bound with)."""
        from purepcp.pmapi.archive.context import PM_MODE_INTERP, ArchiveContext
        from purepcp.pmapi.values import Timestamp

        sec = int(self.start)
        usec = round((self.start - sec) * 1e6)
        long = t.delta > SECS_IN_24_DAYS  # (whole seconds, else whole milliseconds)
        step = int(t.delta) * NSEC if long else int(t.delta * 1000.0) * 1_000_000
        t.ctxs = {}
        for src in self.sources:
            ctx = src.ctx if first else ArchiveContext(src.conn)
            ctx.set_mode(PM_MODE_INTERP, Timestamp(sec, usec * 1000), step)
            t.ctxs[id(src)] = ctx
        t.ctx = t.ctxs[id(self.source)]

    def sleep_until(self, when: float) -> None:
        """(Replaying, time passes as the schedule says.)"""

    def waiting(self, t: Task) -> bool:
        return False

    def enable(self, t: Task, binder: Binder) -> None:
        """(An archive's metrics are bound once, or never.)"""

    def fetch(self, t: Task) -> None:
        """taskFetch: one fetch from each archive of every metric the task's rules name
        there."""
        from purepcp.pmapi.errors import PM_ERR_LOGREC, PMError, pmErrStr

        by_source: dict[int, list[Bound]] = {}
        for m in t.metrics:
            by_source.setdefault(id(m.source), []).append(m)
        for key, metrics in by_source.items():
            pmids = list(dict.fromkeys(m.pmid for m in metrics))
            try:
                fetched = t.ctxs[key].fetch(pmids)
            except PMError as exc:
                if exc.code == PM_ERR_LOGREC:
                    raise _fail(f"{PROG}: pmFetch failed: {pmErrStr(exc.code)}\n") from None
                continue
            distribute(fetched, metrics)

    def ctime(self, now: float) -> str:
        return datetime.fromtimestamp(int(now), self.zone).ctime()


def _ns(stamp) -> int:
    return stamp.sec * NSEC + stamp.nsec


def _real(ns: int) -> float:
    """Nanoseconds as pmie's doubles from timevals (whole microseconds)."""
    return ns // NSEC + (ns % NSEC // 1000) / 1e6


def distribute(fetched, metrics: list[Bound]) -> None:
    """Hand each metric its values (numbers, or text for strings; sorted by instance)
    and the fetch's time: each value set is decoded once, however many rules name it."""
    stamp = _seconds(fetched.result.timestamp)
    sets = {vs.pmid: vs for vs in fetched.result.vsets}
    decoded: dict[int, list[tuple[int, float | str]]] = {}
    for m in metrics:
        vs = sets.get(m.pmid)
        if vs is not None and vs.numval > 0:
            pairs = decoded.get(m.pmid)
            if pairs is None:
                pairs = decoded[m.pmid] = decode(vs, m.desc.type)
            m.vset = pairs
            m.stamp = stamp


def decode(vs, type_: int) -> list[tuple[int, float | str]]:
    """A value set's values as pmExtractValue gives pmie them (doubles, or strings), by
    signed instance number as pmie sorts them."""
    from purepcp.pmapi.convert import pmExtractValue
    from purepcp.pmapi.types import PMType

    insts = [i - 0x100000000 if i >= 0x80000000 else i for i in vs.insts]
    if type_ == v.STRING_TYPE:
        texts = [
            str(pmExtractValue(vs.valfmt, x.value, type_, PMType.PM_TYPE_STRING)) for x in vs.vlist
        ]
        return sorted(zip(insts, texts, strict=True), key=_first)
    if type_ in _NUMERIC:
        numbers = list(map(float, vs.atoms(type_)))
    else:  # (bind refuses the rest; pmExtractValue says why, should one get here)
        numbers = [
            float(pmExtractValue(vs.valfmt, x.value, type_, PMType.PM_TYPE_DOUBLE))
            for x in vs.vlist
        ]
    pairs = list(zip(insts, numbers, strict=True))
    if any(a[0] > b[0] for a, b in pairwise(pairs)):
        pairs.sort(key=_first)
    return pairs


def _first(pair: tuple[int, float | str]) -> int:
    return pair[0]


#: PM_TYPE_32, U32, 64, U64, FLOAT, DOUBLE: their atoms are numbers already
_NUMERIC = frozenset(range(6))
