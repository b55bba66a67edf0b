"""POSIX extended regular expressions as pmie checks and matches them.

pmie compiles a match_inst pattern with regcomp(REG_EXTENDED|REG_NOSUB) when it
parses the rule (a pattern it refuses is an error) and tests instance names with
regexec; the C library does the same here when it can be loaded (Python's re
differs on bracket expressions and some escapes), else Python's re stands in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

REG_EXTENDED = 1
REG_NOSUB = 8
_REGEX_T_SIZE = 256  # larger than any libc's regex_t


@functools.cache
def _libc() -> ctypes.CDLL | None:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def valid_ere(pattern: str) -> bool:
    """Whether regcomp accepts PATTERN."""
    libc = _libc()
    if libc is None:
        try:
            re.compile(pattern)
        except re.error:
            return False
        return True
    import ctypes

    buffer = ctypes.create_string_buffer(_REGEX_T_SIZE)
    status = libc.regcomp(buffer, pattern.encode("utf-8", "surrogateescape"),
                          REG_EXTENDED | REG_NOSUB)  # fmt: skip
    if status == 0:
        libc.regfree(buffer)
    return status == 0


def compile_ere(pattern: str) -> Callable[[str], bool]:
    """A test of names against PATTERN: does regexec find it in the name?"""
    libc = _libc()
    if libc is None:
        found = re.compile(pattern).search
        return lambda name: found(name) is not None
    import ctypes

    compiled = ctypes.create_string_buffer(_REGEX_T_SIZE)
    if libc.regcomp(compiled, pattern.encode("utf-8", "surrogateescape"),
                    REG_EXTENDED | REG_NOSUB) != 0:  # fmt: skip
        return lambda name: False

    def matches(name: str) -> bool:
        text = name.encode("utf-8", "surrogateescape")
        return libc.regexec(compiled, text, 0, None, 0) == 0

    return matches
