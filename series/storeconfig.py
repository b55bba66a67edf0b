"""Where the series store is and how it is kept: pmseries.conf's [redis], [pmseries] and
[discover] sections, and StoreError.  No Redis client here: a pmproxy whose clients
never ask for series, and a tool reading its configuration, do not load one.
"""

from __future__ import annotations

import configparser
import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from purepcp.pmapi.inifile import config_error

from . import schema


class StoreError(Exception):
    """The key server cannot be used: MESSAGE says why, in one line.  REASON, for a
    connection the server refused or never answered, is why in the words PCP's "Cannot
    connect to Redis: ..." gives (the system's or the server's)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class StoreDown(StoreError):
    """The connection to the key server broke (it stopped or restarted)."""


@dataclass(frozen=True)
class StoreConfig:
    """[redis], [pmseries] and [discover] of pmseries.conf / pmproxy.conf."""

    servers: tuple[tuple[str, int], ...] = (("localhost", 6379),)
    username: str | None = None
    password: str | None = None
    maxlen: int = schema.DEFAULT_MAXLEN
    expire: int = schema.DEFAULT_EXPIRE
    cursor_count: int = schema.DEFAULT_CURSOR_COUNT
    exclude_metrics: tuple[str, ...] = ()
    exclude_indoms: tuple[int, ...] = ()
    discover: bool = False
    discover_path: str | None = None
    timeout: float = 10.0
    extra: dict[str, str] = field(default_factory=dict, compare=False)

    @classmethod
    def from_parser(cls, config: configparser.ConfigParser) -> StoreConfig:
        """Read the sections PCP reads; a bad number names its section and key."""

        def text(section: str, key: str, fallback: str | None = None) -> str | None:
            return config.get(section, key, fallback=fallback)

        def number(section: str, key: str, default: int) -> int:
            value = text(section, key)
            if value is None or not value.strip():
                return default
            try:
                return int(value)
            except ValueError:
                raise StoreError(f"[{section}] {key} = {value}: not a number") from None

        servers_text = text("redis", "servers") or text("pmseries", "servers")
        servers = parse_servers(servers_text) if servers_text else cls.servers
        return cls(
            servers=servers,
            username=text("redis", "username") or text("pmseries", "auth.username"),
            password=text("redis", "password") or text("pmseries", "auth.password"),
            maxlen=number("pmseries", "stream.maxlen", schema.DEFAULT_MAXLEN),
            expire=number("pmseries", "stream.expire", schema.DEFAULT_EXPIRE),
            cursor_count=number("pmseries", "cursor.count", schema.DEFAULT_CURSOR_COUNT),
            exclude_metrics=_list(text("discover", "exclude.metrics")),
            exclude_indoms=tuple(_indom(t) for t in _list(text("discover", "exclude.indoms"))),
            discover=_true(text("discover", "enabled")),
            discover_path=text("discover", "path"),
        )

    @classmethod
    def from_files(cls, paths: Sequence[str]) -> StoreConfig:
        """Merge the files that exist, later ones winning; a file that cannot be read as
        INI is a StoreError naming its line."""
        config = configparser.ConfigParser(interpolation=None, strict=False)
        for path in paths:
            try:
                with open(path) as f:
                    config.read_file(f)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StoreError(f"cannot read {path}: {exc.strerror}") from None
            except configparser.Error as exc:
                raise StoreError(config_error(path, exc)) from None
        return cls.from_parser(config)

    def excluded(self, names: Iterable[str]) -> bool:
        """Whether any of a metric's NAMES matches [discover] exclude.metrics."""
        return any(fnmatch.fnmatchcase(n, p) for n in names for p in self.exclude_metrics)


def parse_servers(text: str) -> tuple[tuple[str, int], ...]:
    """`host:port[,host:port...]` (a missing port is 6379)."""
    servers = []
    for item in _list(text):
        host, sep, port = item.rpartition(":")
        if not sep:
            host, port = item, "6379"
        try:
            servers.append((host or "localhost", int(port)))
        except ValueError:
            raise StoreError(f"bad Redis server {item!r}: the port is not a number") from None
    return tuple(servers)


def _list(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def _true(text: str | None) -> bool:
    return (text or "").strip().lower() in ("1", "true", "yes", "on")


def _indom(text: str) -> int:
    domain, _, serial = text.partition(".")
    try:
        return (int(domain) << 22) | int(serial)
    except ValueError:
        raise StoreError(f"[discover] exclude.indoms: {text!r} is not domain.serial") from None
