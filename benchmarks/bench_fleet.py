"""Benchmark: a fleet's history in Redis, our pmproxy's [discover] against PCP 6.0.3's.

What: N simulated hosts on this machine (default N = 10, then 50), each one of our pmcds
with a host identity of its own (`pmcd -H host-NN`: pmcd.hostname, so the archive label,
and the `hostname` context label, so each is its own series source with its own series
ids) and one of our pmloggers logging a dashboard's metrics every second into
ROOT/host-NN/YYYYMMDD.HH.MM, PCP's pmlogger layout.  ONE pmproxy follows the whole tree
with [discover] and loads it into Redis: ours, then PCP's /usr/lib/pcp/bin/pmproxy on the
same live tree, each with a fresh key server, for the same time, on two layouts: one
redis-server, and a three-node Redis cluster.

How: each pmcd runs pmcd's own agent and our linux agent in-process; each pmlogger logs
kernel.all.load, kernel.all.cpu, mem.util, disk.all and network.interface (128 metrics
on this VM, 118 of them with values: 207 values a sample).  At N = 50 the fleet itself
(pmcds and pmloggers) takes 13% of a core and 3 GB.  Once the pmproxy has a
kernel.all.load series for every host, a window of --seconds begins:

- ingest lag: every PROBE_EVERY seconds a host in turn; the prober waits for a new record
  to appear at the end of its archive (read from the file's tail), then polls
  /series/values?samples=1 for the host's kernel.all.load until that record's timestamp
  is there.  Lag = when it was there - the record's timestamp (the sample time: it
  includes pmlogger's fetch-to-write, a few ms).  p50 and p99 of the window's probes
  (one at a time: a slow ingest gets fewer probes, and with tens of them p99 is the
  worst).
- pmproxy CPU (utime + stime from /proc/PID/stat) over the window, its RSS at the end,
  and the key server's CPU (our loader runs a Lua script in Redis: CPU moved, not saved).
- loaded values: per host, the records whose timestamps lie between the newest one the
  key server held at the window's start and at its end, times their values (counted in
  the archives afterwards); CPU per loaded value follows.
- Redis memory: INFO used_memory (summed over cluster nodes) at the window's end less
  at its start, per host and extrapolated to an hour.  A stream keeps 8640 entries by
  default (2.4 hours at 1 s), so past that memory stops growing: the extrapolation holds
  for the first hours only.
- after the window, as a Grafana fleet dashboard asks (ROUNDS times, kept-alive
  connection, p50 / p99): /series/query?expr=kernel.all.load and then /series/values of
  all its series over the last 5 minutes; /series/query of
  rate(kernel.all.cpu.user[start:"-5min"]) (all hosts); /series/labels?names=hostname
  (the host variable); /series/sources?match=*.

Targets (printed met / not met): ours keeps up at N = 50 with p99 lag under 5 s; at every
N and layout ours uses less pmproxy CPU per loaded value than PCP's pmproxy.

Everything runs on loopback on ephemeral ports (never 44321-44323, nor 6379), in one
temporary directory; every process is started in a session of its own and its process
group is ended on the way out, on failure and on Ctrl-C (SIGTERM too).

    .venv/bin/python benchmarks/bench_fleet.py --quick          # N=5, 60 s windows
    .venv/bin/python benchmarks/bench_fleet.py [--hosts 10 50] [--seconds 90]
        [--layouts single cluster] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.redis_servers import (  # noqa: E402
    free_port,
    redis_cluster,
    redis_server,
)

BIN = Path(sys.executable).parent  # our console scripts: pmcd, pmlogger, pmproxy
PCP_PMPROXY = Path("/usr/lib/pcp/bin/pmproxy")
PMCD_CONF = (  # pmcd's own agent and our linux agent, both in pmcd's process
    "pmcd\t2\tdso\tPmcdAgent\tpurepcp.pmcd.pmcd_agent\n"
    "linux\t60\tdso\tLinux\tpurepcp.agents.linux\n"
)
LOGGED = ("kernel.all.load", "kernel.all.cpu", "mem.util", "disk.all", "network.interface")
LOG_CONF = "log mandatory on 1 sec {\n" + "".join(f"    {m}\n" for m in LOGGED) + "}\n"
PROBE_EVERY = 2.0  # seconds between lag probes
PROBE_GIVE_UP = 60.0  # a record not queryable after this long counts as this lag
LAG_TARGET = 5.0  # seconds, p99 at N = 50
MB_PER_HOST = 80  # a pmcd with linux in-process (~38 MB) and a pmlogger (~28 MB), and room
CLK_TCK = os.sysconf("SC_CLK_TCK")


# -- processes ---------------------------------------------------------------------------


class Processes:
    """Everything this benchmark starts, each in its own session; `stop_all` ends each
    one's process group (SIGTERM, then SIGKILL) and is safe to call more than once."""

    def __init__(self) -> None:
        self.running: list[subprocess.Popen] = []

    def start(self, argv: list[str], env: dict[str, str], out: Path) -> subprocess.Popen:
        with out.open("w") as err:
            proc = subprocess.Popen(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                cwd=out.parent,
            )
        self.running.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc in self.running:
            self.running.remove(proc)

    def stop_many(self, procs: list[subprocess.Popen]) -> None:
        """End PROCS together: SIGTERM to every group first, then each waited for."""
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            self.stop(proc)

    def stop_all(self) -> None:
        self.stop_many(list(reversed(self.running)))


