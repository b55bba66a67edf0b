"""Access to the reference PCP 6 (Debian's pcp package) for interop tests.

Every helper skips the calling test, with the reason, when the piece of the
reference PCP it needs is not installed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

import pytest


@functools.cache
def _load_libpcp() -> ctypes.CDLL | None:
    for name in ("libpcp.so.3", ctypes.util.find_library("pcp")):
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def libpcp() -> ctypes.CDLL:
    """The reference libpcp, loaded with ctypes, or skip."""
    lib = _load_libpcp()
    if lib is None:
        pytest.skip("reference PCP's libpcp.so.3 is not installed (Debian package pcp)")
    return lib


def c_text(fn, *args) -> str:
    """Call a libpcp `..._r(args, buf, buflen)` formatter and return its text."""
    buf = ctypes.create_string_buffer(256)
    fn.restype = ctypes.c_char_p
    return fn(*args, buf, len(buf)).decode()
