"""CPU time as pmdalinux reports it: /proc/stat ticks as milliseconds, with its iowait rule.

Shared by kernel.all.cpu.*, kernel.percpu.cpu.* and kernel.pernode.cpu.*: the
metric suffixes and how each comes from the ten tick columns of a cpu line
(`CPU_TIMES`), the conversion to milliseconds (`msec`), and pmdalinux's rule
that an iowait count falling by less than `WAITIO_SLOP` ticks is kernel
imprecision, so the previous value is kept (`WaitHold`, after proc_stat.c).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

Ticks = tuple[int, ...]  # user nice sys idle iowait irq softirq steal guest guest_nice

#: A fall of less than this many ticks in iowait is kernel jitter: pmdalinux keeps the old value.
WAITIO_SLOP = 100

#: kernel.{all,percpu,pernode}.cpu.SUFFIX: ticks from a /proc/stat cpu line (or a sum of them).
CPU_TIMES: dict[str, Callable[[Ticks], int]] = {
    "user": lambda t: t[0],
    "nice": lambda t: t[1],
    "sys": lambda t: t[2],
    "idle": lambda t: t[3],
    "wait.total": lambda t: t[4],
    "intr": lambda t: t[5] + t[6],
    "irq.hard": lambda t: t[5],
    "irq.soft": lambda t: t[6],
    "steal": lambda t: t[7],
    "guest": lambda t: t[8],
    "guest_nice": lambda t: t[9],
    "vuser": lambda t: t[0] - t[8],
    "vnice": lambda t: t[1] - t[9],
}


def msec(ticks: int, hz: int) -> int | None:
    """Clock TICKS as milliseconds (1000 * ticks / HZ, truncated); no value if negative."""
    return ticks * 1000 // hz if ticks >= 0 else None


def add(rows: Iterable[Ticks]) -> Ticks:
    """The column sums of ROWS of ticks (ten zeros for none), as pmdalinux sums a node's CPUs."""
    rows = list(rows)
    if rows and all(len(row) == 10 for row in rows):
        return tuple(map(sum, zip(*rows, strict=True)))
    total = [0] * 10
    for row in rows:
        for column, value in enumerate(row):
            total[column] += value
    return tuple(total)


class WaitHold:
    """pmdalinux's iowait rule, with the last iowait seen per key (a CPU number, or None)."""

    def __init__(self) -> None:
        """No iowait seen yet."""
        self._prev: dict[Hashable, int] = {}

    def __call__(self, key: Hashable, ticks: Ticks) -> Ticks:
        """TICKS with iowait kept at its last value if it fell by less than WAITIO_SLOP.

        Calling it twice with the same ticks gives the same answer, so several
        families may apply it to one fetch's /proc/stat.
        """
        wait, prev = ticks[4], self._prev.get(key, 0)
        if prev >= WAITIO_SLOP and prev - WAITIO_SLOP < wait < prev:
            return (*ticks[:4], prev, *ticks[5:])
        self._prev[key] = wait
        return ticks
