"""pmie's evaluation loop over an archive: tasks, fetches, and what -v/-V/-W print.

Rules are grouped into tasks by their sampling interval (a ``delta = ...``
statement starts a new one for the rules after it, as pmie's pragmatics do).
Each task replays the archive on its own context, interpolating at its own
interval from the start of the time window; tasks are scheduled by their next
evaluation time, and the run ends at the first one past the window's end.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from . import operators as ops
from . import show
from .bind import Binder, BindError, Unsupported
from .values import Bound, Node

if TYPE_CHECKING:
    from purepcp.pmapi.archive.context import ArchiveContext

    from .check import CheckResult
    from .options import Options

PROG = "pmie"
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
    ctx: ArchiveContext | None = None
    epoch: float = 0.0
    eval: float = 0.0
    tick: int = 0


def _fail(text: str) -> SystemExit:
    sys.stdout.flush()
    sys.stderr.write(text)
    return SystemExit(1)


def _seconds(stamp) -> float:
    """A timestamp as pmie keeps it: a double from a timeval (whole microseconds)."""
    return stamp.sec + (stamp.nsec // 1000) / 1e6


def _metrics(x: Node | None, into: list[Bound]) -> None:
    if x is None:
        return
    if x.op == "fetch" and x.metrics is not None:
        into.append(x.metrics)
    _metrics(x.a1, into)
    _metrics(x.a2, into)


class Replay:
    """The rules of RESULT evaluated over the archive CTX (at PATH) as the options ask."""

    def __init__(self, ctx: ArchiveContext, path: str, o: Options, result: CheckResult) -> None:
        from purepcp.pmapi.rate import counter_wrap_enabled

        self.ctx = ctx
        self.path = path
        self.o = o
        self.result = result
        self.tasks: list[Task] = []
        self.refused = False  # a statement was refused once bound (pmie -C exits 1)
        self.zone = self._zone()
        self.start, self.stop = self._window()
        self.delta = self._interval()
        ops.CLOCK.write = sys.stdout.write
        ops.CLOCK.ctime = self.ctime
        ops.CLOCK.dowrap = counter_wrap_enabled()

    # -- set up ---------------------------------------------------------------------------------

    def _zone(self) -> tzinfo:
        from purepcp.pmapi.timewindow import new_zone, tzinfo_for
        from purepcp.pmapi.zone import context_zone

        if self.o.timezone is not None:
            return new_zone(self.o.timezone)
        if self.o.hostzone:
            sys.stdout.write(f"{PROG}: timezone set to local timezone from {self.path}\n")
            return context_zone(self.ctx)
        return tzinfo_for(None)

    def _window(self) -> tuple[float, float]:
        from purepcp.pmapi.options import archive_end
        from purepcp.pmapi.timewindow import TimeParseError, parse_time_window
        from purepcp.pmapi.values import Timestamp

        label = self.ctx.archive.label
        first = Timestamp(label.start.sec, label.start.nsec - label.start.nsec % 1000)
        end = archive_end(PROG, self.path, self.ctx.archive) or first
        o = self.o
        try:
            w = parse_time_window(o.start, o.finish, o.align, o.origin, first, end, tz=self.zone)
        except TimeParseError as exc:
            text = exc.errmsg
            raise _fail(text if text.endswith("\n") else text + "\n") from None
        start = w.origin_ns // NSEC + (w.origin_ns % NSEC // 1000) / 1e6
        stop = w.end_ns // NSEC + (w.end_ns % NSEC // 1000) / 1e6
        return start, stop

    def _interval(self) -> float:
        from purepcp.pmapi.timewindow import parse_interval_ns

        if self.o.interval is None:
            return 10.0
        us = parse_interval_ns(self.o.interval) // 1000  # (checked with the options)
        return us // 1_000_000 + (us % 1_000_000) / 1e6

    def bind_all(self) -> None:
        """Bind every rule, in order, to the task of the interval then current."""
        delta = self.delta
        for stmt in self.result.statements:
            if stmt.variable:
                if stmt.name == "delta" and hasattr(stmt.expr, "value"):
                    delta = float(stmt.expr.value)  # type: ignore[union-attr]
                continue
            binder = Binder(self.ctx, self.path, self.notify, sys.stderr.write)
            try:
                node = binder.build(stmt.expr)
            except BindError:
                continue
            except Unsupported as exc:
                raise _fail(
                    f"{PROG}: rule {stmt.name}: {exc}: not available in purepcp\n"
                ) from None
            if binder.errors:
                self._syntax_errors(stmt.line, binder.errors)
                # (pmie -C's status is the last statement's)
                self.refused = stmt is self.result.statements[-1]
                continue
            task = self._task(delta)
            task.rules.append((stmt.name, node))
            _metrics(node, task.metrics)
            task.clocks.extend(binder.clocks)

    def _syntax_errors(self, line: int, errors: list[str]) -> None:
        """synerr's report for a statement refused after binding (and -C's status)."""
        o = self.o
        source = o.config if o.config is not None else (o.operands[0] if o.operands else None)
        named = f"file {source}" if source is not None else "standard input"
        where = f"near line {line} of {named}" if line else "at end of file"
        for message in errors:
            sys.stderr.write(f"{PROG}: syntax error - {where}\n{message}\n")

    def _task(self, delta: float) -> Task:
        if not self.tasks or self.tasks[-1].delta != delta:
            self.tasks.append(Task(delta))
        return self.tasks[-1]

    # -- the run --------------------------------------------------------------------------------

    def run(self) -> None:
        queue = [t for t in self.tasks if t.rules]
        for n, t in enumerate(queue):
            t.eval = t.epoch = self.start
            # (the first task replays on the context the rules were bound with)
            t.ctx = self._replay(self.ctx if n == 0 else None, t.delta)
        while queue:
            t = queue.pop(0)
            now = t.eval
            if now > self.stop:
                break
            ops.CLOCK.now = now
            self._evaluate(t, now)
            t.tick += 1
            t.eval = t.epoch + t.tick * t.delta
            at = next((i for i, q in enumerate(queue) if t.eval <= q.eval), len(queue))
            queue.insert(at, t)
        sys.stdout.flush()

    def _replay(self, ctx: ArchiveContext | None, delta: float) -> ArchiveContext:
        """CTX (else a new context) interpolating from the window's start every DELTA, as
        pmSetMode is handed them: the start as a timeval, the interval in whole
        milliseconds."""
        from purepcp.pmapi.archive.context import PM_MODE_INTERP, ArchiveContext
        from purepcp.pmapi.values import Timestamp

        if ctx is None:
            ctx = ArchiveContext(self.path)
        sec = int(self.start)
        usec = round((self.start - sec) * 1e6)
        long = delta > SECS_IN_24_DAYS  # (whole seconds, else whole milliseconds)
        step = int(delta) * NSEC if long else int(delta * 1000.0) * 1_000_000
        ctx.set_mode(PM_MODE_INTERP, Timestamp(sec, usec * 1000), step)
        return ctx

    def _fetch(self, t: Task) -> None:
        """taskFetch: one fetch of every metric the task's rules name."""
        from purepcp.pmapi.cnumbers import int32
        from purepcp.pmapi.errors import PM_ERR_LOGREC, PMError, pmErrStr

        assert t.ctx is not None
        pmids = list(dict.fromkeys(m.pmid for m in t.metrics))
        try:
            fetched = t.ctx.fetch(pmids)
        except PMError as exc:
            if exc.code == PM_ERR_LOGREC:
                raise _fail(f"{PROG}: pmFetch failed: {pmErrStr(exc.code)}\n") from None
            return
        stamp = _seconds(fetched.result.timestamp)
        sets = {vs.pmid: vs for vs in fetched.result.vsets}
        for m in t.metrics:
            vs = sets.get(m.pmid)
            if vs is not None and vs.numval > 0:
                m.vset = sorted(((int32(x.inst), x.value) for x in vs.vlist), key=lambda p: p[0])
                m.valfmt = vs.valfmt
                m.stamp = stamp

    def _evaluate(self, t: Task, now: float) -> None:
        self._reflect(t, now)
        self._fetch(t)
        for _, node in t.rules:
            ops.CLOCK.curr = node
            node.run()
        if not self.o.verbose:
            return
        out = []
        for name, node in t.rules:
            out.append(f"{name} ({self.ctime(now)}): {SHOW[self.o.verbose](node)}\n")
        out.append("\n")
        sys.stdout.write("".join(out))

    def _reflect(self, t: Task, now: float) -> None:
        """reflectTime: $delta and the calendar variables at NOW."""
        if not t.clocks:
            return
        when = datetime.fromtimestamp(int(now), self.zone)
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

    def ctime(self, now: float) -> str:
        return datetime.fromtimestamp(int(now), self.zone).ctime()

    def notify(self, level: str, message: str) -> None:
        """pmNotifyErr to standard error: "[ctime] pmie(PID) Level: message"."""
        import os
        import time

        sys.stdout.flush()
        sys.stderr.write(f"[{time.ctime()[:19]}] {PROG}({os.getpid()}) {level}: {message}")
        sys.stderr.flush()
