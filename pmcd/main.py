"""The pmcd command: parse pmcd(1)'s flags, read pmcd.conf, run the daemon until told to stop."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from purepcp.pmapi.errors import PMError
from purepcp.pmapi.options import HELP, NAMESPACE, VERSION, Opt, Tool
from purepcp.pmapi.paths import LayoutError, Paths, paths

from . import files
from .config import PmcdConfig, load_config
from .listen import RequestPort, open_request_ports

if TYPE_CHECKING:
    from .daemon import Daemon

#: The pmcd.conf used until the layout has its own (kept under this name for callers).
DEFAULT_CONF = files.PACKAGED_CONF


FOREGROUND = Opt("f", "foreground", None, "run in the foreground")
HOSTNAME = Opt("H", "hostname", "HOST", "set the hostname to be used for pmcd.hostname metric")
NO_AVAHI = Opt("A", None, None, "disable service advertisement (none is done)")
USERNAME = Opt("U", "username", "USER", "accepted for PCP compatibility; not used")
CONFIG = Opt("c", "config", "PATH", "path to configuration file")
PDU_LIMIT = Opt("L", None, "BYTES", "maximum size for PDUs from clients [default 65536]")
CREDS_TIMEOUT = Opt("q", None, "TIME", "PMDA initial negotiation timeout (seconds) [default 3]")
TIMEOUT = Opt("t", None, "TIME", "PMDA response timeout (seconds) [default 5]")
VERIFY = Opt("v", "verify", None, "check validity of pmcd configuration, then exit")
INTERFACE = Opt("i", "interface", "ADDR", "accept connections on this IP address")
PORT = Opt("p", "port", "N", "accept connections on this port (0: any free port)")
SOCKET = Opt("s", "socket", "PATH", "Unix domain socket file ('' for none)")
LOG = Opt("l", "log", "PATH", "redirect diagnostics and trace output ('-' for stderr)")
STARTUP_LOG = Opt("x", None, "PATH", "accepted for PCP compatibility; not used")
INSTALL_UNITS = Opt(None, "install-units", None, "write systemd units (into DIR if given), exit")

TOOL = Tool(
    "pmcd",
    "[options] | --install-units [DIR]",
    [
        ("General options", [NAMESPACE, VERSION, HELP]),
        ("Service options", [NO_AVAHI, FOREGROUND, HOSTNAME, USERNAME, INSTALL_UNITS]),
        ("Configuration options", [CONFIG, PDU_LIMIT, CREDS_TIMEOUT, TIMEOUT, VERIFY]),
        ("Connection options", [INTERFACE, PORT, SOCKET]),
        ("Diagnostic options", [LOG, STARTUP_LOG]),
    ],
    checks_layout=False,  # (_run does: --install-units writes a missing layout file)
)


@dataclass(frozen=True)
class Args:
    """pmcd's command line, read."""

    foreground: bool = False
    config: str | None = None
    namespace: str | None = None
    log: str | None = None
    timeout: float = 5.0
    creds_timeout: float = 3.0
    pdu_limit: int = 65536
    interface: tuple[str, ...] = ()
    port: int | None = None
    socket: str | None = None
    verify: bool = False
    install_units: str | None = None  # None: not asked; "": the default directory
    hostname: str | None = None  # -H: pmcd.hostname and the hostname context label


def _number(kind: type, text: str, message: str) -> Any:
    """TEXT as a KIND (int or float), else MESSAGE and the usage."""
    try:
        return kind(text)
    except ValueError:
        TOOL.fail(message, usage=True)


