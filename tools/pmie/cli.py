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

import os
import signal
import sys
from collections.abc import Sequence

from .options import PROG, USAGE, Options, Usage, parse


def main(argv: Sequence[str] | None = None) -> int:
    """pmie(1) on ARGV (else sys.argv): its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
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


def _fail(text: str) -> SystemExit:
    sys.stdout.flush()
    sys.stderr.write(text)
    return SystemExit(1)


def run(o: Options) -> int:
    from .check import check

    if o.missing:
        raise _fail(f"{PROG}: {', '.join(o.missing)}: not available in purepcp\n")
    if len(o.archives) > 1:
        raise _fail(f"{PROG}: several archives: not available in purepcp\n")
    source = o.config if o.config is not None else (o.operands[0] if o.operands else None)
    if len(o.operands) > 1:
        raise _fail(f"{PROG}: several rule files: not available in purepcp\n")
    if o.buffer:
        _remap_stdout()
    feed = _feed(o)
    text = _read_rules(source)
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

        return ArchiveFeed(_open(o.archives[0]), o.archives[0], o)
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
        from purepcp.pmapi.paths import paths

        alt = os.path.join(paths(missing_ok=True)["PCP_VAR_DIR"], "config", "pmie", source)
        try:
            with open(alt, encoding="utf-8", errors="surrogateescape") as f:
                return f.read()
        except OSError:
            raise _fail(f"{PROG}: cannot access config file as either {source} or {alt}: "
                        f"{why}\n") from None  # fmt: skip
