"""The pmproxy command: pmproxy(1)'s flags, then serve the REST API and /metrics."""

from __future__ import annotations

import configparser
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from purepcp.pmapi import memory
from purepcp.pmapi.inifile import config_error
from purepcp.pmapi.options import HELP, VERSION, Opt, Tool
from purepcp.pmapi.paths import LayoutError, paths
from purepcp.pmapi.service import daemon_ended, notify_ready, open_daemon_log, raise_fd_limit
from purepcp.series.limits import QueryLimits
from purepcp.series.storeconfig import StoreConfig, StoreError

from .access import WriteAccess
from .groups import DEFAULT_TIMEOUT, DEFAULT_WORK, WebGroups
from .http import HttpLimits, refuse_connection, serve_connection
from .webapi import Reply, Request, WebAPI

if TYPE_CHECKING:  # (the series engine, Redis's client and NumPy load when first used)
    from purepcp.series.discover import Discovery
    from purepcp.series.store import Store

    from .series import SeriesAPI

NO_AVAHI = Opt("A", None, None, "disable service advertisement (none is done)")
FOREGROUND = Opt("f", "foreground", None, "run in the foreground (pmproxy always does)")
SYSTEMD = Opt("F", "systemd", None, "run in systemd mode (as -f, and tell systemd when ready)")
TIMESERIES = Opt("t", "timeseries", None, "REST APIs (always on)")
USERNAME = Opt("U", "username", "USER", "accepted for PCP compatibility; not used")
CONFIG = Opt("c", "config", "PATH", "path to configuration file ([pmwebapi] timeout, work)")
INTERFACE = Opt("i", "interface", "ADDR", "accept connections on this IP address")
PORT = Opt("p", "port", "PORT", "accept connections on this port [default 44322]")
HOSTSPEC = Opt("H", "hostspec", "HOST", "pmcd to use when a request names none [localhost]")
TERMINATE = Opt("T", None, "TIME", "terminate after an elapsed time interval (seconds)")
LOG = Opt("l", "log", "PATH", "redirect diagnostics and trace output ('-' for stderr)")

TOOL = Tool(
    "pmproxy",
    "[options]",
    [
        ("General options", [VERSION, HELP]),
        ("Service options", [NO_AVAHI, FOREGROUND, SYSTEMD, TIMESERIES, USERNAME]),
        ("Configuration options", [CONFIG, HOSTSPEC]),
        ("Connection options", [INTERFACE, PORT]),
        ("Diagnostic options", [TERMINATE, LOG]),
    ],
    help_status=0,  # (as PCP's pmproxy)
)


@dataclass(frozen=True)
class Settings:
    ports: tuple[int, ...]
    interfaces: tuple[str, ...]
    hostspec: str
    timeout: float
    work: float
    terminate: float | None
    log: str | None = None  # -l (None: the layout's pmproxy.log)
    series: StoreConfig = field(default_factory=StoreConfig)  # [redis], [pmseries]...
    writers: WriteAccess = field(default_factory=WriteAccess)  # [pmwebapi] allow.store
    limits: QueryLimits = field(default_factory=QueryLimits)  # [pmseries] limit.*
    load_paths: tuple[str, ...] = ()  # [pmseries] load.paths (none: /series/load is off)
    http: HttpLimits = field(default_factory=HttpLimits)  # [pmproxy] http.*


def default_port() -> int:
    """PMPROXY_PORT's first port, else 44322."""
    first = os.environ.get("PMPROXY_PORT", "").split(",")[0].strip()
    return int(first) if first.isdigit() else 44322


def _seconds_from_ms(config: configparser.ConfigParser, key: str, default: float) -> float:
    text = config.get("pmwebapi", key, fallback=None)
    if text is None:
        return default
    try:
        return int(text, 0) / 1000.0
    except ValueError:
        return default


def options(argv: list[str]) -> Settings:
    parsed = TOOL.parse(argv)
    if parsed.operands:
        TOOL.fail(f"unexpected argument: {parsed.operands[0]}", usage=True)
    ports: list[int] = []
    for o, v in parsed.pairs:
        if o is PORT:
            for part in str(v).split(","):
                if not part.strip().isdigit() or int(part) > 65535:
                    TOOL.fail(f"-p requires a positive numeric argument ({part})", usage=True)
                ports.append(int(part))
    timeout, work = DEFAULT_TIMEOUT, DEFAULT_WORK
    series = StoreConfig()
    writers, limits, load_paths, http = WriteAccess(), QueryLimits(), (), HttpLimits()
    config_path = parsed.get("config")
    if config_path is not None:
        config = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            with open(config_path) as f:
                config.read_file(f)
        except OSError as exc:
            TOOL.fail(f"cannot read {config_path}: {exc.strerror}")
        except configparser.Error as exc:
            TOOL.fail(config_error(config_path, exc))
        timeout = _seconds_from_ms(config, "timeout", timeout)
        work = _seconds_from_ms(config, "work", work)
        try:
            series = StoreConfig.from_parser(config)
            writers, limits, load_paths = _guards(config)
            http = _http_limits(config)
        except (StoreError, ValueError) as exc:
            TOOL.fail(f"{config_path}: {exc}")
    terminate = None
    if "T" in parsed:
        try:
            terminate = float(str(parsed.get("T")))
        except ValueError:
            TOOL.fail(f"-T requires a time interval in seconds ({parsed.get('T')})", usage=True)
    return Settings(
        ports=tuple(ports) or (default_port(),),
        interfaces=tuple(str(v) for o, v in parsed.pairs if o is INTERFACE),
        hostspec=str(parsed.get("hostspec", "localhost")),
        timeout=timeout,
        work=work,
        terminate=terminate,
        log=parsed.get("log"),
        series=series,
        writers=writers,
        limits=limits,
        load_paths=load_paths,
        http=http,
    )


