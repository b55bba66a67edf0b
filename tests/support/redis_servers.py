"""Private Redis servers for the pmseries tests: a standalone server and a small cluster.

`redis_server(tmp)` runs Debian's /usr/bin/redis-server in the foreground on an ephemeral
loopback port, with no persistence (unless asked) and every file of its own under TMP,
waits until it answers PING, and yields a `RedisServer` that can be stopped and started
again on the same port and data directory (for "Redis restarted during a load" tests).
`redis_cluster(tmp, nodes)` runs NODES such servers in cluster mode, joins them with
`redis-cli --cluster create`, waits until every node says `cluster_state:ok`, and yields
a `RedisClusterNodes`.  Both kill whatever they started on the way out, failed test or
not.  Tests call `require_redis()` first: it skips them, saying why, when Redis is not
installed.

Ports: a port is picked by binding to port 0 on 127.0.0.1 (never 6379, Redis's own, nor
PCP's 44321-44323), but nothing holds it between that check and redis-server's bind, and
other tests on this machine run servers on ports they chose themselves.  So each start is
checked twice: a server that exits saying "Address already in use" is started again on
another port (port allocation, not a retry of the test), and a server counts as up only
when the one answering PING reports our process's pid (`INFO server`'s process_id) -
otherwise a PING could reach another process's server on that port, e.g. one bound to
0.0.0.0, before ours has failed to bind.  A cluster node's bus is not at port+10000 (which
may be taken, or past 65535): each node gets a second free port as its `cluster-port`.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
import redis.cluster
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.support.our_pmcd import _stop, start_daemon
from tests.support.waiting import DEADLINE

REDIS_SERVER = "/usr/bin/redis-server"
REDIS_CLI = "/usr/bin/redis-cli"
HOST = "127.0.0.1"

#: ports a test server must never take: Redis's default, PCP's pmcd, pmproxy, pmwebd
RESERVED_PORTS = frozenset({6379, 44321, 44322, 44323})

#: how often a server is started on a fresh port when its port was taken meanwhile
PORT_ATTEMPTS = 5

#: redis-cli --cluster create: every node a primary, no confirmation asked
CREATE_OPTIONS = ("--cluster-replicas", "0", "--cluster-yes")

#: cluster-node-timeout (ms): how long a silent node takes to be marked failing
NODE_TIMEOUT_MS = 5000


def require_redis() -> None:
    """Skip the calling test unless Debian's redis-server and redis-cli are installed."""
    for path in (REDIS_SERVER, REDIS_CLI):
        if shutil.which(path) is None:
            pytest.skip(
                f"Debian's redis-server is not installed (no {path}): the pmseries tests "
                "need it (Debian packages redis-server and redis-tools)"
            )


def free_port(avoid: frozenset[int] | set[int] = frozenset()) -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, not reserved, not in AVOID."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((HOST, 0))
            port = s.getsockname()[1]
        if port not in RESERVED_PORTS and port not in avoid:
            return port


def no_retry() -> Retry:
    """A redis-py retry policy that does not retry."""
    return Retry(NoBackoff(), 0)


class PortTaken(RuntimeError):
    """redis-server could not bind its port (or bus port): another process has it."""


