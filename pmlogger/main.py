"""pmlogger: log metrics from a pmcd (or local agents) into a PCP archive.

    pmlogger [-c CONFIG] [-h HOST | -o] [-s N] [-t INTERVAL] [-T END] [-v SIZE] [-V 2|3]
             [-l LOGFILE] ARCHIVE

SIGTERM and SIGINT end logging cleanly; SIGHUP starts a new volume.  On SIGKILL the
archive stays readable up to the last record written (each record is one write).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from pmapi.archive import ArchiveWriter
from pmapi.archive.format import MAX_VOLUME_BYTES, PM_LOG_VERS02, PM_LOG_VERS03
from pmapi.cli.common import HOST, SPECLOCAL, Opt, Tool
from pmapi.errors import PMError
from pmapi.timewindow import (
    TimeParseError,
    parse_interval,
    parse_time_window,
    pcp_timezone,
    pcp_zoneinfo,
    pm_ctime,
)
from pmapi.values import Timestamp

from .config import ConfigError, parse_config, parse_config_file
from .logger import Logger

CONFIG = Opt("c", "config", "FILE", "file to load the logging configuration from")
LOCAL = Opt("o", "local-PMDA", None, "metrics source is agents loaded in this process")
LOGFILE = Opt("l", "log", "FILE", "redirect diagnostics and trace output")
SAMPLES = Opt("s", "samples", "N", "terminate after N records, or after a time like 10min")
INTERVAL = Opt("t", "interval", "DELTA", "default logging interval [60 seconds]")
FINISH = Opt("T", "finish", "TIME", "end of the time window")
VOLSIZE = Opt("v", "volsize", "SIZE", "switch volumes after SIZE records or bytes (k, m, g)")
VERSION = Opt("V", "version", "N", "archive version to write (2 or 3) [2]")
NOTE = Opt("m", "note", "MSG", "descriptive note for the log file")
LOCALZONE = Opt("y", None, None, "set timezone for times in the log file to the local zone")
HELP = Opt("?", "help", None, "show this usage message and exit")

TOOL = Tool(
    "pmlogger",
    "[options] archive",
    [
        ("General options", [HOST, LOCAL, SPECLOCAL, NOTE, FINISH, HELP]),
        (
            "Configuration options",
            [CONFIG, INTERVAL, SAMPLES, VOLSIZE, VERSION, LOGFILE, LOCALZONE],
        ),
    ],
)

_SIZE = re.compile(r"^(\d+)\s*(b|k|kb|m|mb|g|gb)?$", re.IGNORECASE)
_SCALE = {None: 0, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30}  # fmt: skip


def _size(text: str) -> tuple[int | None, int | None, float | None]:
    """-s/-v as pmlogger's ParseSize reads them: (records, bytes, seconds), one of them set."""
    m = _SIZE.match(text.strip())
    if m:
        n, unit = int(m.group(1)), (m.group(2) or "").lower() or None
        return (n, None, None) if unit is None else (None, n * _SCALE[unit], None)
    return None, None, parse_interval(text)


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    parsed = TOOL.parse(argv)
    if len(parsed.operands) != 1:
        TOOL.fail("exactly one archive name is required", usage=True)
    base = parsed.operands[0]
    version = {"2": PM_LOG_VERS02, "3": PM_LOG_VERS03}.get(str(parsed.get("version") or "2"))
    if version is None:
        TOOL.fail(f"-V {parsed.get('version')}: version must be 2 or 3")
    try:
        interval_ms = round(parse_interval(str(parsed.get("interval") or "60")) * 1000)
    except (TimeParseError, ValueError):
        TOOL.fail(f"-t {parsed.get('interval')}: not a valid interval")
    samples = until = None
    if "samples" in parsed:
        try:
            records, _bytes, seconds = _size(str(parsed.get("samples")))
        except (TimeParseError, ValueError):
            TOOL.fail(f"-s {parsed.get('samples')}: not a number of records or a time")
        samples = records
        if seconds is not None:
            until = time.time() + seconds
        if _bytes is not None:
            TOOL.fail("-s with a size in bytes is not available in pypcp: give records or a time")
    volume_limit = MAX_VOLUME_BYTES
    volume_records = None
    if "volsize" in parsed:
        try:
            records, nbytes, _seconds = _size(str(parsed.get("volsize")))
        except (TimeParseError, ValueError):
            TOOL.fail(f"-v {parsed.get('volsize')}: not a volume size")
        if nbytes is not None:
            volume_limit = nbytes
        volume_records = records
    if "finish" in parsed:
        now = time.time_ns()
        try:
            window = parse_time_window(
                None, str(parsed.get("finish")), None, None, (now // 10**9, now % 10**9), None
            )
        except TimeParseError as exc:
            TOOL.fail(exc.errmsg)
        end = window.end_ns / 1e9
        until = end if until is None else min(until, end)

    log = _open_log(parsed.get("log"))
    try:
        config_path = parsed.get("config")
        if config_path is None or config_path == "-":
            text = sys.stdin.read()
            config = parse_config(text, "stdin", default_interval_ms=interval_ms)
        else:
            config = parse_config_file(str(config_path), default_interval_ms=interval_ms)
    except ConfigError as exc:
        TOOL.fail(str(exc))
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        TOOL.fail(f'Cannot open config file "{parsed.get("config")}": {reason}')
    for warning in config.warnings:
        log.write(warning + "\n")

    ctx = TOOL.context(parsed)  # -h HOST, -o (the key local-PMDA, as -L), else local:
    hostname = ctx.hostname if ctx.kind == "host" else socket.gethostname()
    if hostname in ("localhost", "local:", "") or hostname.startswith("/"):
        hostname = socket.gethostname()

    def make_writer(stamp: Timestamp) -> ArchiveWriter:
        return ArchiveWriter(
            base,
            hostname=hostname,
            timezone=pcp_timezone(),
            zoneinfo=pcp_zoneinfo() or "",
            start=stamp,
            version=version,
            volume_limit=volume_limit,
        )

    logger = Logger(ctx, config.groups, interval_ms, make_writer, log)
    if not logger.groups:
        TOOL.fail("no metrics to log: the configuration has nothing mandatory on")
    _banner(log, hostname, base, parsed.get("note"))
    flags = {"stop": False, "volume": False}
    switched_at = [0]  # the record count at the last volume switch

    def on_stop(signum: int, _frame: object) -> None:
        flags["stop"] = True

    def on_hup(signum: int, _frame: object) -> None:
        flags["volume"] = True

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGHUP, on_hup)

    def idle() -> None:
        writer = logger.writer
        if writer is None:
            return
        due = volume_records is not None and logger.records - switched_at[0] >= volume_records
        if flags["volume"] or due:
            flags["volume"] = False
            switched_at[0] = logger.records
            stamp = logger.last_stamp or Timestamp.now()
            vol = writer.new_volume(stamp)
            log.write(f"New log volume {vol}, via {'SIGHUP' if not due else 'volume size'}\n")
            log.flush()

    try:
        logger.run(samples, until, stop=lambda: flags["stop"], on_idle=idle)
    except PMError as exc:  # the archive could not be created or written
        message = f"pmlogger: {exc.detail or exc.message}\n"
        log.write(message)
        if log is not sys.stderr:
            sys.stderr.write(message)
        return 1
    finally:
        logger.close()
        ctx.close()
        log.write(f"pmlogger: {logger.records} records logged; end of logging\n")
        log.flush()
    return 0


def _open_log(path: object) -> TextIO:
    """-l FILE, else pmlogger.log in the current directory (as pmlogger does)."""
    name = str(path) if path else "pmlogger.log"
    if name == "-":
        return sys.stderr
    try:
        return open(name, "a", buffering=1)
    except OSError as exc:
        TOOL.fail(f'Cannot open log file "{name}": {exc.strerror}')


def _banner(log: TextIO, host: str, base: str, note: object) -> None:
    started = pm_ctime(Timestamp.now())
    log.write(f"Log for pmlogger on {host} started {started}\n\n")
    if note:
        log.write(f"Note: {note}\n")
    log.write(f"Archive basename: {base}\n")
    log.flush()


if __name__ == "__main__":
    raise SystemExit(main())
