"""The pmproxy command: pmproxy(1)'s flags, then serve the REST API and /metrics."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from purepcp.pmapi import memory
from purepcp.pmapi.paths import LayoutError, paths
from purepcp.pmapi.service import daemon_ended, notify_ready, raise_fd_limit
from purepcp.series.storeconfig import StoreConfig, StoreError

from .groups import WebGroups
from .http import refuse_connection, serve_connection
from .listen import Opened, open_ports, open_unix, remove_unix
from .options import TOOL, Settings, dont_start, options
from .pcpproxy import first_bytes, relay, wants_pcp
from .webapi import Reply, Request, WebAPI

if TYPE_CHECKING:  # (the series engine, Redis's client and NumPy load when first used)
    from purepcp.series.discover import Discovery
    from purepcp.series.store import Store

    from .series import SeriesAPI


def main(argv: list[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    settings = options(argv)
    log_path = _log_path(settings)
    _open_log(log_path)
    if settings.debug:
        logging.getLogger().setLevel(logging.DEBUG)
    log = logging.getLogger("pmproxy")
    for warning in settings.warnings:  # (as PCP's: on stderr, which is the log)
        sys.stderr.write(f"Warning: {warning}\n")
    memory.tune()  # (large buffers are their own mappings, returned when freed)
    # (each web context holds a connection to its pmcd while it lives)
    log.debug("pmproxy: %s", raise_fd_limit())
    try:
        trio.run(serve, settings)
    except NotStarted as exc:
        log.error("pmproxy: %s", exc)
        print(f"pmproxy: {exc}", file=sys.stderr)
        dont_start(settings.fatal, log_path)
    except (OSError, BaseExceptionGroup) as failure:
        status = daemon_ended("pmproxy", failure)
        dont_start(settings.fatal, log_path)
        return status
    log.info("pmproxy Shutdown")
    return 0


def _open_log(path: str) -> None:
    """pmOpenLog: PATH ("-": stderr) becomes the log and, as in PCP's pmproxy, stdout
    and stderr go there too, headed and footed in libpcp's way; a PATH that cannot be
    written leaves stderr the log."""
    from purepcp.pmapi.daemonlog import open_log

    if path != "-":
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            open_log(path, "pmproxy")
            return
        except OSError as exc:
            print(f"pmproxy: cannot open log {path}: {exc.strerror}; using stderr",
                  file=sys.stderr)  # fmt: skip
    open_log("-", "pmproxy")


def _log_path(settings: Settings) -> str:
    """-l's path, else the layout's pmproxy.log; with -Dappl1, PCP's "desperate logging
    mode", the process id goes before the name's last "." (pmproxy.PID.log)."""
    path = settings.log or _default_log()
    appl1 = any("appl1" in spec.lower().split(",") for spec in settings.debug)
    if path == "-" or not appl1:
        return path
    stem, dot, suffix = path.rpartition(".")
    return f"{stem}.{os.getpid()}.{suffix}" if dot else f"{path}.{os.getpid()}"


#: how long serving waits for the first connection to Redis (then it goes on trying)
FIRST_REDIS_TRY = 5.0

#: how often discovery looks for archives and records pmloggers have written
DISCOVER_EVERY = 1.0


async def discover_forever(config: StoreConfig, log: logging.Logger) -> None:
    """[discover]: load what pmloggers write under the configured directory (default
    the archive directory), in a thread of its own (_discover_loop) that ends soon
    after this is cancelled."""
    try:
        root = config.discover_path or str(paths().archive_dir)
    except LayoutError as exc:
        log.warning("pmproxy: discovery is off: %s", exc)
        return
    stop = threading.Event()
    try:
        await trio.to_thread.run_sync(
            _discover_loop, root, config, log, stop, abandon_on_cancel=True
        )
    finally:
        stop.set()


