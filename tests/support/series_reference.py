"""PCP 6.0.3's series tools against a private Redis: pmseries(1) and pmproxy's /series/*.

`pcp_pmseries(args, redis_port, tmp)` runs Debian's /usr/bin/pmseries with a private
configuration file (`-c` with an absolute path: then pmseries reads that file only, so
Debian's /etc/pcp/pmseries/pmseries.conf - whose `[discover] exclude.metrics = proc.*,
acct.*` makes `--load` silently skip those metrics - does not apply.  Observed: without
`-c` the proc archive loads no proc.* metric; with any `-c`, even a relative or missing
file, all 87 are loaded, and an exclude.metrics in our file is honoured).
With `cluster_nodes` the file names every node of a cluster: PCP's libpcp_web uses
hiredis-cluster, which finds out by itself that the server is a cluster (and any one node
would do: it learns the others from CLUSTER SLOTS).

`pcp_pmproxy_series(tmp, redis_port)` runs PCP's pmproxy in the foreground with only the
REST API on (no pmcd proxying, no RediSearch; archive discovery only when given a path),
waits until `/series/ping` answers `{"success":true}` and it has connected to Redis,
yields a `SeriesProxy` (its port and URL), and stops it afterwards.  `fetch(url)` is
one HTTP request (not with urllib: see there).

`small_archive(tmp)` is a small archive for loading: PCP's QA archive `sample-labels`
when PCP's testsuite is on this machine, else one written with PCP's `pcp.pmi`.
Tests call `require_pcp_series()` first: it skips them, saying why, when PCP's series
tools are not installed.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.our_pmcd import _stop, start_daemon
from tests.support.pmproxy_servers import PCP_PMPROXY, Proxy, get
from tests.support.qa_archives import QA_DIRS
from tests.support.redis_servers import HOST, PORT_ATTEMPTS, free_port
from tests.support.waiting import DEADLINE, wait_until

PMSERIES = "/usr/bin/pmseries"
SYSTEM_PYTHON = "/usr/bin/python3"


def require_pcp_series() -> None:
    """Skip the calling test unless PCP's pmseries and pmproxy are installed."""
    for path in (PMSERIES, PCP_PMPROXY):
        if not os.path.exists(path):
            pytest.skip(f"PCP 6's series tools are not installed: no {path} (Debian package pcp)")


def tool_env(**extra: str) -> dict[str, str]:
    """The environment PCP's tools run in: ours, with PCP's Python for its scripts."""
    return dict(os.environ, PCP_PYTHON_PROG=SYSTEM_PYTHON, **extra)


# -- configuration ---------------------------------------------------------------------


def series_conf(
    servers: Sequence[str], *, pmproxy: bool = False, discover_path: Path | None = None
) -> str:
    """An ini file for pmseries (or, with PMPROXY, pmproxy) using Redis SERVERS
    ("host:port", every node of a cluster or one standalone server), excluding no
    metric and no indom from loads or discovery, and RediSearch off."""
    text = ""
    if pmproxy:
        # only the REST API (/series/*): no pmcd proxying, no RESP proxying, no TLS
        text += "[pmproxy]\npcp.enabled = false\nhttp.enabled = true\n"
        text += "redis.enabled = false\nsecure.enabled = false\n"
    text += f"[redis]\nenabled = true\nservers = {','.join(servers)}\n"
    text += "[pmseries]\nenabled = true\n"
    text += "[pmsearch]\nenabled = false\n"
    text += f"[discover]\nenabled = {'true' if discover_path is not None else 'false'}\n"
    if discover_path is not None:
        text += f"path = {discover_path}\n"
    text += "exclude.metrics =\nexclude.indoms =\n"
    return text


def _servers(redis_port: int, cluster_nodes: Sequence[str] | None) -> list[str]:
    return list(cluster_nodes) if cluster_nodes else [f"{HOST}:{redis_port}"]


# -- pmseries --------------------------------------------------------------------------


