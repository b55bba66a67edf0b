"""pmproxy(1)'s command line and configuration file, read into Settings.

Every option PCP 6.0.3's pmproxy takes is taken, with its complaints: see
docs/pmproxy.md for the few that change nothing here.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass, field, replace
from typing import NoReturn

from purepcp.pmapi.inifile import config_error
from purepcp.pmapi.options import DEBUG, HELP, VERSION, Opt, Parsed, Tool
from purepcp.series.limits import QueryLimits
from purepcp.series.storeconfig import StoreConfig, StoreError

from .access import WriteAccess
from .groups import DEFAULT_TIMEOUT, DEFAULT_WORK
from .http import HttpLimits

NO_AVAHI = Opt("A", None, None, "disable service advertisement (none is done)")
DEPRECATED = Opt("d", "deprecated", None, "backward-compatibility mode; no REST APIs")
FOREGROUND = Opt("f", "foreground", None, "run in the foreground (pmproxy always does)")
SYSTEMD = Opt("F", "systemd", None, "run in systemd mode (as -f, tell systemd, become -U)")
TIMESERIES = Opt("t", "timeseries", None, "automatic, scalable timeseries; REST APIs")
USERNAME = Opt("U", "username", "USER", "in systemd mode, run as named user")
CONFIG = Opt("c", "config", "PATH", "path to configuration file (implies --timeseries)")
PDU_CEILING = Opt("L", None, "BYTES", "maximum size for PDUs from clients [default 65536]")
HOSTSPEC = Opt("H", "hostspec", "HOST", "pmcd to use when a request names none [localhost]")
INTERFACE = Opt("i", "interface", "ADDR", "accept connections on this IP address")
PORT = Opt("p", "port", "PORT", "accept connections on this port [default 44322]")
SOCKET = Opt("s", "socket", "PATH", "Unix domain socket file [default $PCP_RUN_DIR/pmproxy.socket]")
REDISPORT = Opt("r", "redisport", "PORT", "connect to Redis on this TCP/IP port (implies -t)")
REDISHOST = Opt("h", "redishost", "HOST", "connect to Redis on this host name (implies -t)")
TERMINATE = Opt("T", None, "TIME", "terminate after an elapsed time interval")
LOG = Opt("l", "log", "PATH", "redirect diagnostics and trace output ('-' for stderr)")
FATAL = Opt("x", None, "PATH", "fatal messages at startup sent to file [default /dev/tty]")

TOOL = Tool(
    "pmproxy",
    "[options]",
    [
        ("General options", [DEBUG, VERSION, HELP]),
        ("Service options", [NO_AVAHI, DEPRECATED, FOREGROUND, SYSTEMD, TIMESERIES, USERNAME]),
        ("Configuration options", [CONFIG, PDU_CEILING, HOSTSPEC]),
        ("Connection options", [INTERFACE, PORT, SOCKET, REDISPORT, REDISHOST]),
        ("Diagnostic options", [TERMINATE, LOG, FATAL]),
    ],
    help_status=0,  # (as PCP's pmproxy)
)

#: PCP's ports: PROXY_PORT, and WEBAPI_PORT too when the REST APIs are on
PROXY_PORT, WEBAPI_PORT = 44322, 44323


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
    socket: str | None = None  # -s or $PMPROXY_SOCKET (None: $PCP_RUN_DIR/pmproxy.socket)
    rest: bool = True  # HTTP (REST APIs, /metrics); -d turns it off
    pcp: bool = True  # [pmproxy] pcp.enabled: the PCP protocol proxy
    debug: list[str] = field(default_factory=list)  # -D's options
    systemd: bool = False  # -F
    username: str | None = None  # -U
    fatal: str = "/dev/tty"  # -x
    warnings: tuple[str, ...] = ()  # what $PMPROXY_* in the environment changed
    #: connect to Redis at start, and keep connected, saying "Redis slots, ... setup"
    #: with these; None: connect at the first /series/ request
    redis_link: tuple[str, ...] | None = None


def _port_list(text: str) -> list[int] | None:
    """A comma-separated list of ports (__pmServerAddPorts), None if any is not one."""
    ports = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) > 65535:
            return None
        ports.append(int(part))
    return ports


def _seconds_from_ms(config: configparser.ConfigParser, key: str, default: float) -> float:
    text = config.get("pmwebapi", key, fallback=None)
    if text is None:
        return default
    try:
        return int(text, 0) / 1000.0
    except ValueError:
        return default


def _strtol(text: str) -> int:
    """strtol(TEXT, NULL, 0): the leading number, 0 when there is none."""
    from purepcp.pmapi.cnumbers import strtol

    value = strtol(text, 0)[0]
    return value if isinstance(value, int) else 0


def options(argv: list[str]) -> Settings:
    """pmproxy's command line, checked as PCP's ParseOptions checks it: every problem
    is reported, then the usage, and pmproxy does not start (see -x)."""
    from purepcp.pmapi.options import debug_spec_ok

    parsed = TOOL.parse(argv)
    errors: list[str] = []
    if parsed.operands:
        errors.append(f"unexpected argument: {parsed.operands[0]}")
    ports, env_warnings = _environment_ports()
    rest, mode = True, None
    redis_host, redis_port = None, 6379
    for o, v in parsed.pairs:
        if o is PORT:
            more = _port_list(str(v))
            if more is None:
                errors.append(f"-p requires a positive numeric argument ({v})")
            else:
                ports += more
        elif o is DEBUG and not debug_spec_ok(str(v)):
            errors.append(f"unrecognized debug options specification ({v})")
        elif o in (FOREGROUND, SYSTEMD):
            if mode is not None:
                errors.append("at most one of -f and -F allowed")
            mode = o
        elif o is PDU_CEILING and _strtol(str(v)) <= 0:
            errors.append("-L requires a positive value")
        elif o is REDISPORT:
            redis_port = _strtol(str(v))
            if redis_port <= 0:
                errors.append("-r requires a positive value")
        elif o is REDISHOST:
            redis_host = str(v)
        if o in (CONFIG, REDISHOST, REDISPORT, TIMESERIES):
            rest = True
        elif o is DEPRECATED:
            rest = False
    terminate = _terminate(parsed, errors)
    if errors:
        _refuse(parsed, errors)
    settings, servers_given = _from_config(parsed)
    if not ports:
        ports = [PROXY_PORT, WEBAPI_PORT] if rest else [PROXY_PORT]
    interfaces = [str(v) for o, v in parsed.pairs if o is INTERFACE]
    if os.environ.get("PMPROXY_LOCAL", "0").strip() not in ("", "0"):
        interfaces.append("127.0.0.1")
        env_warnings.append(
            f"localhost only from PMPROXY_LOCAL={os.environ['PMPROXY_LOCAL']} in environment"
        )
    series = settings.series
    if redis_host is not None or redis_port != 6379 or not servers_given:
        series = replace(series, servers=((redis_host or "localhost", redis_port),))
    return replace(
        settings,
        ports=tuple(dict.fromkeys(ports)),
        interfaces=tuple(interfaces),
        hostspec=str(parsed.get("hostspec", "localhost")),
        terminate=terminate,
        log=parsed.get("log"),
        series=series,
        socket=parsed.get("socket") or os.environ.get("PMPROXY_SOCKET") or None,
        rest=rest,
        debug=[str(v) for o, v in parsed.pairs if o is DEBUG],
        systemd=mode is SYSTEMD,
        username=parsed.get("username"),
        fatal=str(parsed.get("x", "/dev/tty")),
        warnings=tuple(env_warnings),
    )


def _environment_ports() -> tuple[list[int], list[str]]:
    """$PMPROXY_PORT's ports (-p adds to them, as in PCP), and the warning it earns."""
    text = os.environ.get("PMPROXY_PORT")
    if text is None:
        return [], []
    ports = [int(p) for p in text.split(",") if p.strip().isdigit() and int(p) <= 65535]
    return ports, [f"nports={len(ports)} from PMPROXY_PORT={text} in environment"]


