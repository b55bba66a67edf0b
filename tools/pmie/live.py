"""pmie against live hosts: the wall clock, one connection per host, hosts that
come and go.

The default host is ``-h HOST`` (else ``local:``); a rule's ``:host``
qualifier names another connection string.  Each evaluation sleeps until its
time comes, fetches every bound metric of the task from its host (one fetch
per host), and hands the values to the same operators as an archive replay.
A host that cannot be reached, or a metric it does not (yet) have, leaves
the rule's values unknown; the engine then tries them again sooner (from
:data:`replay.RETRY` seconds, doubling up to the interval), and pmie's
messages say when a connection is lost and when it is back.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from .bind import Binder
from .replay import PROG, Task, _fail, _real, distribute, notify, use_zone
from .sources import HostStates, LiveSource
from .values import B_UNKNOWN, Node

if TYPE_CHECKING:
    from .options import Options

#: node semantics whose values clobber() sets to NaN, and to unknown (pmie's numbers)
_NUMERIC_SEMS = frozenset((1, 3, 4, 10))
_BOOLEAN_SEM = 11


class LiveFeed:
    """Values fetched now from pmcd at each connection string the rules name."""

    live = True

    def __init__(self, o: Options, default: str) -> None:
        self.o = o
        self.states = HostStates(notify, o.quiet)
        self.sources: dict[str, LiveSource] = {}
        self.default = self.source_for(default)
        self.zone = self._zone()
        self.start = self.stop = 0.0
        self.begin()

    def source_for(self, conn: str) -> LiveSource:
        if conn not in self.sources:
            self.sources[conn] = LiveSource(conn, self.states, sys.stderr.write)
        return self.sources[conn]

    def _zone(self) -> tzinfo:
        from purepcp.pmapi.timewindow import new_zone, tzinfo_for

        if self.o.timezone is not None:
            zone = new_zone(self.o.timezone)
            use_zone(self.o.timezone)
            return zone
        if self.o.hostzone and self.default.connect():
            from purepcp.pmapi.zone import context_zone

            sys.stdout.write(f"{PROG}: timezone set to local timezone from {self.default.conn}\n")
            return context_zone(self.default.ctx)
        return tzinfo_for(None)

    def begin(self) -> None:
        """The time window from now (pmie reads it again once the rules are loaded)."""
        from purepcp.pmapi.timewindow import TimeParseError, parse_time_window
        from purepcp.pmapi.values import Timestamp

        ns = time.time_ns()
        now = Timestamp(ns // 1_000_000_000, ns % 1_000_000_000 // 1000 * 1000)
        o = self.o
        try:
            w = parse_time_window(o.start, o.finish, o.align, o.origin, now, None,
                                  tz=self.zone, now=now)  # fmt: skip
        except TimeParseError as exc:
            text = exc.errmsg
            raise _fail(text if text.endswith("\n") else text + "\n") from None
        self.start, self.stop = _real(w.origin_ns), _real(w.end_ns)

    def binder(self, notify, warn) -> Binder:
        return Binder(self.default, notify, warn, pick=self.source_for)

    def open(self, t: Task, first: bool) -> None:
        """(Connections are per host, shared by the tasks.)"""

    def sleep_until(self, when: float) -> None:
        delay = when - time.time()
        if delay > 0:
            time.sleep(delay)

    def waiting(self, t: Task) -> bool:
        """Hosts down or metrics not bound yet in this task?"""
        return bool(t.waits) or any(m.source.down for m in t.metrics)

    def enable(self, t: Task, binder: Binder) -> None:
        """Reconnect the task's hosts that went down, bind the metrics that wait; once
        all is there, the schedule starts again from now."""
        for src in {id(m.source): m.source for m in t.metrics}.values():
            if src.down and src.ctx is not None:
                src.reconnect()
        still = []
        for m in t.waits:
            if m.source.down:
                still.append(m)
                continue
            status = binder.rebind(m)
            if status == 0:
                still.append(m)
        t.waits = still
        if not self.waiting(t):
            t.epoch = t.eval
            t.tick = 0
            t.retry = 0.0

    def fetch(self, t: Task) -> None:
        """taskFetch: one fetch per host of the task's bound metrics."""
        from purepcp.pmapi.errors import PMError, pmErrStr

        by_host: dict[int, tuple[LiveSource, list]] = {}
        waits = {id(m) for m in t.waits}
        for m in t.metrics:
            if id(m) not in waits:
                by_host.setdefault(id(m.source), (m.source, []))[1].append(m)
        for src, metrics in by_host.values():
            if src.down or src.ctx is None:
                continue
            pmids = list(dict.fromkeys(m.pmid for m in metrics))
            try:
                fetched = src.fetch(pmids)
            except PMError as exc:
                notify("Error", f"pmFetch from {src.hname} failed: {pmErrStr(exc.code)}\n")
                src.lost()
                self._clobber_rules(t, src)
                continue
            distribute(fetched, metrics)

    def _clobber_rules(self, t: Task, src: LiveSource) -> None:
        """mark_all: the rules on a host just lost have unknown values."""
        for _, node in t.rules:
            m = node.metrics
            if m is not None and m.source is src:
                clobber(node)

    def ctime(self, now: float) -> str:
        return datetime.fromtimestamp(int(now), self.zone).ctime()

    def close(self) -> None:
        for src in self.sources.values():
            src.close()


def clobber(x: Node) -> None:
    """Mark X and the operators below it as having no values."""
    if x.op in ("nop", "var"):
        return
    for arg in (x.a1, x.a2):
        if arg is not None:
            clobber(arg)
    x.valid = 0
    if x.sem in _NUMERIC_SEMS:
        fill: object = float("nan")
    elif x.sem == _BOOLEAN_SEM:
        fill = B_UNKNOWN
    else:
        return
    for row in x.ring:
        row[:] = [fill] * len(row)