def cpu_seconds(pid: int) -> float:
    """utime + stime of process PID (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait_for(what: str, check: Callable[[], object], within: float, proc=None) -> object:
    """CHECK's first true answer, polled; RuntimeError naming WHAT after WITHIN seconds or
    if PROC ends first."""
    deadline = time.monotonic() + within
    while True:
        answer = check()
        if answer:
            return answer
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: the process ended ({proc.returncode})")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {within:g} s")
        time.sleep(0.1)


def listening_port(out: Path) -> int | None:
    text = out.read_text(errors="replace") if out.exists() else ""
    found = re.search(r"^  ok +\d+ +(\d+) inet +127\.0\.0\.1$", text, re.M)
    return int(found.group(1)) if found else None


def pmcd_port(log: Path) -> int | None:
    """The TCP port in pmcd's log, from its request ports table (as PCP's pmcd logs it)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    found = re.search(r"^  ok +\d+ +(\d+) inet ", text, re.M)
    return int(found.group(1)) if found else None


# -- the fleet ---------------------------------------------------------------------------


@dataclass
class Host:
    name: str
    dir: Path
    pmcd: subprocess.Popen | None = None
    logger: subprocess.Popen | None = None
    port: int = 0


def our_env(work: Path, **more: str) -> dict[str, str]:
    """The environment of our commands: a private user layout under WORK."""
    home = work / "home"
    return dict(
        os.environ,
        PUREPCP_LAYOUT="user",
        HOME=str(home),
        XDG_RUNTIME_DIR=str(work / "run"),
        PYTHONPATH=str(ROOT),
        **more,
    )


def start_fleet(n: int, work: Path, archives: Path, procs: Processes) -> list[Host]:
    """N pmcds (each -H host-NN) and then a pmlogger on each, every second."""
    hosts = [Host(f"host-{i:02d}", work / "hosts" / f"host-{i:02d}") for i in range(n)]
    (work / "log.conf").write_text(LOG_CONF)
    for host in hosts:
        for sub in ("run", "tmp"):
            (host.dir / sub).mkdir(parents=True, exist_ok=True)
        (host.dir / "pmcd.conf").write_text(PMCD_CONF)
        env = our_env(work, PCP_RUN_DIR=str(host.dir / "run"), PCP_TMP_DIR=str(host.dir / "tmp"))
        argv = [
            str(BIN / "pmcd"),
            "-f",
            "-p",
            "0",
            "-i",
            "127.0.0.1",
            "-H",
            host.name,
            "-s",
            str(host.dir / "run" / "pmcd.socket"),
            "-c",
            str(host.dir / "pmcd.conf"),
            "-l",
            str(host.dir / "pmcd.log"),
        ]
        host.pmcd = procs.start(argv, env, host.dir / "pmcd.out")
    for host in hosts:
        host.port = int(
            wait_for(
                f"{host.name}'s pmcd",
                lambda h=host: pmcd_port(h.dir / "pmcd.log"),
                120,
                host.pmcd,
            )
        )
    for host in hosts:
        env = our_env(work, PCP_RUN_DIR=str(host.dir / "run"), PCP_TMP_DIR=str(host.dir / "tmp"))
        (archives / host.name).mkdir(parents=True, exist_ok=True)
        argv = [
            str(BIN / "pmlogger"),
            "-h",
            f"127.0.0.1:{host.port}",
            "-c",
            str(work / "log.conf"),
            "-t",
            "1",
            "-l",
            str(host.dir / "pmlogger.log"),
            str(archives / host.name / "%Y%m%d.%H.%M"),
        ]
        host.logger = procs.start(argv, env, host.dir / "pmlogger.out")
    for host in hosts:
        wait_for(
            f"{host.name}'s first record",
            lambda h=host: newest_record(archives / h.name),
            120,
            host.logger,
        )
    return hosts


