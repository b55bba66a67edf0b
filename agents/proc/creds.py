"""Reading /proc as the client: the calling thread takes the client's uid and gid for a
request, so the kernel's own rules decide what it may read, as pmdaproc arranges.

pmdaproc (one thread, its own process) calls setresgid/setresuid with the client's
ids before a request and back after it.  This agent may run inside pmcd, whose
other threads must keep their identity, so it changes the credentials of the
calling thread only: Linux keeps credentials per thread, and the raw system calls
change just the caller's (glibc's wrappers, and so os.setresuid, change every
thread of the process).  The saved uid and gid stay the agent's own, which is what
lets the thread change back.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager

#: (setresuid, setresgid) system call numbers by machine (the 32-bit-id calls on i386/arm).
_SYSCALLS = {
    "x86_64": (117, 119),
    "aarch64": (147, 149),
    "riscv64": (147, 149),
    "ppc64le": (164, 169),
    "ppc64": (164, 169),
    "s390x": (208, 210),
    "i686": (208, 210),
    "i386": (208, 210),
    "armv7l": (208, 210),
    "loongarch64": (147, 149),
}
_KEEP = -1  # leave this id as it is (the saved ids)


class CredentialError(OSError):
    """The thread could not take, or give back, a client's identity."""


class ThreadCredentials:
    """Switch the calling thread's real and effective uid and gid."""

    def __init__(self) -> None:
        numbers = _SYSCALLS.get(platform.machine())
        self._libc = None
        if numbers is not None:
            path = ctypes.util.find_library("c") or "libc.so.6"
            try:
                self._libc = ctypes.CDLL(path, use_errno=True)
            except OSError:
                self._libc = None
        self._setresuid, self._setresgid = numbers or (0, 0)
        self.uid, self.gid = os.getuid(), os.getgid()

    @property
    def available(self) -> bool:
        """Whether this machine's system call numbers are known (else no switching)."""
        return self._libc is not None

    @contextmanager
    def acting_as(self, uid: int, gid: int) -> Iterator[None]:
        """Be UID and GID (real and effective) in this thread for the block: the gid
        first, while the thread may still change it; the uid back first after."""
        gid_changed = gid != self.gid
        uid_changed = uid != self.uid
        if gid_changed:
            self._call(self._setresgid, gid, "setresgid")
        try:
            if uid_changed:
                self._call(self._setresuid, uid, "setresuid")
            try:
                yield
            finally:
                if uid_changed:
                    self._call(self._setresuid, self.uid, "setresuid", back=True)
        finally:
            if gid_changed:
                self._call(self._setresgid, self.gid, "setresgid", back=True)

    def _call(self, number: int, ident: int, name: str, back: bool = False) -> None:
        if self._libc is None:
            raise CredentialError(0, f"{name}: thread credentials unknown on {platform.machine()}")
        args = (ctypes.c_long(number), ctypes.c_long(ident), ctypes.c_long(ident))
        if self._libc.syscall(*args, ctypes.c_long(_KEEP)) != 0:
            err = ctypes.get_errno()
            what = "revert" if back else "access"
            raise CredentialError(err, f"{name}({ident}) {what} failed: {os.strerror(err)}")
