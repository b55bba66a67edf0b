"""Benchmark: metadata requests per metric through our pmcd and PCP's, the same pmdalinux
(PCP's C agent, a pipe agent) behind both.

For every name of pmdalinux, a client on PCP's Python bindings asks, one metric at a
time: its descriptor (pmLookupDesc), its labels (pmLookupLabels), its one-line help
(pmLookupText) and its values (pmFetch).  Each figure is microseconds per metric, the
median of the second and third passes over all the names (and, apart, the first pass,
before our pmcd has kept any metadata); the targets are ours / PCP's <= 1.5 for each.
Also timed: `pminfo -fdlT` over the whole namespace, as a user runs it.

    .venv/bin/python benchmarks/bench_pmcd_metadata.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.reference_pmcd import PMDAS, reference_installed, running_pmcd, system_python

CONF = [f"linux\t60\tpipe\tbinary\t{PMDAS / 'linux' / 'pmdalinux'} -d 60"]
TARGET = 1.5
KINDS = ("desc", "labels", "help", "fetch")

_PER_METRIC = """
import statistics, sys, time
from pcp import pmapi
import cpmapi as c
from ctypes import c_uint
ctx = pmapi.pmContext(c.PM_CONTEXT_HOST, sys.argv[1])
names = sys.stdin.read().split()
pmids = list(ctx.pmLookupName(names))
def desc(p): ctx.pmLookupDesc(p)
def labels(p): ctx.pmLookupLabels(p)
def help(p):
    try:
        ctx.pmLookupText(p)
    except pmapi.pmErr:
        pass
def fetch(p): ctx.pmFreeResult(ctx.pmFetch((c_uint * 1)(p)))
for kind in (desc, labels, help, fetch):
    passes = []
    for _ in range(3):
        start = time.perf_counter()
        for p in pmids:
            kind(p)
        passes.append((time.perf_counter() - start) / len(pmids))
    print(kind.__name__, len(pmids), passes[0], statistics.median(passes[1:]))
"""


def linux_names(host: str) -> list[str]:
    """Every name of the linux agent (domain 60) in the pmcd at HOST's namespace."""
    out = subprocess.run(["pminfo", "-h", host, "-m"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if " PMID: 60." in line]


def per_metric(host: str) -> dict[str, float]:
    """Seconds per metric of each kind of request, from the pmcd at HOST."""
    python = system_python()
    if python is None:
        raise RuntimeError("PCP's Python bindings (python3-pcp) are not installed")
    out = subprocess.run(
        [python, "-c", _PER_METRIC, host],
        input="\n".join(linux_names(host)),
        capture_output=True,
        text=True,
        timeout=900,
    )
    if out.returncode != 0:
        raise RuntimeError(f"timing failed: {out.stderr.strip()[-300:]}")
    found = {}
    for line in out.stdout.splitlines():
        kind, _, first, later = line.split()
        found[f"{kind} first"], found[kind] = float(first), float(later)
    return found


def pminfo_seconds(host: str) -> float:
    start = time.perf_counter()
    subprocess.run(["pminfo", "-h", host, "-fdlT"], capture_output=True, check=False)
    return time.perf_counter() - start


def measure(ours: bool) -> tuple[dict[str, float], float]:
    with tempfile.TemporaryDirectory(prefix="bench-metadata-") as tmp:
        # running_pmcd points $PCP_PMDAS_DIR at TMP: pmdalinux finds its help there
        os.symlink(PMDAS / "linux", Path(tmp, "linux"))
        with running_pmcd(ours, CONF, tmp) as (port, _):
            host = f"localhost:{port}"
            return per_metric(host), pminfo_seconds(host)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs of each pmcd (median)")
    args = parser.parse_args()
    if not reference_installed():
        print("reference: PCP 6 (Debian packages pcp and python3-pcp) is not installed")
        return 1
    runs: dict[bool, list[tuple[dict[str, float], float]]] = {True: [], False: []}
    for _ in range(args.runs):  # alternate, so both see the same machine
        for ours in (False, True):
            runs[ours].append(measure(ours))
    print("per metric, every pmdalinux name, one request at a time (PCP's Python bindings)")
    print("(a kind alone: the later passes, pmcd's metadata cache warm; 'first': the first pass)")
    print(f"{'request':>12} {'ours':>10} {'PCP':>10} {'ratio':>7}")
    for kind in (*KINDS, *(f"{k} first" for k in KINDS)):
        mine = statistics.median(r[0][kind] for r in runs[True]) * 1e6
        pcp = statistics.median(r[0][kind] for r in runs[False]) * 1e6
        verdict = "meets" if mine / pcp <= TARGET else "misses"
        print(f"{kind:>12} {mine:8.1f}us {pcp:8.1f}us {mine / pcp:7.2f}  ({verdict} <= {TARGET:g})")
    mine = statistics.median(r[1] for r in runs[True])
    pcp = statistics.median(r[1] for r in runs[False])
    print(
        f"pminfo -fdlT, the whole namespace: ours {mine:.2f}s, PCP's {pcp:.2f}s, {mine / pcp:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
