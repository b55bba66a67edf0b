"""pmproxy's Redis protocol relay ([pmproxy] redis.enabled): QA 1602's redis-cli through
pmproxy, to one server and to a cluster's nodes by key."""

from __future__ import annotations

import socket

import pytest
import redis

from purepcp.pmproxy import redisproxy
from tests.support.client_servers import ours_serving
from tests.support.pmproxy_servers import our_pmproxy
from tests.support.redis_servers import redis_cluster, redis_server, require_redis
from tests.support.waiting import DEADLINE


def test_requests_are_framed_whole_and_pipelined():
    """A request is taken only when all of it has come; several in one read are taken
    in turn; bytes that are no RESP are refused, not guessed at."""
    one = redisproxy.encode([b"SET", b"k", b"v\r\nwith a newline"])
    assert redisproxy.request(one[:-1]) is None
    assert redisproxy.request(one + one) == ([b"SET", b"k", b"v\r\nwith a newline"], len(one))
    assert redisproxy.message_end(b"*2\r\n$1\r\na\r\n:5\r\n") == 15
    assert redisproxy.message_end(b"$-1\r\n") == 5
    with pytest.raises(redisproxy.ProtocolError):
        redisproxy.request(b"+OK\r\n")
    with pytest.raises(redisproxy.ProtocolError):
        redisproxy.message_end(b"*x\r\n")
    assert redisproxy.wants_redis(b"*1\r\n") and not redisproxy.wants_redis(b"GET / HTTP")


def _conf(tmp_path, servers: str):
    conf = tmp_path / "pmproxy.conf"
    conf.write_text(f"[pmproxy]\nredis.enabled = true\n[pmseries]\nservers = {servers}\n")
    (tmp_path / "pmcd").mkdir()
    return conf


def _proxy_client(proxy) -> redis.Redis:
    port = int(proxy.url.rsplit(":", 1)[1])
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=DEADLINE)


def test_redis_clients_reach_the_server_through_pmproxy(tmp_path):
    require_redis()
    with redis_server(tmp_path / "redis") as server:
        conf = _conf(tmp_path, server.node)
        with (
            ours_serving(tmp_path / "pmcd") as pmcd,
            our_pmproxy(pmcd.host, tmp_path / "proxy", "-c", str(conf)) as proxy,
            _proxy_client(proxy) as client,
        ):
            assert client.ping()
            assert client.set("qa:one", "1") and client.get("qa:one") == b"1"
            pipe = client.pipeline(transaction=False)
            pipe.set("qa:ten", "10").get("qa:ten").get("qa:none")
            assert pipe.execute() == [True, b"10", None]
            with pytest.raises(redis.ResponseError, match="syntax error"):
                client.execute_command("SET", "foo", "bar", "baz")  # (the server's answer)
            with pytest.raises(redis.ResponseError, match=r"^Parse command error"):
                client.execute_command("GET", "foo", "bar", "baz")  # (pmproxy's, as PCP's)
            with server.client() as direct:
                assert direct.get("qa:ten") == b"10"


def test_a_clusters_keys_go_to_their_nodes(tmp_path):
    require_redis()
    with redis_cluster(tmp_path / "cluster") as cluster:
        conf = _conf(tmp_path, ",".join(cluster.nodes))
        with (
            ours_serving(tmp_path / "pmcd") as pmcd,
            our_pmproxy(pmcd.host, tmp_path / "proxy", "-c", str(conf)) as proxy,
            _proxy_client(proxy) as client,
        ):
            keys = [f"qa:key:{n}" for n in range(20)]
            for n, key in enumerate(keys):
                assert client.set(key, str(n))
            assert [client.get(k) for k in keys] == [str(n).encode() for n in range(20)]
            assert client.keys("no-such-key") == []
            owners = set()
            for server in cluster.servers:
                with server.client() as direct:
                    held = direct.keys("qa:key:*")
                    owners.add(bool(held))
                    for key in held:  # (each on the node its slot belongs to)
                        assert direct.get(key) is not None
            assert owners == {True}, "the keys all went to one node"


def test_a_redis_client_is_closed_when_the_relay_is_off(tmp_path):
    """Without [pmproxy] redis.enabled, a Redis client gets no Redis server."""
    (tmp_path / "pmcd").mkdir()
    with (
        ours_serving(tmp_path / "pmcd") as pmcd,
        our_pmproxy(pmcd.host, tmp_path / "proxy") as proxy,
    ):
        port = int(proxy.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as sock:
            sock.sendall(redisproxy.encode([b"PING"]))
            assert not sock.recv(100).startswith(b"+PONG")
