"""libpcp's hash table: chains newest first, relinked when the table grows."""

from __future__ import annotations

from purepcp.pmapi.hashtable import HashCtl


def test_walk_follows_libpcp():
    """Nine keys: the table grows from one chain to six at the eighth, relinking newest first."""
    h: HashCtl[None] = HashCtl()
    for key in range(9):
        h.add(key, None)
    assert len(h.buckets) == 6
    assert [n.key for n in h.walk()] == [0, 6, 7, 1, 8, 2, 3, 4, 5]
    assert h.search(7) is not None and h.search(9) is None


def test_equal_keys_newest_first_until_a_growth_reverses_them():
    h: HashCtl[str] = HashCtl()
    h.add(7, "first")
    h.add(7, "second")
    assert h.find(7) == "second"  # (a new node heads its chain)
    for k in range(20):  # growing re-links every chain, reversing equal keys
        h.add(100 + k, "x")
    assert h.find(7) == "first"
    assert [k for k, _ in h.items()].count(7) == 2
    assert 7 in h and 8 not in h and h.get(8, "none") == "none" and len(h) == 22
