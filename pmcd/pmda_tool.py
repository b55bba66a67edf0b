"""The pmda command: install, remove, create and list agents.

    pmda install NAME [--inproc | --daemon [--pipe | --socket]] [--domain N] [--no-check]
    pmda remove NAME|SPEC [--no-check]
    pmda new NAME --domain N [--dir DIR]
    pmda list

install and remove are PCP's Install and Remove scripts for one agent (pmcd.install);
new writes a working agent package to start from (pmda.cli.newagent).  The command
lives with pmcd because installing edits pmcd's configuration and signals it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from purepcp.pmapi.options import HELP, VERSION, Opt, Parsed, Tool
from purepcp.pmapi.paths import paths

from .install import Installer, InstallError, available_agents, conf_agents, find_agent

PROG = "pmda"

INPROC = Opt(None, "inproc", None, "run it in pmcd's process (the default)")
DAEMON = Opt(None, "daemon", None, "run it as a process of its own")
PIPE = Opt(None, "pipe", None, "the daemon talks to pmcd on a pipe (the default)")
SOCKET = Opt(None, "socket", None, "the daemon listens on a unix socket")
DOMAIN = Opt(None, "domain", "N", "domain number (install: default the agent's own)")
NO_CHECK = Opt(None, "no-check", None, "do not wait to see the metrics come or go")
WAIT = Opt(None, "wait", "SECONDS", "longest wait for that [10]")
DIR = Opt(None, "dir", "DIR", "where to write it [./pmda-NAME]")

#: each command: its synopsis and option sections
COMMANDS: dict[str, Tool] = {
    "install": Tool(
        PROG,
        "install [options] NAME (an agent's name, module[:Class] or file.py)",
        [
            ("How it runs", [INPROC, DAEMON, PIPE, SOCKET, DOMAIN]),
            ("Checking", [NO_CHECK, WAIT]),
            ("General options", [VERSION, HELP]),
        ],
    ),
    "remove": Tool(
        PROG,
        "remove [options] NAME (its name in pmcd.conf, or the spec it was installed from)",
        [("Checking", [NO_CHECK, WAIT]), ("General options", [VERSION, HELP])],
    ),
    "new": Tool(
        PROG,
        "new --domain N [--dir DIR] NAME",
        [("Options", [DOMAIN, DIR]), ("General options", [VERSION, HELP])],
    ),
    "list": Tool(PROG, "list", [("General options", [VERSION, HELP])]),
}

TOOL = Tool(
    PROG,
    "install|remove|new|list [options] ...",
    [("General options", [VERSION, HELP])],
)


def usage() -> str:
    """pmda's usage: its commands, each laid out as PCP lays out a tool's options."""
    return TOOL.usage() + "".join("\n" + tool.usage() for tool in COMMANDS.values())


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    command = argv[0] if argv else None
    if command not in COMMANDS:
        if command in ("-V", "--version"):
            TOOL.parse([command])  # (prints the version line and exits 0)
        known = command in (None, "-?", "--help")
        sys.stderr.write(("" if known else f"{PROG}: unknown command '{command}'\n") + usage())
        return 1
    tool = COMMANDS[command]
    parsed = tool.parse(argv[1:])
    want = 0 if command == "list" else 1
    if len(parsed.operands) != want:
        tool.fail("one agent name is required" if want else "no operands allowed", usage=True)
    try:
        if command == "new":
            if "domain" not in parsed:
                tool.fail("--domain is required", usage=True)
            return _new(parsed.operands[0], _number(tool, parsed, "domain", 0), parsed.get("dir"))
        layout = paths()
        if command == "list":
            return _list(layout)
        wait = _number(tool, parsed, "wait", 10.0)
        installer = Installer(layout, check="no-check" not in parsed, wait=wait)
        if command == "remove":
            return installer.remove(parsed.operands[0])
        if "inproc" in parsed and "daemon" in parsed:
            raise InstallError("--inproc and --daemon: choose one")
        if "pipe" in parsed and "socket" in parsed:
            raise InstallError("--pipe and --socket: choose one")
        daemon = "daemon" in parsed or "pipe" in parsed or "socket" in parsed
        if "inproc" in parsed and daemon:
            raise InstallError("--pipe and --socket are for --daemon, not --inproc")
        mode = "socket" if "socket" in parsed else "pipe" if daemon else "inproc"
        domain = _number(tool, parsed, "domain", None)
        return installer.install(find_agent(parsed.operands[0]), domain, mode)
    except InstallError as exc:
        tool.fail(str(exc))
    except OSError as exc:
        tool.fail(f"{exc.filename or ''}: {exc.strerror or exc}")


def _number(tool: Tool, parsed: Parsed, key: str, default: float | None) -> Any:
    """The option KEY as a number of DEFAULT's kind (int when DEFAULT is None or an int)."""
    if key not in parsed:
        return default
    kind = float if isinstance(default, float) else int
    try:
        return kind(str(parsed.get(key)))
    except ValueError:
        tool.fail(f"--{key} {parsed.get(key)}: not a number", usage=True)


def _new(name: str, domain: int, where: str | None) -> int:
    from purepcp.pmda.cli.newagent import NewAgentError, create_agent

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
    from .files import pmcd_conf_path

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
