"""Access to the reference PCP 6 (Debian's pcp package) for interop tests.

Every helper skips the calling test, with the reason, when the piece of the
reference PCP it needs is not installed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import shutil
from pathlib import Path

import pytest

PMNS_DIR = Path("/var/lib/pcp/pmns")
PMDAS_DIR = Path("/var/lib/pcp/pmdas")
FIXTURES = Path(__file__).parent / "fixtures"


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


def tool(name: str) -> str:
    """Path of a reference PCP command, or skip."""
    path = shutil.which(name) or next(
        (str(p) for p in (Path("/usr/lib/pcp/bin") / name,) if p.exists()), None
    )
    if path is None:
        pytest.skip(f"reference PCP tool {name} is not installed (Debian package pcp)")
    return path


def pmns_root() -> Path:
    """The reference PCP's namespace root file, or skip."""
    root = PMNS_DIR / "root"
    if not root.exists():
        pytest.skip(f"{root} is absent: the reference PCP (Debian package pcp) is not installed")
    return root


def c_text(fn, *args) -> str:
    """Call a libpcp `..._r(args, buf, buflen)` formatter and return its text."""
    buf = ctypes.create_string_buffer(256)
    fn.restype = ctypes.c_char_p
    return fn(*args, buf, len(buf)).decode()
