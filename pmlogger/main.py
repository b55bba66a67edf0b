"""pmlogger: log metrics from a pmcd (or local agents) into a PCP archive.

    pmlogger [-c CONFIG] [-h HOST | -o] [-P] [-s N] [-t INTERVAL] [-T END] [-v SIZE]
             [-V 2|3] [-l LOGFILE] [-L] [-p PID] [-U USER] [-x FD] ARCHIVE

ARCHIVE may hold strftime(3) meta-characters (``%Y%m%d.%H.%M``), expanded in local time
when each archive is created; a name taken already gets -00, -01, ... (archname.py).
SIGTERM and SIGINT end logging cleanly; SIGHUP starts a new volume; SIGUSR2 closes the
archive and starts a new one from the same template, as PCP's re-exec does, in this
process (same configuration and connection; -s and relative -T limits start again).
-L (or -P) runs on with nothing to log; -p PID ends logging when that process does; -x
FD takes pmRecordControl's messages (lifetime.py); -U USER runs as USER.  pmlc talks to
the logger on its control port (control.py; -I sets the LOG PDU version offered there,
-m the port map file's note); -D is checked and changes little.
-P (the primary logger) keeps its PID in $PCP_RUN_DIR/pmlogger.pid for pmlogger_daily.
On SIGKILL the archive stays readable up to the last record written (each record is
one write).  A write that fails (a full disk: ENOSPC, EFBIG, EIO ...) ends the run with
one line, in the log and on stderr, and status 1; the archive ends at its last whole
record (the writer cuts a torn one off) and nothing more is written to it.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import ipaddress
import os
import re
import signal
import socket
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from purepcp.pmapi import logfile
from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.format import MAX_VOLUME_BYTES, PM_LOG_VERS02, PM_LOG_VERS03
from purepcp.pmapi.errors import PMError
from purepcp.pmapi.options import DEBUG, HELP, HOST, NAMESPACE, SPECLOCAL, Opt, Parsed, Tool
from purepcp.pmapi.paths import LayoutError, paths
from purepcp.pmapi.pdu import logcontrol as lc
from purepcp.pmapi.pidfile import remove_pidfile, write_pidfile
from purepcp.pmapi.service import notify_ready
from purepcp.pmapi.timewindow import (
    TimeParseError,
    parse_interval,
    parse_time_window,
    pcp_timezone,
    pcp_zoneinfo,
)
from purepcp.pmapi.values import Timestamp

from .archname import ArchiveNameError, choose, make_parents
from .config import ConfigError, LoggerConfig, parse_config, parse_config_file
from .logger import Logger
from .logue import SourceFacts, fqdn, source_facts
from .pidfile import FILENAME as PIDFILE

if TYPE_CHECKING:
    from purepcp.pmapi.context import Context

    from .control import ControlPort
    from .logstate import LogState
    from .namecache import NameCache

CONFIG = Opt("c", "config", "FILE", "file to load the logging configuration from")
CHECK = Opt("C", "check", None, "parse configuration and exit")
LABELHOST = Opt("H", "labelhost", "HOST", "hostname for the archive label, not pmcd's")
LOCAL = Opt("o", "local-PMDA", None, "metrics source is agents loaded in this process")
LOGFILE = Opt("l", "log", "FILE", "redirect diagnostics and trace output")
NOTIFY = Opt("N", "notify", None, "notify the service manager (systemd) when ready")
PRIMARY = Opt("P", "primary", None, "execute as primary logger instance")
REPORT = Opt("r", "report", None, "report record sizes and archive growth rate")
SAMPLES = Opt("s", "size", "N", "stop after N samples, SIZE bytes (k, m, g) or a time")
INTERVAL = Opt("t", "interval", "DELTA", "default logging interval [60 seconds]")
FINISH = Opt("T", "finish", "TIME", "end of the time window")
UNBUFFERED = Opt("u", None, None, "unbuffered output (the default: this does nothing)")
VOLSIZE = Opt("v", "volsize", "SIZE", "switch volumes after SIZE samples or bytes (k, m, g)")
VERSION = Opt("V", "version", "N", "archive version to write (2 or 3) [2]")
NOTE = Opt("m", "note", "MSG", "descriptive note to be added to the port map file")
LOCALZONE = Opt("y", None, None, "set timezone for times in the log file to the local zone")
IPC = Opt(
    "I", "pmlc-ipc-version", "VERSION", "set IPC version for pmlc port [defaily LOG_PDU_VERSION]"
)
LINGER = Opt("L", "linger", None, "run even if not primary logger instance and nothing to log")
PID = Opt("p", "PID", "PID", "log for the lifetime of process PID")
USERNAME = Opt("U", "username", "USER", "run as the named user")
CONTROL = Opt("x", None, "FD", "control file descriptor of a recording session")
#: accepted, not listed: -f, in PCP's getopt string, which its pmlogger then refuses with
#: the usage alone (and -D, as every PCP tool's)
STRAY_F = Opt("f", None, None, "")

TOOL = Tool(
    "pmlogger",
    "[options] archive",
    [
        (
            "General options",
            [HOST, LOCAL, SPECLOCAL, NAMESPACE, NOTE, IPC, PRIMARY, LINGER, PID, FINISH],
        ),
        (
            "Configuration options",
            [CONFIG, CHECK, LABELHOST, INTERVAL, SAMPLES, VOLSIZE, VERSION, LOGFILE, NOTIFY],
        ),
        ("Reporting options", [REPORT, UNBUFFERED, LOCALZONE]),
        ("Daemon options", [USERNAME, CONTROL, HELP]),
        ("", [DEBUG, STRAY_F]),
    ],
)

_UNITS = {
    1: ("b", "byte"),
    1 << 10: ("k", "kb", "kib", "kbyte", "kibibyte", "kilobyte"),
    1 << 20: ("m", "mb", "mib", "mbyte", "mebibyte", "megabyte"),
    1 << 30: ("g", "gb", "gib", "gbyte", "gibibyte", "gigabyte"),
}
_SCALE = {word: scale for scale, words in _UNITS.items() for word in words}
_LEADING = re.compile(r"\s*[+-]?\d+")


def _size(text: str) -> tuple[int | None, int | None, float | None]:
    """-s/-v as pmlogger's ParseSize reads them: (samples, bytes, seconds), one of them set.

    A positive whole number alone counts samples; followed at once by a unit (any case,
    a plural "s" dropped: 4000bytes, 2kb, 1GiB) it is a size; else the text must be a
    time (with a positive whole number first, as strtol reads it).  ValueError if not.
    """
    m = _LEADING.match(text)
    number = int(m.group()) if m else 0
    if number <= 0:
        raise ValueError(text)
    rest = text[m.end() :] if m else text
    if not rest:
        return number, None, None
    unit = rest.lower()
    unit = unit[:-1] if unit.endswith("s") else unit
    if unit in _SCALE:
        return None, number * _SCALE[unit], None
    return None, None, parse_interval(text)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the command itself: let ps see it as PCP's pmlogger
        show_as_pmlogger(sys.argv)
    return TOOL.main(_run, argv)


def show_as_pmlogger(argv: Sequence[str]) -> None:
    """Have ps show this process as libpcp's pmRecordControl starts PCP's pmlogger,
    "pmlogger ARGS" without the Python interpreter before it, and name it pmlogger (its
    comm): what pmlc users, QA's process lists and pgrep look for."""
    from purepcp.pmapi.proctitle import set_command_line, set_process_name

    set_process_name("pmlogger")
    set_command_line(["pmlogger", *argv[1:]])


