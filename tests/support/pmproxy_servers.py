"""pmproxies as real processes for tests: ours and PCP 6.0.3's, in front of a given pmcd.

`our_pmproxy(pmcd_host, tmp)` runs `python -m purepcp.pmproxy.main` on an ephemeral loopback
port and waits for READY=1; `reference_pmproxy(pmcd_port, tmp)` runs Debian's
/usr/lib/pcp/bin/pmproxy with time series off (no key server) and waits until it
answers HTTP.  Both yield a `Proxy` (its base URL) and are stopped afterwards.
`get(url)` is one HTTP GET: (status, content type, body) whatever the status.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import pwd
import re
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.our_pmcd import ROOT, _stop, start_daemon
from tests.support.reference_pmcd import free_port
from tests.support.waiting import Notifications, wait_until

PCP_PMPROXY = "/usr/lib/pcp/bin/pmproxy"

#: PCP's pmproxy with only the REST API and /metrics: no Redis, no discovery
REFERENCE_CONF = """\
[pmproxy]
pcp.enabled = true
http.enabled = true
redis.enabled = false
secure.enabled = false
[pmseries]
enabled = false
[discover]
enabled = false
[pmsearch]
enabled = false
"""


@dataclass(frozen=True)
class Proxy:
    url: str  # http://127.0.0.1:PORT
    tmp: Path
    pid: int

    def get(self, path: str, data: bytes | None = None) -> tuple[int, str, bytes]:
        return get(self.url + path, data)

    def json(self, path: str, data: bytes | None = None) -> tuple[int, object]:
        status, _, body = self.get(path, data)
        return status, json.loads(body)


def get(url: str, data: bytes | None = None, timeout: float = 60) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET (a POST with DATA), whatever the status.

    On a kept-alive connection: PCP 6.0.3's pmproxy closes a "Connection: close"
    request's connection after the first chunk of a chunked reply (so urllib, which
    asks that, reads a truncated body from it)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        conn.request("POST" if data is not None else "GET", target, body=data)
        reply = conn.getresponse()
        return reply.status, reply.headers.get("Content-Type", ""), reply.read()
    finally:
        conn.close()


def require_reference_pmproxy() -> None:
    if not os.path.exists(PCP_PMPROXY):
        pytest.skip(f"reference PCP 6 is not installed: no {PCP_PMPROXY} (Debian package pcp)")


@contextlib.contextmanager
def our_pmproxy(pmcd_host: str, tmp: Path, *extra: str) -> Iterator[Proxy]:
    """Our pmproxy on 127.0.0.1 (an ephemeral port), its default pmcd PMCD_HOST."""
    tmp.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "purepcp.pmproxy.main", "-f", "-p", "0", "-i", "127.0.0.1"]
    argv += ["-H", pmcd_host, "-l", str(tmp / "pmproxy.log"), "-s", str(tmp / "pmproxy.socket")]
    argv += extra
    stderr = tmp / "pmproxy.stderr"
    notifications = Notifications()
    try:
        proc = start_daemon(argv, env, stderr, None, notifications)
        try:
            log = tmp / "pmproxy.log"

            def describe() -> str:
                text = log.read_text(errors="replace") if log.exists() else ""
                return "our pmproxy did not start: " + stderr.read_text(errors="replace") + text

            notifications.wait(proc, "READY", "our pmproxy", describe=describe)
            # (its stderr is its log, as PCP's pmproxy's is)
            found = re.search(r"^  ok +\d+ +(\d+) inet +127\.0\.0\.1$", log.read_text(), re.M)
            if found is None:
                raise RuntimeError(describe())
            yield Proxy(f"http://127.0.0.1:{found.group(1)}", tmp, proc.pid)
        finally:
            _stop(proc)
    finally:
        notifications.close()


@contextlib.contextmanager
def reference_pmproxy(pmcd_port: int, tmp: Path) -> Iterator[Proxy]:
    """PCP 6.0.3's pmproxy on 127.0.0.1 (a free port), its default pmcd localhost:PMCD_PORT."""
    tmp.mkdir(parents=True, exist_ok=True)
    conf = tmp / "pmproxy.conf"
    conf.write_text(REFERENCE_CONF)
    port = free_port()
    env = dict(os.environ, PMCD_PORT=str(pmcd_port), PCP_RUN_DIR=str(tmp))
    user = pwd.getpwuid(os.getuid()).pw_name
    argv = [PCP_PMPROXY, "-f", "-A", "-c", str(conf), "-i", "127.0.0.1", "-p", str(port)]
    argv += ["-s", str(tmp / "pmproxy.socket"), "-l", str(tmp / "pmproxy.log"), "-U", user]
    proc = start_daemon(argv, env, tmp / "pmproxy.stderr")
    url = f"http://127.0.0.1:{port}"
    try:

        def answers() -> bool:  # (it says nothing when it is ready: ask it something)
            try:
                get(url + "/pmapi/nosuch", timeout=5)
            except OSError:
                return False
            return True

        def describe() -> str:
            log = tmp / "pmproxy.log"
            return log.read_text(errors="replace") if log.exists() else ""

        wait_until("PCP's pmproxy to answer", answers, proc, describe=describe)
        yield Proxy(url, tmp, proc.pid)
    finally:
        _stop(proc)