def options(argv: list[str]) -> Args:
    """pmcd(1)'s command line, with PCP's option sections and complaints."""
    argv = [  # (--install-units=DIR is --install-units DIR: getopt has no optional arguments)
        part
        for arg in argv
        for part in (
            ["--install-units", arg.split("=", 1)[1]]
            if arg.startswith("--install-units=")
            else [arg]
        )
    ]
    parsed = TOOL.parse(argv)
    units = "install-units" in parsed
    if len(parsed.operands) > (1 if units else 0):
        TOOL.fail(f"unexpected argument: {parsed.operands[-1]}", usage=True)
    positive = "requires a positive numeric argument"
    timeout = _number(float, str(parsed.get("t", "5")), f"-t {positive}")
    creds = _number(float, str(parsed.get("q", "3")), f"-q {positive}")
    limit = _number(int, str(parsed.get("L", "65536")), "-L requires a numeric argument")
    port = parsed.get("port")
    if timeout < 0:  # (PCP's words, and its usage after them)
        TOOL.fail(f"-t {positive}", usage=True)
    if creds <= 0:
        TOOL.fail(f"-q {positive}", usage=True)
    if limit < 12:  # (a PDU header must fit)
        TOOL.fail(f"-L {limit}: too small for a PDU")
    return Args(
        foreground="foreground" in parsed,
        config=parsed.get("config"),
        namespace=parsed.get("namespace"),
        log=parsed.get("log"),
        timeout=timeout,
        creds_timeout=creds,
        pdu_limit=limit,
        interface=tuple(v for o, v in parsed.pairs if o is INTERFACE),
        port=None if port is None else _number(int, str(port), f"-p {port}: not a port"),
        socket=parsed.get("socket"),
        verify="verify" in parsed,
        install_units=(parsed.operands[0] if parsed.operands else "") if units else None,
        hostname=parsed.get("hostname") or None,
    )