def _run(argv: list[str]) -> int:
    """Set up (options, log, configuration, metrics source, logger), then log until the
    end: the exit status."""
    parsed = TOOL.parse(argv)
    settings = _settings(parsed)
    if settings.username is not None:  # (early, as PCP's daemon mode changes user)
        from purepcp.pmapi.identity import switch_user

        switch_user(settings.username, "pmlogger")
    log = sys.stderr if settings.check_only else _open_log(parsed.get("log"))
    if not settings.check_only:
        logfile.header(log, "pmlogger")
    logfile.notify(log, "pmlogger", "Info", "Start")  # (-C too: on stderr, as PCP's)
    config = _load_config(parsed.get("config"), settings.interval_ms, log)
    for warning in config.warnings:
        log.write(warning + "\n")

    ctx = TOOL.context(parsed)  # -h HOST, -o (the key local-PMDA, as -L), else local:
    names = _name_cache(ctx, config, settings.debug, log)
    archives = _Archives(settings, _source_hostname(ctx))
    # (pmlc's port first: a client may connect while the names are looked up, and is
    # answered once logging begins)
    port = None if settings.check_only else _open_port(settings, config, archives, ctx, log)
    # (the configuration's names are looked up here, as PCP's pmlogger does while parsing)
    logger = Logger(
        ctx,
        config.groups,
        settings.interval_ms,
        archives.writer,
        log,
        report=settings.report,
        debug=settings.debug,
        name_cache=names,
    )
    log.write("Config parsed\n")
    if settings.check_only:  # -C: the configuration parsed, every group resolved by pmcd
        ctx.close()
        return 0
    facts = source_facts(ctx)
    via = parsed.get("host") or ("local context" if ctx.kind != "host" else "local:")
    log.write(f"Starting {'primary ' if settings.primary else ''}logger for host ")
    log.write(f'"{archives.label_host(facts)}" via "{via}"\n')
    log.flush()
    if not config.groups and not (settings.linger or settings.primary):
        if port is not None:
            port.close()
        return _nothing_to_log(ctx, log)
    # (statements whose metrics all failed log nothing, and pmlogger goes on, as PCP's)
    run = _Run(settings, log, ctx, logger, archives)
    run.via = str(via)
    run.port = port
    if port is not None:
        port.service = _Service(run)
    return run.run(facts)


