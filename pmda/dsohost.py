"""Serve a C agent library (a pmcd.conf `dso` line) as a pipe agent.

Our pmcd loads no C code into itself, so that a crashing library cannot take pmcd down.
For a C DSO line it runs ``python -m purepcp.pmda.dsohost PATH ENTRY DOMAIN NAME``
instead: this process loads the library with PCP's libpcp_pmda (installed wherever PCP's
C agents are), calls its entry point as PCP's pmcd does (config.c: the domain, the
interface "challenge", a zero status), and then serves it on stdin/stdout with
pmdaConnect and pmdaMain, the library's own request loop.

The library's messages are logged in the name of the program that would have loaded it
(libpcp's pmGetProgname): pmcd, or the client's given by ``--progname NAME``; and
``--debug SPEC`` sets libpcp's debug options (pmSetDebug) in this process, as a client's
-D would for a library it loaded (PCP's sample agent then writes its appl1 trace).  Clients
that would load the library themselves (a local context, dbpmda's `open dso`:
purepcp.pmda.hosted) run it with ``--report FD`` too: how the loading went is then
written to that descriptor, one line of tab-separated words, for the client to report
in its own words: ``ok INTERFACE``, or the failure (``attach DLERROR``, ``entry``,
``init STATUS``, ``interface VERSION``, ``nolibrary``), after which the host exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Sequence

LIBPCP = "libpcp.so.3"
LIBPCP_PMDA = "libpcp_pmda.so.3"
PMAPI_VERSION_2 = 2
PMDA_INTERFACE_2, PMDA_INTERFACE_LATEST = 2, 7
#: room for pmdaInterface (domain, comm bitfields, status, then one version's 11
#: function pointers): 120 bytes on 64-bit; the DSO and libpcp_pmda fill it in
INTERFACE_SIZE = 256
STATUS_OFFSET = 8
RTLD_GLOBAL = ctypes.RTLD_GLOBAL


def libpcp_pmda() -> ctypes.CDLL | None:
    """PCP's agent library, or None where PCP is not installed."""
    try:
        return ctypes.CDLL(LIBPCP_PMDA, mode=RTLD_GLOBAL)
    except OSError:
        return None


def _status(dispatch: ctypes.Array) -> int:
    return int.from_bytes(dispatch.raw[STATUS_OFFSET : STATUS_OFFSET + 4], "little", signed=True)


class _Reporter:
    """Where the outcome of loading goes: REPORT_FD's client (one line), else stderr."""

    def __init__(self, name: str, report_fd: int | None) -> None:
        self.name = name
        self.fd = report_fd

    def _line(self, *words: object) -> None:
        assert self.fd is not None
        os.write(self.fd, ("\t".join(str(w) for w in words) + "\n").encode())
        os.close(self.fd)
        self.fd = None

    def failed(self, ours: str, *words: object) -> int:
        """Loading failed (OURS: pmcd's log line; WORDS: the report); 1."""
        if self.fd is None:
            print(f"{self.name}: {ours}", file=sys.stderr)
        else:
            self._line(*words)
        return 1

    def loaded(self, interface: int) -> None:
        if self.fd is not None:
            self._line("ok", interface)


def _initialise(path: str, entry: str, domain: int, report: _Reporter) -> ctypes.Array | None:
    """PATH loaded and initialised through ENTRY for DOMAIN: its pmdaInterface, or None."""
    try:
        library = ctypes.CDLL(path, mode=RTLD_GLOBAL)
    except OSError as exc:
        report.failed(f"cannot load {path} entry {entry}: {exc}", "attach", exc)
        return None
    try:
        init = getattr(library, entry)
    except AttributeError as exc:
        report.failed(f"cannot load {path} entry {entry}: {exc}", "entry")
        return None
    dispatch = ctypes.create_string_buffer(INTERFACE_SIZE)
    # domain; comm.pmda_interface, the challenge, all bits set; comm.pmapi_version, the
    # oldest's complement (little-endian bitfields, as on every platform PCP ships for)
    ctypes.memmove(dispatch, domain.to_bytes(4, "little", signed=True), 4)
    ctypes.memmove(ctypes.addressof(dispatch) + 4, bytes((0xFF, ~PMAPI_VERSION_2 & 0xFF)), 2)
    init.argtypes = [ctypes.c_void_p]
    init.restype = None
    init(dispatch)
    if (status := _status(dispatch)) != 0:
        report.failed(f"initialisation by {entry} in {path} failed ({status})", "init", status)
        return None
    interface = dispatch.raw[4]
    if not PMDA_INTERFACE_2 <= interface <= PMDA_INTERFACE_LATEST:
        why = f"unknown PMDA interface version {interface} in {path}"
        report.failed(why, "interface", interface)
        return None
    report.loaded(interface)
    return dispatch


