"""pcp.pmapi.fetchgroup on purepcp: registrations of values, instance domains, timestamps
and event record fields give what libpcp's fetchgroups give (rates, units, types, instance names,
errors), over PCP's QA archives, beside PCP's binding."""

from __future__ import annotations

import re

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


EVENTS = """
import sys
from pcp import pmapi
import cpmapi as c

RECORDS = "sample.event.records"
FIELDS = ["sample.event.param_32", "sample.event.param_u32", "sample.event.param_64",
          "sample.event.param_u64", "sample.event.param_float", "sample.event.param_double",
          "sample.event.param_string", "sample.event.param_aggregate", "sample.event.type",
          "event.flags", "event.missed"]
CASES = [(f, None, None, 100) for f in FIELDS] + [
    ("sample.event.param_u64", c.PM_TYPE_STRING, None, 100),
    ("sample.event.param_string", c.PM_TYPE_DOUBLE, None, 100),  # ("twelve": PM_ERR_TYPE)
    ("sample.event.param_string", c.PM_TYPE_32, None, 100),
    ("sample.event.param_double", c.PM_TYPE_32, None, 100),
    ("sample.event.param_32", c.PM_TYPE_U32, None, 100),  # (-14: PM_ERR_SIGN)
    ("sample.event.param_float", c.PM_TYPE_FLOAT, "", 100),
    ("sample.event.type", None, "rate", 100),  # (refused: no previous record)
    ("sample.event.type", None, "instant", 1),  # (more than one: PM_ERR_TOOBIG)
    ("sample.event.type", None, "count", 100),
]
for instance in ("fungus", "bogus"):
    for field, ftype, scale, maxnum in CASES:
        fg = pmapi.fetchgroup(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
        label = (instance, field, ftype, scale, maxnum)
        try:
            records = fg.extend_event(RECORDS, field=field, ftype=ftype, scale=scale,
                                      instance=instance, maxnum=maxnum)
        except pmapi.pmErr as e:
            print(label, "extend", str(e))
            continue
        while True:
            try:
                fg.fetch()
            except pmapi.pmErr as e:
                print(label, "fetch", e.code)
                break
            try:
                rows = []
                for when, get in records():
                    try:
                        rows.append((str(when), get()))
                    except pmapi.pmErr as e:
                        rows.append((str(when), "err", e.code))
                print(label, rows)
            except pmapi.pmErr as e:
                print(label, "err", e.code)
for bad in [dict(field="sample.event.type"), dict(metric=RECORDS, field="sample.event.type"),
            dict(metric="sample.event.type", field="sample.event.type"),
            dict(metric=RECORDS, field="sample.event.type", instance="nonesuch"),
            dict(metric=RECORDS, field="no.such", instance="fungus"),
            dict(metric=RECORDS, field="no.such", instance="fungus", ftype=c.PM_TYPE_32),
            dict(metric=RECORDS, field="sample.event.type", instance="fungus", maxnum=-1)]:
    fg = pmapi.fetchgroup(c.PM_CONTEXT_ARCHIVE, sys.argv[1])
    try:
        fg.extend_event(**bad)
        print("accepted", bad)
    except pmapi.pmErr as e:
        print("refused", bad, str(e).split(" <")[0], e.code)
"""


@pytest.mark.interop
def test_event_fields_as_on_pcps_bindings(tmp_path):
    """extend_event over QA's eventrec archive (sample.event.records: every parameter
    type, flags, a missed count, two instances): each record's field values and times,
    conversions and their failures, and the refusals, as on PCP's binding."""
    require_pcp_bindings()
    pcp, ours = run_both(EVENTS, [qa("eventrec")], tmp_path)
    assert pcp[2] == 0, pcp[1]
    assert re.search(r"'fungus', 'event\.missed', None, None, 100\) \[\('[^']+', 7\)\]", pcp[0])
    assert ours == pcp