def _open_port(
    settings: _Settings, config: LoggerConfig, archives: _Archives, ctx: Context, log: TextIO
) -> ControlPort | None:
    """pmlc's control port, and the port map file that says where it is (the first
    archive's name is chosen here for it)."""
    from .control import AccessList, AccessRule, ControlPort, Registration

    try:
        layout = paths()
        tmp_dir, run_dir = layout.tmp_dir, layout.run_dir
    except LayoutError:
        return None
    note = settings.note
    if note is None and settings.control_fd is not None:
        note = f"-x {settings.control_fd}"
    host = archives.label_host(source_facts(ctx))
    try:
        first = archives.reserve()
    except ArchiveNameError:  # (reported, as PCP reports it, where the archive is made)
        return None
    reg = Registration(host, first, note, settings.primary)
    access = AccessList(tuple(AccessRule(*rule) for rule in config.access_rules))
    port = ControlPort(None, log, access, settings.ipc_version)
    port.open(reg, tmp_dir, run_dir)
    atexit.register(port.close)
    return port


def _name_cache(
    ctx: Context, config: LoggerConfig, debug: frozenset[str], log: TextIO
) -> NameCache | None:
    """-D appl6: PCP's pmlogger's name cache built as its pass0 and pass1 build it, with
    their trace (appl7 turns the cache off); None without appl6."""
    if "appl6" not in debug:
        return None
    from .namecache import NameCache

    cache = NameCache(ctx)
    if "appl7" not in debug:
        cache.build(config.preprocessed())
    log.write("".join(cache.trace) + cache.dump())
    log.flush()
    return cache


def _nothing_to_log(ctx: Context, log: TextIO) -> int:
    """A configuration with no logging statement at all: PCP's good-bye, in the log
    (where pmlogger's stderr goes), and status 1."""
    ctx.close()
    message = "Nothing to log, and not the primary logger instance ... good-bye\n"
    log.write(message)
    logfile.footer(log)
    return 1


@dataclass(frozen=True)
class _Settings:
    """The command line's choices, checked: what to log, where, and for how long."""

    template: str  # ARCHIVE, strftime meta-characters and all
    check_only: bool  # -C
    version: int  # -V
    interval_ms: int  # -t
    samples: int | None  # -s N
    max_bytes: int | None  # -s SIZE
    run_seconds: float | None  # -s TIME
    finish: str | None  # -T
    volume_bytes: int | None  # -v SIZE: a new volume once one holds this much
    volume_records: int | None  # -v N
    volume_seconds: float | None  # -v TIME
    primary: bool  # -P
    run_dir: Path | None  # -P: where the PID file goes
    label_host: str | None  # -H
    notify: bool  # -N
    report: bool  # -r
    linger: bool  # -L: run on with nothing to log
    pid: int | None  # -p: log while this process lives
    username: str | None  # -U
    control_fd: int | None  # -x
    debug: frozenset[str] = frozenset()  # -D: pmSetDebug's option names (lower case)
    note: str | None = None  # -m: for the port map file
    ipc_version: int = 3  # -I: the LOG PDU version offered to pmlc