def pcp_pmseries(
    args: Sequence[str],
    redis_port: int,
    tmp: Path,
    *,
    cluster_nodes: Sequence[str] | None = None,
    timeout: float = DEADLINE,
) -> subprocess.CompletedProcess[str]:
    """Run PCP's pmseries ARGS against the Redis on 127.0.0.1:REDIS_PORT, or against the
    cluster of CLUSTER_NODES (then REDIS_PORT is not used), with a private configuration
    file in TMP; text output captured, the exit status not checked."""
    tmp.mkdir(parents=True, exist_ok=True)
    conf = (tmp / "pcp-pmseries.conf").absolute()
    conf.write_text(series_conf(_servers(redis_port, cluster_nodes)))
    argv = [PMSERIES, "-c", str(conf)]
    if not cluster_nodes:
        # (-h/-p replace [redis] servers with this one server; for a cluster the
        # file's list is kept, so that any live node can be asked for the others)
        argv += ["-h", HOST, "-p", str(redis_port)]
    return subprocess.run(
        [*argv, *args],
        env=tool_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def load_archive(
    archive: Path | str,
    redis_port: int,
    tmp: Path,
    *,
    cluster_nodes: Sequence[str] | None = None,
) -> str:
    """`pmseries --load ARCHIVE`; its "[Info] processed N archive records" line, or the
    test fails with what pmseries said."""
    done = pcp_pmseries(["--load", str(archive)], redis_port, tmp, cluster_nodes=cluster_nodes)
    if done.returncode != 0 or "processed" not in done.stdout + done.stderr:
        pytest.fail(f"pmseries --load {archive} failed ({done.returncode}):\n{done.stderr}")
    return (done.stdout + done.stderr).strip()


# -- pmproxy ---------------------------------------------------------------------------


#: what PCP's pmproxy logs once connected to Redis (standalone or cluster) and schema-checked
REDIS_READY = "Info: Redis slots, schema version setup"


@dataclass(frozen=True)
class SeriesProxy(Proxy):
    """PCP's pmproxy serving /series/*: `.port`, `.url`, `.get(path)`, `.json(path)`."""

    port: int = 0

    def log(self) -> str:
        path = self.tmp / "pmproxy.log"
        return path.read_text(errors="replace") if path.exists() else "(no pmproxy.log)"


def _port_state(proxy: SeriesProxy) -> str | None:
    """How pmproxy's log lists its TCP port: "ok", "err", or None before it does."""
    found = re.search(rf"^\s*(ok|err)\s+-?\d+\s+{proxy.port}\s+inet\b", proxy.log(), re.M)
    return found.group(1) if found else None


@contextlib.contextmanager
def pcp_pmproxy_series(
    tmp: Path,
    redis_port: int,
    *,
    discover_path: Path | None = None,
    cluster_nodes: Sequence[str] | None = None,
    wait_redis: bool = True,
) -> Iterator[SeriesProxy]:
    """PCP 6.0.3's pmproxy on 127.0.0.1 (a free port) answering /series/* from the Redis
    on 127.0.0.1:REDIS_PORT (or the cluster of CLUSTER_NODES), discovering archives under
    DISCOVER_PATH when given; its configuration and log in TMP.

    Ready means /series/ping answers {"success":true} and - unless not WAIT_REDIS, for a
    test that starts it with Redis down - its log says it has set up its Redis
    connection ("Info: Redis slots, schema version setup").  The ping alone says
    nothing about Redis: pmproxy answers it with Redis down, and a query sent before
    the connection is up is never answered, even after pmproxy connects (observed)."""
    tmp.mkdir(parents=True, exist_ok=True)
    conf = (tmp / "pmproxy.conf").absolute()
    conf.write_text(
        series_conf(_servers(redis_port, cluster_nodes), pmproxy=True, discover_path=discover_path)
    )
    # pmproxy's Unix socket lives in a short directory of its own: a socket path longer
    # than sun_path (108 bytes) cannot be bound, and pytest's tmp paths can be that long
    sockdir = Path(tempfile.mkdtemp(prefix="purepcp-pmproxy-"))
    # PCP_RUN_DIR, PCP_LOG_DIR, PCP_TMP_DIR: anything it would put in the system's
    # directories (it runs as us: -U names the user running the tests)
    env = tool_env(PCP_RUN_DIR=str(tmp), PCP_LOG_DIR=str(tmp), PCP_TMP_DIR=str(tmp))
    user = pwd.getpwuid(os.getuid()).pw_name
    log = tmp / "pmproxy.log"
    proc = None
    try:
        for attempt in range(PORT_ATTEMPTS):
            port = free_port()
            argv = [PCP_PMPROXY, "-f", "-A", "-c", str(conf), "-i", HOST, "-p", str(port)]
            argv += ["-s", str(sockdir / "pmproxy.socket"), "-l", str(log), "-U", user]
            log.unlink(missing_ok=True)
            proc = start_daemon(argv, env, tmp / "pmproxy.stderr")
            proxy = SeriesProxy(f"http://{HOST}:{port}", tmp, proc.pid, port)

            def describe(proxy: SeriesProxy = proxy) -> str:
                stderr = (tmp / "pmproxy.stderr").read_text(errors="replace")
                return f"PCP's pmproxy on port {proxy.port}:\n{proxy.log()}\n{stderr}"

            # a pmproxy whose port was taken meanwhile goes on without it (its port table
            # says "err -1 PORT inet"), and the port's owner would answer our requests
            wait_until(
                "PCP's pmproxy to list its ports",
                lambda proxy=proxy: _port_state(proxy) is not None,
                proc,
                describe=describe,
            )
            if _port_state(proxy) == "ok":
                break
            _stop(proc)
            proc = None
            if attempt == PORT_ATTEMPTS - 1:
                pytest.fail(f"PCP's pmproxy found no free port:\n{describe()}")

        def pings() -> bool:
            try:
                status, _, body = get(proxy.url + "/series/ping", timeout=5)
            except OSError:
                return False
            if status != 200 or json.loads(body) != {"success": True}:
                return False
            return not wait_redis or REDIS_READY in proxy.log()

        what = "PCP's pmproxy to answer /series/ping" + (" and connect to Redis" * wait_redis)
        wait_until(what, pings, proc, describe=describe)
        yield proxy
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(sockdir, ignore_errors=True)


def fetch(url: str, data: bytes | None = None, timeout: float = DEADLINE) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET (a POST of DATA), whatever the status.

    Not urllib: urllib always sends "Connection: close", and PCP 6.0.3's pmproxy then
    ends a chunked reply after its first chunk (4 KiB): `/series/metrics` on the proc
    archive raised IncompleteRead after 4101 of 4679 bytes.  This is one request on a
    kept-alive http.client connection (tests.support.pmproxy_servers.get), closed afterwards."""
    return get(url, data, timeout)


# -- archives --------------------------------------------------------------------------


def qa_archive(name: str) -> Path | None:
    """PCP's QA archive NAME (base name, no suffix) if PCP's testsuite is here."""
    for top in QA_DIRS:
        if (top / "archives" / f"{name}.meta").exists():
            return top / "archives" / name
    return None


#: a three-record archive: host "testhost", test.inst (U32, indom 245.1, instances
#: a b c d; c missing from the second record, d new in the third), test.dbl (DOUBLE,
#: Kbyte/sec) and test.ctr (U64 counter, millisec), 10 s apart from 1700000000.25
_PMI_WRITER = r"""
import sys
from pcp import pmi
import cpmapi as c
log = pmi.pmiLogImport(sys.argv[1])
log.pmiSetHostname("testhost")
log.pmiSetTimezone("UTC")
indom = log.pmiInDom(245, 1)
for i, name in enumerate("abcd"):
    log.pmiAddInstance(indom, name, i)
log.pmiAddMetric("test.inst", log.pmiID(245, 0, 1), c.PM_TYPE_U32, indom,
                 c.PM_SEM_INSTANT, log.pmiUnits(0, 0, 0, 0, 0, 0))
log.pmiAddMetric("test.dbl", log.pmiID(245, 0, 2), c.PM_TYPE_DOUBLE, c.PM_INDOM_NULL,
                 c.PM_SEM_INSTANT, log.pmiUnits(1, -1, 0, c.PM_SPACE_KBYTE, c.PM_TIME_SEC, 0))
log.pmiAddMetric("test.ctr", log.pmiID(245, 0, 3), c.PM_TYPE_U64, c.PM_INDOM_NULL,
                 c.PM_SEM_COUNTER, log.pmiUnits(0, 1, 0, 0, c.PM_TIME_MSEC, 0))
records = [{"a": 1, "b": 2, "c": 3}, {"a": 11, "b": 12}, {"a": 21, "b": 22, "c": 23, "d": 24}]
for n, insts in enumerate(records):
    for inst, value in insts.items():
        log.pmiPutValue("test.inst", inst, str(value))
    log.pmiPutValue("test.dbl", "", str(1.5 + n))
    log.pmiPutValue("test.ctr", "", str(1000 * (n + 1)))
    log.pmiWrite(1700000000 + 10 * n, 250000)
del log
"""


def pmi_archive(tmp: Path, name: str = "t1") -> Path:
    """Write the small test archive TMP/NAME with PCP's pcp.pmi (PCP's own Python);
    skips, saying why, when that binding is not installed."""
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "from pcp import pmi"], capture_output=True, timeout=DEADLINE
    )
    if probe.returncode != 0:
        pytest.skip("PCP's Python binding pcp.pmi is not installed (Debian package python3-pcp)")
    tmp.mkdir(parents=True, exist_ok=True)
    base = tmp / name
    subprocess.run(
        [SYSTEM_PYTHON, "-c", _PMI_WRITER, str(base)],
        check=True,
        capture_output=True,
        timeout=DEADLINE,
    )
    return base


def small_archive(tmp: Path) -> Path:
    """A small archive to load: PCP's QA `sample-labels` (4 records, 8 metrics, labels)
    when PCP's testsuite is here, else the pmi-written three-record `TMP/t1`."""
    return qa_archive("sample-labels") or pmi_archive(tmp)
