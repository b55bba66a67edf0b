"""Following a growing archive (follow.py): scan by scan it stores what one load of the
same records stores, sends only what is new, and describes everything again to a key
server that may have lost it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import redis

from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.series import schema
from purepcp.series.discover import Discovery
from purepcp.series.store import Store, StoreConfig
from tests.support.growing_archive import BUSY, NSEC, T0, Logger
from tests.support.redis_servers import redis_server, require_redis
from tests.support.series_dump import differences, dump


class Recording(Store):
    """A store that keeps the command names of each send."""

    def __init__(self, config: StoreConfig) -> None:
        super().__init__(config)
        self.sent: list[list[str]] = []

    def send(self, commands):
        commands = list(commands)
        self.sent.append([c[0] for c in commands])
        return super().send(commands)


@pytest.mark.parametrize("volume_limit", [1 << 30, 300], ids=["one-volume", "many-volumes"])
def test_scan_by_scan_stores_what_one_load_stores(tmp_path, volume_limit):
    require_redis()
    (tmp_path / "logs").mkdir()
    base = str(tmp_path / "logs" / "web1")
    log = Logger(base, volume_limit)
    try:
        log.record()
        with redis_server(tmp_path / "redis") as server:
            config = StoreConfig(servers=(("127.0.0.1", server.port),))
            store = Recording(config)
            found = Discovery(str(tmp_path / "logs"), store)
            found.scan()
            for batch in (1, 2, 2, 1, 1, 1, 1):  # (records written between scans)
                for _ in range(batch):
                    log.record()
                found.scan()
            plain = redis.Redis(host="127.0.0.1", port=server.port)
            followed = dump(plain)
            # nothing new to describe, one record: only its entries go
            assert set(store.sent[-1]) == {"XADD"}
            assert store.client.ttl(next(k for k in followed if b":values:" in k)) > 0
            store.client.flushall()
            from purepcp.series.load import ArchiveLoader  # (NumPy's: see the last test)

            end_ns = (T0 + log.n - 1) * 1_000_000_000 + 250_000_000
            ArchiveLoader(
                store, base, start_ns=T0 * 1_000_000_000 + 250_000_001, finish_ns=end_ns,
                discovered=True,
            ).run()  # fmt: skip
            loaded = dump(plain)
            if volume_limit < 1000:
                assert os.path.exists(base + ".3")  # (the records went into several volumes)
            followed.pop(b"pcp:version:schema")  # (written when the store connects)
            assert differences(followed, loaded) == []
            assert len(followed) > 40
            plain.close()
            store.close()
    finally:
        log.close()


def test_a_new_key_server_is_told_everything_again(tmp_path):
    require_redis()
    (tmp_path / "logs").mkdir()
    base = str(tmp_path / "logs" / "web1")
    log = Logger(base)
    try:
        log.record()
        with redis_server(tmp_path / "redis") as server:
            config = StoreConfig(servers=(("127.0.0.1", server.port),))
            found = Discovery(str(tmp_path / "logs"), Store(config))
            found.scan()
            log.record()
            found.scan()
            found.store.client.flushall()  # (a server restarted without its data)
            found.store.close()
            found.reconnected(Store(config))
            log.record()
            log.record()
            found.scan()
            client = found.store.client
            names = client.hvals(schema.map_key("metric.name"))
            assert sorted(names) == [
                b"web.busy", b"web.drop", b"web.hits", b"web.load", b"web.name", b"web.old",
                b"web.rate",
            ]  # fmt: skip
            assert client.hvals(schema.map_key("context.name"))  # (the source's names)
            assert sorted(client.hvals(schema.map_key("inst.name"))) == [b"a", b"c"]
            found.store.close()
    finally:
        log.close()


def test_a_record_being_written_waits_for_its_end(tmp_path):
    """A volume ending in part of a record (pmlogger mid-write) loads the whole records
    before it, says nothing, and loads that record once the rest is there."""
    require_redis()
    (tmp_path / "logs").mkdir()
    base = str(tmp_path / "logs" / "web1")
    log = Logger(base)
    said: list[str] = []
    try:
        log.record()
        with redis_server(tmp_path / "redis") as server:
            found = Discovery(
                str(tmp_path / "logs"), Store(StoreConfig(servers=(("127.0.0.1", server.port),))),
                log=said.append,
            )  # fmt: skip
            found.scan()
            before = os.path.getsize(base + ".0")
            log.record()
            log.record()
            whole = Path(base + ".0").read_bytes()
            cut = before + (len(whole) - before) * 3 // 4  # (into the second new record)
            with open(base + ".0", "r+b") as volume:
                volume.truncate(cut)
            assert [r.records for r in found.scan()] == [1]
            with open(base + ".0", "ab") as volume:
                volume.write(whole[cut:])
            assert [r.records for r in found.scan()] == [1]
            assert said == [f"discovered archive {base}"]
            found.store.close()
    finally:
        log.close()


_NO_NUMPY = """
import sys
from pathlib import Path
from tests.support.growing_archive import Logger
from purepcp.series.discover import Discovery
from purepcp.series.store import Store, StoreConfig
root, port = Path(sys.argv[1]), int(sys.argv[2])
log = Logger(str(root / "web1"))
log.record()
found = Discovery(str(root), Store(StoreConfig(servers=(("127.0.0.1", port),))))
found.scan()
for _ in range(4):
    log.record()