def _default_version() -> str:
    """The archive version without -V: $PCP_ARCHIVE_VERSION (from the environment or
    pcp.conf, as pmGetOptionalConfig finds it) when it says 2 or 3, else 2."""
    value = os.environ.get("PCP_ARCHIVE_VERSION")
    if value is None:
        with contextlib.suppress(LayoutError, OSError):
            value = paths().values.get("PCP_ARCHIVE_VERSION")
    value = (value or "").strip()
    return value if value in ("2", "3") else "2"


def _settings(parsed: Parsed) -> _Settings:
    """The options, checked one by one: the first bad one ends the run."""
    check_only = "check" in parsed
    if len(parsed.operands) != 1 and not (check_only and not parsed.operands):
        TOOL.fail("exactly one archive name is required", usage=True)
    versions = {"2": PM_LOG_VERS02, "3": PM_LOG_VERS03}
    version = versions.get(str(parsed.get("version") or _default_version()))
    if version is None:
        TOOL.fail(f"-V {parsed.get('version')}: version must be 2 or 3")
    try:
        interval_ms = round(parse_interval(str(parsed.get("interval") or "60")) * 1000)
    except (TimeParseError, ValueError):
        TOOL.fail(f"-t {parsed.get('interval')}: not a valid interval")
    samples = max_bytes = run_seconds = None
    if "size" in parsed:
        try:
            samples, max_bytes, run_seconds = _size(str(parsed.get("size")))
        except (TimeParseError, ValueError):
            TOOL.fail(f"illegal size argument '{parsed.get('size')}' for exit size", usage=True)
    volume_records = volume_bytes = volume_seconds = None
    if "volsize" in parsed:
        try:
            volume_records, volume_bytes, volume_seconds = _size(str(parsed.get("volsize")))
        except (TimeParseError, ValueError):
            bad = parsed.get("volsize")
            TOOL.fail(f"illegal size argument '{bad}' for volume size", usage=True)
    finish = str(parsed.get("finish")) if "finish" in parsed else None
    try:
        _deadline(run_seconds, finish)  # (-T is checked now; it is worked out per archive)
    except TimeParseError as exc:
        TOOL.fail(exc.errmsg)
    primary = "primary" in parsed
    label_host = parsed.get("labelhost")
    _check_more(parsed)
    return _Settings(
        template=parsed.operands[0] if parsed.operands else "",
        check_only=check_only,
        version=version,
        interval_ms=interval_ms,
        samples=samples,
        max_bytes=max_bytes,
        run_seconds=run_seconds,
        finish=finish,
        volume_bytes=volume_bytes,
        volume_records=volume_records,
        volume_seconds=volume_seconds,
        primary=primary,
        run_dir=_primary_run_dir(parsed) if primary else None,
        label_host=None if label_host is None else str(label_host),
        notify="notify" in parsed,
        report="report" in parsed,
        linger="linger" in parsed,
        pid=_whole_number(parsed, "PID", "invalid process identifier ({})"),
        username=None if "username" not in parsed else str(parsed.get("username")),
        control_fd=_whole_number(parsed, "x", "-x requires a non-negative numeric argument"),
        debug=_debug_names(parsed),
        note=None if parsed.get("note") is None else str(parsed.get("note")),
        ipc_version=_whole_number(parsed, "pmlc-ipc-version", "{}") or 3,
    )


def _debug_names(parsed: Parsed) -> frozenset[str]:
    """The debug options -D turned on, by name ("all": every one of them)."""
    from purepcp.pmapi.options import DEBUG_NAMES

    names: set[str] = set()
    for opt, value in parsed.pairs:
        if opt is DEBUG:
            for token in (t.strip().lower() for t in value.split(",")):
                names.update(DEBUG_NAMES if token == "all" else {token} & DEBUG_NAMES)
    return frozenset(names)


def _check_more(parsed: Parsed) -> None:
    """-D, -I, -p and -x, checked as PCP's pmlogger checks them; -f is refused."""
    from purepcp.pmapi.options import debug_spec_ok

    if "f" in parsed:
        sys.stderr.write(TOOL.usage())
        raise SystemExit(1)
    for opt, value in parsed.pairs:
        if opt is DEBUG and not debug_spec_ok(value):
            TOOL.fail(f"unrecognized debug flag specification ({value})", usage=True)
    if "pmlc-ipc-version" in parsed:
        version = _whole_number(parsed, "pmlc-ipc-version", "non-numeric pmlc IPC version ({})")
        if version not in (2, 3):  # LOG_PDU_VERSION2 .. LOG_PDU_VERSION
            TOOL.fail(f"unsupported pmlc IPC version ({version})", usage=True)
    pid = _whole_number(parsed, "PID", "invalid process identifier ({})")
    if pid is not None:
        from purepcp.pmapi.process import process_exists

        if not process_exists(pid):
            TOOL.fail(f"PID error - no such process ({pid})", usage=True)
    fd = _whole_number(parsed, "x", "-x requires a non-negative numeric argument")
    if fd is not None and fd < 0:
        TOOL.fail("-x requires a non-negative numeric argument", usage=True)


