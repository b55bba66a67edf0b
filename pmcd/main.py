"""The pmcd command: parse pmcd(1)'s flags, read pmcd.conf, run the daemon until told to stop."""

from __future__ import annotations

import argparse
import logging
import os
import resource
import signal
import sys
from pathlib import Path

import trio

from pmapi import PCP_COMPAT_VERSION, __version__
from pmapi.errors import PMError
from pmapi.paths import LayoutError, Paths, paths
from pmapi.pidfile import remove_pidfile, write_pidfile
from pmapi.service import notify_ready, notify_reloaded, notify_reloading

from . import files, memory
from .config import PmcdConfig, load_config
from .daemon import Daemon, Settings, namespace_for

#: The pmcd.conf used until the layout has its own (kept under this name for callers).
DEFAULT_CONF = files.PACKAGED_CONF


def options() -> argparse.ArgumentParser:
    """pmcd(1)'s command line."""
    p = argparse.ArgumentParser(prog="pmcd", description="Performance Metrics Collector Daemon")
    p.add_argument("-f", "--foreground", action="store_true", help="run in the foreground")
    p.add_argument("-c", "--config", metavar="FILE", help="pmcd.conf to use")
    p.add_argument("-n", "--namespace", metavar="FILE", help="PMNS to use")
    p.add_argument("-l", "--log", metavar="FILE", help="log file ('-' for stderr)")
    p.add_argument("-t", "--timeout", type=float, default=5.0, help="agent reply timeout (s)")
    p.add_argument("-q", "--creds-timeout", type=float, default=3.0, help="agent start timeout")
    p.add_argument(
        "-L", "--pdu-limit", type=int, default=65536, metavar="BYTES", help="largest client PDU"
    )
    p.add_argument("-i", "--interface", action="append", default=[], metavar="ADDRESS")
    p.add_argument("-p", "--port", type=int, help="TCP port (0: any free port; default 44321)")
    p.add_argument("-s", "--socket", metavar="PATH", help="unix socket ('' for none)")
    p.add_argument("-x", "--error-log", metavar="FILE", help="accepted for PCP compatibility")
    p.add_argument("-A", "--no-avahi", action="store_true", help="no service advertising")
    p.add_argument("-U", "--username", help="accepted for PCP compatibility; not used")
    p.add_argument("-v", "--verify", action="store_true", help="check the configuration, exit")
    p.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    p.add_argument(
        "--install-units",
        nargs="?",
        const="",
        metavar="DIR",
        help="write systemd units for this installation (default $PCP_SYSTEMDUNIT_DIR), exit",
    )
    return p


class Sources:
    """Where pmcd's configuration comes from: -c and -n if given, else the layout's files,
    looked up afresh at each SIGHUP (so a pmcd.conf `pmda install` creates is seen)."""

    def __init__(self, layout: Paths, config: str | None, namespace: str | None) -> None:
        self.layout, self.config, self.namespace = layout, config, namespace

    def conf_path(self) -> str:
        return self.config or str(files.pmcd_conf_path(self.layout))

    def pmns(self, config: PmcdConfig):
        if self.namespace is not None:
            return namespace_for(config, self.namespace)
        return files.default_namespace(config, self.layout)


