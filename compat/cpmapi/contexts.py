"""The contexts PCP's Python API has open, by handle: libpcp's table of contexts, which
the C functions (pmSetContextOptions) reach by number as PCP's do."""

from __future__ import annotations

from typing import Any

_OPEN: dict[int, Any] = {}
_NEXT = [0]
_CURRENT = [-1]  # the context calls without a handle use (pmUseContext's)


def register(ctx: Any) -> int:
    """CTX (a purepcp context) added to the table: its handle (0, 1, 2, ... as libpcp
    numbers them)."""
    handle = _NEXT[0]
    _NEXT[0] += 1
    _OPEN[handle] = ctx
    _CURRENT[0] = handle  # (pmNewContext makes the new context the current one)
    return handle


def lookup(handle: int) -> Any:
    """The context of HANDLE (KeyError: none is open under it)."""
    return _OPEN[handle]


def forget(handle: int) -> None:
    """HANDLE's context out of the table (pmDestroyContext)."""
    _OPEN.pop(handle, None)


def use(handle: int) -> None:
    """pmUseContext: HANDLE's context becomes the current one."""
    if handle in _OPEN:
        _CURRENT[0] = handle


def current_handle() -> int:
    """The current context's handle (-1: none is open)."""
    return _CURRENT[0] if _CURRENT[0] in _OPEN else -1


def current() -> Any:
    """The current context (KeyError: none is open)."""
    return _OPEN[_CURRENT[0]]
