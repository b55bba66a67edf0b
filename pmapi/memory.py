"""Giving memory back: what a burst of clients or a huge reply took, a daemon returns.

CPython frees objects into its own arenas and glibc's heap, and glibc keeps freed heap
memory for reuse unless asked to give it back (malloc_trim).  A pmcd that served 400
connections holding partial PDUs would otherwise stay 20 MB bigger for ever after they
left.  `settle` asks glibc to return what is free; elsewhere it does nothing.
`tune` (at start) makes every block of 128 KB or more its own mapping, returned to the
system the moment it is freed, instead of glibc's default of raising that threshold
after the first such block and keeping later ones on the heap.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc

#: mallopt's parameter numbers (glibc's malloc.h) and the threshold pmcd fixes.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 128 * 1024


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library, if it is glibc (malloc_trim and mallopt are its own)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None


def tune() -> None:
    """Fix glibc's mmap threshold (and trim threshold) at 128 KB."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        libc.mallopt(M_TRIM_THRESHOLD, MMAP_THRESHOLD)


def settle() -> None:
    """Collect garbage and give the heap's free memory back to the system."""
    gc.collect()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
