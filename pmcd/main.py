"""The pmcd command: parse pmcd(1)'s flags, read pmcd.conf, run the daemon until told to stop."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import tempfile
from pathlib import Path

import trio

from pmapi import PCP_COMPAT_VERSION, __version__
from pmapi.errors import PMError

from .config import load_config
from .daemon import Daemon, Settings, namespace_for

#: The pmcd.conf used when neither -c nor $PCP_PMCDCONF_PATH names one.
DEFAULT_CONF = Path(__file__).with_name("pmcd.conf")


def run_dir() -> Path:
    """$PCP_RUN_DIR, else a per-user directory (so pmcd runs without root)."""
    env = os.environ.get("PCP_RUN_DIR")
    if env:
        return Path(env)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime else Path(tempfile.gettempdir())
    return base / f"pypcp-{os.getuid()}"


def options() -> argparse.ArgumentParser:
    """pmcd(1)'s command line."""
    p = argparse.ArgumentParser(prog="pmcd", description="Performance Metrics Collector Daemon")
    p.add_argument("-f", "--foreground", action="store_true", help="run in the foreground")
    p.add_argument("-c", "--config", metavar="FILE", help="pmcd.conf to use")
    p.add_argument("-n", "--namespace", metavar="FILE", help="PMNS to use")
    p.add_argument("-l", "--log", metavar="FILE", help="log file ('-' for stderr)")
    p.add_argument("-t", "--timeout", type=float, default=5.0, help="agent reply timeout (s)")
    p.add_argument("-q", "--creds-timeout", type=float, default=3.0, help="agent start timeout")
    p.add_argument("-L", "--pdu-limit", type=int, default=65536, help="largest client PDU")
    p.add_argument("-i", "--interface", action="append", default=[], metavar="ADDRESS")
    p.add_argument("-p", "--port", type=int, help="TCP port (0: any free port; default 44321)")
    p.add_argument("-s", "--socket", metavar="PATH", help="unix socket ('' for none)")
    p.add_argument("-x", "--error-log", metavar="FILE", help="accepted for PCP compatibility")
    p.add_argument("-A", "--no-avahi", action="store_true", help="no service advertising")
    p.add_argument("-U", "--username", help="accepted for PCP compatibility; not used")
    p.add_argument("-v", "--verify", action="store_true", help="check the configuration, exit")
    p.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    args = options().parse_args(argv)
    if args.version:
        print(f"pmcd (pypcp) {__version__}, compatible with PCP {PCP_COMPAT_VERSION}")
        return 0
    conf_path = args.config or os.environ.get("PCP_PMCDCONF_PATH") or str(DEFAULT_CONF)
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
        pmns = namespace_for(config, args.namespace)
    except (PMError, OSError) as exc:
        print(f"pmcd: cannot load the namespace: {exc}", file=sys.stderr)
        return 1
    rundir = run_dir()
    rundir.mkdir(parents=True, exist_ok=True)
    log_path = args.log or str(rundir / "pmcd.log")
    _open_log(log_path)
    port = args.port if args.port is not None else int(os.environ.get("PMCD_PORT", 44321))
    unix = str(rundir / "pmcd.socket") if args.socket is None else args.socket
    settings = Settings(
        timeout=args.timeout,
        creds_timeout=args.creds_timeout,
        port=port,
        addresses=args.interface,
        unix_path=unix or None,
        agent_dir=str(Path(log_path).resolve().parent) if log_path != "-" else str(rundir),
    )
    daemon = Daemon(config, pmns, settings)
    try:
        trio.run(_serve, daemon, conf_path, args.namespace)
    except (OSError, BaseExceptionGroup) as failure:
        exc = _first_os_error(failure)
        if exc is None:
            raise
        print(f"pmcd: cannot listen: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


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


async def _serve(daemon: Daemon, conf_path: str, pmns_path: str | None) -> None:
    """Run DAEMON until SIGTERM or SIGINT; SIGHUP reloads pmcd.conf and the namespace."""
    log = logging.getLogger("pmcd")
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
        async with trio.open_nursery() as nursery:
            where = await nursery.start(daemon.run)
            log.info("pmcd: listening on %s", ", ".join(where))
            print(f"pmcd: listening on {', '.join(where)}", file=sys.stderr, flush=True)
            async for signum in signals:
                if signum == signal.SIGHUP:
                    await _reload(daemon, conf_path, pmns_path)
                    continue
                log.info("pmcd: %s, shutting down", signal.Signals(signum).name)
                break
            nursery.cancel_scope.cancel()
    with trio.CancelScope(shield=True):
        await daemon.close()


async def _reload(daemon: Daemon, conf_path: str, pmns_path: str | None) -> None:
    """Re-read the configuration; a bad one is reported and the running one kept, as in PCP."""
    log = logging.getLogger("pmcd")
    log.info("pmcd: SIGHUP: reloading %s", conf_path)
    try:
        config = load_config(conf_path)
        for message in config.messages:
            log.warning("%s", message)
        if not config.ok:
            log.error("pmcd: %s has errors; keeping the configuration in use", conf_path)
            return
        pmns = namespace_for(config, pmns_path)
    except (OSError, PMError) as exc:
        log.error("pmcd: reload failed, keeping the configuration in use: %s", exc)
        return
    await daemon.reload(config, pmns)


def _open_log(path: str) -> None:
    handler: logging.Handler = logging.StreamHandler() if path == "-" else logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("[%(asctime)s] pmcd(%(process)d) %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


if __name__ == "__main__":
    sys.exit(main())