def _terminate(parsed: Parsed, errors: list[str]) -> float | None:
    """-T's interval in seconds (pmParseInterval), None without it."""
    from purepcp.pmapi.timewindow.interval import parse_interval
    from purepcp.pmapi.timewindow.scanning import TimeParseError

    if "T" not in parsed:
        return None
    try:
        return parse_interval(str(parsed.get("T")))
    except TimeParseError:
        errors.append("bad -T interval format:")
        return None


def _refuse(parsed: Parsed, errors: list[str]) -> NoReturn:
    """PCP's way with bad options: each problem, the usage, then "not started"."""
    import sys

    for problem in errors:
        sys.stderr.write(f"pmproxy: {problem}\n")
    sys.stderr.write(TOOL.usage())
    dont_start(str(parsed.get("x", "/dev/tty")), parsed.get("log"))


def dont_start(fatal: str, log: str | None) -> NoReturn:
    """PCP's DontStart: say in FATAL (-x, /dev/tty by default, if it can be opened)
    that pmproxy did not start, with its log's text, and exit with status 1."""
    import logging

    if logging.getLogger().handlers:  # (the log is open)
        logging.getLogger("pmproxy").error("pmproxy not started due to errors!")
    try:
        with open(fatal, "w") as out:
            out.write("NOTE: pmproxy not started due to errors!  ")
            log = log or "pmproxy.log"
            try:
                with open(log, errors="replace") as text:
                    out.write(f'Log file "{log}" contains ...\n{text.read()}')
            except OSError:
                out.write(f'Log file "{log}" has vanished!\n')
    except OSError:
        pass
    raise SystemExit(1)