def fleet_usage(hosts: list[Host]) -> tuple[float, float]:
    """(CPU seconds so far, RSS MB now) of every pmcd and pmlogger of the fleet."""
    cpu = rss = 0.0
    for host in hosts:
        for proc in (host.pmcd, host.logger):
            assert proc is not None
            cpu += cpu_seconds(proc.pid)
            rss += rss_mb(proc.pid)
    return cpu, rss


# -- archives ----------------------------------------------------------------------------


def archive_base(host_dir: Path) -> Path | None:
    metas = sorted(host_dir.glob("*.meta"), key=lambda p: p.stat().st_mtime)
    return metas[-1].with_suffix("") if metas else None


def newest_record(host_dir: Path) -> int | None:
    """The timestamp (ns) of the last whole record of the host's archive, read from the
    tail of its newest data volume; None if it has none yet."""
    base = archive_base(host_dir)
    if base is None:
        return None
    volumes = sorted(base.parent.glob(base.name + ".[0-9]*"), key=lambda p: int(p.suffix[1:]))
    if not volumes:
        return None
    with volumes[0].open("rb") as f:
        head = f.read(8)
    if len(head) < 8:
        return None
    version = struct.unpack(">I", head[4:8])[0] & 0xFF
    with volumes[-1].open("rb") as f:
        size = f.seek(0, os.SEEK_END)
        if size < 8:
            return None
        f.seek(size - 4)
        length = struct.unpack(">I", f.read(4))[0]
        if length < 20 or length > size:
            return None
        f.seek(size - length)
        record = f.read(16)
    if struct.unpack(">I", record[:4])[0] != length:
        return None  # (a record being written)
    if version == 3:
        sec, nsec = struct.unpack(">qi", record[4:16])
    else:
        sec, usec = struct.unpack(">ii", record[4:12])
        nsec = usec * 1000
    return sec * 1_000_000_000 + nsec


def values_between(host_dir: Path, after_ns: int, upto_ns: int) -> tuple[int, int, int]:
    """(records, value sets with values, values) of the host's archive with timestamps in
    (AFTER_NS, UPTO_NS]; a value set with values is a stream entry in the key server."""
    from purepcp.pmapi.archive.reader import Archive

    base = archive_base(host_dir)
    records = sets = values = 0
    if base is None:
        return 0, 0, 0
    with Archive(str(base)) as archive:
        for record in archive.records():
            if after_ns < record.stamp.ns <= upto_ns:
                records += 1
                sets += sum(vs.numval > 0 for vs in record.result.vsets)
                values += sum(max(vs.numval, 0) for vs in record.result.vsets)
    return records, sets, values


# -- key servers and pmproxies -----------------------------------------------------------


@dataclass
class KeyServer:
    """A fresh key server's nodes (RedisServer objects): one, or a cluster's three."""

    servers: list

    @property
    def nodes(self) -> list[str]:
        return [s.node for s in self.servers]

    @property
    def pids(self) -> list[int]:
        return [s.proc.pid for s in self.servers]

    def memory(self) -> int:
        """INFO memory's used_memory, summed over the nodes."""
        total = 0
        for server in self.servers:
            with server.client() as client:
                total += int(client.info("memory")["used_memory"])
        return total

    def entries(self) -> int:
        """Stream entries held, summed over every series' values stream on every node."""
        total = 0
        for server in self.servers:
            with server.client() as client:
                keys = list(client.scan_iter(match="pcp:values:series:*", count=1000))
                pipe = client.pipeline(transaction=False)
                for key in keys:
                    pipe.xlen(key)
                total += sum(pipe.execute())
        return total


@contextlib.contextmanager
def key_server(layout: str, tmp: Path) -> Iterator[KeyServer]:
    """A fresh redis-server, or a fresh three-node cluster, stopped afterwards."""
    if layout == "single":
        with redis_server(tmp) as server:
            yield KeyServer([server])
    else:
        with redis_cluster(tmp, 3) as cluster:
            yield KeyServer(cluster.servers)


