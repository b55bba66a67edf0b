"""The pmie command, replaying an archive: rules read, bound and evaluated.

``pmie -a ARCHIVE -c RULES [-v|-V|-W]`` evaluates every rule at each sample
time from the start of the time window, one interval apart, and prints each
rule's value as PCP's pmie does; actions are reported, not run, as pmie reports
them replaying an archive.  Without -a, the rules are evaluated live against
pmcd at -h HOST (else local:) on the wall clock, every -t interval until -T,
and their actions run.  ``pmie -C`` only reads and binds the rules.  Several
archives, the daemon's options and interactive mode are not here yet: asking
for them gets a one-line refusal.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Mapping, Sequence

from . import operators as ops
from .options import PROG, USAGE, Options, Usage, parse


def main(argv: Sequence[str] | None = None) -> int:
    """pmie(1) on ARGV (else sys.argv): its exit status."""
    if argv is None:  # (the command itself: ps and PCP's scripts look for "pmie")
        from purepcp.pmapi.proctitle import set_command_line, set_process_name

        set_process_name(PROG)
        set_command_line([PROG, *sys.argv[1:]])
    args = list(sys.argv[1:] if argv is None else argv)
    status = _main(args)
    if argv is None and status == 0:
        _exit_now(status)
    return status


def _main(args: list[str]) -> int:
    try:
        o = parse(args)
    except Usage as exc:
        sys.stderr.write(f"{exc}{USAGE}")
        return 1
    try:
        return run(o)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:  # (SIGINT: pmie exits with the signal's number, quietly)
        return 2
    finally:
        sys.stdout.flush()


def _exit_now(status: int) -> None:
    """The command's end: its exit handlers (the log's footer, the statistics and PID
    files removed), its output flushed, then no interpreter teardown (a replay's large
    arrays and mappings take a tenth of a second to free, for nothing)."""
    import atexit

    from purepcp.pmapi.options import _exit_at_once

    atexit._run_exitfuncs()
    _exit_at_once(status)


def _fail(text: str) -> SystemExit:
    sys.stdout.flush()
    sys.stderr.write(text)
    return SystemExit(1)


def run(o: Options) -> int:
    from .check import check

    if o.missing:
        raise _fail(f"{PROG}: {', '.join(o.missing)}: not available in purepcp\n")
    source = o.config if o.config is not None else (o.operands[0] if o.operands else None)
    if len(o.operands) > 1:
        raise _fail(f"{PROG}: several rule files: not available in purepcp\n")
    if o.daemon:  # (before the log is opened, so that it is the user's)
        from purepcp.pmapi.identity import default_user, switch_user

        _preload()
        switch_user(o.username or default_user(), PROG)
    if o.logfile is not None:
        _open_log(o.logfile)
    rotates = o.daemon and o.logfile not in (None, "-")
    signal.signal(signal.SIGHUP, (lambda signum, frame: _rotate(o)) if rotates else signal.SIG_IGN)
    if o.buffer or o.daemon:
        _remap_stdout()
    if o.daemon:
        if not o.systemd:
            with contextlib.suppress(OSError):  # (a group leader already: as setsid fails)
                os.setsid()
        if o.primary:
            _pid_file()
    if o.logfile is not None and not o.archives:
        primary = " [primary]" if o.primary else ""
        host = o.host if o.host is not None else "local:"
        sys.stderr.write(f"{PROG}: PID = {os.getpid()}, via {host}{primary}\n\n")
    if not o.archives and not o.check and not o.interactive:
        _start_monitor(o)
    feed = _feed(o)
    if o.interactive:
        return _interact(o, feed)
    text = _read_rules(source)
    ops.CLOCK.perf.config = "<stdin>" if source is None else os.path.realpath(source)
    ops.CLOCK.perf.flush()
    result = check(text, source)
    for message in result.messages:
        sys.stderr.write(message if message.endswith("\n") else message + "\n")
    from .replay import Engine

    engine = Engine(feed, o, result)
    # (SIGTERM ends pmie quietly with status 0, as pmie's handler does)
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        engine.bind_all()
        if o.check:
            return 1 if engine.refused else result.status
        engine.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
        close = getattr(feed, "close", None)
        if close is not None:
            close()
    return 0


def _interact(o: Options, feed) -> int:
    """-d: the rule files named loaded, then the debugger's commands (with -C, only the
    files checked)."""
    from .check import CheckResult
    from .interact import Debugger, command_lines
    from .replay import Engine

    def load(name: str | None) -> tuple[str, str]:
        text = _read_rules(name)
        return text, "<stdin>" if name is None else os.path.realpath(name)

    engine = Engine(feed, o, CheckResult((), (), 0))
    debugger = Debugger(engine, load)
    for name in o.operands:
        debugger.load(name)
    if o.check:
        return debugger.status
    debugger.loop(command_lines(sys.stdin))
    return 0


def _preload() -> None:
    """Import what a live run needs before the daemon becomes its user, who may not be
    able to read this Python's own files (an interpreter under root's home)."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    _dirs()  # (and the layout, which may be in the starting user's home)


