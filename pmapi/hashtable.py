"""libpcp's hash table (__pmHashCtl), kept for its orders, not its speed.

libpcp keeps an archive's descriptors, instance domains, help text and label sets in
these tables, and several tools' output follows from how they chain and grow: the order
pmdumplog prints a section "as hashed", which of several label sets sharing a key
pmlogextract writes, the order pmlogrewrite's wildcard rules visit their targets.  A new
node goes to the head of its chain; growing the table relinks every chain (old buckets
last to first), which reverses equal keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(slots=True)
class Node(Generic[T]):
    """One __pmHashNode: a key and what it maps to."""

    key: int
    data: T


class HashCtl(Generic[T]):
    """Keys (unsigned 32-bit) to values, with libpcp's chaining and growth; equal keys
    are allowed, and a search finds the newest."""

    def __init__(self) -> None:
        self.buckets: list[list[Node[T]]] = []  # each chain head first
        self.nodes = 0

    def add(self, key: int, data: T) -> None:
        """__pmHashAdd: a new node at the head of KEY's chain."""
        self.nodes += 1
        if not self.buckets:
            self.buckets = [[]]
        elif self.nodes // 4 > len(self.buckets):
            self._grow()
        key &= 0xFFFFFFFF
        self.buckets[key % len(self.buckets)].insert(0, Node(key, data))

    def _grow(self) -> None:
        size = len(self.buckets) * 2
        size += 1 if size % 2 else 0
        size += 2 if size % 3 else 0
        size += 2 if size % 5 else 0
        fresh: list[list[Node[T]]] = [[] for _ in range(size)]
        for chain in reversed(self.buckets):
            for node in chain:
                fresh[node.key % size].insert(0, node)
        self.buckets = fresh

    def search(self, key: int) -> Node[T] | None:
        """__pmHashSearch: the first node of KEY in its chain."""
        if not self.buckets:
            return None
        key &= 0xFFFFFFFF
        for node in self.buckets[key % len(self.buckets)]:
            if node.key == key:
                return node
        return None

    def find(self, key: int) -> T | None:
        """The data of search(KEY), None if there is no such node."""
        node = self.search(key)
        return None if node is None else node.data

    def get(self, key: int, default: Any = None) -> Any:
        node = self.search(key)
        return default if node is None else node.data

    def __contains__(self, key: int) -> bool:
        return self.search(key) is not None

    def walk(self) -> Iterator[Node[T]]:
        """__pmHashWalk: bucket by bucket, each chain from its head."""
        for chain in self.buckets:
            yield from list(chain)

    def items(self) -> Iterator[tuple[int, T]]:
        for node in self.walk():
            yield node.key, node.data

    def keys(self) -> Iterator[int]:
        for node in self.walk():
            yield node.key

    def __iter__(self) -> Iterator[int]:
        return self.keys()

    def __len__(self) -> int:
        return self.nodes


def hash_order(keys: Iterable[int]) -> list[int]:
    """KEYS (each once, in the order added) in the order a walk of libpcp's table gives."""
    table: HashCtl[None] = HashCtl()
    for key in keys:
        table.add(key, None)
    return list(table.keys())