def proxy_conf(nodes: list[str], archives: Path) -> str:
    """The same configuration for both pmproxies: REST and series on, discovery of the
    whole tree, nothing excluded."""
    return (
        "[pmproxy]\npcp.enabled = false\nhttp.enabled = true\n"
        f"[redis]\nenabled = true\nservers = {','.join(nodes)}\n"
        f"[discover]\nenabled = true\npath = {archives}\n"
        "[pmseries]\nenabled = true\n[pmsearch]\nenabled = false\n"
    )


def start_proxy(
    ours: bool, nodes: list[str], archives: Path, tmp: Path, work: Path, procs: Processes
) -> tuple[subprocess.Popen, int]:
    """Our pmproxy or PCP's with [discover] over ARCHIVES; (process, HTTP port)."""
    tmp.mkdir(parents=True, exist_ok=True)
    conf = tmp / "pmproxy.conf"
    conf.write_text(proxy_conf(nodes, archives))
    out = tmp / "pmproxy.out"
    if ours:
        argv = [
            str(BIN / "pmproxy"),
            "-f",
            "-p",
            "0",
            "-i",
            "127.0.0.1",
            "-c",
            str(conf),
            "-l",
            str(tmp / "pmproxy.log"),
        ]
        proc = procs.start(argv, our_env(work), out)
        port = int(wait_for("our pmproxy", lambda: listening_port(out), 60, proc))
    else:
        port = free_port()
        user = pwd.getpwuid(os.getuid()).pw_name
        env = dict(os.environ, PCP_RUN_DIR=str(tmp), PCP_LOG_DIR=str(tmp), PCP_TMP_DIR=str(tmp))
        argv = [
            str(PCP_PMPROXY),
            "-f",
            "-A",
            "-U",
            user,
            "-c",
            str(conf),
            "-p",
            str(port),
            "-i",
            "127.0.0.1",
            "-s",
            str(tmp / "pmproxy.socket"),
            "-l",
            str(tmp / "pmproxy.log"),
        ]
        proc = procs.start(argv, env, out)
    client = Client(port)
    wait_for("pmproxy's /series/ping", lambda: client.try_get("/series/ping"), 60, proc)
    client.close()
    return proc, port


class Client:
    """A kept-alive HTTP connection to a pmproxy."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None

    def get(self, path: str) -> bytes:
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                self.conn.request("GET", path)
                reply = self.conn.getresponse()
                body = reply.read()
                if reply.status != 200:
                    raise RuntimeError(f"GET {path}: {reply.status} {body[:200]!r}")
                return body
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def try_get(self, path: str) -> bytes | None:
        try:
            return self.get(path)
        except (OSError, http.client.HTTPException, RuntimeError):
            return None

    def json(self, path: str):
        return json.loads(self.get(path))

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def q(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def host_series(client: Client, hosts: list[Host]) -> dict[str, str] | None:
    """Each host's kernel.all.load series id, once every host has one; else None."""
    ids = {}
    for host in hosts:
        expr = f'kernel.all.load{{hostname=="{host.name}"}}'
        try:
            found = client.json(f"/series/query?expr={q(expr)}")
        except (OSError, http.client.HTTPException, RuntimeError, ValueError):
            return None
        if not found:
            return None
        ids[host.name] = found[0]
    return ids


def newest_loaded(client: Client, sid: str) -> int:
    """The timestamp (ns) of the newest value the key server holds for series SID."""
    rows = json.loads(client.get(f"/series/values?series={sid}&samples=1"), parse_float=Decimal)
    return max((int(Decimal(r["timestamp"]) * 1_000_000) for r in rows), default=0)


# -- measurements ------------------------------------------------------------------------


@dataclass
class Prober:
    """Lag probes in a thread: a host in turn, a fresh record, until it is queryable."""

    client: Client
    hosts: list[Host]
    archives: Path
    sids: dict[str, str]
    lags: list[float] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        turn = 0
        while not self.stop.is_set():
            began = time.monotonic()
            host = self.hosts[turn % len(self.hosts)]
            turn += 1
            lag = self.probe(host)
            if lag is not None:
                self.lags.append(lag)
            self.stop.wait(max(0.0, PROBE_EVERY - (time.monotonic() - began)))

    def probe(self, host: Host) -> float | None:
        host_dir = self.archives / host.name
        before = newest_record(host_dir)
        deadline = time.monotonic() + 5
        stamp = before
        while stamp == before and time.monotonic() < deadline and not self.stop.is_set():
            time.sleep(0.01)
            stamp = newest_record(host_dir)
        if stamp is None or stamp == before:
            return None
        sid = self.sids[host.name]
        give_up = time.time() + PROBE_GIVE_UP
        while time.time() < give_up:
            if newest_loaded(self.client, sid) >= stamp:
                return time.time() - stamp / 1e9
            time.sleep(0.05)
        return PROBE_GIVE_UP


