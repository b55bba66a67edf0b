"""System V IPC objects for tests: a shared memory segment, a queue holding a message and a
semaphore set, made with libc (IPC_PRIVATE) and removed afterwards."""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterator

IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
SHM_SIZE = 3 * os.sysconf("SC_PAGE_SIZE") + 1


@contextlib.contextmanager
def sysv_objects() -> Iterator[dict[str, int] | None]:
    """{"shm": id, "msg": id, "sem": id} while they exist; None where they cannot be made."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    shm = libc.shmget(IPC_PRIVATE, SHM_SIZE, IPC_CREAT | 0o640)
    msg = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
    sem = libc.semget(IPC_PRIVATE, 4, IPC_CREAT | 0o604)
    try:
        if min(shm, msg, sem) < 0:
            yield None
            return
        text = ctypes.create_string_buffer(b"\x01\0\0\0\0\0\0\0abcdefg", 15)
        if libc.msgsnd(msg, text, 7, 0) != 0:
            yield None
            return
        yield {"shm": shm, "msg": msg, "sem": sem}
    finally:
        if shm >= 0:
            libc.shmctl(shm, IPC_RMID, None)
        if msg >= 0:
            libc.msgctl(msg, IPC_RMID, None)
        if sem >= 0:
            libc.semctl(sem, 0, IPC_RMID)
