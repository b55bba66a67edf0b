"""Benchmark: a fetch of what the default pmlogger configuration logs, our linux agent against
PCP's pmdalinux, through the same pmcd.

The list: the linux metrics (domain 60) of every group PCP's pmlogconf enables by default
when it probes PCP's pmcd with pmdalinux, expanded to leaf names (about 500 on a small
machine).  Both agents run as pipe agents of PCP 6.0.3's own pmcd, in turn, and a client
using PCP's Python bindings times pmFetch of the whole list; the target is a ratio of at
most 2.  Also printed: the issue's first 50-metric list, and our agent's in-process
`Agent.fetch` (what our pmcd's in-process agents cost, without the pipe).

    .venv/bin/python benchmarks/bench_linux_fetch.py [--quick] [--runs N]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.reference_pmcd import (
    PMDAS,
    reference_fetch_seconds,
    reference_installed,
    running_pmcd,
)
from purepcp.agents.linux import Linux
from purepcp.agents.linux.catalog import BY_NAME, REQUIRED

GROUPS = Path("/var/lib/pcp/config/pmlogconf")
PMDALINUX = f"linux\t60\tpipe\tbinary\t{PMDAS / 'linux' / 'pmdalinux'} -d 60"
OURS = f"linux\t60\tpipe\tbinary\t{sys.executable} -m purepcp.agents.linux -d 60"
#: The issue's first list of linux metrics, and three more to make fifty.
FIFTY = (*REQUIRED, "kernel.all.intr", "kernel.all.pswitch", "hinv.ninterface")


def pmlogger_default_names() -> list[str]:
    """The linux leaf metrics the default pmlogger configuration logs, as pmlogconf makes it
    against PCP's pmcd with pmdalinux."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-pmlogconf-") as tmp,
        running_pmcd(False, [PMDALINUX], tmp) as (port, _),
    ):
        host = f"localhost:{port}"
        config = Path(tmp, "config.default")
        subprocess.run(
            ["pmlogconf", "-d", str(GROUPS), "-h", host, str(config)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
        )
        wanted = []
        for block in re.findall(r"(?s)log advisory on default \{(.*?)\}", config.read_text()):
            wanted += [w for w in (ln.split("#")[0].strip() for ln in block.splitlines()) if w]
        out = subprocess.run(
            ["pminfo", "-h", host, "-m", *wanted], capture_output=True, text=True
        ).stdout
    return sorted({line.split()[0] for line in out.splitlines() if " PMID: 60." in line})


def in_process(names: list[str], number: int) -> float:
    """Median seconds per in-process Linux.fetch of NAMES."""
    agent = Linux()
    pmids = [agent.pmns.lookup(name) for name in names]
    for _ in range(min(number, 50)):
        agent.fetch(pmids)
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(number):
            agent.fetch(pmids)
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)


def compare(title: str, names: list[str], number: int, runs: int) -> None:
    """Print pmdalinux's and our figures for NAMES, each the median of RUNS, and the ratio."""
    theirs, ours = [], []
    for _ in range(runs):  # alternate, so both see the same machine
        theirs.append(reference_fetch_seconds([PMDALINUX], names, number))
        ours.append(reference_fetch_seconds([OURS], names, number))
    pcp, mine = statistics.median(theirs), statistics.median(ours)
    print(f"{title}: {len(names)} metrics, pmFetch through PCP 6.0.3's pmcd (pipe agents)")
    print(f"  pmdalinux (C):   {pcp * 1e6:9.1f} us   runs: {_list(theirs)}")
    print(f"  ours (Python):   {mine * 1e6:9.1f} us   runs: {_list(ours)}")
    target = "meets" if mine / pcp <= 2 else "misses"
    print(f"  ratio ours / pmdalinux: {mine / pcp:.2f} ({target} the <= 2 target)")
    print(f"  ours in-process (Agent.fetch, no pipe): {in_process(names, number) * 1e6:9.1f} us")


def _list(seconds: list[float]) -> str:
    return " ".join(f"{s * 1e6:.0f}" for s in seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer fetches per run")
    parser.add_argument("--runs", type=int, default=3, help="runs of each agent (median)")
    args = parser.parse_args()
    if not reference_installed():
        print("reference: PCP 6 (Debian packages pcp and python3-pcp) is not installed")
        return 1
    number = 50 if args.quick else 500
    names = pmlogger_default_names()
    served = [n for n in names if n in BY_NAME]
    if len(served) < len(names):
        left = sorted(set(names) - set(served))
        print(f"({len(left)} of the list's {len(names)} names are not served by ours: {left})")
    compare("default pmlogger list", served, number, args.runs)
    compare("issue's 50-metric list", list(FIFTY), number * 4, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
