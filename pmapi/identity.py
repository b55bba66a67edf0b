"""pmSetProcessIdentity: a daemon started as root becomes its user (-U, else PCP_USER)."""

from __future__ import annotations

import os
import pwd
import sys

from . import logfile


def switch_user(user: str, prog: str) -> None:
    """Become USER, its group first; each failure is a Critical line on stderr (in
    pmNotifyErr's form, as PROG) and the end of the run.  The layout the process started
    with stays its layout (root's system one does not become USER's own)."""
    if not os.environ.get("PUREPCP_LAYOUT") and not os.environ.get("PUREPCP_CONF"):
        os.environ["PUREPCP_LAYOUT"] = "system" if os.geteuid() == 0 else "user"
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        _critical(prog, f"cannot find the {user} user to switch to")
    try:
        os.setgid(entry.pw_gid)
    except OSError as exc:
        _critical(prog, f"setgid to gid of {user} user (gid={entry.pw_gid}): {exc.strerror}")
    if os.getgroups():
        try:
            os.initgroups(user, entry.pw_gid)
        except PermissionError:
            pass  # (privileges dropped already: PCP allows EPERM)
        except OSError as exc:
            why = exc.strerror
            _critical(prog, f"initgroups with gid of {user} user (gid={entry.pw_gid}): {why}")
    try:
        os.setuid(entry.pw_uid)
    except OSError as exc:
        _critical(prog, f"setuid to uid of {user} user (uid={entry.pw_uid}): {exc.strerror}")


def default_user() -> str:
    """pmGetUsername: PCP_USER of the environment or pcp.conf, else "pcp"."""
    from .paths import pcp_conf

    return os.environ.get("PCP_USER") or pcp_conf().get("PCP_USER") or "pcp"


def _critical(prog: str, message: str) -> None:
    logfile.notify(sys.stderr, prog, "Critical", message)
    raise SystemExit(1)
