"""Following a growing archive (follow.py): scan by scan it stores what one load of the
same records stores, sends only what is new, and describes everything again to a key
server that may have lost it."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest
import redis

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.format import LabelRecord
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_AGAIN
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.labels import PM_LABEL_CONTEXT, LabelSet
from purepcp.pmapi.types import PMSem, PMType, ValFmt
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.series import schema
from purepcp.series.discover import Discovery
from purepcp.series.store import Store, StoreConfig
from tests.support.redis_servers import redis_server, require_redis
from tests.support.series_dump import differences, dump

T0 = 1_700_000_000
NSEC = 1_000_000_000
INDOM = pmInDom_build(245, 1)
BUSY = pmID_build(245, 0, 1)  # U32 over INDOM
LOAD = pmID_build(245, 0, 2)  # DOUBLE, no instances
HITS = pmID_build(245, 0, 3)  # U64 counter, first logged in the fourth record
NAME = pmID_build(245, 0, 4)  # STRING
DROP = pmID_build(245, 0, 5)  # 32-bit signed, negative values
RATE = pmID_build(245, 0, 6)  # FLOAT
OLD = pmID_build(245, 0, 7)  # FLOAT stored in the value's word, as old pmloggers did
NAMES = {0: "a", 1: "b", 2: "c", 3: "d"}

#: each record's values of BUSY (None: an error value set), and whether HITS is in it
RECORDS = [
    ({0: 1, 1: 2}, False),
    ({0: 11, 1: 12, 2: 13}, False),
    ({0: 21, 2: 23}, False),  # (b missing: its last value stays in the entries)
    (None, True),
    ({0: 41, 1: 42, 2: 43, 3: 44}, True),
    ({0: 51, 4: 55}, True),  # (e: an instance the indom gains with this record)
    ({1: 62, 3: 64}, True),
    ({1: 72, 3: 74}, True),  # (the same layout again: read through the learned layout)
    ({1: 82, 3: 84}, True),
    ({1: 92, 3: 94}, True),
]


class Logger:
    """An archive written a record at a time, as a pmlogger writes one."""

    def __init__(self, base: str, volume_limit: int = 1 << 30) -> None:
        self.w = ArchiveWriter(
            base, hostname="web1", timezone="UTC", start=Timestamp(T0), volume_limit=volume_limit
        )
        self.w.__enter__()
        u32, dbl, text = PMType.PM_TYPE_U32, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
        inst = PMSem.PM_SEM_INSTANT
        self.w.put_desc(Desc(BUSY, u32, INDOM, inst, Units()), ["web.busy"])
        self.w.put_desc(Desc(LOAD, dbl, PM_INDOM_NULL, inst, Units()), ["web.load"])
        self.w.put_desc(Desc(NAME, text, PM_INDOM_NULL, inst, Units()), ["web.name"])
        i32, flt = PMType.PM_TYPE_32, PMType.PM_TYPE_FLOAT
        self.w.put_desc(Desc(DROP, i32, PM_INDOM_NULL, inst, Units()), ["web.drop"])
        self.w.put_desc(Desc(RATE, flt, PM_INDOM_NULL, inst, Units()), ["web.rate"])
        self.w.put_desc(Desc(OLD, flt, PM_INDOM_NULL, inst, Units()), ["web.old"])
        self.w.put_indom(Timestamp(T0), INDOM, list(NAMES), list(NAMES.values()))
        context = LabelSet.from_json('{"hostname":"web1","agent":"test"}')
        self.w.put_labels(LabelRecord(Timestamp(T0), PM_LABEL_CONTEXT, 0xFFFFFFFF, (context,)))
        self.w.put_index(Timestamp(T0))
        self.n = 0

    def record(self) -> None:
        busy, hits = RECORDS[self.n]
        stamp = Timestamp(T0 + self.n, 250_000_000)
        if self.n == 5:
            names = {**NAMES, 4: "e"}
            self.w.put_indom(stamp, INDOM, list(names), list(names.values()))
        if self.n == 3:
            self.w.put_desc(
                Desc(HITS, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER, Units()),
                ["web.hits"],
            )
        if busy is None:
            sets = [ValueSet.of_error(BUSY, PM_ERR_AGAIN)]
        else:
            sets = [ValueSet.of_atoms(BUSY, PMType.PM_TYPE_U32, list(busy.items()))]
        if self.n == 2:  # (a value set with no values)
            sets.append(ValueSet.empty(LOAD))
        else:
            sets.append(
                ValueSet.of_atoms(LOAD, PMType.PM_TYPE_DOUBLE, [(PM_IN_NULL, 0.5 * self.n)])
            )
        if hits:
            sets.append(ValueSet.of_atoms(HITS, PMType.PM_TYPE_U64, [(PM_IN_NULL, 100 * self.n)]))
        sets.append(ValueSet.of_atoms(NAME, PMType.PM_TYPE_STRING, [(PM_IN_NULL, f"n{self.n}")]))
        sets.append(ValueSet.of_atoms(DROP, PMType.PM_TYPE_32, [(PM_IN_NULL, -7 * self.n)]))
        sets.append(ValueSet.of_atoms(RATE, PMType.PM_TYPE_FLOAT, [(PM_IN_NULL, 0.25 * self.n)]))
        bits = array("I", array("f", [1.5 * self.n]).tobytes())
        sets.append(ValueSet(OLD, 1, ValFmt.PM_VAL_INSITU, 0, array("I", [PM_IN_NULL]), bits))
        self.w.put_result(Result(stamp, tuple(sets)))
        self.w.sync()
        self.n += 1

    def close(self) -> None:
        self.w.__exit__(None, None, None)


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
from tests.series.test_series_follow import Logger
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
