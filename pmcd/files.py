"""pmcd's files in the layout (pmapi.paths): which pmcd.conf and namespace it uses, its pid file.

Until something writes them (`pmda install`, an administrator), the layout's pmcd.conf
and namespace root need not exist: pmcd then runs the packaged pmcd.conf (pmcd, trivial,
simple and linux) and builds its namespace from those agents' own pmns files, so a
fresh installation runs with nothing set up.  A path chosen explicitly (environment
or layout file) is always used, so a missing one is an error rather than a surprise.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

from purepcp.pmapi.paths import Paths
from purepcp.pmapi.pidfile import read_pid
from purepcp.pmapi.pmns import PMNS

from .config import PmcdConfig

#: The pmcd.conf shipped with purepcp, used until the layout has one of its own.
PACKAGED_CONF = Path(__file__).with_name("pmcd.conf")


def pmcd_conf_path(layout: Paths) -> Path:
    """$PCP_PMCDCONF_PATH if it exists or was chosen, else the packaged pmcd.conf."""
    path = layout.pmcdconf_path
    if path.exists() or not layout.is_default("PCP_PMCDCONF_PATH"):
        return path
    return PACKAGED_CONF


def namespace_root(layout: Paths) -> Path | None:
    """$PMNS_DEFAULT if it exists or was chosen, else None (pmcd builds one from its agents)."""
    root = layout.pmns_default
    if root.exists() or not layout.is_default("PMNS_DEFAULT"):
        return root
    return None


def default_namespace(config: PmcdConfig, layout: Paths) -> PMNS:
    """The namespace pmcd serves when not given -n: the root file, else its agents' files."""
    from .daemon import namespace_for  # (the daemon imports trio: only when needed)

    root = namespace_root(layout)
    return namespace_for(config, None if root is None else str(root))


def pid_file(layout: Paths) -> Path:
    """Where pmcd records its process id, as PCP's $PCP_RUN_DIR/pmcd.pid (pmapi.pidfile)."""
    return layout.run_dir / "pmcd.pid"


def running_pid(layout: Paths) -> int | None:
    """The running pmcd of LAYOUT: the one in its pid file, else the process listening
    on its unix socket (PCP's own pmcd writes no pid file when run in the foreground)."""
    try:
        pid = read_pid(pid_file(layout))
    except (OSError, ValueError):
        pid = None
    if pid is None:
        return socket_owner(layout.pmcd_socket)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return socket_owner(layout.pmcd_socket)
    except PermissionError:
        return pid  # alive, another user's (a service's) process
    return pid


def socket_owner(path: str) -> int | None:
    """The process listening on the unix socket PATH, from /proc (Linux), if we may see it."""
    try:
        with open("/proc/net/unix") as table:
            next(table)
            inodes = {
                f"socket:[{words[6]}]"
                for words in (line.split() for line in table)
                if len(words) > 7 and words[7] == path and words[3] == "00010000"  # listening
            }
    except (OSError, StopIteration):
        return None
    if not inodes:
        return None
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in os.scandir(f"/proc/{entry.name}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(fd.path) in inodes:
                        return int(entry.name)
    return None


def already_running(layout: Paths, unix_path: str | None) -> str | None:
    """Why another pmcd serves this pmcd's unix socket, naming what says so, or None.

    A unix socket that accepts a connection means one is running there: a second must
    not start (it would take the socket over and delete it at its exit, leaving the
    first unreachable).  Another live pmcd's pid file alone does not stop it (PCP's
    pmcd -f, on another port and socket, say): `pid_file_holder` tells the second to
    leave that file alone."""
    if not (unix_path and _accepts(unix_path)):
        return None
    holder = pid_file_holder(layout)
    held = f"process {holder} in {pid_file(layout)} and " if holder is not None else ""
    return f"{held}a server on {unix_path}"


def pid_file_holder(layout: Paths) -> int | None:
    """Another live pmcd whose pid the pid file holds (then this one must neither
    write nor remove it), or None."""
    try:
        pid = read_pid(pid_file(layout))
    except (OSError, ValueError):
        return None
    if pid is not None and pid != os.getpid() and _is_pmcd(pid):
        return pid
    return None


def _is_pmcd(pid: int) -> bool:
    """Whether PID is a live process that looks like a pmcd (a stale pid file's number
    may since have gone to anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's (a service's) process
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"pmcd" in f.read()
    except OSError:
        return True  # alive, and we may not look: assume the worst


def _accepts(path: str) -> bool:
    """Whether something listens on the unix socket PATH."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        try:
            probe.connect(path)
        except OSError:
            return False
    return True