def serve(
    path: str,
    entry: str,
    domain: int,
    name: str,
    report_fd: int | None = None,
    progname: str = "pmcd",
    debug: str = "",
) -> int:
    """Load PATH, initialise it through ENTRY for DOMAIN, serve it until pmcd closes the pipe."""
    report = _Reporter(name, report_fd)
    pmda = libpcp_pmda()
    if pmda is None:
        why = f"cannot serve {path}: PCP's {LIBPCP_PMDA} is not installed"
        return report.failed(why, "nolibrary", LIBPCP_PMDA)
    _set_progname(progname)
    if debug:
        _set_debug(debug)
    dispatch = _initialise(path, entry, domain, report)
    if dispatch is None:
        return 1
    argv = (ctypes.c_char_p * 3)(b"pmdadso", b"-p", None)
    err = ctypes.c_int(0)
    pmda.pmdaGetOpt.argtypes = [
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_int),
    ]
    pmda.pmdaGetOpt(2, argv, b"p", dispatch, ctypes.byref(err))
    pmda.pmdaConnect.argtypes = [ctypes.c_void_p]
    pmda.pmdaConnect(dispatch)
    if (status := _status(dispatch)) != 0:
        print(f"{name}: cannot talk to pmcd on the pipe ({status})", file=sys.stderr)
        return 1
    pmda.pmdaMain.argtypes = [ctypes.c_void_p]
    pmda.pmdaMain(dispatch)
    return 0


_PROGNAME: ctypes.Array | None = None


def _set_progname(progname: str) -> None:
    """Have libpcp's messages (pmNotifyErr's "[date] NAME(pid)") name PROGNAME."""
    global _PROGNAME
    _PROGNAME = ctypes.create_string_buffer(os.fsencode(progname))  # libpcp keeps the pointer
    with contextlib.suppress(OSError, AttributeError):
        libpcp = ctypes.CDLL(LIBPCP, mode=RTLD_GLOBAL)
        libpcp.pmSetProgname.argtypes = [ctypes.c_char_p]
        libpcp.pmSetProgname(_PROGNAME)


def _set_debug(spec: str) -> None:
    """libpcp's debug options SPEC (pmSetDebug), for the library to test (pmDebugOptions)."""
    with contextlib.suppress(OSError, AttributeError):
        libpcp = ctypes.CDLL(LIBPCP, mode=RTLD_GLOBAL)
        libpcp.pmSetDebug.argtypes = [ctypes.c_char_p]
        libpcp.pmSetDebug(os.fsencode(spec))


USAGE = (
    "usage: python -m purepcp.pmda.dsohost [--report FD] [--progname NAME] [--debug SPEC]"
    " PATH ENTRY DOMAIN NAME"
)
_OPTIONS = ("--report", "--progname", "--debug")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    report_fd, progname, debug = None, "pmcd", ""
    while len(args) > 1 and args[0] in _OPTIONS:
        if args[0] == "--progname":
            progname = args[1]
        elif args[0] == "--debug":
            debug = args[1]
        elif args[1].isdigit():
            report_fd = int(args[1])
        else:
            break
        del args[:2]
    if len(args) != 4 or not args[2].isdigit():
        print(USAGE, file=sys.stderr)
        return 2
    return serve(args[0], args[1], int(args[2]), args[3], report_fd, progname, debug)


if __name__ == "__main__":
    sys.exit(main())
