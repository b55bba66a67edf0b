"""Serve a C agent library (a pmcd.conf `dso` line) as a pipe agent.

Our pmcd loads no C code into itself, so that a crashing library cannot take pmcd down.
For a C DSO line it runs ``python -m purepcp.pmda.dsohost PATH ENTRY DOMAIN NAME``
instead: this process loads the library with PCP's libpcp_pmda (installed wherever PCP's
C agents are), calls its entry point as PCP's pmcd does (config.c: the domain, the
interface "challenge", a zero status), and then serves it on stdin/stdout with
pmdaConnect and pmdaMain, the library's own request loop.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Sequence

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


def serve(path: str, entry: str, domain: int, name: str) -> int:
    """Load PATH, initialise it through ENTRY for DOMAIN, serve it until pmcd closes the pipe."""
    pmda = libpcp_pmda()
    if pmda is None:
        print(f"{name}: cannot serve {path}: PCP's {LIBPCP_PMDA} is not installed", file=sys.stderr)
        return 1
    try:
        library = ctypes.CDLL(path, mode=RTLD_GLOBAL)
        init = getattr(library, entry)
    except (OSError, AttributeError) as exc:
        print(f"{name}: cannot load {path} entry {entry}: {exc}", file=sys.stderr)
        return 1
    dispatch = ctypes.create_string_buffer(INTERFACE_SIZE)
    # domain; comm.pmda_interface, the challenge, all bits set; comm.pmapi_version, the
    # oldest's complement (little-endian bitfields, as on every platform PCP ships for)
    ctypes.memmove(dispatch, domain.to_bytes(4, "little", signed=True), 4)
    ctypes.memmove(ctypes.addressof(dispatch) + 4, bytes((0xFF, ~PMAPI_VERSION_2 & 0xFF)), 2)
    init.argtypes = [ctypes.c_void_p]
    init.restype = None
    init(dispatch)
    if (status := _status(dispatch)) != 0:
        print(f"{name}: initialisation by {entry} in {path} failed ({status})", file=sys.stderr)
        return 1
    interface = dispatch.raw[4]
    if not PMDA_INTERFACE_2 <= interface <= PMDA_INTERFACE_LATEST:
        print(f"{name}: unknown PMDA interface version {interface} in {path}", file=sys.stderr)
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


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 4 or not args[2].isdigit():
        print("usage: python -m purepcp.pmda.dsohost PATH ENTRY DOMAIN NAME", file=sys.stderr)
        return 2
    return serve(args[0], args[1], int(args[2]), args[3])


if __name__ == "__main__":
    sys.exit(main())
