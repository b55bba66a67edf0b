"""The web contexts of one pmproxy: made on demand, found by number, expired when idle.

Every call on a context runs in a worker thread (the PMAPI client blocks), under the
context's lock, so a slow or dead pmcd holds up only the requests that use it.  A
context lives ``polltimeout`` seconds past its last use; a sweep every ``work``
seconds closes the expired ones, and a request naming one in between is told it
expired (libpcp_web's timer and garbage collection).
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import trio

from purepcp.pmapi import memory
from purepcp.pmapi.cnumbers import cstring, strtod, uint32
from purepcp.pmapi.context import Context

from .webgroup import WebContext
from .webrecords import WebError

T = TypeVar("T")
log = logging.getLogger("pmproxy")

#: pmwebapi.timeout: seconds a context lives after its last use
DEFAULT_TIMEOUT = 5.0
#: pmwebapi.work: seconds between sweeps for expired contexts
DEFAULT_WORK = 2.0
#: contexts being made at once to one pmcd: PCP's pmcd accepts only 5 pending connections
#: (MAXPENDING); more at once and the kernel drops the handshakes of the rest, which then
#: wait seconds for a retransmission and can miss PMCD_CONNECT_TIMEOUT
CONNECTS_AT_ONCE = 4
#: seconds a /metrics scraper context lives after its last scrape (longer than
#: Prometheus's usual scrape intervals, so each scrape finds the last one's metadata)
SCRAPER_TIMEOUT = 300.0


#: the longest polltimeout a context can have: PCP keeps it in milliseconds in an
#: unsigned int
MAX_POLLTIMEOUT = (2**32 - 1) / 1000


def poll_timeout(params: Mapping[str, str], default: float) -> float:
    """A request's polltimeout in seconds (DEFAULT when it gives none), read as PCP reads
    it (strtod, and nothing may follow the number), kept between 0 and MAX_POLLTIMEOUT so
    that no client can make a context that never expires.  WebError with PCP's message."""
    text = params.get("polltimeout")
    if text is None:
        return default
    text = cstring(text)
    scan = strtod(text)
    if scan.end != len(text):
        raise WebError("invalid timeout requested in polltime")
    seconds = float(scan.value)
    if math.isnan(seconds):
        return 0.0
    return min(max(seconds, 0.0), MAX_POLLTIMEOUT)


@dataclass
class _Gate:
    """The contexts being made to one pmcd: at most CONNECTS_AT_ONCE, the rest waiting."""

    slots: trio.Semaphore = field(default_factory=lambda: trio.Semaphore(CONNECTS_AT_ONCE))
    waiting: int = 0


@dataclass
class _Entry:
    web: WebContext
    lock: trio.Lock = field(default_factory=trio.Lock)
    deadline: float = 0.0
    users: int = 0


