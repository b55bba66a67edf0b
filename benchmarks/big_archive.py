"""The benchmarks' large archive: 20 metrics x 10 instances x 20,000 samples, written by PCP's pmi.

Made once (with the system python3 and PCP's `pcp.pmi` binding) and kept under
/tmp/purepcp-bench/, since writing 4 million values through pmi takes a while.  Half
the metrics are counters (U64), half instantaneous doubles; samples are 1 s apart.

    .venv/bin/python benchmarks/big_archive.py     # prints the archive's base name
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

METRICS = 20
INSTANCES = 10
SAMPLES = 20_000
BASE = Path(os.environ.get("PUREPCP_BENCH_DIR", "/tmp/purepcp-bench")) / f"big{METRICS}x{INSTANCES}"

_WRITER = r"""
import sys
from pcp import pmi, pmapi
import cpmapi as c
base, metrics, instances, samples = sys.argv[1], *map(int, sys.argv[2:5])
log = pmi.pmiLogImport(base)
log.pmiSetHostname("bench")
log.pmiSetTimezone("UTC")
indom = log.pmiInDom(245, 1)
for i in range(instances):
    log.pmiAddInstance(indom, f"inst{i:02d}", i)
for m in range(metrics):
    counter = m % 2 == 0
    log.pmiAddMetric(
        f"bench.m{m:02d}",
        log.pmiID(245, 0, m),
        c.PM_TYPE_U64 if counter else c.PM_TYPE_DOUBLE,
        indom,
        c.PM_SEM_COUNTER if counter else c.PM_SEM_INSTANT,
        log.pmiUnits(0, 0, 1, 0, 0, c.PM_COUNT_ONE) if counter else log.pmiUnits(0, 0, 0, 0, 0, 0),
    )
names = [f"bench.m{m:02d}" for m in range(metrics)]
insts = [f"inst{i:02d}" for i in range(instances)]
t0 = 1_700_000_000
for s in range(samples):
    for m, name in enumerate(names):
        for i, inst in enumerate(insts):
            v = s * (m + 1) + i if m % 2 == 0 else (s % 97) * 0.5 + m + i / 10
            log.pmiPutValue(name, inst, str(v))
    log.pmiWrite(t0 + s, 0)
del log
"""


def ensure() -> str:
    """The archive's base name, writing it first if it is not there yet."""
    if not Path(f"{BASE}.0").exists():
        BASE.parent.mkdir(parents=True, exist_ok=True)
        for suffix in (".0", ".meta", ".index"):
            Path(f"{BASE}{suffix}").unlink(missing_ok=True)
        sys.stderr.write(f"writing {BASE} with PCP's pmi (a few minutes, once)...\n")
        subprocess.run(
            ["/usr/bin/python3", "-c", _WRITER, str(BASE), str(METRICS), str(INSTANCES),
             str(SAMPLES)],
            check=True,
        )  # fmt: skip
    return str(BASE)


if __name__ == "__main__":
    print(ensure())