def _whole_number(parsed: Parsed, key: str, complaint: str) -> int | None:
    """Option KEY's argument read whole as strtol reads it (None without the option); one
    with more after the number ends the run with COMPLAINT (its {} the argument)."""
    from purepcp.pmapi.cnumbers import int32, strtol

    if key not in parsed:
        return None
    text = str(parsed.get(key))
    scan = strtol(text)
    if scan.end != len(text):
        TOOL.fail(complaint.format(text), usage=True)
    return int32(int(scan.value))


def _primary_run_dir(parsed: Parsed) -> Path:
    """-P: the directory of the PID file; -P with another host's pmcd is refused."""
    if "host" in parsed and not _is_local(str(parsed.get("host"))):
        TOOL.fail(
            "-P and -h are mutually exclusive; use -P only when running pmlogger "
            "on the same (local) host as the PMCD to which it connects"
        )
    try:
        return paths().run_dir
    except LayoutError as exc:
        TOOL.fail(str(exc))


def _load_config(path: object, interval_ms: int, log: TextIO) -> LoggerConfig:
    """-c FILE (stdin for "-" or none), parsed; a bad or unreadable one ends the run.

    A bad one is reported as PCP's pmlogger reports it, in the log (on stderr with -C);
    a log of its own gets the footer, and stderr the report in one line.
    """
    try:
        if path is None or path == "-":
            return parse_config(sys.stdin.read(), "stdin", default_interval_ms=interval_ms)
        return parse_config_file(str(path), default_interval_ms=interval_ms)
    except ConfigError as exc:
        log.write(exc.report())
        if _same_file(log, sys.stderr):
            log.flush()
            raise SystemExit(1) from None
        logfile.footer(log)
        TOOL.fail(str(exc))
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        TOOL.fail(f'Cannot open config file "{path}": {reason}')


def _source_hostname(ctx: Context) -> str:
    """The metrics source's host name, for the archive label: this host's for a local one."""
    hostname = ctx.hostname if ctx.kind == "host" else socket.gethostname()
    if hostname in ("localhost", "local:", "") or hostname.startswith("/"):
        hostname = socket.gethostname()
    return hostname


class _Archives:
    """The archives of one run: each one's name (the template expanded when it is made)
    and its writer, labelled with the source's host and zone."""

    def __init__(self, settings: _Settings, hostname: str) -> None:
        self.settings = settings
        self.hostname = hostname
        self.base = ""  # the archive being written: the template as expanded for it
        self.reserved: str | None = None  # the next archive's name, chosen already

    def label_host(self, facts: SourceFacts) -> str:
        """The label's host: -H, else what pmcd says, else the source's name."""
        return self.settings.label_host or facts.hostname or self.hostname

    def next_name(self) -> str:
        """A name for the next archive, not taken yet (its directories made); the one
        reserved, if there is one."""
        if self.reserved is not None:
            self.base, self.reserved = self.reserved, None
            return self.base
        self.base = choose(self.settings.template)
        make_parents(self.base)
        return self.base

    def reserve(self) -> str:
        """The first archive's name, chosen now (for the port map file)."""
        self.reserved = self.next_name()
        return self.reserved

    def writer(self, stamp: Timestamp, facts: SourceFacts) -> ArchiveWriter:
        """The writer of the archive named last, its label from FACTS (Logger calls this)."""
        timezone, zoneinfo = facts.timezone, facts.zoneinfo
        if timezone is None:  # (pmcd could not say: this machine's zone)
            timezone, zoneinfo = pcp_timezone(), pcp_zoneinfo()
        return ArchiveWriter(
            self.base,
            hostname=self.label_host(facts),
            timezone=timezone,
            zoneinfo=zoneinfo or "",
            start=stamp,
            version=self.settings.version,
            volume_limit=MAX_VOLUME_BYTES,  # (-v switches after a record, as PCP's)
        )