def _from_config(parsed: Parsed) -> tuple[Settings, bool]:
    """The settings -c's file gives (the defaults without -c), and whether it names
    Redis servers; a file that cannot be read or holds a bad value ends the run."""
    settings = Settings(
        ports=(),
        interfaces=(),
        hostspec="localhost",
        timeout=DEFAULT_TIMEOUT,
        work=DEFAULT_WORK,
        terminate=None,
    )
    path = parsed.get("config") or _default_config()
    if path is None:
        return settings, False
    config = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        with open(path) as f:
            config.read_file(f)
        if "config" not in parsed:  # (the user's own settings, merged as PCP merges them)
            config.read(os.path.expanduser("~/.pcp/pmproxy.conf"))
        series = StoreConfig.from_parser(config)
        writers, limits, load_paths = _guards(config)
        http = _http_limits(config)
    except OSError as exc:
        _config_failed(parsed, f"cannot read {path}: {exc.strerror}")
    except configparser.Error as exc:
        _config_failed(parsed, config_error(path, exc))
    except (StoreError, ValueError) as exc:
        _config_failed(parsed, f"{path}: {exc}")
    servers = any(config.get(s, "servers", fallback=None) for s in ("redis", "pmseries"))
    return replace(
        settings,
        timeout=_seconds_from_ms(config, "timeout", DEFAULT_TIMEOUT),
        work=_seconds_from_ms(config, "work", DEFAULT_WORK),
        series=series,
        writers=writers,
        limits=limits,
        load_paths=load_paths,
        http=http,
        pcp=_true(config.get("pmproxy", "pcp.enabled", fallback="true")),
        redis_link=_redis_link(config),
    ), servers


def _default_config() -> str | None:
    """$PCP_SYSCONF_DIR/pmproxy/pmproxy.conf, which pmproxy reads without -c, if it
    exists."""
    from purepcp.pmapi.paths import LayoutError, paths

    try:
        path = paths().sysconf_dir / "pmproxy" / "pmproxy.conf"
    except LayoutError:
        return None
    return str(path) if path.is_file() else None


def _redis_link(config: configparser.ConfigParser) -> tuple[str, ...] | None:
    """What PCP's pmproxy connects to Redis at start for, in the words its "Redis slots,
    ... setup" line gives: [pmproxy] redis.enabled (command keys), [pmseries] enabled
    (schema version), or [discover] enabled; None when none is on, or [redis] enabled
    is false."""
    if config.get("redis", "enabled", fallback="").strip() == "false":
        return None

    def on(section: str, key: str) -> bool:
        return config.get(section, key, fallback="").strip() == "true"

    features = []
    if on("pmproxy", "redis.enabled"):
        features.append("command keys")
    if on("pmseries", "enabled"):
        features.append("schema version")
    if features or on("discover", "enabled"):
        return tuple(features)
    return None


def _config_failed(parsed: Parsed, message: str) -> NoReturn:
    """A configuration file pmproxy cannot use: one line, and pmproxy does not start."""
    import sys

    sys.stderr.write(f"pmproxy: {message}\n")
    dont_start(str(parsed.get("x", "/dev/tty")), parsed.get("log"))


def _true(text: str) -> bool:
    """An ini file's boolean as PCP reads it: "true" (any case) or a non-zero number."""
    text = text.strip().lower()
    return text == "true" or (text.isdigit() and int(text) != 0)


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
