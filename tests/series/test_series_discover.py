"""Discovery ([discover] of pmproxy): archives under a directory loaded as pmloggers
write them, from where each was when first seen; the source named as PCP's discovery
names it; and our pmproxy doing it while it serves /series/ queries."""

from __future__ import annotations

import os

import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.format import LabelRecord
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build
from purepcp.pmapi.labels import PM_LABEL_CONTEXT, LabelSet
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.series import schema
from purepcp.series.discover import Discovery
from purepcp.series.ids import source_id, string_id
from purepcp.series.read import SeriesReader
from purepcp.series.store import Store, StoreConfig
from tests.support.pmproxy_servers import our_pmproxy
from tests.support.redis_servers import redis_server, require_redis
from tests.support.waiting import DEADLINE, wait_until

T0 = 1_700_000_000
PMID = pmID_build(245, 0, 7)
CONTEXT = '{"domainname":"example.com","hostname":"web1","machineid":"abc"}'


class Growing:
    """An archive a test writes a record at a time, as a pmlogger would."""

    def __init__(self, base: str) -> None:
        self.writer = ArchiveWriter(base, hostname="web1", timezone="UTC", start=Timestamp(T0))
        self.writer.__enter__()
        desc = Desc(PMID, PMType.PM_TYPE_U64, PM_INDOM_NULL, PMSem.PM_SEM_COUNTER, Units())
        self.writer.put_desc(desc, ["web.hits"])
        context = LabelSet.from_json(CONTEXT)
        self.writer.put_labels(LabelRecord(Timestamp(T0), PM_LABEL_CONTEXT, 0xFFFFFFFF, (context,)))
        self.writer.put_index(Timestamp(T0))
        self.count = 0

    def record(self) -> None:
        stamp = Timestamp(T0 + self.count, 0)
        value = ValueSet.of_atoms(PMID, PMType.PM_TYPE_U64, [(PM_IN_NULL, 100 * self.count)])
        self.writer.put_result(Result(stamp, (value,)))
        self.writer.sync()
        self.count += 1

    def close(self) -> None:
        self.writer.__exit__(None, None, None)


def stored(store: Store) -> list[bytes]:
    reader = SeriesReader(store.client)
    sids = [s.hex() for s in reader.by_name("metric.name", "web.hits")]
    return [v.value.encode() for v in reader.values(sids, _all())]


def _all():
    from purepcp.series.read import Window

    return Window(start=1)


def test_records_written_after_discovery_are_loaded(tmp_path):
    require_redis()
    (tmp_path / "logs" / "web1").mkdir(parents=True)
    base = str(tmp_path / "logs" / "web1" / "20261127")
    archive = Growing(base)
    try:
        archive.record()
        archive.record()
        with redis_server(tmp_path / "redis") as server:
            store = Store(StoreConfig(servers=(("127.0.0.1", server.port),)))
            found = Discovery(str(tmp_path / "logs"), store)
            assert found.scan() == []  # (met at its end: what it held is not loaded)
            assert stored(store) == []
            archive.record()
            archive.record()
            reports = found.scan()
            assert [r.records for r in reports] == [2]
            assert stored(store) == [b"200", b"300"]
            assert found.scan() == []  # (nothing new: nothing read)
            archive.record()
            found.scan()
            assert stored(store) == [b"200", b"300", b"400"]
            # the source is named by the archive and its host, its id from every context
            # label as written, as PCP's discovery makes it
            names = set(store.client.hvals(schema.map_key("context.name")))
            assert names == {base.encode(), b"web1"}
            expected = source_id(CONTEXT)
            members = store.client.smembers(schema.source_by_name_key(string_id(base)))
            assert list(members) == [expected]
            store.close()
    finally:
        archive.close()


def test_a_locked_directory_waits(tmp_path):
    require_redis()
    (tmp_path / "logs").mkdir()
    archive = Growing(str(tmp_path / "logs" / "a"))
    try:
        archive.record()
        with redis_server(tmp_path / "redis") as server:
            store = Store(StoreConfig(servers=(("127.0.0.1", server.port),)))
            found = Discovery(str(tmp_path / "logs"), store)
            found.scan()
            (tmp_path / "logs" / "lock").write_text("")
            archive.record()
            assert found.scan() == []
            os.unlink(tmp_path / "logs" / "lock")
            assert [r.records for r in found.scan()] == [1]
            store.close()
    finally:
        archive.close()


