"""An archive's magic number, its versions, and how version 3 stores its seconds.

Shared by the struct readers (format.py) and the construct declarations.
"""

from __future__ import annotations

from ..cnumbers import int64

PM_LOG_MAGIC = 0x50052600
PM_LOG_VERS02 = 2
PM_LOG_VERS03 = 3


def swap_sec(sec: int) -> int:
    """A v3 timestamp's seconds as PCP 6.0 stores them, or back (the swap is its own inverse).

    __pmPutTimestamp writes the 64-bit seconds as two big-endian words with the low word
    first (on the little-endian hosts PCP runs on): read as one big-endian int64, that
    is the true value with its halves swapped.
    """
    u = sec & 0xFFFF_FFFF_FFFF_FFFF
    u = (u & 0xFFFF_FFFF) << 32 | u >> 32
    return int64(u)