@dataclass
class Window:
    """What one pmproxy did in the measured window."""

    seconds: float
    lags: list[float]
    proxy_cpu: float
    redis_cpu: float
    proxy_rss: float
    redis_bytes: int  # used_memory's growth over the window
    redis_total: int  # used_memory at the end, less the empty server's
    entries: int  # stream entries the key server gained over the window
    spans: dict[str, tuple[int, int]]  # host -> (newest loaded at start, at end), ns
    fleet_cpu: float
    # filled in from the archives once they are complete: the records, value sets and
    # values between each host's SPANS
    records: int = 0
    sets: int = 0
    span_values: int = 0
    lagging: list[str] = field(default_factory=list)  # hosts far behind at the start

    @property
    def values(self) -> int:
        """Values loaded in the window: the stream entries Redis gained, times the values
        an entry holds in the archives (the spans' count would do as well, but a span
        begins at what the key server held, which is only as good as the load was)."""
        return round(self.entries * self.span_values / max(self.sets, 1))

    queries: dict[str, list[float]] = field(default_factory=dict)
    answers: dict[str, int] = field(default_factory=dict)  # query -> bytes of its answer


def measure_window(
    proxy: subprocess.Popen,
    keys: KeyServer,
    empty: int,
    client: Client,
    hosts: list[Host],
    archives: Path,
    sids: dict[str, str],
    seconds: float,
) -> Window:
    """Lag probes, CPU, memory and the loaded span of each host over SECONDS."""
    first = {h: newest_loaded(client, sid) for h, sid in sids.items()}
    lagging = [
        f"{h} {(logged - first[h]) / 1e9:.0f} s"
        for h in sids
        if (logged := newest_record(archives / h) or 0) - first[h] > 10e9
    ]
    mem0, entries0, fleet0 = keys.memory(), keys.entries(), fleet_usage(hosts)[0]
    cpu0 = cpu_seconds(proxy.pid)
    rcpu0 = sum(cpu_seconds(pid) for pid in keys.pids)
    start = time.monotonic()
    prober = Prober(Client(client.port), hosts, archives, sids)
    thread = threading.Thread(target=prober.run, daemon=True)
    thread.start()
    try:
        time.sleep(seconds)
    finally:
        prober.stop.set()
        thread.join()
        prober.client.close()
    took = time.monotonic() - start
    cpu1 = cpu_seconds(proxy.pid)
    rcpu1 = sum(cpu_seconds(pid) for pid in keys.pids)
    fleet1 = fleet_usage(hosts)[0]
    last = {h: newest_loaded(client, sid) for h, sid in sids.items()}
    mem1, entries1 = keys.memory(), keys.entries()
    return Window(
        seconds=took,
        lags=prober.lags,
        proxy_cpu=cpu1 - cpu0,
        redis_cpu=rcpu1 - rcpu0,
        proxy_rss=rss_mb(proxy.pid),
        redis_bytes=mem1 - mem0,
        redis_total=mem1 - empty,
        entries=entries1 - entries0,
        spans={h: (first[h], last[h]) for h in sids},
        fleet_cpu=fleet1 - fleet0,
        lagging=lagging,
    )


def dashboard_queries(
    client: Client, n: int, rounds: int
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Seconds of each of a fleet dashboard's requests, ROUNDS times; the bytes of each
    one's last answer."""
    times: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}

    def timed(name: str, call: Callable[[], int]) -> None:
        began = time.perf_counter()
        sizes[name] = call()
        times.setdefault(name, []).append(time.perf_counter() - began)

    def size(path: str) -> Callable[[], int]:
        return lambda: len(client.get(path))

    rate = q('rate(kernel.all.cpu.user[start:"-5min"])')

    def load_panel() -> int:
        now = int(time.time())
        sids = client.json("/series/query?expr=kernel.all.load")
        window = f"&start={now - 300}&finish={now}"
        body = client.get(f"/series/values?series={','.join(sids)}{window}")
        if len(sids) != n or not json.loads(body):
            raise RuntimeError(f"kernel.all.load: {len(sids)} series, no values")
        return len(body)

    for _ in range(rounds):
        timed("kernel.all.load: query + values, 5 min", load_panel)
        timed("rate(kernel.all.cpu.user), 5 min", size(f"/series/query?expr={rate}"))
        timed("/series/labels?names=hostname", size("/series/labels?names=hostname"))
        timed("/series/sources?match=*", size("/series/sources?match=*"))
    return times, sizes


