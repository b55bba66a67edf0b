"""libpcp's __pmHashCtl, for its orders: which of equal keys a search finds, and the
order a walk visits.

PCP's pmlogextract keeps label sets (several may share a key) and descriptors in these
tables; which label set it writes and in which order it reports clashing names follow
from the table's chains: a new node goes to the head of its chain, and growing the
table re-links every chain, reversing the order of equal keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class CHash(Generic[T]):
    """Keys (unsigned 32-bit) to values, with libpcp's chaining and growth."""

    def __init__(self) -> None:
        self._size = 0
        self._nodes = 0
        self._chains: list[list[tuple[int, T]]] = []  # each chain head first

    def add(self, key: int, value: T) -> None:
        """__pmHashAdd: a new node at the head of KEY's chain (equal keys allowed)."""
        key &= 0xFFFFFFFF
        self._nodes += 1
        if self._size == 0:
            self._size = 1
            self._chains = [[]]
        elif self._nodes // 4 > self._size:
            self._grow()
        self._chains[key % self._size].insert(0, (key, value))

    def _grow(self) -> None:
        old, size = self._chains, self._size * 2
        if size % 2:
            size += 1
        if size % 3:
            size += 2
        if size % 5:
            size += 2
        self._size = size
        self._chains = [[] for _ in range(size)]
        for chain in reversed(old):  # (old buckets last to first, each head first)
            for key, value in chain:
                self._chains[key % size].insert(0, (key, value))

    def find(self, key: int) -> T | None:
        """__pmHashSearch: the first node of KEY in its chain."""
        if not self._size:
            return None
        key &= 0xFFFFFFFF
        for k, value in self._chains[key % self._size]:
            if k == key:
                return value
        return None

    def walk(self) -> Iterator[tuple[int, T]]:
        """__pmHashWalk: bucket by bucket, each chain from its head."""
        for chain in self._chains:
            yield from list(chain)

    def __len__(self) -> int:
        return self._nodes
