"""Cache instance domains, as libpcp_pmda's pmdaCache keeps them for a Python agent.

An agent that gives an instance domain as a dict ({name: value}) gets a cache:
each name keeps the instance number it was first given (numbers are handed out
in order, the next after the highest), entries are active or inactive, and each
carries the agent's value (its "private" pointer), which `PMDA.inst_lookup`
hands back.  Fetches, instance requests and label requests see the active
entries only, in instance order.  Caches are per process, keyed by pmInDom, as
libpcp_pmda's are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CacheEntry:
    """One instance of a cache: its name, whether active, and the agent's value."""

    inst: int
    name: str
    active: bool = False
    private: Any = None


@dataclass
class InstanceCache:
    """The entries of one cache instance domain, by instance and by name."""

    indom: int
    entries: dict[int, CacheEntry] = field(default_factory=dict)
    by_name: dict[str, CacheEntry] = field(default_factory=dict)
    maximum: int = 0x7FFFFFFF

    def add(self, name: str, private: Any = None) -> int:
        """PMDA_CACHE_ADD: the (active) instance of NAME, a new one numbered after the
        highest if the name is new."""
        entry = self.by_name.get(name)
        if entry is None:
            inst = max(self.entries, default=-1) + 1
            if inst > self.maximum:
                inst = next(i for i in range(self.maximum + 1) if i not in self.entries)
            entry = CacheEntry(inst, name)
            self.entries[inst] = entry
            self.by_name[name] = entry
        entry.active = True
        entry.private = private
        return entry.inst

    def mark(self, active: bool) -> None:
        """PMDA_CACHE_ACTIVE / PMDA_CACHE_INACTIVE: every entry at once."""
        for entry in self.entries.values():
            entry.active = active

    def active(self) -> list[CacheEntry]:
        """The active entries, in instance order (a cache walk)."""
        return [self.entries[i] for i in sorted(self.entries) if self.entries[i].active]

    def lookup(self, inst: int) -> CacheEntry | None:
        """The active entry of INST, or None."""
        entry = self.entries.get(inst)
        return entry if entry is not None and entry.active else None


#: Every cache of this process, by pmInDom (libpcp_pmda keeps one table per process).
_CACHES: dict[int, InstanceCache] = {}


def cache_for(indom: int) -> InstanceCache:
    """The cache of INDOM, made empty on first use."""
    cache = _CACHES.get(indom)
    if cache is None:
        cache = _CACHES[indom] = InstanceCache(indom)
    return cache


def find_cache(indom: int) -> InstanceCache | None:
    """The cache of INDOM if it has one (PMDA_CACHE_CHECK)."""
    return _CACHES.get(indom)