def main(argv: list[str] | None = None) -> int:
    args = options().parse_args(argv)
    for wrong, message in (  # PCP's checks and words (-L: a header must fit)
        (args.timeout < 0, "-t requires a positive numeric argument"),
        (args.creds_timeout <= 0, "-q requires a positive numeric argument"),
        (args.pdu_limit < 12, f"-L {args.pdu_limit}: too small for a PDU"),
    ):
        if wrong:
            print(f"pmcd: {message}", file=sys.stderr)
            return 1
    if args.version:
        print(f"pmcd (pypcp) {__version__}, compatible with PCP {PCP_COMPAT_VERSION}")
        return 0
    try:
        layout = paths()
    except LayoutError as exc:
        print(f"pmcd: {exc}", file=sys.stderr)
        return 1
    if args.install_units is not None:
        from pmapi.cli.common import quiet_stdout

        from .units import install_units

        try:
            return install_units(layout, args.install_units or None)
        except BrokenPipeError:  # (output piped into head, say)
            quiet_stdout()
            return 1
    sources = Sources(layout, args.config, args.namespace)
    conf_path = sources.conf_path()
    try:
        config = load_config(conf_path)
    except OSError as exc:
        print(f"pmcd: cannot read {conf_path}: {exc.strerror}", file=sys.stderr)
        return 1
    for message in config.messages:  # PCP's words, after the file they are about
        print(f"{message.file or conf_path}: {message}", file=sys.stderr)
    if args.verify or not config.ok:
        return 0 if config.ok else 1
    try:
        pmns = sources.pmns(config)
    except (PMError, OSError) as exc:
        print(f"pmcd: cannot load the namespace: {exc}", file=sys.stderr)
        return 1
    port = args.port if args.port is not None else layout.pmcd_port
    unix = layout.pmcd_socket if args.socket is None else args.socket
    running = files.already_running(layout, unix or None)
    if running:
        print(f"pmcd: pmcd may already be running ({running}); not starting", file=sys.stderr)
        return 1
    try:
        rundir = layout.run_dir
        rundir.mkdir(parents=True, exist_ok=True)
        log_path = args.log or str(layout.log_dir / "pmcd" / "pmcd.log")
        if log_path != "-":
            Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        _open_log(log_path)
    except OSError as exc:
        print(f"pmcd: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    logging.getLogger("pmcd").info("%s", raise_fd_limit())
    memory.tune()
    settings = Settings(
        timeout=args.timeout,
        creds_timeout=args.creds_timeout,
        port=port,
        addresses=args.interface,
        unix_path=unix or None,
        agent_dir=str(Path(log_path).resolve().parent) if log_path != "-" else str(rundir),
        pdu_limit=args.pdu_limit,
    )
    daemon = Daemon(config, pmns, settings)
    try:
        trio.run(_serve, daemon, sources)
    except (OSError, BaseExceptionGroup) as failure:
        exc = _first_os_error(failure)
        if exc is None:  # a fault of ours: one line, where the user and the log see it
            logging.getLogger("pmcd").error("pmcd: ended by an internal error: %r", failure)
            print(f"pmcd: ended by an internal error: {failure!r}", file=sys.stderr)
            return 1
        print(f"pmcd: cannot listen: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def raise_fd_limit() -> str:
    """Raise the soft limit on open files to the hard limit, as far as the kernel allows,
    so that pmcd serves as many clients as the system lets it; say what it is now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = hard
    if hard == resource.RLIM_INFINITY:
        try:
            ceiling = int(Path("/proc/sys/fs/nr_open").read_text())
        except (OSError, ValueError):
            ceiling = soft
    if ceiling > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
        except (OSError, ValueError) as exc:
            return f"pmcd: file descriptor limit {soft} (could not raise it to {ceiling}: {exc})"
        return f"pmcd: file descriptor limit {ceiling} (raised from {soft})"
    return f"pmcd: file descriptor limit {soft}"


def _first_os_error(failure: BaseException) -> OSError | None:
    """FAILURE if it is an OSError, else the first one in its (nested) exception group."""
    if isinstance(failure, OSError):
        return failure
    if isinstance(failure, BaseExceptionGroup):
        for exc in failure.exceptions:
            found = _first_os_error(exc)
            if found is not None:
                return found
    return None


async def _serve(daemon: Daemon, sources: Sources) -> None:
    """Run DAEMON until SIGTERM or SIGINT; SIGHUP reloads pmcd.conf and the namespace.

    Once it listens, pmcd records its pid in $PCP_RUN_DIR/pmcd.pid (how `pmda install`
    finds it) and tells systemd it is ready (Type=notify)."""
    log = logging.getLogger("pmcd")
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        daemon.on_sighup = lambda: os.kill(os.getpid(), signal.SIGHUP)  # as pmdapmcd does
        async with trio.open_nursery() as nursery:
            where = await nursery.start(daemon.run)
            pid_path = write_pidfile(files.pid_file(sources.layout))
            try:
                log.info("pmcd: listening on %s", ", ".join(where))
                print(f"pmcd: listening on {', '.join(where)}", file=sys.stderr, flush=True)
                notify_ready()
                async for signum in signals:
                    if signum == signal.SIGHUP:
                        await _reload(daemon, sources)
                        continue
                    log.info("pmcd: %s, shutting down", signal.Signals(signum).name)
                    break
            finally:
                remove_pidfile(pid_path)
            nursery.cancel_scope.cancel()
    with trio.CancelScope(shield=True):
        await daemon.close()


async def _reload(daemon: Daemon, sources: Sources) -> None:
    """Re-read the configuration; a bad one is reported and the running one kept, as in PCP."""
    log = logging.getLogger("pmcd")
    conf_path = sources.conf_path()
    log.info("pmcd: SIGHUP: reloading %s", conf_path)
    notify_reloading()
    try:
        config = load_config(conf_path)
        for message in config.messages:
            log.warning("%s", message)
        if not config.ok:
            log.error("pmcd: %s has errors; keeping the configuration in use", conf_path)
            return
        pmns = sources.pmns(config)
        await daemon.reload(config, pmns)
    except (OSError, PMError) as exc:
        log.error("pmcd: reload failed, keeping the configuration in use: %s", exc)
    except Exception as exc:  # a fault of ours: the running configuration stays
        log.error("pmcd: reload failed by an internal error: %r", exc)
    finally:
        notify_reloaded()


def _open_log(path: str) -> None:
    handler: logging.Handler = logging.StreamHandler() if path == "-" else logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("[%(asctime)s] pmcd(%(process)d) %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


if __name__ == "__main__":
    sys.exit(main())
