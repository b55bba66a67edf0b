"""pmseries --load when the key server restarts under it: the load resumes and stores
what a clean load stores, or, when the server stays away, says which archive and
volume it stopped at; what was stored before is left as it was."""

from __future__ import annotations

import pytest

from purepcp.series.load import ArchiveLoader, LoadError
from purepcp.series.store import Store, StoreConfig
from tests.support.redis_servers import redis_server, require_redis
from tests.support.series_archives import write_mixed
from tests.support.series_dump import differences, dump
from tests.support.waiting import DEADLINE


class RestartingStore(Store):
    """A store whose server is restarted (really: the process stops and starts again)
    just before its Nth batch of commands, so the batch meets a broken connection."""

    def __init__(self, config: StoreConfig, server, at: int, back: bool = True) -> None:
        super().__init__(config)
        self.server, self.at, self.back, self.calls = server, at, back, 0

    def send(self, commands):
        self.calls += 1
        if self.calls == self.at:
            self.server.stop()
            if self.back:
                self.server.start()
        return super().send(commands)


def config(port: int) -> StoreConfig:
    # (a stopped server refuses connections at once: the command timeout is only a hang
    # guard here, which a busy machine must not trip in a healthy server's answer)
    return StoreConfig(servers=(("127.0.0.1", port),), timeout=DEADLINE)


@pytest.fixture
def archive(tmp_path):
    base = str(tmp_path / "mixed")
    write_mixed(base)
    return base


def clean_dump(archive, tmp_path) -> dict:
    import redis

    with redis_server(tmp_path / "clean") as clean:
        with Store(config(clean.port)) as store:
            ArchiveLoader(store, archive).run()
        return dump(redis.Redis(host="127.0.0.1", port=clean.port))


#: the batches of a load: the source's keys, the metadata, the values
BATCHES = [1, 2, 3]


@pytest.mark.parametrize("at", BATCHES)
def test_restart_between_batches_is_seamless(archive, tmp_path, at):
    """A server restarted (with its data kept) between two batches: the next batch
    connects again by itself, and the store ends as a clean load leaves it."""
    require_redis()
    import redis

    expected = clean_dump(archive, tmp_path)
    with redis_server(tmp_path / "restarted", persistent=True) as server:
        store = RestartingStore(config(server.port), server, at)
        report = ArchiveLoader(store, archive).run()
        assert report.errors == []
        got = dump(redis.Redis(host="127.0.0.1", port=server.port))
        assert differences(expected, got) == []


@pytest.mark.slow  # a fault matrix that waits out the Redis client's reconnect backoff
@pytest.mark.parametrize("at", BATCHES)
@pytest.mark.parametrize("persistent", [True, False])
def test_server_down_then_back_resumes(archive, tmp_path, at, persistent):
    """The server is down when a batch goes out: the load waits for it, starts over
    (what survived the restart is refused as stale, what did not is written again) and
    ends with the store a clean load leaves, whether or not the server kept its data."""
    require_redis()
    import redis

    expected = clean_dump(archive, tmp_path)
    with redis_server(tmp_path / "down", persistent=persistent) as server:
        store = RestartingStore(config(server.port), server, at, back=False)

        def reconnect() -> Store:
            if not server.running:
                server.start()  # (the operator brings it back)
            return Store(config(server.port))

        report = ArchiveLoader(store, archive, reconnect=reconnect, resume_for=20).run()
        assert report.resumed == 1
        assert report.errors == []
        got = dump(redis.Redis(host="127.0.0.1", port=server.port))
        assert differences(expected, got) == []


@pytest.mark.slow  # it waits out the Redis client's reconnect backoff, twice
def test_server_gone_for_good_names_archive_and_volume(archive, tmp_path):
    require_redis()
    import redis

    with redis_server(tmp_path / "gone", persistent=True) as server:
        store = RestartingStore(config(server.port), server, at=3, back=False)
        loader = ArchiveLoader(
            store, archive, reconnect=lambda: Store(config(server.port)), resume_for=1
        )
        with pytest.raises(LoadError) as info:
            loader.run()
        message = str(info.value)
        assert message.startswith(f"{archive}: stopped at metric ")
        assert ", volume 0: " in message
        assert "\n" not in message
        server.start()  # (what was stored before the server went away is intact)
        client = redis.Redis(host="127.0.0.1", port=server.port)
        assert client.get("pcp:version:schema") == b"2"
        assert client.hvals("pcp:map:context.name")


def test_a_server_still_loading_is_said_as_pcp_says_it(tmp_path):
    """A server answering LOADING (still reading its data at start): "Cannot connect to
    Redis: LOADING Redis is loading the dataset in memory", as PCP words it (QA 1355)."""
    import socket
    import threading

    from purepcp.series.store import StoreError

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def loading() -> None:  # (what QA's redis_proxy.py answers while "loading")
            conn, _ = listener.accept()
            with conn:
                while conn.recv(4096):
                    conn.sendall(b"-LOADING Redis is loading the dataset in memory\r\n")

        server = threading.Thread(target=loading, daemon=True)
        server.start()
        with pytest.raises(StoreError) as failed:
            Store(config(listener.getsockname()[1]))
    assert failed.value.reason == "LOADING Redis is loading the dataset in memory"
