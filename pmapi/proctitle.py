"""The command line ps shows for a daemon of ours: its own name first, not Python's;
and the process name the kernel keeps (/proc/PID/stat's comm, ps's "comm").

PCP's scripts find pmcd and the agents by the first word of their command lines
(`_get_pids_by_name` in pcp.env, which pmsignal, the rc scripts and `pmda install`'s
SIGHUP use, and QA's process lists): "/usr/lib/pcp/bin/pmcd -f ...".  Ours start as
"python3 /path/to/pmcd -f ...", which none of them would match.  On Linux the bytes
ps reads (/proc/PID/cmdline) are the process's own argument area, so the command
line is rewritten there in place, with the interpreter's words dropped; it only gets
shorter, so it always fits.  The process name ("python3" for every daemon of ours) is
what PCP's agents and QA tell processes by (pmdaproc's psinfo.fname, hotproc's
`fname == "pmdaproc"`): `set_process_name` sets it as the program's own name would.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence

#: prctl's option that sets the calling thread's name, and the room for it (TASK_COMM_LEN,
#: its NUL included)
_PR_SET_NAME, _COMM_LEN = 15, 16
#: the argument area's first and last addresses among /proc/PID/stat's fields, counted
#: from the state (field 3): arg_start is field 48, arg_end field 49 (Linux 3.5 on)
_ARG_START, _ARG_END = 48 - 3, 49 - 3


def _argument_area() -> tuple[int, int] | None:
    """Where this process's argument strings lie (start, end), or None if unknown."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[_ARG_START]), int(fields[_ARG_END])
    except (OSError, IndexError, ValueError):
        return None
    return (start, end) if 0 < start < end else None


def set_command_line(words: Sequence[str]) -> bool:
    """Have ps show WORDS as this process's command line: whether it could be done
    (Linux only, and only if WORDS are no longer than the line the process began with)."""
    area = _argument_area()
    if area is None or not words:
        return False
    start, end = area
    line = b"\0".join(os.fsencode(word) for word in words) + b"\0"
    size = end - start
    if len(line) > size:
        return False
    ctypes.memmove(start, line.ljust(size, b"\0"), size)
    return True


def command_line() -> list[str]:
    """This process's command line as ps shows it (empty where unknown)."""
    try:
        with open("/proc/self/cmdline", "rb") as cmdline:
            raw = cmdline.read()
    except OSError:
        return []
    return [os.fsdecode(word) for word in raw.rstrip(b"\0").split(b"\0")]


def set_process_name(name: str) -> bool:
    """Name this process NAME (its first 15 bytes, as the kernel keeps them) where
    /proc/PID/stat's comm and ps show it: whether it could be done (Linux only).  Call
    it before starting threads: they take the name of the thread that starts them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return False
    prctl.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl(_PR_SET_NAME, os.fsencode(name)[: _COMM_LEN - 1], 0, 0, 0) == 0