#: the modules a live pmie imports as it runs (names relative to purepcp, or absolute)
PRELOAD = (
    "mmap", "ctypes", "ctypes.util", "subprocess", "shlex", "syslog", "socket", "select",
    "encodings.idna", "stringprep", "unicodedata",
    "purepcp.tools.pmie.check", "purepcp.tools.pmie.replay", "purepcp.tools.pmie.live",
    "purepcp.tools.pmie.sources", "purepcp.tools.pmie.bind", "purepcp.tools.pmie.actions",
    "purepcp.tools.pmie.show", "purepcp.tools.pmie.ere", "purepcp.tools.pmie.syslog",
    "purepcp.tools.pmie.stats", "purepcp.pmapi.context", "purepcp.pmapi.hostname",
    "purepcp.pmapi.timewindow", "purepcp.pmapi.zone", "purepcp.pmapi.pmiestats",
    "purepcp.pmapi.paths", "purepcp.pmapi.rate", "purepcp.pmapi.errors",
    "purepcp.pmapi.convert", "purepcp.pmapi.units", "purepcp.pmapi.pmns",
)  # fmt: skip


@functools.cache
def _dirs() -> Mapping[str, str]:
    """PCP's directories, read once."""
    from purepcp.pmapi.paths import paths

    return paths(missing_ok=True)


def _start_monitor(o: Options) -> None:
    """startmonitor: the statistics file of a live pmie, naming its log."""
    from . import stats

    perf = ops.CLOCK.perf
    perf.logfile = "<none>" if o.logfile is None else os.path.realpath(o.logfile)
    perf.pmcd_host = "(uninitialized)"
    stats.start(perf, PROG, _dirs()["PCP_TMP_DIR"])


def _open_log(path: str) -> None:
    """pmOpenLog: standard error goes to PATH (created afresh; "-" keeps it), headed now
    and footed at exit; a log that cannot be opened is said so, and stderr kept."""
    import atexit

    from purepcp.pmapi import logfile

    if path != "-":
        with contextlib.suppress(OSError):
            os.unlink(path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        except OSError as exc:
            sys.stderr.write(f'{PROG}: cannot open log "{path}" for writing : '
                             f"{os.strerror(exc.errno or 0)}\n")  # fmt: skip
        else:
            sys.stderr.flush()
            os.dup2(fd, 2)
            os.close(fd)
    logfile.header(sys.stderr, PROG)
    atexit.register(_log_footer)
    if path != "-" and not os.path.exists(path):
        raise _fail(f"{PROG}: cannot find realpath for log {path}: "
                    f"{os.strerror(2)}\n")  # fmt: skip


def _rotate(o: Options) -> None:
    """SIGHUP: the log (moved away by pmie_daily) ended as rotated and begun again."""
    from purepcp.pmapi import logfile

    assert o.logfile is not None
    sys.stdout.flush()
    logfile.footer(sys.stderr, "rotated")
    try:
        fd = os.open(o.logfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    except OSError:
        from .replay import notify

        notify("Error", "pmie: log rotation failed\n")
        return
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)
    logfile.header(sys.stderr, PROG, "rotated")
    host = o.host if o.host is not None else "local:"
    sys.stderr.write(f"{PROG}: PID = {os.getpid()}, via {host}\n\n")
    _remap_stdout()


def _log_footer() -> None:
    from purepcp.pmapi import logfile

    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        logfile.footer(sys.stderr)


def _pid_file() -> None:
    """The primary pmie's PID file, $PCP_RUN_DIR/pmie.pid, gone at exit."""
    import atexit

    path = os.path.join(_dirs()["PCP_RUN_DIR"], "pmie.pid")
    with contextlib.suppress(OSError):
        with open(path, "w") as f:
            f.write(f"{os.getpid()}\n")
        atexit.register(_remove, path)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _remap_stdout() -> None:
    """-b: both streams line-buffered, standard output written to standard error."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    sys.stderr.reconfigure(line_buffering=True)  # type: ignore[union-attr]


def _feed(o: Options):
    """Where values come from: the archive (-a), else pmcd at -h HOST or local:."""
    if o.archives:
        from .replay import ArchiveFeed

        opened: list = []
        for path in o.archives:  # (initArchive: each host's archive once)
            ctx = _open(path)
            host = ctx.archive.label.hostname
            for other_ctx, other in opened:
                if other_ctx.archive.label.hostname == host:
                    raise _fail(f"{PROG}: Error: archive {path} not legal - archive {other} "
                                f"is already open for host {host}\n")  # fmt: skip
            opened.append((ctx, path))
        return ArchiveFeed(opened, o)
    from .live import LiveFeed

    return LiveFeed(o, o.host if o.host is not None else "local:")


def _open(path: str):
    from purepcp.pmapi.archive.context import ArchiveContext
    from purepcp.pmapi.errors import PMError, pmErrStr

    try:
        return ArchiveContext(path)
    except PMError as exc:
        raise _fail(f"{PROG}: cannot open archive {path}\n"
                    f"pmNewContext failed: {pmErrStr(exc.code)}\n") from None  # fmt: skip
    except OSError as exc:
        raise _fail(f"{PROG}: cannot open archive {path}\n"
                    f"pmNewContext failed: {os.strerror(exc.errno or 0)}\n") from None  # fmt: skip


def _read_rules(source: str | None) -> str:
    if source is None:
        return sys.stdin.read()
    try:
        with open(source, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError as exc:
        why = os.strerror(exc.errno or 0)
        if os.path.isabs(source):
            raise _fail(f"{PROG}: cannot access config file {source}: {why}\n") from None
        alt = os.path.join(_dirs()["PCP_VAR_DIR"], "config", "pmie", source)
        try:
            with open(alt, encoding="utf-8", errors="surrogateescape") as f:
                return f.read()
        except OSError:
            raise _fail(f"{PROG}: cannot access config file as either {source} or {alt}: "
                        f"{why}\n") from None  # fmt: skip
