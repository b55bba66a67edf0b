"""Benchmark: interpolated replay of a 4-million-value archive, ours against PCP's tools.

The archive is benchmarks/big_archive.py's (20 metrics x 10 instances x 20,000
samples a second apart; half U64 counters, half doubles).  Two comparisons, each
side run as a whole process, in turns, round after round; figures are median wall
times, output to /dev/null:

1. every metric at once, at the logging interval: ours is a Python API client
   (REPLAY_ALL below: ArchiveContext.replay, counters turned into rates, one CSV
   line per sample, 3 decimals, as pmrep -o csv prints them); the reference is
   `pmrep -a ARCHIVE -t 1 -o csv bench` run with /usr/bin/python3.  Target: ours at
   least 5x faster.
2. one metric at a time, pmval -a ARCHIVE -t 1 METRIC for each of the 20, summed:
   ours against PCP's pmval.  Target: ratio <= 1.

Our modules are byte-compiled first (the sandbox may disable writing .pyc files).

    .venv/bin/python benchmarks/bench_replay.py [--rounds N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shlex
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_pminfo import timed  # noqa: E402
from benchmarks.big_archive import ensure  # noqa: E402

METRICS = [f"bench.m{m:02d}" for m in range(20)]
PMVAL = [sys.executable, "-c", "import sys; from purepcp.tools.pmval import main; sys.exit(main())"]

REPLAY_ALL = r"""
import sys
import numpy as np
from purepcp.pmapi.archive.context import PM_MODE_INTERP, ArchiveContext
from purepcp.pmapi.types import PMSem

with ArchiveContext(sys.argv[1]) as ctx:
    names = ctx.traverse("bench")
    pmids = ctx.lookup_names(names)
    start = ctx.archive.label.start
    end = ctx.archive.end()
    count = end.sec - start.sec + 1
    ctx.set_mode(PM_MODE_INTERP, start, 1_000_000_000)
    run = ctx.replay(pmids, count)
    secs = (run.times - run.times[0]) / 1e9
    columns = []
    for m in run.metrics:
        values = m.values.astype(np.float64)
        has = m.has
        if m.desc.sem == PMSem.PM_SEM_COUNTER:  # rates between consecutive samples
            rate = np.full(values.shape, np.nan)
            rate[1:] = (values[1:] - values[:-1]) / (secs[1:] - secs[:-1])[:, None]
            has = np.vstack([np.zeros((1, has.shape[1]), bool), has[1:] & has[:-1]])
            values = rate
        columns.append(np.where(has, values, np.nan))
    grid = np.hstack(columns)
    stamps = np.datetime_as_string(run.times.astype("datetime64[ns]").astype("datetime64[s]"))
    inames = [dict(ctx.instances_archive(m.desc.indom)) for m in run.metrics]
    header = "Time," + ",".join(f'"{n}-{known[i]}"' for n, m, known in zip(names, run.metrics,
                                inames) for i in m.insts.tolist())
    line = "%s," + ",".join(["%.3f"] * grid.shape[1])  # (no value: NaN, printed empty)
    out = [header]
    for stamp, row in zip(stamps.tolist(), grid.tolist()):
        out.append((line % (stamp.replace("T", " "), *row)).replace("nan", ""))
    sys.stdout.write("\n".join(out) + "\n")
"""


def quiet(argv: list[str], env: dict[str, str]) -> float:
    """Seconds ARGV takes to run with its output going to /dev/null."""
    return timed(["sh", "-c", shlex.join(argv) + " > /dev/null"], env)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for tool in ("pmval", "pmrep"):
        if shutil.which(tool) is None:
            print(f"reference PCP 6 is not installed: no {tool} (Debian package pcp)")
            return 1
    compileall.compile_dir(str(ROOT / "pmapi"), quiet=1)
    base = ensure()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TZ="UTC")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    all_ours, all_theirs, each_ours, each_theirs = [], [], [], []
    pmrep = ["/usr/bin/python3", "/usr/bin/pmrep", "-a", base, "-t", "1", "-o", "csv", "bench"]
    same = timed([sys.executable, "-c", REPLAY_ALL, base], env)[1] == timed(pmrep, env)[1]
    for _ in range(args.rounds):
        all_ours.append(quiet([sys.executable, "-c", REPLAY_ALL, base], env))
        all_theirs.append(quiet(pmrep, env))
        each_ours.append(sum(quiet([*PMVAL, "-a", base, "-t", "1", m], env) for m in METRICS))
        each_theirs.append(sum(quiet(["pmval", "-a", base, "-t", "1", m], env) for m in METRICS))
    ours, theirs = statistics.median(all_ours), statistics.median(all_theirs)
    print(f"archive: {base} (20 metrics x 10 instances x 20,000 samples)")
    print(f"our CSV is pmrep's, byte for byte: {'yes' if same else 'NO'}")
    print(f"every metric at once: ours (API, CSV) {ours:.2f} s, reference pmrep -o csv "
          f"{theirs:.2f} s: {theirs / ours:.1f}x faster (target >= 5x)")  # fmt: skip
    each, ref = statistics.median(each_ours), statistics.median(each_theirs)
    print(f"each metric, pmval -a x 20: ours {each:.2f} s, reference {ref:.2f} s: "
          f"ratio {each / ref:.2f} (target <= 1)")  # fmt: skip
    return 0 if theirs / ours >= 5 and each / ref <= 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
