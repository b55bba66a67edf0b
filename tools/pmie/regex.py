"""Is a match_inst pattern a valid POSIX extended regular expression?

pmie compiles it with regcomp(REG_EXTENDED|REG_NOSUB) when it parses the
rule; the C library's own compiler is asked when it can be loaded, since
Python's re accepts and rejects different patterns.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

REG_EXTENDED = 1
REG_NOSUB = 8
_REGEX_T_SIZE = 256  # larger than any libc's regex_t


@functools.cache
def _libc() -> ctypes.CDLL | None:
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def valid_ere(pattern: str) -> bool:
    """True when regcomp would accept pattern."""
    libc = _libc()
    if libc is None:
        try:
            re.compile(pattern)
        except re.error:
            return False
        return True
    import ctypes

    buffer = ctypes.create_string_buffer(_REGEX_T_SIZE)
    status = libc.regcomp(buffer, pattern.encode("latin-1", "replace"), REG_EXTENDED | REG_NOSUB)
    if status == 0:
        libc.regfree(buffer)
    return status == 0
