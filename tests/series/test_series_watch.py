"""The discovery watcher (inotify): the archives whose volumes were written."""

from __future__ import annotations

import sys

import pytest

from purepcp.series.watch import watcher

pytestmark = pytest.mark.skipif(
    sys.platform != "linux",
    reason="inotify is only on Linux; elsewhere discovery finds new records by its scan a second",
)


def test_volume_writes_name_their_archives(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    watch = watcher()
    assert watch is not None
    try:
        watch.watch([str(tmp_path / "a"), str(tmp_path / "b")])
        (tmp_path / "a" / "20261129.00.10.0").write_bytes(b"x")
        (tmp_path / "a" / "20261129.00.10.meta").write_bytes(b"x")  # (not a volume)
        (tmp_path / "b" / "day.3").write_bytes(b"x")
        watch.wait(10)
        assert watch.changed() == {
            str(tmp_path / "a" / "20261129.00.10"),
            str(tmp_path / "b" / "day"),
        }
        assert watch.changed() == set()
        watch.watch([str(tmp_path / "b")])  # (a no longer walked: no longer watched)
        (tmp_path / "a" / "20261129.00.10.0").write_bytes(b"y")
        (tmp_path / "b" / "day.3").write_bytes(b"y")
        watch.wait(10)
        assert watch.changed() == {str(tmp_path / "b" / "day")}
    finally:
        watch.close()