def _number(
    config: configparser.ConfigParser, section: str, key: str, kind: type, *, zero: bool
) -> float | None:
    """[SECTION] KEY as a number of KIND, None when unset; ValueError naming the section
    and key when it is not a number, is negative, or (unless ZERO) is 0."""
    text = config.get(section, key, fallback="").strip()
    if not text:
        return None
    try:
        number = kind(text)
    except ValueError:
        raise ValueError(f"[{section}] {key} = {text}: not a number") from None
    if number < 0 or (number == 0 and not zero):
        least = "of 0 or more" if zero else "above 0"
        raise ValueError(f"[{section}] {key} = {text}: not a number {least}")
    return number


def _http_limits(config: configparser.ConfigParser) -> HttpLimits:
    """[pmproxy] http.idle, http.timeout (seconds), http.max.head and
    http.max.connections; ValueError naming the key of a value that cannot be read."""
    values: dict[str, float] = {}
    for key, name, kind in (
        ("http.idle", "idle", float),
        ("http.timeout", "timeout", float),
        ("http.max.head", "max_head", int),
        ("http.max.connections", "max_connections", int),
    ):
        number = _number(config, "pmproxy", key, kind, zero=False)
        if number is not None:
            values[name] = number
    return replace(HttpLimits(), **values)


def _guards(
    config: configparser.ConfigParser,
) -> tuple[WriteAccess, QueryLimits, tuple[str, ...]]:
    """[pmwebapi] allow.store, [pmseries] limit.terms/series/seconds (0: no limit) and
    load.paths; ValueError naming the section and key of a value that cannot be read."""

    def limit(key: str, default: float | None, kind: type) -> float | None:
        number = _number(config, "pmseries", key, kind, zero=True)
        return default if number is None else number or None

    writers = WriteAccess()
    allow = config.get("pmwebapi", "allow.store", fallback=None)
    if allow is not None:
        try:
            writers = WriteAccess.from_text(allow)
        except ValueError as exc:
            raise ValueError(f"[pmwebapi] allow.store: {exc}") from None
    defaults = QueryLimits()
    limits = QueryLimits(
        terms=limit("limit.terms", defaults.terms, int),  # type: ignore[arg-type]
        series=limit("limit.series", defaults.series, int),  # type: ignore[arg-type]
        seconds=limit("limit.seconds", defaults.seconds, float),
    )
    paths = tuple(config.get("pmseries", "load.paths", fallback="").replace(",", " ").split())
    return writers, limits, paths


def main(argv: list[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    settings = options(argv)
    log_path = settings.log or _default_log()
    try:
        if log_path != "-":
            Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        open_daemon_log("pmproxy", log_path)
    except OSError as exc:
        print(f"pmproxy: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    memory.tune()  # (large buffers are their own mappings, returned when freed)
    # (each web context holds a connection to its pmcd while it lives)
    logging.getLogger("pmproxy").info("pmproxy: %s", raise_fd_limit())
    try:
        trio.run(serve, settings)
    except (OSError, BaseExceptionGroup) as failure:
        return daemon_ended("pmproxy", failure)
    return 0


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

    async def route(request: Request) -> Reply:
        nonlocal series
        if request.path.startswith("/series/"):
            if series is None:
                async with series_loaded:  # the first /series request loads the engine,
                    if series is None:  # in a thread: other clients go on meanwhile
                        series = await trio.to_thread.run_sync(_series_api, settings)
            return await series.handle(request)
        return await api.handle(request)

    listeners: list[trio.SocketListener] = []
    hosts = settings.interfaces or (None,)
    for port in settings.ports:
        for host in hosts:
            listeners.extend(await trio.open_tcp_listeners(port, host=host))
    where = []
    for listener in listeners:
        sockname = listener.socket.getsockname()
        where.append(f"{sockname[0]}:{sockname[1]}" if ":" not in sockname[0]
                     else f"[{sockname[0]}]:{sockname[1]}")  # fmt: skip

    connections = 0
    refused = _Refusals(log)

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
        await serve_connection(stream, route, name, address, settings.http)

    try:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                for listener in listeners:
                    nursery.start_soon(trio.serve_listeners, accept, [listener])
                nursery.start_soon(groups.sweep_forever)
                if settings.series.discover:
                    nursery.start_soon(discover_forever, settings.series, log)
                log.info("pmproxy: listening on %s", ", ".join(where))
                print(f"pmproxy: listening on {', '.join(where)}", file=sys.stderr, flush=True)
                notify_ready()
                task_status.started(where)
                with trio.move_on_after(settings.terminate or float("inf")):
                    async for signum in signals:
                        log.info("pmproxy: %s, shutting down", signal.Signals(signum).name)
                        break
                nursery.cancel_scope.cancel()
    finally:
        groups.close()
        if series is not None:
            series.close()


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