def run_proxy(
    ours: bool,
    layout: str,
    hosts: list[Host],
    archives: Path,
    work: Path,
    procs: Processes,
    seconds: float,
    rounds: int,
) -> Window:
    """One pmproxy on a fresh key server of LAYOUT: discovery, the window, the queries."""
    who = "ours" if ours else "pcp"
    tmp = work / f"{layout}-{who}"
    with key_server(layout, tmp / "redis") as keys:
        empty = keys.memory()
        proxy, port = start_proxy(ours, keys.nodes, archives, tmp, work, procs)
        client = Client(port)
        try:
            began = time.monotonic()
            sids = wait_for(
                f"{who} pmproxy to load every host", lambda: host_series(client, hosts), 180, proxy
            )
            print(
                f"  {layout}/{who}: every host's series there after "
                f"{time.monotonic() - began:.1f} s",
                flush=True,
            )
            assert isinstance(sids, dict) and len(set(sids.values())) == len(hosts)
            window = measure_window(proxy, keys, empty, client, hosts, archives, sids, seconds)
            window.queries, window.answers = dashboard_queries(client, len(hosts), rounds)
            return window
        finally:
            client.close()
            procs.stop(proxy)


# -- the report --------------------------------------------------------------------------


def quantile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def count_values(window: Window, archives: Path) -> None:
    for host, (after, upto) in window.spans.items():
        records, sets, values = values_between(archives / host, after, upto)
        window.records += records
        window.sets += sets
        window.span_values += values


def rows(w: Window, n: int) -> list[tuple[str, float, str]]:
    hours = w.seconds / 3600
    return (
        [
            ("ingest lag p50", quantile(w.lags, 0.5), "s"),
            ("ingest lag p99", quantile(w.lags, 0.99), "s"),
            ("pmproxy CPU over the window", w.proxy_cpu, "s"),
            ("pmproxy RSS at the end", w.proxy_rss, "MB"),
            ("key server CPU over the window", w.redis_cpu, "s"),
            ("stream entries added in the window (Redis)", w.entries, ""),
            ("  the same, by the archives' spans", w.sets, ""),
            ("values loaded in the window", w.values, ""),
            ("pmproxy CPU per loaded value", w.proxy_cpu / max(w.values, 1) * 1e6, "us"),
            (
                "pmproxy + key server CPU per value",
                (w.proxy_cpu + w.redis_cpu) / max(w.values, 1) * 1e6,
                "us",
            ),
            ("Redis memory growth per host per hour", w.redis_bytes / n / hours / 2**20, "MB"),
            ("Redis memory per host at the end", w.redis_total / n / 2**20, "MB"),
        ]
        + [(f"{name} p50", quantile(t, 0.5) * 1e3, "ms") for name, t in w.queries.items()]
        + [(f"{name} p99", quantile(t, 0.99) * 1e3, "ms") for name, t in w.queries.items()]
    )