class RedisServer:
    """One redis-server child process on 127.0.0.1:port, files under `dir`.

    `stop()` ends it (SIGTERM: a clean shutdown; `hard=True`: SIGKILL, as a crash);
    `start()` starts it again on the same port with the same directory, so a persistent
    server (appendonly, fsync on every write) comes back with its data and a cluster node
    with its nodes.conf (its slots and peers).  A non-persistent one comes back empty."""

    host = HOST

    def __init__(
        self,
        dir: Path,
        *,
        persistent: bool = False,
        extra: Callable[[int, int], list[str]] | None = None,
    ) -> None:
        self.dir = dir
        self.persistent = persistent
        self._extra = extra  # (port, bus port) -> further arguments (cluster mode)
        self.port = 0
        self.bus_port = 0
        self.proc: subprocess.Popen | None = None
        dir.mkdir(parents=True, exist_ok=True)

    # -- addresses ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}"

    @property
    def node(self) -> str:
        """host:port, as PCP's `[redis] servers` and redis-cli --cluster write it."""
        return f"{HOST}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.dir / "redis.log"

    def log(self) -> str:
        """redis-server's log (and anything it printed before opening it)."""
        text = ""
        for path in (self.dir / "redis.stderr", self.log_path):
            if path.exists():
                text += path.read_text(errors="replace")
        return text or "(redis-server wrote no log)"

    def client(self, **options) -> redis.Redis:
        """A redis-py client of this server: bytes replies and, unless OPTIONS say
        otherwise, no retries (redis-py's default retries a failed connection three
        times with up to seconds of backoff, which would hide a stopped server)."""
        options.setdefault("socket_timeout", DEADLINE)
        options.setdefault("retry", no_retry())
        return redis.Redis(host=HOST, port=self.port, **options)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # -- life cycle --------------------------------------------------------------------

    def _argv(self) -> list[str]:
        argv = [REDIS_SERVER, "--port", str(self.port), "--bind", HOST]
        argv += ["--daemonize", "no", "--protected-mode", "yes", "--save", ""]
        argv += ["--dir", str(self.dir), "--logfile", str(self.log_path)]
        # redis-server replaces its command line with this title: keep the directory in
        # it, so that `pgrep -f TMP` finds the servers a test started
        argv += ["--proc-title-template", f"{{title}} {{listen-addr}} {{server-mode}} {self.dir}"]
        if self.persistent:
            argv += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            argv += ["--appendonly", "no"]
        if self._extra is not None:
            argv += self._extra(self.port, self.bus_port)
        return argv

    def _launch(self) -> None:
        """Start redis-server on self.port and wait until it answers PING; PortTaken if
        its port or bus port was taken, RuntimeError if it failed otherwise."""
        self.log_path.unlink(missing_ok=True)  # (so a failure shows this start's log)
        self.proc = start_daemon(self._argv(), {}, self.dir / "redis.stderr")
        try:
            self._wait_answering()
        except BaseException:
            self.stop(hard=True)
            raise

    def _wait_answering(self, within: float = DEADLINE) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + within
        client = self.client(socket_connect_timeout=1, socket_timeout=5)
        try:
            while True:
                if self.proc.poll() is not None:
                    log = self.log()
                    if "Address already in use" in log:
                        raise PortTaken(log)
                    raise RuntimeError(
                        f"redis-server exited ({self.proc.returncode}) before answering "
                        f"PING on port {self.port}:\n{log}"
                    )
                try:
                    if client.ping():
                        # ours, not another process's server on the same port?
                        pid = client.info("server")["process_id"]
                        if pid == self.proc.pid:
                            return
                except redis.RedisError:  # (not up yet, loading, or not a Redis at all)
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"redis-server on port {self.port} did not answer PING within "
                        f"{within:g} s:\n{self.log()}"
                    )
                time.sleep(0.02)
        finally:
            client.close()

    def first_start(self, avoid: set[int]) -> None:
        """Start on fresh ports (not in AVOID), taking others while they are taken."""
        for attempt in range(PORT_ATTEMPTS):
            self.port = free_port(avoid)
            self.bus_port = free_port(avoid | {self.port}) if self._extra is not None else 0
            try:
                self._launch()
                return
            except PortTaken:
                if attempt == PORT_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def start(self) -> None:
        """Start it again on the same port (and bus port) with the same directory."""
        if self.running:
            raise RuntimeError(f"redis-server on port {self.port} is already running")
        self._launch()

    def stop(self, *, hard: bool = False) -> None:
        """End the server: SIGTERM and wait (SIGKILL after 10 s), or SIGKILL at once."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if hard:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGKILL)
        _stop(proc)  # (SIGTERM to its group, then SIGKILL, and reaps it)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<RedisServer {self.node} {state} {self.dir}>"


@contextlib.contextmanager
def redis_server(
    tmp: Path, *, persistent: bool = False, name: str = "redis"
) -> Iterator[RedisServer]:
    """A private redis-server on 127.0.0.1, its files in TMP/NAME; without PERSISTENT
    nothing is saved (`--save '' --appendonly no`), so a restart loses the data; with
    it every write is in the append-only file before it is acknowledged."""
    server = RedisServer(tmp / name, persistent=persistent)
    try:
        server.first_start(set())
        yield server
    finally:
        server.stop()


class RedisClusterNodes:
    """Running cluster nodes: `.ports`, `.nodes` ("127.0.0.1:port"), `.servers` (each a
    `RedisServer`, to stop or restart one), `.client()` a redis-py `RedisCluster`."""

    host = HOST

    def __init__(self, servers: list[RedisServer]) -> None:
        self.servers = servers

    @property
    def ports(self) -> list[int]:
        return [s.port for s in self.servers]

    @property
    def nodes(self) -> list[str]:
        return [s.node for s in self.servers]

    def client(self, **options) -> redis.cluster.RedisCluster:
        options.setdefault("socket_timeout", DEADLINE)
        return redis.cluster.RedisCluster(host=HOST, port=self.ports[0], **options)

    def cluster_info(self, server: RedisServer) -> dict[str, str]:
        """CLUSTER INFO of one node, as a dict of strings."""
        with server.client() as c:
            text = c.execute_command("CLUSTER INFO")
        if isinstance(text, bytes):
            text = text.decode()
        if isinstance(text, dict):  # (redis-py may parse it already)
            return {str(k): str(v) for k, v in text.items()}
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def wait_ok(self, within: float = DEADLINE) -> None:
        """Until every running node says cluster_state:ok and knows every node."""
        deadline = time.monotonic() + within
        while True:
            infos = {s.node: self.cluster_info(s) for s in self.servers if s.running}
            if all(
                i.get("cluster_state") == "ok"
                and i.get("cluster_known_nodes") == str(len(self.servers))
                for i in infos.values()
            ):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Redis cluster is not ok after {within:g} s: {infos}")
            time.sleep(0.05)

    def log(self) -> str:
        return "\n".join(f"--- {s.node}\n{s.log()}" for s in self.servers)


@contextlib.contextmanager
def redis_cluster(
    tmp: Path, nodes: int = 3, *, persistent: bool = False
) -> Iterator[RedisClusterNodes]:
    """NODES redis-servers in cluster mode on 127.0.0.1 (no replicas: every node owns
    some of the 16384 slots), files in TMP/cluster-N, joined and ok."""

    def cluster_args(port: int, bus_port: int) -> list[str]:
        return [
            "--cluster-enabled", "yes",
            "--cluster-config-file", str(tmp / f"nodes-{port}.conf"),
            "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
            "--cluster-port", str(bus_port),
        ]  # fmt: skip

    servers = [
        RedisServer(tmp / f"cluster-{n}", persistent=persistent, extra=cluster_args)
        for n in range(nodes)
    ]
    cluster = RedisClusterNodes(servers)
    try:
        taken: set[int] = set()
        for server in servers:
            server.first_start(taken)
            taken |= {server.port, server.bus_port}
        create = subprocess.run(
            [REDIS_CLI, "--cluster", "create", *cluster.nodes, *CREATE_OPTIONS],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        if create.returncode != 0:
            raise RuntimeError(
                f"redis-cli --cluster create failed ({create.returncode}):\n"
                f"{create.stdout}{create.stderr}\n{cluster.log()}"
            )
        cluster.wait_ok()
        yield cluster
    finally:
        for server in servers:
            server.stop()