@dataclass
class _Signals:
    """What the signals have asked of the logging loop: the handlers only set these, and
    the loop looks at them between samples."""

    stop: int = 0  # SIGTERM, SIGINT: the signal's number; logging ends
    new_volume: bool = False  # SIGHUP
    new_archive: bool = False  # SIGUSR2

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGHUP, self._on_hup)
        signal.signal(signal.SIGUSR2, self._on_usr2)

    def _on_stop(self, signum: int, _frame: object) -> None:
        self.stop = signum

    def _on_hup(self, _signum: int, _frame: object) -> None:
        self.new_volume = True

    def _on_usr2(self, _signum: int, _frame: object) -> None:
        self.new_archive = True


class _Run:
    """One run of logging, once set up: archive after archive until a limit or a signal
    ends it, a new volume on SIGHUP or -v, and the end (status, log lines, PID file)."""

    def __init__(
        self, settings: _Settings, log: TextIO, ctx: Context, logger: Logger, archives: _Archives
    ) -> None:
        self.settings = settings
        self.log = log
        self.ctx = ctx
        self.logger = logger
        self.archives = archives
        self.signals = _Signals()
        self.switched_at = 0  # the sample count at the last volume switch
        self.volume_began = time.monotonic()  # (for -v TIME)
        self.pidfile: Path | None = None
        self.watch = None  # -p's process, -x's channel
        if settings.pid is not None or settings.control_fd is not None:
            from .lifetime import Watch

            self.watch = Watch(settings.pid, settings.control_fd, log, "appl2" in settings.debug)
        self.ended: str | None = None  # why the watch ended logging
        self.port: ControlPort | None = None  # pmlc's (from when the first archive exists)
        self.state: LogState | None = None  # the logging states pmlc sees (on first use)
        self.via = "local:"  # how pmcd is reached (pmlc's status shows it)
        self.facts = SourceFacts()

    def run(self, facts: SourceFacts) -> int:
        """Log until the end; the exit status (1: an archive could not be written)."""
        self.facts = facts
        self.signals.install()
        if self.watch is not None:  # (what a recording session's dialog reports)
            self.watch.session.host = self.archives.label_host(facts)
            self.watch.session.archive_bytes = self._archive_bytes
        reason: str | None = None
        status = 0
        try:
            reason = self._log_archives(facts)
        except (PMError, ArchiveNameError) as exc:  # (a full disk, a file size limit, EIO ...)
            status = self._fail(exc)  # (and, as in PCP, nothing more is written to the archive)
        finally:
            status = self._shut_down(status)
        if status == 0:
            if self.signals.stop:
                reason = f"Caught signal {self.signals.stop}"
            message = f"pmlogger: {reason or 'End of run time'}, exiting"
            logfile.notify(self.log, "pmlogger", "Info", message)
        logfile.footer(self.log)
        return status

    def _archive_bytes(self) -> int:
        writer = self.logger.writer
        return 0 if writer is None else writer.volume_bytes

    def _log_archives(self, facts: SourceFacts) -> str | None:
        """Archive after archive (SIGUSR2 ends one and begins the next, with the limits
        from then): why logging ended (None: a signal)."""
        self._begin(facts)
        self._announce()
        while True:
            s = self.settings
            until = _deadline(s.run_seconds, s.finish)
            if self.logger.groups:
                reason = self.logger.run(
                    s.samples,
                    until,
                    stop=self._stopping,
                    on_idle=self._between_samples,
                    max_bytes=s.max_bytes,
                    sleep=self._sleep,
                )
            else:  # -L or -P with nothing to log: on until a limit, a signal or the watch
                reason = self._linger(until)
            reason = reason or self.ended
            if reason is not None or not self.signals.new_archive or self.signals.stop:
                return reason  # (a limit reached, or SIGTERM: no new archive)
            self._end_archive()
            if self.signals.stop:  # (SIGTERM while the archive was closing)
                return None
            self._begin(source_facts(self.ctx))

    def _stopping(self) -> bool:
        return bool(self.signals.stop or self.signals.new_archive or self.ended)

    def _linger(self, until: float | None) -> str | None:
        """Nothing to log: wait for the end of run time, a signal, or the watch."""
        while not self._stopping():
            if until is not None and time.time() >= until:
                return "End of run time"
            if self.logger.groups:  # (pmlc asked for something to be logged)
                return self._log_after_linger(until)
            self._sleep(0.1)
            self._between_samples()
        return None

    def _log_after_linger(self, until: float | None) -> str | None:
        s = self.settings
        return self.logger.run(
            s.samples,
            until,
            stop=self._stopping,
            on_idle=self._between_samples,
            max_bytes=s.max_bytes,
            sleep=self._sleep,
        )

    def _sleep(self, seconds: float) -> None:
        """The loop's pause: pmlc's requests are answered meanwhile."""
        if self.port is None:
            time.sleep(seconds)
        else:
            self.port.wait(seconds)

    def _begin(self, facts: SourceFacts) -> None:
        base = self.archives.next_name()
        self.log.write(f"Archive basename: {base}\n")
        self.log.flush()
        self.logger.begin(base, fqdn(), facts)
        if self.port is not None:
            self.port.archive_changed(base)

    def _announce(self) -> None:
        """Once the first archive has begun: -P's PID file and -N's notice (PCP's
        re-exec'd pmlogger keeps the PID file and tells no one)."""
        if self.settings.run_dir is not None:
            self.pidfile = _write_pidfile(self.settings.run_dir, self.log)
        if self.settings.notify:
            notify_ready()

    def _end_archive(self) -> None:
        """SIGUSR2: this archive ends, and the logger forgets it for the next one."""
        self.signals.new_archive = False
        self.logger.close()
        self.logger.reset()
        self.switched_at = 0
        self.volume_began = time.monotonic()
        message = "pmlogger: Caught signal 12, starting a new archive"
        logfile.notify(self.log, "pmlogger", "Info", message)

    def _between_samples(self) -> None:
        """A new volume on SIGHUP, or when -v's count of records is in this one; and
        whether -p's process or -x's channel ends logging."""
        if self.watch is not None and self.ended is None:
            self.ended = self.watch.ended()
        writer = self.logger.writer
        if writer is None:
            return
        why = "SIGHUP" if self.signals.new_volume else self._volume_due(writer)
        if why is not None:
            self.signals.new_volume = False
            self.new_volume(why)

    def new_volume(self, why: str) -> int:
        """A new volume now (SIGHUP, -v, pmlc): its number, told in the log."""
        writer = self.logger.writer
        if writer is None:
            return 0
        self.switched_at = self.logger.samples
        self.volume_began = time.monotonic()
        stamp = self.logger.last_stamp or Timestamp.now()
        vol = writer.new_volume(stamp)
        self.log.write(f"New log volume {vol}, via {why} at {time.ctime()}\n")
        self.log.flush()
        return vol

    def _volume_due(self, writer: ArchiveWriter) -> str | None:
        """Why -v wants a new volume now (PCP's words), else None: its count of records
        in this one, its size reached (after a record, as PCP's), or its time passed."""
        s = self.settings
        if (
            s.volume_records is not None
            and self.logger.samples - self.switched_at >= s.volume_records
        ):
            return "sample counter"
        if s.volume_bytes is not None and writer.log_offset >= s.volume_bytes:
            return "sample byte size"
        if (
            s.volume_seconds is not None
            and time.monotonic() - self.volume_began >= s.volume_seconds
        ):
            return "sample time"
        return None

    def _shut_down(self, status: int) -> int:
        """The archive's epilogue, the source closed, the PID file gone: the status."""
        try:
            self.logger.close()  # (the epilogue, unless a write failed already)
        except PMError as exc:
            if status == 0:
                status = self._fail(exc)
        self.ctx.close()
        if self.pidfile is not None:
            remove_pidfile(self.pidfile)
        if self.port is not None:
            self.log.flush()  # (the log is complete once the port map file is gone)
            self.port.close()
        return status

    def _fail(self, exc: PMError | ArchiveNameError) -> int:
        """The archive could not be created or written: one line, in the log and on stderr."""
        detail = (exc.detail or exc.message) if isinstance(exc, PMError) else str(exc)
        message = f"pmlogger: {detail}\n"
        if not _same_file(self.log, sys.stderr):  # (first: the log may be on the full disk)
            sys.stderr.write(message)
            sys.stderr.flush()
        self.log.write(message)
        self.log.flush()
        return 1