loaded = sum(r.values for r in found.scan())
print(loaded, "numpy" in sys.modules)
"""


def test_discovery_loads_without_numpy(tmp_path):
    """pmproxy's discovery (numbers, strings, instances) never imports NumPy: 20 MB of
    its memory (the whole-archive loader's, not the follower's)."""
    require_redis()
    import subprocess
    import sys

    from tests.support.waiting import DEADLINE

    (tmp_path / "logs").mkdir()
    with redis_server(tmp_path / "redis") as server:
        run = subprocess.run(
            [sys.executable, "-c", _NO_NUMPY, str(tmp_path / "logs"), str(server.port)],
            capture_output=True, text=True, timeout=DEADLINE,
            cwd=Path(__file__).resolve().parents[2],
        )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["31", "False"]


def test_a_record_at_the_same_time_is_taken_in_but_not_written(tmp_path):
    """Two records at one time: the second makes no stream entry (its id would not be
    newer), but its values are taken in, as a load takes them: a later entry carries
    them (c here), as one load of the same records does."""
    require_redis()
    (tmp_path / "logs").mkdir()
    base = str(tmp_path / "logs" / "web1")
    log = Logger(base)
    u32 = PMType.PM_TYPE_U32

    def busy(sec: int, values: dict[int, int]) -> None:
        vset = ValueSet.of_atoms(BUSY, u32, list(values.items()))
        log.w.put_result(Result(Timestamp(T0 + sec, 0), (vset,)))
        log.w.sync()

    try:
        busy(0, {0: 1})
        with redis_server(tmp_path / "redis") as server:
            store = Store(StoreConfig(servers=(("127.0.0.1", server.port),)))
            found = Discovery(str(tmp_path / "logs"), store)
            found.scan()
            busy(1, {0: 1, 1: 2})
            found.scan()
            busy(1, {0: 5, 2: 7})  # (the same second again)
            found.scan()
            busy(2, {0: 9})
            found.scan()
            plain = redis.Redis(host="127.0.0.1", port=server.port)
            followed = dump(plain)
            followed.pop(b"pcp:version:schema")
            store.client.flushall()
            from purepcp.series.load import ArchiveLoader

            ArchiveLoader(
                store, base, start_ns=T0 * NSEC + 1, finish_ns=(T0 + 2) * NSEC, discovered=True
            ).run()
            assert differences(followed, dump(plain)) == []
            entries = next(v for _, (kind, v) in followed.items() if kind == "stream")
            assert [len(fields) for _, fields in entries] == [2, 3]  # (a, b; then a, b, c)
            plain.close()
            store.close()
    finally:
        log.close()


def test_damage_is_said_once_with_its_file_and_offset(tmp_path):
    """A bad record in the volume, or a whole .meta record that cannot be read, is one
    log line naming the file and offset, said once; what came before stays stored."""
    require_redis()
    import struct

    (tmp_path / "logs").mkdir()
    base = str(tmp_path / "logs" / "web1")
    log = Logger(base)
    said: list[str] = []
    try:
        log.record()
        with redis_server(tmp_path / "redis") as server:
            store = Store(StoreConfig(servers=(("127.0.0.1", server.port),)))
            found = Discovery(str(tmp_path / "logs"), store, log=said.append)
            found.scan()
            log.record()
            assert [r.records for r in found.scan()] == [1]
            meta_end = os.path.getsize(base + ".meta")
            with open(base + ".meta", "ab") as meta:  # (a record of an unknown type)
                meta.write(struct.pack(">ii", 16, 77) + bytes(8))
            at = os.path.getsize(base + ".0")
            with open(base + ".0", "ab") as volume:  # (a trailer that is not its length)
                volume.write(struct.pack(">i", 24) + bytes(16) + struct.pack(">i", 99))
            found.scan()
            found.scan()
            with open(base + ".0", "ab") as volume:  # (the volume grows: read again)
                volume.write(bytes(4))
            found.scan()
            problems = said[1:]
            assert len(problems) == 2, problems
            assert any(f"{base}.meta: offset {meta_end}" in p for p in problems), problems
            assert any(f"{base}.0: offset {at}: record trailer 99" in p for p in problems)
            assert all("\n" not in p for p in problems)
            store.close()
    finally:
        log.close()
