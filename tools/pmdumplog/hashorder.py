"""libpcp's hash tables, emulated so pmdumplog walks its metadata in PCP's order.

libpcp keeps descriptors, instance domains and label sets in __pmHashCtl tables and
pmdumplog prints several sections "as hashed": the order of a walk over those tables,
which depends on how they chain and when they grow.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Node:
    """One __pmHashNode: a key and what it maps to."""

    key: int
    data: Any


class CHash:
    """libpcp's __pmHashCtl: chains newest-first, grown (and relinked) as libpcp grows them.

    Walking it gives PCP's order for the sections pmdumplog prints "as hashed".
    """

    def __init__(self) -> None:
        self.buckets: list[list[Node]] = []
        self.nodes = 0

    def add(self, key: int, data: Any) -> None:
        self.nodes += 1
        if not self.buckets:
            self.buckets = [[]]
        elif self.nodes // 4 > len(self.buckets):
            self._grow()
        self.buckets[key % len(self.buckets)].insert(0, Node(key, data))

    def _grow(self) -> None:
        size = len(self.buckets) * 2
        if size % 2:
            size += 1
        if size % 3:
            size += 2
        if size % 5:
            size += 2
        fresh: list[list[Node]] = [[] for _ in range(size)]
        for chain in reversed(self.buckets):
            for node in chain:
                fresh[node.key % size].insert(0, node)
        self.buckets = fresh

    def search(self, key: int) -> Node | None:
        if not self.buckets:
            return None
        for node in self.buckets[key % len(self.buckets)]:
            if node.key == key:
                return node
        return None

    def walk(self) -> Iterator[Node]:
        for chain in self.buckets:
            yield from chain
