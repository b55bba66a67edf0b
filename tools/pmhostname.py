"""pmhostname: a host's name as PCP's tools know it, as PCP's pmhostname reports it.

The name given (this host's, from gethostname, when none is) is resolved to its first
address that resolves back to a name (getaddrinfo, then getnameinfo, as libpcp's
__pmGetAddrInfo and __pmHostEntGetName do) and that name printed; a name that does not
resolve is printed as it is.  PCP's scripts use it to name a host's archive folder.
"""

from __future__ import annotations

import getopt
import socket
import sys
from collections.abc import Sequence

PROG = "pmhostname"
USAGE = (
    "Usage: pmhostname [hostname]\n\n"
    "Options:\n"
    "  -?, --help            show this usage message and exit\n"
)


def canonical(name: str) -> str:
    """NAME as libpcp names the host: the reverse lookup of its first address that has
    one (getnameinfo falls back to the address's numbers), else NAME itself."""
    try:
        found = socket.getaddrinfo(name, None, socket.AF_UNSPEC, 0, 0, socket.AI_ADDRCONFIG)
    except (OSError, UnicodeError):
        return name
    for family, _, _, _, address in found:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        try:
            return socket.getnameinfo(address, 0)[0]
        except OSError:
            continue
    return name


def main(argv: Sequence[str] | None = None) -> int:
    from purepcp.pmapi.options import debug_complaint

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        opts, rest = getopt.getopt(args, "D:?", ["debug=", "help"])
    except getopt.GetoptError as exc:
        problem = _getopt_words(exc)
        sys.stderr.write(f"{PROG}: {problem}\n{USAGE}")
        return 1
    for opt, value in opts:
        if opt in ("-?", "--help"):
            sys.stderr.write(USAGE)
            return 1
        if complaint := debug_complaint(value):  # (-D: accepted; nothing of ours to trace)
            sys.stderr.write(f"{PROG}: {complaint}\n{USAGE}")
            return 1
    if len(rest) > 1:
        sys.stderr.write(USAGE)
        return 1
    name = rest[0] if rest else socket.gethostname()
    sys.stdout.write(canonical(name) + "\n")
    return 0


def _getopt_words(exc: getopt.GetoptError) -> str:
    """glibc getopt_long's words for what Python's getopt refused."""
    missing = "requires argument" in exc.msg
    if len(exc.opt) == 1:
        if missing:
            return f"option requires an argument -- '{exc.opt}'"
        return f"invalid option -- '{exc.opt}'"
    if missing:
        return f"option '--{exc.opt}' requires an argument"
    return f"unrecognized option '--{exc.opt}'"


if __name__ == "__main__":
    sys.exit(main())