class WebGroups:
    """Every live web context of this pmproxy, by its number."""

    def __init__(
        self,
        hostspec: str = "localhost",
        timeout: float = DEFAULT_TIMEOUT,
        work: float = DEFAULT_WORK,
        connect: Callable[[str], Any] = Context.host,
    ) -> None:
        self.hostspec = hostspec
        self.timeout = timeout
        self.work = work
        self.connect = connect
        self.contexts: dict[int, _Entry] = {}
        #: the contexts that answer /metrics requests naming no context, by hostspec
        self.scrapers: dict[str, _Entry] = {}
        self._random = random.SystemRandom()
        self._gates: dict[str, _Gate] = {}  # (by hostspec, while anyone connects to it)
        self._making: set[int] = set()  # context numbers whose contexts are being made

    async def _open(self, ident: int, hostspec: str, timeout: float) -> WebContext:
        """A new web context on HOSTSPEC's pmcd, made in a worker thread, no more than
        CONNECTS_AT_ONCE to one pmcd at a time."""
        gate = self._gates.setdefault(hostspec, _Gate())
        gate.waiting += 1
        try:
            async with gate.slots:
                return await trio.to_thread.run_sync(
                    WebContext, ident, hostspec, timeout, self.connect
                )
        finally:
            gate.waiting -= 1
            if gate.waiting == 0:
                del self._gates[hostspec]

    async def sweep_forever(self) -> None:
        """Close expired contexts every ``work`` seconds (run in the server's nursery)."""
        while True:
            await trio.sleep(self.work)
            closed = self.sweep()
            if closed:
                log.info("pmproxy: closed %d idle context(s)", closed)
                memory.settle()

    def sweep(self) -> int:
        """Close the contexts idle past their deadline; how many there were."""
        now = trio.current_time()
        count = 0
        for table in (self.contexts, self.scrapers):
            dead = [key for key, e in table.items() if e.users == 0 and e.deadline <= now]
            for key in dead:
                table.pop(key).web.close()  # type: ignore[attr-defined]
            count += len(dead)
        return count

    def close(self) -> None:
        for table in (self.contexts, self.scrapers):
            for entry in table.values():  # type: ignore[attr-defined]
                entry.web.close()
            table.clear()

    async def scrape(
        self, ident: str | None, params: Mapping[str, str], work: Callable[[WebContext], T]
    ) -> T:
        """Run WORK for /metrics: on the context IDENT names, else on this pmproxy's own
        context for the hostspec asked for.  A /metrics answer names no context, so
        scrapes of one pmcd can share one, and each finds the metadata the last read
        (pmcd's change notices make it read them again).  PCP's pmproxy makes a new
        context for every scrape instead."""
        if ident is not None:
            return (await self.call(ident, params, work))[1]
        poll_timeout(params, SCRAPER_TIMEOUT)  # (checked as PCP checks it; the shared one's stays)
        hostspec = params.get("hostspec") or params.get("hostname") or self.hostspec
        entry = self.scrapers.get(hostspec)
        if entry is None:
            number = self._random.randrange(1, 1 << 31)  # (named only in error answers)
            web = await self._open(number, hostspec, SCRAPER_TIMEOUT)
            entry = self.scrapers.setdefault(hostspec, _Entry(web))
            if entry.web is not web:  # (another scrape made one meanwhile)
                web.close()
        return await self._use(entry, lambda web: None, work)

    async def call(
        self, ident: str | None, params: Mapping[str, str], work: Callable[[WebContext], T]
    ) -> tuple[int, T]:
        """Run WORK on the context IDENT names (a new one when None): its number and
        WORK's answer.  WebError for a context that cannot be made or found."""
        return await self.call_fast(ident, params, lambda web: None, work)

    async def call_fast(
        self,
        ident: str | None,
        params: Mapping[str, str],
        fast: Callable[[WebContext], Awaitable[T] | None],
        work: Callable[[WebContext], T],
    ) -> tuple[int, T]:
        """call(), but first FAST(web), in trio's thread: an awaitable of the answer when
        it can be had without blocking calls, else None, and WORK runs in a thread."""
        entry = await self._create(params) if ident is None else self._find(ident)
        return entry.web.ident, await self._use(entry, fast, work)

    @staticmethod
    async def _use(
        entry: _Entry, fast: Callable[[WebContext], Awaitable[T] | None], work: Callable[..., T]
    ) -> T:
        """FAST's awaitable, or WORK in a worker thread, on ENTRY's context alone; its
        clock restarts when done.  A WebError names the context."""
        entry.users += 1
        try:
            async with entry.lock:
                pending = fast(entry.web)
                if pending is not None:
                    return await pending
                return await trio.to_thread.run_sync(work, entry.web)
        except WebError as exc:
            exc.context = entry.web.ident
            raise
        finally:
            entry.users -= 1
            entry.deadline = trio.current_time() + entry.web.timeout

    def _find(self, ident: str) -> _Entry:
        if not ident.isdigit():
            raise WebError(f"invalid context identifier: {ident}")
        number = uint32(int(ident))
        entry = self.contexts.get(number)
        if entry is None:
            raise WebError(f"unknown context identifier: {number}")
        if entry.users == 0 and entry.deadline <= trio.current_time():
            raise WebError(f"expired context identifier: {number}")
        return entry

    async def _create(self, params: Mapping[str, str]) -> _Entry:
        timeout = poll_timeout(params, self.timeout)
        hostspec = params.get("hostspec") or params.get("hostname") or self.hostspec
        ident = self._random.randrange(1, 1 << 31)
        while ident in self.contexts or ident in self._making:
            ident = self._random.randrange(1, 1 << 31)
        self._making.add(ident)  # (the number is taken while its context is made)
        try:
            web = await self._open(ident, hostspec, timeout)
        finally:
            self._making.discard(ident)
        entry = self.contexts[ident] = _Entry(web, deadline=trio.current_time() + timeout)
        return entry
