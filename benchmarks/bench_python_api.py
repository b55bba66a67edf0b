"""Benchmark: a pcp-dstat-style script on PCP's Python API, ours against PCP's bindings.

The script (below) looks up 50 metrics of the linux agent, then fetches them all every
interval and extracts every value as a double, as a monitor does; it reports the CPU
time (user + system) per sample, start-up and set-up excluded.  Both bindings run it
against the same pmcd (ours, with the linux agent), in turns, round after round; the
figure is the median of each.  Target: ours / PCP's <= 2.

    .venv/bin/python benchmarks/bench_python_api.py [--rounds 5] [--samples 300]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET = 2.0
SYSTEM_PYTHON = "/usr/bin/python3"
SCRIPT = """
import resource, sys
from pcp import pmapi
import cpmapi as c

ctx = pmapi.pmContext(c.PM_CONTEXT_HOST, sys.argv[1])
names = []
ctx.pmTraversePMNS("kernel", names.append)
ctx.pmTraversePMNS("mem", names.append)
pmids = ctx.pmLookupName(names, relaxed=1)
usable = [n for n, p in zip(names, pmids) if p != c.PM_ID_NULL]
pmids = ctx.pmLookupName(usable)
descs = ctx.pmLookupDescs(pmids)
chosen = [i for i, d in enumerate(descs) if d.contents.type in (0, 1, 2, 3, 4, 5)][:50]
pmids = (c_uint := __import__("ctypes").c_uint * len(chosen))(*(pmids[i] for i in chosen))
descs = [descs[i] for i in chosen]
samples = int(sys.argv[2])
before = resource.getrusage(resource.RUSAGE_SELF)
total = 0.0
for _ in range(samples):
    result = ctx.pmFetch(pmids)
    r = result.contents
    for i in range(r.numpmid):
        vtype = descs[i].contents.type
        for j in range(r.get_numval(i)):
            total += ctx.pmExtractValue(r.get_valfmt(i), r.get_vlist(i, j), vtype,
                                        c.PM_TYPE_DOUBLE).d
    ctx.pmFreeResult(result)
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print(len(pmids), cpu / samples)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import pcp.pmapi"], cwd="/",
                           capture_output=True, check=False)  # fmt: skip
    if probe.returncode != 0:
        print("PCP's Python bindings are not installed (Debian package python3-pcp)")
        return 1
    from tests.support.our_pmcd import our_pmcd

    conf = "pmcd 2 dso PmcdAgent purepcp.pmcd.pmcd_agent\nlinux 60 dso Linux purepcp.agents.linux\n"
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp, "dstat_like.py")
        script.write_text(SCRIPT)
        figures: dict[str, list[float]] = {"ours": [], "pcp": []}
        with our_pmcd(conf, Path(tmp)) as pmcd:
            host = f"unix:{pmcd.unix}"
            for _ in range(args.rounds):
                for side, python in (("ours", sys.executable), ("pcp", SYSTEM_PYTHON)):
                    done = subprocess.run([python, str(script), host, str(args.samples)],
                                          cwd="/", capture_output=True, text=True,
                                          check=True)  # fmt: skip
                    count, per_sample = done.stdout.split()
                    figures[side].append(float(per_sample))
    ours, theirs = statistics.median(figures["ours"]), statistics.median(figures["pcp"])
    print(f"{count} metrics, {args.samples} samples, median of {args.rounds} rounds")
    print(f"ours (pcp on purepcp): {ours * 1e3:.3f} ms CPU per sample")
    print(f"PCP's bindings (libpcp): {theirs * 1e3:.3f} ms CPU per sample")
    ratio = ours / theirs
    print(f"ratio ours/PCP: {ratio:.2f} (target <= {TARGET})")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
