"""Benchmark: pmrep -a over every metric of the 4-million-value archive, ours against PCP's.

The archive is benchmarks/big_archive.py's (20 metrics x 10 instances x 20,000 samples a
second apart, half U64 counters, half doubles).  Both pmreps run as whole commands, in
turns, round after round, output to /dev/null; figures are medians.  First the outputs
are compared byte for byte.

1. `pmrep -a ARCHIVE -o csv bench` and 2. `pmrep -a ARCHIVE bench` (stdout): target, ours
   at least 5x faster than PCP's.
3. `-t 100` (a hundred times the archive's interval, PCP issue #1717's case): target,
   ours at least as fast as our own run at the archive's interval.

    .venv/bin/python benchmarks/bench_pmrep.py [--rounds N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_pminfo import timed  # noqa: E402
from benchmarks.bench_replay import quiet  # noqa: E402
from benchmarks.big_archive import ensure  # noqa: E402

OURS = [sys.executable, "-m", "purepcp.tools.pmrep", "--no-progress"]
THEIRS = ["/usr/bin/python3", "/usr/bin/pmrep"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("pmrep") is None or not os.path.exists(THEIRS[1]):
        print("reference PCP 6 is not installed: no pmrep (Debian package pcp)")
        return 1
    for package in ("pmapi",):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    base = ensure()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TZ="UTC", PCP_DERIVED_CONFIG="")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cases = {
        "csv": ["-a", base, "-o", "csv", "bench"],
        "stdout": ["-a", base, "bench"],
        "t100": ["-a", base, "-t", "100", "-o", "csv", "bench"],
    }
    for name in ("csv", "stdout", "t100"):
        same = timed([*OURS, *cases[name]], env)[1] == timed([*THEIRS, *cases[name]], env)[1]
        print(f"{name}: our output is PCP's pmrep's, byte for byte: {'yes' if same else 'NO'}")
    times: dict[str, list[float]] = {f"{w}-{n}": [] for w in ("ours", "pcp") for n in cases}
    for _ in range(args.rounds):
        for name, case in cases.items():
            times[f"ours-{name}"].append(quiet([*OURS, *case], env))
            times[f"pcp-{name}"].append(quiet([*THEIRS, *case], env))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"archive: {base} (20 metrics x 10 instances x 20,000 samples), {args.rounds} rounds")
    ok = True
    for name, what in (("csv", "-o csv"), ("stdout", "stdout")):
        ours, pcp = med[f"ours-{name}"], med[f"pcp-{name}"]
        ok &= pcp / ours >= 5
        print(f"{what}: ours {ours:.2f} s, PCP's pmrep {pcp:.2f} s: {pcp / ours:.1f}x faster "
              "(target >= 5x)")  # fmt: skip
    t100, t1 = med["ours-t100"], med["ours-csv"]
    ok &= t100 <= t1
    print(f"-t 100 -o csv: ours {t100:.2f} s (at -t 1: {t1:.2f} s, target: no slower), "
          f"PCP's pmrep {med['pcp-t100']:.2f} s")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