class _Service:
    """What pmlc's requests do to this run (control.Service)."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.tz = pcp_timezone()

    def status(self) -> lc.LogStatus:
        run = self.run
        logger = run.logger
        writer = logger.writer
        now = Timestamp.now()
        zero = Timestamp(0, 0)
        label = writer.label if writer is not None else None
        return lc.LogStatus(
            state=lc.PM_LOG_STATE_INIT if label is not None else lc.PM_LOG_STATE_NEW,
            start=label.start if label is not None else zero,
            last=logger.last_stamp or zero,
            now=now,
            vol=writer.vol if writer is not None else 0,
            size=writer.log_offset if writer is not None else 0,
            hostname=label.hostname if label is not None else run.archives.hostname,
            fqdn=run.via,
            pmcd_timezone=label.timezone if label is not None else self.tz,
            pmlogger_timezone=self.tz,
        )

    def new_volume(self) -> int:
        return self.run.new_volume("pmlc request")

    def control(self, request: lc.LogControl, client: str) -> bytes:
        from purepcp.pmapi.pdu.codec import encode
        from purepcp.pmapi.pdu.records import ResultPDU

        from .logstate import LogState

        run = self.run
        if run.state is None:
            run.state = LogState(run.logger)
        result = run.state.control(request, client, run.log)
        return encode(ResultPDU(result))


def _same_file(one: TextIO, other: TextIO) -> bool:
    """Whether ONE and OTHER write to the same file: the log is stderr (-l -), or stderr
    was sent to the log file (``-l LOG 2>>LOG``, ``-l /dev/stderr``, a service manager's
    StandardError=append:LOG), where a line told to both would be in the log twice."""
    if one is other:
        return True
    try:
        a, b = os.fstat(one.fileno()), os.fstat(other.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _deadline(run_seconds: float | None, finish: str | None) -> float | None:
    """When logging this archive stops (a time.time()), from -s TIME and -T, counted from now.

    Worked out again for each archive: a relative time starts again after SIGUSR2, as
    PCP's re-exec makes it; an absolute -T stays where it was.
    """
    until = None if run_seconds is None else time.time() + run_seconds
    if finish is not None:
        now = time.time_ns()
        window = parse_time_window(None, finish, None, None, (now // 10**9, now % 10**9), None)
        end = window.end_ns / 1e9
        until = end if until is None else min(until, end)
    return until


def _is_local(host: str) -> bool:
    """True if -h HOST is this machine's pmcd (local:, a unix socket, loopback, our name)."""
    if host.startswith(("local:", "unix:", "/")):
        return True
    name = host.removeprefix("pcp://")
    if name.startswith("["):  # [IPv6]:port
        name = name[1:].split("]", 1)[0]
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    if name.lower() in ("localhost", "localhost.localdomain", socket.gethostname().lower()):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _write_pidfile(run_dir: Path, log: TextIO) -> Path | None:
    """-P: our PID in RUN_DIR/pmlogger.pid; a failure is logged and logging goes on, as in PCP."""
    try:
        return write_pidfile(run_dir / PIDFILE)
    except OSError as exc:
        log.write(f"Warning: cannot create PID file {run_dir / PIDFILE}: {exc.strerror}\n")
        log.flush()
        return None