def _discover_loop(
    root: str, config: StoreConfig, log: logging.Logger, stop: threading.Event
) -> None:
    """A scan a second finds archives and what changed; where inotify is to be had, a
    volume's write is loaded when it happens (as PCP's file events do).  The key
    server being away is logged once and the scans go on; nothing a scan meets ends
    the loop, only STOP."""
    from purepcp.series.discover import Discovery
    from purepcp.series.watch import watcher

    watch = watcher()
    discovery: Discovery | None = None
    down = False
    next_scan = time.monotonic()
    try:
        while not stop.is_set():
            reports = []
            try:
                if discovery is None:
                    discovery = Discovery(
                        root, _new_store(config), log=lambda m: log.info("pmproxy: %s", m)
                    )
                    log.info("pmproxy: discovering archives under %s", root)
                if time.monotonic() >= next_scan:
                    next_scan = time.monotonic() + DISCOVER_EVERY
                    reports = discovery.scan()
                    if watch is not None:
                        watch.watch(discovery.dirs)
                elif watch is not None:
                    reports = discovery.load_now(watch.changed())
                for report in reports:
                    log.debug("pmproxy: loaded %d records of %s", report.records, report.path)
                down = False
            except StoreError as exc:
                if not down:
                    log.warning("pmproxy: discovery: %s", exc)
                down = True
                if discovery is not None:
                    discovery.store.close()
                    store = _reconnect(config, stop)
                    if store is None:
                        return
                    discovery.reconnected(store)
                next_scan = time.monotonic() + DISCOVER_EVERY
            except Exception as exc:  # (a scan that fails must not end discovery)
                log.warning("pmproxy: discovery: %s: %s", type(exc).__name__, exc)
                next_scan = time.monotonic() + DISCOVER_EVERY
            wait = max(0.0, next_scan - time.monotonic())
            if watch is not None and discovery is not None and not down:
                watch.wait(wait)
            else:
                stop.wait(wait)
    finally:
        if watch is not None:
            watch.close()


def _new_store(config: StoreConfig) -> Store:
    """A connection to the key server (Redis's client loads with the first)."""
    from purepcp.series.store import Store

    return Store(config)


def _reconnect(config: StoreConfig, stop: threading.Event) -> Store | None:
    """A new connection to the key server, tried a second apart; None once STOP is set."""
    while not stop.is_set():
        try:
            return _new_store(config)
        except StoreError:
            stop.wait(DISCOVER_EVERY)
    return None


def _default_log() -> str:
    try:
        return str(paths().log_dir / "pmproxy" / "pmproxy.log")
    except LayoutError:
        return "pmproxy.log"


