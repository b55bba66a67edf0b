"""The pmda command: install, remove, create and list agents.

    pmda install NAME [--inproc | --daemon [--pipe | --socket]] [--domain N] [--no-check]
    pmda remove NAME|SPEC [--no-check]
    pmda new NAME --domain N [--dir DIR]
    pmda list

install and remove are PCP's Install and Remove scripts for one agent (pmda.install);
new writes a working agent package to start from (pmda.cli.newagent).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pmapi.cli.common import quiet_stdout
from pmapi.paths import LayoutError, paths

from ..install import Installer, InstallError, available_agents, conf_agents, find_agent

PROG = "pmda"


def options() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Install, remove and create PCP agents.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    install = sub.add_parser("install", help="add an agent to pmcd and check its metrics appear")
    install.add_argument("name", help="an installed agent's name, module[:Class] or file.py")
    how = install.add_mutually_exclusive_group()
    how.add_argument("--inproc", action="store_true", help="run it in pmcd's process (default)")
    how.add_argument("--daemon", action="store_true", help="run it as a process of its own")
    ipc = install.add_mutually_exclusive_group()
    ipc.add_argument("--pipe", action="store_true", help="daemon talks on a pipe (default)")
    ipc.add_argument("--socket", action="store_true", help="daemon listens on a unix socket")
    install.add_argument("--domain", type=int, help="domain number (default: the agent's own)")
    install.add_argument("--no-check", action="store_true", help="do not wait for the metrics")
    install.add_argument(
        "--wait", type=float, default=10.0, metavar="SECONDS", help="longest wait for them [10]"
    )

    remove = sub.add_parser("remove", help="take an agent out of pmcd and its namespace")
    remove.add_argument(
        "name", help="the agent's name in pmcd.conf, or the module[:Class] or file.py it came from"
    )
    remove.add_argument("--no-check", action="store_true", help="do not check they went away")
    remove.add_argument(
        "--wait", type=float, default=10.0, metavar="SECONDS", help="longest wait for that [10]"
    )

    new = sub.add_parser("new", help="write a new agent package to start from")
    new.add_argument("name", help="the agent's name (its metrics' first name component)")
    new.add_argument("--domain", type=int, required=True, help="its domain number (1-510)")
    new.add_argument("--dir", help="where to write it (default ./pmda-NAME)")

    sub.add_parser("list", help="agents installed in pmcd.conf and agents available")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = options().parse_args(argv)
    try:
        if args.command == "new":
            return _new(args.name, args.domain, args.dir)
        layout = paths()
        if args.command == "list":
            return _list(layout)
        installer = Installer(layout, check=not args.no_check, wait=args.wait)
        if args.command == "remove":
            return installer.remove(args.name)
        if args.inproc and (args.pipe or args.socket):
            raise InstallError("--pipe and --socket are for --daemon, not --inproc")
        if (args.pipe or args.socket) and not args.daemon:
            args.daemon = True
        mode = "socket" if args.socket else "pipe" if args.daemon else "inproc"
        return installer.install(find_agent(args.name), args.domain, mode)
    except (InstallError, LayoutError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # (output piped into head, say)
        quiet_stdout()
        return 1
    except OSError as exc:
        print(f"{PROG}: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _new(name: str, domain: int, where: str | None) -> int:
    from .newagent import NewAgentError, create_agent

    dest = Path(where or f"pmda-{name}")
    try:
        written = create_agent(name, domain, dest)
    except NewAgentError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(f"Wrote {path}")
    print(f"Next: cd {dest} && pip install . && pmda install {name}")
    return 0


def _list(layout) -> int:
    from pmcd.files import pmcd_conf_path

    conf = pmcd_conf_path(layout)
    try:
        installed = conf_agents(conf.read_text())
    except OSError as exc:
        raise InstallError(f"cannot read {conf}: {exc.strerror}") from None
    print(f"In {conf}:")
    for name, domain in installed.items():
        print(f"  {name:<16} domain {domain}")
    print("Available to install:")
    for name, spec in sorted(available_agents().items()):
        print(f"  {name:<16} {spec}{'  (installed)' if name in installed else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
