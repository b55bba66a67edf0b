"""The key server pmseries talks to: the configuration files PCP's pmseries merges (or
-c's), with -h and -p in place of their servers."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from purepcp.series.store import Store, StoreConfig, StoreError

from .options import PROG, TOOL
from .request import Request

DEFAULT_PORT = 6379


def config_paths(given: str | None) -> list[str]:
    """-c's file alone, else the files PCP's pmseries merges, later ones winning."""
    if given:
        return [given]
    sysconf = os.environ.get("PCP_SYSCONF_DIR", "/etc/pcp")
    home = os.path.expanduser("~")
    return [
        os.path.join(sysconf, "pmseries", "pmseries.conf"),
        os.path.join(home, ".pmseries.conf"),
        os.path.join(home, ".pcp", "pmseries.conf"),
        "pmseries.conf",
    ]


def store_config(request: Request) -> StoreConfig:
    """The configuration; -h and -p replace its servers as PCP's do (the host defaults
    to localhost, and -p 6379 alone changes nothing)."""
    given = request.config
    if given and not os.path.exists(given):
        TOOL.fail(f"cannot read {given}: No such file or directory")
    try:
        config = StoreConfig.from_files(config_paths(given))
    except StoreError as exc:
        TOOL.fail(str(exc))
    host = request.host
    port = DEFAULT_PORT
    if request.port is not None:
        try:
            port = int(request.port)
        except ValueError:
            TOOL.fail(f"invalid port {request.port!r}")
    if host is not None or port != DEFAULT_PORT:
        return replace(config, servers=((host or "localhost", port),))
    return config


def connect(config: StoreConfig) -> Store:
    """The key server's client.  A server that cannot be reached (or refuses us) ends the
    run as it ends PCP's: one Info line on stderr, and status 0 (PCP's pmseries reports
    nothing as an error, and so exits as though it had nothing to say)."""
    try:
        return Store(config)
    except StoreError as exc:
        if exc.reason is None:
            TOOL.fail(f"[Error] {exc}")
        from purepcp.pmapi import logfile

        sys.stdout.flush()
        logfile.notify(sys.stderr, PROG, "Info", f"Cannot connect to Redis: {exc.reason}")
        raise SystemExit(0) from None
