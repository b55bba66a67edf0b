"""pcp.pmcc on purepcp: a monitor's groups, fetched and converted (rates, units, types),
and its run loop, print what they print on PCP's bindings."""

from __future__ import annotations

import pytest

from tests.support.pcp_bindings import require_pcp_bindings, run_both
from tests.support.qa_archives import qa

MONITOR = """
import sys
from pcp import pmcc, pmapi
import cpmapi as c

manager = pmcc.MetricGroupManager(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
manager["g"] = sys.argv[2:]
group = manager["g"]
print(sorted(group.keys()), list(group.pmidArray), group.nonCounters)
try:
    manager["g"] = ["sample.bin"]
except KeyError as exc:
    print("again:", exc)


class Printer(pmcc.MetricGroupPrinter):
    def report(self, manager):
        self.convert(manager)
        grp = manager["g"]
        print("t", float(grp.timestamp), round(grp.mgDelta(), 6))
        for name in sorted(grp):
            metric = grp[name]
            now, rate, before = metric.netValues, metric.netConvValues, metric.netPrevValues
            print(" ", name, metric.convType,
                  None if now is None else [(v.inst, n, val) for v, n, val in now])
            rates = None if rate is None else [(v.inst, n, round(x, 6)) for v, n, x in rate]
            print("  rate", rates)
            print("  before", None if before is None else [(n, x) for v, n, x in before])


manager.printer = Printer()
print(manager.checkMissingMetrics([*sys.argv[2:], "no.such", "nor.this"]))
print(manager.checkMissingMetrics(sys.argv[2:3]))
for name in sys.argv[2:]:
    metric = group[name]
    if metric.desc.contents.sem == c.PM_SEM_COUNTER:
        metric.convUnits = pmapi.pmUnits(0, 1, 0, 0, c.PM_TIME_MSEC, 0) \\
            if metric.desc.contents.units.dimTime else None
    else:
        metric.convType = c.PM_TYPE_DOUBLE
print(manager.run(), manager.counter)
"""


@pytest.mark.interop
@pytest.mark.parametrize(
    ("archive", "metrics"),
    [
        ("ok-foo", ["sample.colour", "sample.seconds", "sample.bin"]),
        ("sample-secs", ["sample.seconds", "sample.milliseconds"]),
    ],
)
def test_a_monitor_over_an_archive_as_on_pcps_bindings(tmp_path, archive, metrics):
    """Values by instance name, rates of counters over each interval (scaled into other
    units), previous values, the loop's count and its quiet end at the archive's end."""
    require_pcp_bindings()
    pcp, ours = run_both(MONITOR, [qa(archive), *metrics], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert ours == pcp
