"""pcp.pmapi.fetchgroup on purepcp: registrations of values, instance domains and
timestamps give what libpcp's fetchgroups give (rates, units, types, instance names,
errors), over PCP's QA archives, beside PCP's binding."""

from __future__ import annotations

import pytest

from tests.support.pcp_bindings import require_pcp_bindings, run_both
from tests.support.qa_archives import qa

#: sample metrics: items by instance, conversions to each type, scales that refuse
SAMPLE = """
import sys
from pcp import pmapi
import cpmapi as c
fg = pmapi.fetchgroup(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
ctx = fg.get_context()
def show(label, f):
    try:
        v = f()
        if isinstance(v, list):
            out = []
            for row in v:
                try:
                    out.append((row[0], row[1], row[2]()))
                except pmapi.pmErr as e:
                    out.append((row[0], row[1], "err", e.code))
            v = out
        print(label, v)
    except pmapi.pmErr as e:
        print(label, "pmErr", e.code)
items = {}
def add(label, f):
    try:
        items[label] = f()
    except pmapi.pmErr as e:
        print("extend", label, "pmErr", e.code)
add("sec", lambda: fg.extend_item("sample.seconds"))
add("sec-inst", lambda: fg.extend_item("sample.seconds", scale="instant"))
add("sec-str", lambda: fg.extend_item("sample.seconds", mtype=c.PM_TYPE_STRING, scale="instant"))
add("sec-u32", lambda: fg.extend_item("sample.seconds", mtype=c.PM_TYPE_U32))
add("sec-ms", lambda: fg.extend_item("sample.seconds", scale="msec"))
add("sec-min", lambda: fg.extend_item("sample.seconds", scale="sec/min"))
add("red", lambda: fg.extend_item("sample.colour", instance="red"))
add("red-d", lambda: fg.extend_item("sample.colour", mtype=c.PM_TYPE_DOUBLE, instance="red"))
add("noinst", lambda: fg.extend_item("sample.colour"))
add("badinst", lambda: fg.extend_item("sample.colour", instance="purple"))
add("colours", lambda: fg.extend_indom("sample.colour"))
add("bins", lambda: fg.extend_indom("sample.bin", mtype=c.PM_TYPE_STRING, maxnum=4))
add("drift", lambda: fg.extend_indom("sample.drift"))
add("when", lambda: fg.extend_timestamp())
add("bad", lambda: fg.extend_item("no.such"))
add("conv", lambda: fg.extend_item("sample.seconds", scale="Kbyte"))
for k in range(5):
    try:
        fg.fetch()
        print("fetch ok")
    except pmapi.pmErr as e:
        print("fetch pmErr", e.code)
    for label, item in items.items():
        show(label, item)
"""

#: a Linux host's counters by instance, into rates of other units and types
LINUX = """
import sys
from pcp import pmapi
import cpmapi as c
fg = pmapi.fetchgroup(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
regs = [
    ("cpu", lambda: fg.extend_indom("kernel.percpu.cpu.user", c.PM_TYPE_DOUBLE, "sec/sec")),
    ("cpu-ms", lambda: fg.extend_indom("kernel.percpu.cpu.user")),
    ("cpu-inst", lambda: fg.extend_indom("kernel.percpu.cpu.user", scale="instant")),
    ("disk", lambda: fg.extend_indom("disk.dev.read_bytes", c.PM_TYPE_U64, "Mbyte/min")),
    ("disk-s", lambda: fg.extend_indom("disk.dev.read_bytes", c.PM_TYPE_STRING)),
    ("free", lambda: fg.extend_item("mem.util.free", c.PM_TYPE_DOUBLE, "Mbyte")),
    ("free-32", lambda: fg.extend_item("mem.util.free", c.PM_TYPE_32, "byte")),
    ("free-f", lambda: fg.extend_item("mem.util.free", c.PM_TYPE_FLOAT)),
    ("net", lambda: fg.extend_indom("network.interface.in.bytes", c.PM_TYPE_DOUBLE, "Kbyte/sec")),
    ("t", lambda: fg.extend_timestamp()),
]
items = []
for label, make in regs:
    try:
        items.append((label, make()))
    except pmapi.pmErr as e:
        print("extend", label, e.code)
for k in range(4):
    try:
        fg.fetch()
    except pmapi.pmErr as e:
        print("fetch", e.code)
    for label, item in items:
        try:
            v = item()
            if isinstance(v, list):
                rows = []
                for inst, name, get in v:
                    try:
                        x = get()
                        rows.append((inst, name, round(x, 6) if isinstance(x, float) else x))
                    except pmapi.pmErr as e:
                        rows.append((inst, name, "err", e.code))
                v = rows
            print(label, v)
        except pmapi.pmErr as e:
            print(label, "err", e.code)
"""


@pytest.mark.interop
@pytest.mark.parametrize(
    ("script", "archive"), [(SAMPLE, "ok-foo"), (LINUX, "20041125")], ids=["sample", "linux"]
)
def test_a_fetchgroup_as_on_pcps_bindings(tmp_path, script, archive):
    require_pcp_bindings()
    pcp, ours = run_both(script, [qa(archive)], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert ours == pcp


def test_an_event_field_is_said_to_be_missing():
    import cpmapi as c
    from pcp import pmapi

    fg = pmapi.fetchgroup.__new__(pmapi.fetchgroup)
    with pytest.raises(pmapi.pmErr) as err:
        fg.extend_event("sample.event.records", field="sample.event.param_string")
    assert err.value.code == c.PM_ERR_NYI