async def serve(settings: Settings, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Listen, answer requests until SIGTERM or SIGINT (or -T's time), then close."""
    log = logging.getLogger("pmproxy")
    groups = WebGroups(settings.hostspec, settings.timeout, settings.work)
    api = WebAPI(groups, settings.writers)
    series: SeriesAPI | None = None
    series_loaded = trio.Lock()

    async def series_api() -> SeriesAPI:
        nonlocal series
        if series is None:
            async with series_loaded:  # the first /series request loads the engine,
                if series is None:  # in a thread: other clients go on meanwhile
                    series = await trio.to_thread.run_sync(_series_api, settings)
        return series

    async def route(request: Request) -> Reply:
        if request.path.startswith("/series/"):
            return await (await series_api()).handle(request)
        return await api.handle(request)

    async def keep_redis(features: tuple[str, ...]) -> None:
        await (await series_api()).keep_connected(features)

    opened = await open_ports(settings.ports, settings.interfaces)
    open_unix(opened, settings.socket or _default_socket())
    if not opened.listeners:
        raise opened.failure or OSError("no request ports to listen on")
    where = opened.where
    _startup_lines(log, opened)
    if settings.redis_link is not None:  # (PCP's first try is done before any client's)
        with trio.move_on_after(FIRST_REDIS_TRY):
            first_try = (await series_api()).connect_once
            await trio.to_thread.run_sync(first_try, settings.redis_link, abandon_on_cancel=True)
    if settings.systemd:
        _become(settings.username)
    connections = 0
    refused = _Refusals(log)
    redis = None  # [pmproxy] redis.enabled: Redis clients relayed to the servers
    if settings.redis_link is not None and "command keys" in settings.redis_link:
        from . import redisproxy

        store = settings.series
        redis = redisproxy.Relay(store.servers, store.username, store.password)

    async def accept(stream: trio.SocketStream) -> None:
        nonlocal connections
        if connections >= settings.http.max_connections:
            refused.note(settings.http.max_connections)
            await refuse_connection(stream)
            return
        connections += 1
        try:
            await _serve_one(stream)
        finally:
            connections -= 1

    async def _serve_one(stream: trio.SocketStream) -> None:
        try:
            peer = stream.socket.getpeername()
            name = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
            address = peer[0] if isinstance(peer, tuple) else ""
        except OSError:
            name, address = "?", "?"  # (gone already: nothing it asks may write)
        first = await first_bytes(stream, settings.http.idle)
        if not first:
            await stream.aclose()
        elif wants_pcp(first):
            if settings.pcp:
                await relay(stream, first, name)
            else:
                await stream.aclose()
        elif redis is not None and redisproxy.wants_redis(first):
            await redisproxy.serve(stream, first, redis, name)
        elif settings.rest:
            await serve_connection(stream, route, name, address, settings.http, first)
        else:  # (-d: PCP's libpcp mode speaks only the PCP protocol)
            await stream.aclose()

    try:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                for listener in opened.listeners:
                    nursery.start_soon(trio.serve_listeners, accept, [listener])
                nursery.start_soon(groups.sweep_forever)
                if settings.redis_link is not None:  # (PCP connects to Redis at start)
                    nursery.start_soon(keep_redis, settings.redis_link)
                if settings.series.discover:
                    nursery.start_soon(discover_forever, settings.series, log)
                notify_ready()
                task_status.started(where)
                with trio.move_on_after(settings.terminate or float("inf")):
                    async for signum in signals:
                        log.info("pmproxy caught %s", signal.Signals(signum).name)
                        break
                nursery.cancel_scope.cancel()
    finally:
        remove_unix(opened)
        groups.close()
        if series is not None:
            series.close()


def _default_socket() -> str:
    """$PCP_RUN_DIR/pmproxy.socket."""
    try:
        return str(paths().run_dir / "pmproxy.socket")
    except LayoutError:
        return "pmproxy.socket"


def _startup_lines(log: logging.Logger, opened: Opened) -> None:
    """What PCP's pmproxy writes to its log once it listens: its process, user and
    request ports table, as they are (not as notices)."""
    import pwd

    from purepcp.pmapi.daemonlog import port_table

    uid = os.getuid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    sys.stderr.write(f"pmproxy: PID = {os.getpid()}, PDU version = 2, user = {user} ({uid})\n")
    sys.stderr.write(port_table(opened.rows, "pmproxy"))
    sys.stderr.flush()


class NotStarted(Exception):
    """A reason pmproxy cannot start, other than its ports."""


def _become(username: str | None) -> None:
    """-F's change of identity to -U's user (pmSetProcessIdentity), when root."""
    import pwd

    if os.getuid() != 0 or not username:
        return
    try:
        entry = pwd.getpwnam(username)
        os.initgroups(username, entry.pw_gid)
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
    except KeyError:
        raise NotStarted(f"cannot run as user {username}: no such user") from None
    except OSError as exc:
        raise NotStarted(f"cannot run as user {username}: {exc.strerror}") from None


def _series_api(settings: Settings) -> SeriesAPI:
    """The /series/ calls: their engine, Redis's client and NumPy are 25 MB and 150 ms
    that a pmproxy serving only /pmapi and /metrics never spends."""
    from .series import SeriesAPI

    return SeriesAPI(settings.series, settings.limits, settings.load_paths)


class _Refusals:
    """Connections refused for being over http.max.connections: a log line a second at
    most, with how many were refused, however many clients try."""

    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self.count = 0
        self.last = -1.0

    def note(self, limit: int) -> None:
        self.count += 1
        now = trio.current_time()
        if now - self.last >= 1.0:
            self.log.warning("pmproxy: %d connection(s) refused: %d open, [pmproxy] "
                             "http.max.connections", self.count, limit)  # fmt: skip
            self.count, self.last = 0, now


if __name__ == "__main__":
    sys.exit(main())