class Sources:
    """Where pmcd's configuration comes from: -c and -n if given, else the layout's files,
    looked up afresh at each SIGHUP (so a pmcd.conf `pmda install` creates is seen)."""

    def __init__(self, layout: Paths, config: str | None, namespace: str | None) -> None:
        self.layout, self.config, self.namespace = layout, config, namespace

    def conf_path(self) -> str:
        return self.config or str(files.pmcd_conf_path(self.layout))

    def pmns(self, config: PmcdConfig):
        from .daemon import namespace_for

        if self.namespace is not None:
            return namespace_for(config, self.namespace)
        return files.default_namespace(config, self.layout)


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the command itself: let ps (and PCP's scripts) see it as pmcd
        show_as_pmcd(sys.argv)
    return TOOL.main(_run, argv)


def show_as_pmcd(argv: list[str]) -> None:
    """Have ps show this process as PCP's pmcd shows, without the Python interpreter
    before its options: as $PCP_BINADM_DIR/pmcd where the layout has one (what PCP's
    scripts look for, whatever launcher started us), else as ARGV's program if that is
    a pmcd, else as plain "pmcd"."""
    from purepcp.pmapi.proctitle import set_command_line

    program = argv[0] if os.path.basename(argv[0]) == "pmcd" else "pmcd"
    binadm = os.environ.get("PCP_BINADM_DIR")
    if not binadm:
        with contextlib.suppress(LayoutError, OSError):
            binadm = paths().values.get("PCP_BINADM_DIR")
    if binadm and os.path.isfile(os.path.join(binadm, "pmcd")):
        program = os.path.join(binadm, "pmcd")
    set_command_line([program, *argv[1:]])


def _run(argv: list[str]) -> int:
    args = options(argv)
    try:
        layout = paths(missing_ok=args.install_units is not None)
    except LayoutError as exc:
        print(f"pmcd: {exc}", file=sys.stderr)
        return 1
    if args.install_units is not None:
        from purepcp.pmapi.options import quiet_stdout

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
    for message in config.messages:  # PCP's words, as pmcd prints them (no file name)
        print(message, file=sys.stderr)
    if args.verify or not config.ok:
        return 0 if config.ok else 1
    port = args.port if args.port is not None else layout.pmcd_port
    unix = (layout.pmcd_socket if args.socket is None else args.socket) or None
    running = files.already_running(layout, unix)
    if running:
        print(f"pmcd: pmcd may already be running ({running}); not starting", file=sys.stderr)
        return 1
    # the request ports first, as PCP's pmcd opens them: a client that comes while the
    # namespace loads and the agents start waits for its greeting, and is not refused
    try:
        layout.run_dir.mkdir(parents=True, exist_ok=True)  # (where the unix socket goes)
    except OSError as exc:
        print(f"pmcd: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    try:
        ports = open_request_ports(port, args.interface, unix)
    except OSError as exc:
        print(f"pmcd: cannot listen: {exc.strerror or exc}", file=sys.stderr)
        return 1
    try:
        return _start(args, layout, sources, config, ports, port, unix)
    finally:
        for rp in ports:
            rp.sock.close()
        if unix:  # (ours: bound above)
            with contextlib.suppress(OSError):
                os.unlink(unix)


def _start(
    args: Args,
    layout: Paths,
    sources: Sources,
    config: PmcdConfig,
    ports: list[RequestPort],
    port: int,
    unix: str | None,
) -> int:
    """Load the namespace, open the log, and run the daemon on PORTS until it stops."""
    try:
        pmns = sources.pmns(config)
    except (PMError, OSError) as exc:
        print(f"pmcd: cannot load the namespace: {exc}", file=sys.stderr)
        return 1
    from purepcp.pmapi.daemonlog import open_log
    from purepcp.pmapi.service import raise_fd_limit

    rundir = layout.run_dir
    try:
        log_path = args.log or str(layout.log_dir / "pmcd" / "pmcd.log")
        if log_path != "-":
            Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        open_log(log_path, "pmcd")
    except OSError as exc:
        print(f"pmcd: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    logging.getLogger("pmcd").info("pmcd: %s", raise_fd_limit())
    import trio

    from purepcp.pmapi import memory
    from purepcp.pmapi.service import daemon_ended

    from .daemon import Daemon, Settings

    memory.tune()
    settings = Settings(
        timeout=args.timeout,
        creds_timeout=args.creds_timeout,
        port=port,
        addresses=args.interface,
        unix_path=unix,
        agent_dir=str(Path(log_path).resolve().parent) if log_path != "-" else str(rundir),
        pdu_limit=args.pdu_limit,
        hostname=args.hostname,
        ports=ports,
        sysconf_dir=str(layout.sysconf_dir),
    )
    daemon = Daemon(config, pmns, settings)
    try:
        trio.run(_serve, daemon, sources)
    except (OSError, BaseExceptionGroup) as failure:
        return daemon_ended("pmcd", failure)
    return 0


async def _serve(daemon: Daemon, sources: Sources) -> None:
    """Run DAEMON until SIGTERM or SIGINT; SIGHUP reloads pmcd.conf and the namespace.

    Once it serves, pmcd records its pid in $PCP_RUN_DIR/pmcd.pid (how `pmda install`
    finds it), writes PCP's start-up report into its log, and tells systemd it is
    ready (Type=notify)."""
    import trio

    from purepcp.pmapi.pdu.constants import PDU_VERSION
    from purepcp.pmapi.pidfile import remove_pidfile, write_pidfile
    from purepcp.pmapi.service import notify_ready

    from .listen import port_table

    log = logging.getLogger("pmcd")
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        daemon.on_sighup = lambda: os.kill(os.getpid(), signal.SIGHUP)  # as pmdapmcd does
        async with trio.open_nursery() as nursery:
            await nursery.start(daemon.run)
            # (a pmcd started beside another, on a port and socket of its own, keeps out
            # of the first's pid file, as PCP's pmcd -f writes none)
            pid_path = None
            if files.pid_file_holder(sources.layout) is None:
                pid_path = write_pidfile(files.pid_file(sources.layout))
            try:
                # (PCP's words, at the start of their lines: its QA and scripts find the
                # running pmcd's log by them, and its port in the table)
                sys.stderr.write(f"\npmcd: PID = {os.getpid()}, PDU version = {PDU_VERSION}\n")
                sys.stderr.write(port_table(daemon.ports))
                sys.stderr.flush()
                notify_ready()
                async for signum in signals:
                    if signum == signal.SIGHUP:
                        await _reload(daemon, sources)
                        continue
                    # (PCP's words; trio does not say who sent it, as siginfo would)
                    name = signal.Signals(signum).name
                    log.info("pmcd caught %s from unknown process", name)
                    break
            finally:
                if pid_path is not None:
                    remove_pidfile(pid_path)
            nursery.cancel_scope.cancel()
    with trio.CancelScope(shield=True):
        await daemon.close()
    log.info("pmcd Shutdown")


async def _reload(daemon: Daemon, sources: Sources) -> None:
    """Re-read the configuration; a bad one is reported and the running one kept, as in PCP."""
    from purepcp.pmapi.service import notify_reloaded, notify_reloading

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


if __name__ == "__main__":
    sys.exit(main())
