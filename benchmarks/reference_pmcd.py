"""The benchmarks' reference figure: a fetch round trip through the real PCP 6.

Starts Debian's pmcd on an ephemeral port in a temporary directory with the
given pmcd.conf lines, and times pmFetch of some metrics through PCP's own
Python bindings (run by the system python3, which has them).  Everything it
starts is stopped before it returns.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

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


def _system_python() -> str | None:
    """/usr/bin/python3 if it has PCP's bindings (python3-pcp), else None."""
    python = shutil.which("python3", path="/usr/bin")
    if python is None:
        return None
    check = subprocess.run([python, "-c", "import pcp.pmapi"], capture_output=True)
    return python if check.returncode == 0 else None


def reference_fetch_seconds(
    conf_lines: Sequence[str], names: Sequence[str], number: int
) -> float | None:
    """Median seconds per real pmFetch of NAMES from a private pmcd running CONF_LINES.

    None when the reference PCP (pmcd, its namespace, python3-pcp) is not installed.
    """
    python = _system_python()
    if not (PMCD.exists() and PMNS_ROOT.exists() and python):
        return None
    with tempfile.TemporaryDirectory(prefix="bench-pmcd-") as tmp:
        conf = Path(tmp, "pmcd.conf")
        conf.write_text("".join(line + "\n" for line in conf_lines))
        port = _free_port()
        env = dict(os.environ, PCP_RUN_DIR=tmp)
        argv = [str(PMCD), "-f", "-A", "-p", str(port), "-s", f"{tmp}/pmcd.socket"]
        argv += ["-c", str(conf), "-n", str(PMNS_ROOT), "-l", f"{tmp}/pmcd.log"]
        daemon = subprocess.Popen(
            argv,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=tmp,  # its pipe agents write their logs in the current directory
        )
        try:
            host = f"localhost:{port}"
            for _ in range(100):
                probe = subprocess.run(["pminfo", "-h", host, names[0]], capture_output=True)
                if probe.returncode == 0:
                    break
                time.sleep(0.1)
            else:
                return None
            out = subprocess.run(
                [python, "-c", _TIMED_FETCH, host, str(number), *names],
                capture_output=True,
                text=True,
                check=True,
            )
            return float(out.stdout.strip())
        finally:
            os.killpg(daemon.pid, 15)
            daemon.wait(timeout=10)
