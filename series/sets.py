"""The set algebra of series queries, done here (as PCP does it in pmproxy), not by the
key server, so a cluster never needs two keys in one slot.  The orders of the results
are PCP's, which its answers keep: the larger set sorted, then what the smaller adds."""

from __future__ import annotations

from collections.abc import Sequence


def _large_small(a: Sequence[bytes], b: Sequence[bytes]) -> tuple[list[bytes], list[bytes]]:
    return (list(a), list(b)) if len(a) >= len(b) else (list(b), list(a))


def union(a: Sequence[bytes], b: Sequence[bytes]) -> list[bytes]:
    """series_union: the larger set sorted, then the smaller's members it lacks, in the
    smaller's order."""
    large, small = _large_small(a, b)
    large.sort()
    have = set(large)
    return large + [s for s in small if s not in have]


def intersect(a: Sequence[bytes], b: Sequence[bytes]) -> list[bytes]:
    """series_intersect: the smaller set's members the larger has, in the smaller's order."""
    large, small = _large_small(a, b)
    have = set(large)
    return [s for s in small if s in have]