@pytest.mark.parametrize("redis_first", [True, False])
def test_our_pmproxy_discovers_and_answers(tmp_path, redis_first):
    """pmproxy with [discover] loads a growing archive and answers /series/query from
    it; started before its key server, it waits for it and then goes on."""
    require_redis()
    logs = tmp_path / "logs"
    logs.mkdir()
    archive = Growing(str(logs / "web"))
    try:
        archive.record()
        with redis_server(tmp_path / "redis") as server:
            conf = tmp_path / "pmproxy.conf"
            conf.write_text(
                f"[redis]\nservers = 127.0.0.1:{server.port}\n"
                f"[discover]\nenabled = true\npath = {logs}\n"
            )
            if not redis_first:
                server.stop()
            with our_pmproxy("localhost", tmp_path / "proxy", "-c", str(conf)) as proxy:
                if not redis_first:
                    server.start()
                log = tmp_path / "proxy" / "pmproxy.log"
                wait_until("discovery", lambda: "discovered archive" in log.read_text())
                archive.record()
                archive.record()

                def answered() -> bool:
                    status, body = proxy.json("/series/query?expr=web.hits[samples:5]")
                    return status == 200 and len(body) == 2

                wait_until("the new records in the key server", answered)
                _, body = proxy.json("/series/query?expr=web.hits[samples:5]")
                assert [v["value"] for v in body] == ["200", "100"]
    finally:
        archive.close()


def test_live_pmcd_logged_and_discovered(tmp_path):
    """Live samples into the key server, as PCP does it: our pmlogger samples our pmcd
    once a second into a directory pmproxy discovers, and /series/query sees the values
    arrive."""
    require_redis()
    import subprocess
    import sys

    from tests.support.client_servers import ours_serving, tool_env

    logs = tmp_path / "logs" / "local"
    logs.mkdir(parents=True)
    (tmp_path / "cfg").write_text("log mandatory on 1 sec {\n    kernel.all.pswitch\n}\n")
    (tmp_path / "pmcd").mkdir()
    with ours_serving(tmp_path / "pmcd") as pmcd, redis_server(tmp_path / "redis") as server:
        conf = tmp_path / "pmproxy.conf"
        conf.write_text(
            f"[redis]\nservers = 127.0.0.1:{server.port}\n"
            f"[discover]\nenabled = true\npath = {tmp_path / 'logs'}\n"
        )
        argv = [
            sys.executable,
            "-m",
            "purepcp.pmlogger.main",
            "-c",
            str(tmp_path / "cfg"),
            "-t",
            "1",
        ]
        argv += ["-l", str(tmp_path / "pmlogger.log"), "-h", pmcd.host, str(logs / "today")]
        logger = subprocess.Popen(argv, env=tool_env(), stdin=subprocess.DEVNULL)
        try:
            with our_pmproxy("localhost", tmp_path / "proxy", "-c", str(conf)) as proxy:

                def samples() -> list:
                    status, body = proxy.json("/series/query?expr=kernel.all.pswitch[samples:3]")
                    return body if status == 200 else []

                wait_until("three logged samples in the key server", lambda: len(samples()) == 3)
                values = [int(v["value"]) for v in samples()]
                assert values == sorted(values, reverse=True)  # (newest first; a counter)
        finally:
            logger.terminate()
            logger.wait(timeout=DEADLINE)


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "scans-only"])
def test_discover_loop_loads_with_and_without_inotify(tmp_path, monkeypatch, inotify):
    """pmproxy's discovery thread loads new records whether or not inotify is there
    (without it, by its scan a second), logs no warning doing so, and ends on STOP."""
    require_redis()
    import logging
    import threading

    from purepcp.pmproxy.main import _discover_loop
    from purepcp.series import watch

    if not inotify:
        monkeypatch.setattr(watch, "watcher", lambda: None)
    (tmp_path / "logs").mkdir()
    archive = Growing(str(tmp_path / "logs" / "web"))
    log = logging.getLogger("test-discover-loop")
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        archive.record()
        with redis_server(tmp_path / "redis") as server:
            config = StoreConfig(servers=(("127.0.0.1", server.port),), discover_path="")
            stop = threading.Event()
            thread = threading.Thread(
                target=_discover_loop, args=(str(tmp_path / "logs"), config, log, stop)
            )
            thread.start()
            try:
                wait_until("discovery", lambda: any("discovered" in r.getMessage() for r in seen))
                archive.record()
                archive.record()
                store = Store(config)
                wait_until("the new records", lambda: stored(store) == [b"100", b"200"])
                store.close()
            finally:
                stop.set()
                thread.join(DEADLINE)
            assert not thread.is_alive()
            assert [r.getMessage() for r in seen if r.levelno >= logging.WARNING] == []
    finally:
        archive.close()


def test_a_missing_directory_is_said_once_and_waited_for(tmp_path):
    """A [discover] path that is not there (a typo, or not made yet) is said once in
    the log, and its archives are found once it is made."""
    require_redis()
    said: list[str] = []
    root = tmp_path / "logs"
    with redis_server(tmp_path / "redis") as server:
        store = Store(StoreConfig(servers=(("127.0.0.1", server.port),)))
        found = Discovery(str(root), store, log=said.append)
        assert found.scan() == [] and found.scan() == []
        assert said == [f"{root}: no such directory (discovery waits for it)"]
        root.mkdir()
        archive = Growing(str(root / "web"))
        try:
            archive.record()
            found.scan()
            assert said[-1] == f"discovered archive {root / 'web'}"
        finally:
            archive.close()
        store.close()
