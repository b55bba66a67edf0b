"""Small rules of PCP's pmlogrewrite shared by its parser, checks and clauses: C's atoi,
the instance-name match, a semantics' name."""

from __future__ import annotations

import re

_SEMS = {1: "counter", 3: "instant", 4: "discrete"}


def sem_str(sem: int) -> str:
    return _SEMS.get(sem, f"bad sem? {sem}")


def inst_name_eq(p: str | None, q: str | None) -> int:
    """PCP's instance-name match: 2 for equal, 1 for equal to the first space, 0 for
    different, -1 when either is empty."""
    if not p or not q:
        return -1
    if p == q:
        return 2
    return 1 if p.split(" ", 1)[0] == q.split(" ", 1)[0] else 0


def atoi(text: str) -> int:
    m = re.match(r"\s*[+-]?\d+", text)
    n = int(m.group()) if m else 0
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n