def _open_log(path: object) -> TextIO:
    """-l FILE (its directory made if missing, as for the archive), else pmlogger.log in the
    current directory; one that cannot be opened leaves the log on stderr, as in PCP."""
    name = str(path) if path else "pmlogger.log"
    if name == "-":
        return sys.stderr
    try:
        if os.path.dirname(name):
            os.makedirs(os.path.dirname(name), exist_ok=True)
        return cast(TextIO, _LogFile(name))
    except OSError:
        sys.stderr.write(f"pmlogger: Warning: log file ({name}) creation failed\n")
        return sys.stderr


def _remove_old_log(name: str) -> None:
    """A log from an earlier run goes, so each run's log starts afresh (libpcp's pmOpenLog
    unlinks it); only a plain file: never a device or a link (-l /dev/stderr)."""
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(name).st_mode):
            os.unlink(name)


class _LogFile(io.TextIOBase):
    """The -l file, written straight through: a write it refuses (a full disk) is dropped,
    as libpcp's stdio log drops it, so the log never stops the logging; stderr is told once.
    (With no buffer, nothing is left to fail again, with a traceback, at exit.)"""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        _remove_old_log(name)
        self._fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        self._warned = False

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "backslashreplace")
        try:
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError as exc:
            if not self._warned:
                self._warned = True
                reason = exc.strerror or str(exc)
                sys.stderr.write(f'pmlogger: Warning: cannot write log "{self.name}": {reason}\n')
        return len(text)

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        super().close()


if __name__ == "__main__":
    raise SystemExit(main())
