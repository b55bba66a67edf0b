"""Running a pmcd for a benchmark, ours or the reference PCP 6, and timing fetches from it.

`running_pmcd` starts either daemon on an ephemeral port in a temporary
directory with the given pmcd.conf lines and namespace, and stops it (and its
agents) on exit.  `timed_fetch_seconds` times pmFetch through PCP's own Python
bindings (run by the system python3, which has them), so both daemons are
measured with the same client.  `reference_fetch_seconds` does both for the
reference pmcd.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PMCD = Path("/usr/lib/pcp/bin/pmcd")
PMDAS = Path("/var/lib/pcp/pmdas")
PMNS_ROOT = Path("/var/lib/pcp/pmns/root")

_TIMED_FETCH = """
import statistics, sys, time
from pcp import pmapi
import cpmapi as c
ctx = pmapi.pmContext(c.PM_CONTEXT_HOST, sys.argv[1])
number = int(sys.argv[2])
pmids = ctx.pmLookupName(tuple(sys.argv[3:]))
for _ in range(min(number, 500)):
    ctx.pmFreeResult(ctx.pmFetch(pmids))
runs = []
for _ in range(7):
    t = time.perf_counter()
    for _ in range(number):
        ctx.pmFreeResult(ctx.pmFetch(pmids))
    runs.append((time.perf_counter() - t) / number)
print(statistics.median(runs))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def system_python() -> str | None:
    """/usr/bin/python3 if it has PCP's bindings (python3-pcp), else None."""
    python = shutil.which("python3", path="/usr/bin")
    if python is None:
        return None
    check = subprocess.run([python, "-c", "import pcp.pmapi"], capture_output=True)
    return python if check.returncode == 0 else None


@contextlib.contextmanager
def running_pmcd(
    ours: bool, conf_lines: Sequence[str], tmp: str, pmns: str | Path | None = PMNS_ROOT
) -> Iterator[tuple[int, subprocess.Popen]]:
    """Run our pmcd or the reference one in TMP on a free port; yield (port, process).

    PMNS None runs the daemon with its default namespace (no -n).

    Waits until the daemon says it is listening, then a second more for its
    agents to finish starting.  Everything started is stopped on exit.
    """
    conf = Path(tmp, "pmcd.conf")
    conf.write_text("".join(line + "\n" for line in conf_lines))
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT), PCP_RUN_DIR=tmp, PCP_PMDAS_DIR=tmp)
    common = ["-f", "-p", str(port), "-s", f"{tmp}/pmcd.socket", "-c", str(conf)]
    common += ["-l", f"{tmp}/pmcd.log", "-t", "10"] + (["-n", str(pmns)] if pmns else [])
    argv = (
        [sys.executable, "-m", "purepcp.pmcd.main", *common] if ours else [str(PMCD), "-A", *common]
    )
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
        cwd=tmp,  # pipe agents such as pmdalinux write their logs in the current directory
    )  # fmt: skip
    try:
        log = Path(tmp, "pmcd.log")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            text = log.read_text(errors="replace") if log.exists() else ""
            if re.search(r"listening on|pmcd: PID = ", text):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"{argv[0]} did not start; see {log}")
        time.sleep(1.0)
        yield port, proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def timed_fetch_seconds(
    port: int, names: Sequence[str], number: int, host: str | None = None
) -> float:
    """Median seconds per pmFetch of NAMES from the pmcd on PORT (or at HOST, a host
    spec such as unix:PATH), through PCP's bindings."""
    python = system_python()
    if python is None:
        raise RuntimeError("PCP's Python bindings (python3-pcp) are not installed")
    out = subprocess.run(
        [python, "-c", _TIMED_FETCH, host or f"localhost:{port}", str(number), *names],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"timed fetch failed: {last}")
    return float(out.stdout.strip())


def reference_installed() -> bool:
    """Whether the reference pmcd, its namespace and python3-pcp are all here."""
    return PMCD.exists() and PMNS_ROOT.exists() and system_python() is not None


def reference_fetch_seconds(
    conf_lines: Sequence[str], names: Sequence[str], number: int
) -> float | None:
    """Median seconds per real pmFetch of NAMES from a private pmcd running CONF_LINES.

    None when the reference PCP (pmcd, its namespace, python3-pcp) is not installed.
    """
    if not reference_installed():
        return None
    with (
        tempfile.TemporaryDirectory(prefix="bench-pmcd-") as tmp,
        running_pmcd(False, conf_lines, tmp) as (port, _),
    ):
        return timed_fetch_seconds(port, names, number)
