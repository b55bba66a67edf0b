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

from pmapi import logfile
from pmapi.archive import ArchiveWriter
from pmapi.archive.format import MAX_VOLUME_BYTES, PM_LOG_VERS02, PM_LOG_VERS03
from pmapi.cli.common import HELP, HOST, NAMESPACE, SPECLOCAL, Opt, Tool
from pmapi.errors import PMError
from pmapi.service import notify_ready
from pmapi.timewindow import (
    TimeParseError,
    parse_interval,
    parse_time_window,
    pcp_timezone,
    pcp_zoneinfo,
)
from pmapi.values import Timestamp

from .config import ConfigError, parse_config, parse_config_file
from .logger import Logger
from .logue import SourceFacts, fqdn, source_facts

CONFIG = Opt("c", "config", "FILE", "file to load the logging configuration from")
CHECK = Opt("C", "check", None, "parse the configuration and exit")
LABELHOST = Opt("H", "labelhost", "HOST", "hostname for the archive label, not pmcd's")
LOCAL = Opt("o", "local-PMDA", None, "metrics source is agents loaded in this process")
LOGFILE = Opt("l", "log", "FILE", "redirect diagnostics and trace output")
NOTIFY = Opt("N", "notify", None, "notify the service manager (systemd) when ready")
REPORT = Opt("r", "report", None, "report record sizes and archive growth rate")
SAMPLES = Opt("s", "size", "N", "stop after N records, SIZE bytes (k, m, g) or a time")
INTERVAL = Opt("t", "interval", "DELTA", "default logging interval [60 seconds]")
FINISH = Opt("T", "finish", "TIME", "end of the time window")
UNBUFFERED = Opt("u", None, None, "unbuffered output (the default: this does nothing)")
VOLSIZE = Opt("v", "volsize", "SIZE", "switch volumes after SIZE records or bytes (k, m, g)")
VERSION = Opt("V", "version", "N", "archive version to write (2 or 3) [2]")
NOTE = Opt("m", "note", "MSG", "note for pmlc's port map (accepted; pypcp has no pmlc)")
LOCALZONE = Opt("y", None, None, "set timezone for times in the log file to the local zone")

TOOL = Tool(
    "pmlogger",
    "[options] archive",
    [
        ("General options", [HOST, LOCAL, SPECLOCAL, NAMESPACE, NOTE, FINISH, HELP]),
        (
            "Configuration options",
            [CONFIG, CHECK, LABELHOST, INTERVAL, SAMPLES, VOLSIZE, VERSION, LOGFILE, NOTIFY],
        ),
        ("Reporting options", [REPORT, UNBUFFERED, LOCALZONE]),
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
    check_only = "check" in parsed
    if len(parsed.operands) != 1 and not (check_only and not parsed.operands):
        TOOL.fail("exactly one archive name is required", usage=True)
    base = parsed.operands[0] if parsed.operands else ""
    version = {"2": PM_LOG_VERS02, "3": PM_LOG_VERS03}.get(str(parsed.get("version") or "2"))
    if version is None:
        TOOL.fail(f"-V {parsed.get('version')}: version must be 2 or 3")
    try:
        interval_ms = round(parse_interval(str(parsed.get("interval") or "60")) * 1000)
    except (TimeParseError, ValueError):
        TOOL.fail(f"-t {parsed.get('interval')}: not a valid interval")
    samples = until = max_bytes = None
    if "size" in parsed:
        try:
            samples, max_bytes, seconds = _size(str(parsed.get("size")))
        except (TimeParseError, ValueError):
            TOOL.fail(f"-s {parsed.get('size')}: not a number of records, a size or a time")
        if seconds is not None:
            until = time.time() + seconds
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

    log = sys.stderr if check_only else _open_log(parsed.get("log"))
    if not check_only:
        logfile.header(log, "pmlogger")
        logfile.notify(log, "pmlogger", "Info", "Start")
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
    label_host = parsed.get("labelhost")

    def make_writer(stamp: Timestamp, facts: SourceFacts) -> ArchiveWriter:
        timezone, zoneinfo = facts.timezone, facts.zoneinfo
        if timezone is None:  # (pmcd could not say: this machine's zone)
            timezone, zoneinfo = pcp_timezone(), pcp_zoneinfo()
        return ArchiveWriter(
            base,
            hostname=str(label_host or facts.hostname or hostname),
            timezone=timezone,
            zoneinfo=zoneinfo or "",
            start=stamp,
            version=version,
            volume_limit=volume_limit,
        )

    # (the configuration's names are looked up here, as PCP's pmlogger does while parsing)
    logger = Logger(ctx, config.groups, interval_ms, make_writer, log, report="report" in parsed)
    if not check_only:
        log.write("Config parsed\n")
    if not logger.groups:
        ctx.close()
        TOOL.fail("no metrics to log: the configuration has nothing mandatory on")
    if check_only:  # -C: the configuration parsed and every group resolved against pmcd
        ctx.close()
        return 0
    facts = source_facts(ctx)
    via = parsed.get("host") or ("local context" if ctx.kind != "host" else "local:")
    log.write(f'Starting logger for host "{label_host or facts.hostname or hostname}" ')
    log.write(f'via "{via}"\n')
    log.write(f"Archive basename: {base}\n")
    log.flush()
    flags: dict[str, object] = {"stop": 0, "volume": False}
    switched_at = [0]  # the record count at the last volume switch

    def on_stop(signum: int, _frame: object) -> None:
        flags["stop"] = signum

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

    reason: str | None = None
    status = 0
    try:
        logger.begin(base, fqdn(), facts)
        if "notify" in parsed:
            notify_ready()
        reason = logger.run(
            samples, until, stop=lambda: bool(flags["stop"]), on_idle=idle, max_bytes=max_bytes
        )
    except PMError as exc:  # the archive could not be created or written
        message = f"pmlogger: {exc.detail or exc.message}\n"
        log.write(message)
        if log is not sys.stderr:
            sys.stderr.write(message)
        status = 1
    finally:
        logger.close()
        ctx.close()
    if status == 0:
        if flags["stop"]:
            reason = f"Caught signal {flags['stop']}"
        logfile.notify(log, "pmlogger", "Info", f"pmlogger: {reason or 'End of run time'}, exiting")
    logfile.footer(log)
    return status


def _open_log(path: object) -> TextIO:
    """-l FILE, else pmlogger.log in the current directory (as pmlogger does)."""
    name = str(path) if path else "pmlogger.log"
    if name == "-":
        return sys.stderr
    try:
        return open(name, "a", buffering=1)
    except OSError as exc:
        TOOL.fail(f'Cannot open log file "{name}": {exc.strerror}')


if __name__ == "__main__":
    raise SystemExit(main())