def report(n: int, layout: str, ours: Window, pcp: Window) -> list[tuple[str, bool]]:
    print(
        f"\nN={n} hosts, {layout} key server: window ours {ours.seconds:.0f} s "
        f"({len(ours.lags)} lag probes, {ours.records} records), PCP's {pcp.seconds:.0f} s "
        f"({len(pcp.lags)} probes, {pcp.records} records); fleet CPU "
        f"{ours.fleet_cpu / ours.seconds * 100:.0f}% of a core"
    )
    for (name, mine, unit), (_, theirs, _) in zip(rows(ours, n), rows(pcp, n), strict=True):
        ratio = mine / theirs if theirs else float("nan")
        print(
            f"  {name:48s} ours {mine:12.3f} {unit:2s}  PCP {theirs:12.3f} {unit:2s}"
            f"  ratio {ratio:6.2f}"
        )
    for who, w in (("ours", ours), ("PCP's", pcp)):
        if w.lagging:
            print(f"  ({who}: at the window's start, behind the archives: {', '.join(w.lagging)})")
    sizes = ", ".join(f"{k} {ours.answers[k]}/{pcp.answers.get(k, 0)}" for k in ours.answers)
    print(f"  answer bytes, ours/PCP's: {sizes}")
    per_value = ours.proxy_cpu / max(ours.values, 1) < pcp.proxy_cpu / max(pcp.values, 1)
    verdicts = [(f"N={n} {layout}: ours less pmproxy CPU per loaded value than PCP's", per_value)]
    if n >= 50:
        p99 = quantile(ours.lags, 0.99)
        verdicts.append(
            (f"N={n} {layout}: ours p99 lag {p99:.2f} s < {LAG_TARGET:g} s", p99 < LAG_TARGET)
        )
    return verdicts


# -- the run -----------------------------------------------------------------------------


def memory_fits(n: int) -> bool:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            available = int(line.split()[1]) / 1024
            need = n * MB_PER_HOST + 1024
            print(f"memory: {n} hosts need about {need:.0f} MB, {available:.0f} MB available")
            return need < available
    return True


def run_fleet(
    n: int, layouts: list[str], seconds: float, rounds: int, work: Path, procs: Processes
) -> list[tuple[str, bool]]:
    archives = work / "archives"
    began = time.monotonic()
    hosts = start_fleet(n, work, archives, procs)
    rss = fleet_usage(hosts)[1]
    print(
        f"fleet of {n}: started in {time.monotonic() - began:.0f} s, RSS {rss:.0f} MB "
        f"({rss / n:.0f} MB a host: pmcd + pmlogger)",
        flush=True,
    )
    windows = {}
    for layout in layouts:
        for ours in (True, False):
            windows[layout, ours] = run_proxy(
                ours, layout, hosts, archives, work, procs, seconds, rounds
            )
    # (the archives complete, so that every window's records can be counted)
    procs.stop_many([h.logger for h in hosts if h.logger is not None])
    procs.stop_many([h.pmcd for h in hosts if h.pmcd is not None])
    verdicts = []
    for layout in layouts:
        for ours in (True, False):
            count_values(windows[layout, ours], archives)
        verdicts += report(n, layout, windows[layout, True], windows[layout, False])
    return verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", help="fleet sizes (default 10 50)")
    parser.add_argument("--seconds", type=float, help="measured window per pmproxy (90)")
    parser.add_argument(
        "--layouts", nargs="+", choices=("single", "cluster"), default=["single", "cluster"]
    )
    parser.add_argument("--rounds", type=int, help="dashboard query rounds (30)")
    parser.add_argument("--quick", action="store_true", help="N=5, 60 s windows, 10 rounds")
    parser.add_argument("--keep", help="work in this directory and keep it")
    args = parser.parse_args()
    sizes = args.hosts or ([5] if args.quick else [10, 50])
    seconds = args.seconds or (60.0 if args.quick else 90.0)
    rounds = args.rounds or (10 if args.quick else 30)
    for need in (PCP_PMPROXY, Path("/usr/bin/redis-server"), Path("/usr/bin/redis-cli")):
        if not need.exists():
            print(f"bench_fleet: needs {need} (Debian packages pcp, redis-server, redis-tools)")
            return 1
    signal.signal(signal.SIGINT, signal.default_int_handler)  # (even if started ignoring it)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    verdicts: list[tuple[str, bool]] = []
    procs = Processes()
    try:
        for n in sizes:
            if not memory_fits(n):
                print(f"N={n}: does not fit in this machine's memory; skipped")
                continue
            with work_dir(args.keep, n) as work:
                try:
                    verdicts += run_fleet(n, args.layouts, seconds, rounds, work, procs)
                finally:
                    procs.stop_all()
    finally:
        procs.stop_all()
    print("\ntargets:")
    for text, met in verdicts:
        print(f"  {text}: {'met' if met else 'NOT met'}")
    return 0 if all(met for _, met in verdicts) else 1


@contextlib.contextmanager
def work_dir(keep: str | None, n: int) -> Iterator[Path]:
    if keep:
        path = Path(keep) / f"fleet-{n}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix=f"bench-fleet-{n}-") as tmp:
        yield Path(tmp)


if __name__ == "__main__":
    raise SystemExit(main())
