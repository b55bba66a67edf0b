"""The public methods of PCP's Python API classes take the same arguments, by the same
names, on purepcp's API as on PCP's binding: a script calling pmGetInDom(indom=...),
pmSetModeHighRes(origin=..., interval=...) or pmContext.pmWhichContext() runs on both."""

from __future__ import annotations

import json

import pytest

from tests.support.pcp_bindings import require_pcp_bindings, run_both

#: (module, class) of every class whose methods are compared
CLASSES = [
    ("pmapi", "pmContext"),
    ("pmapi", "fetchgroup"),
    ("pmapi", "pmOptions"),
    ("pmapi", "pmUnits"),
    ("pmapi", "pmAtomValue"),
    ("pmapi", "pmResult"),
    ("pmapi", "timeval"),
    ("pmapi", "timespec"),
    ("pmcc", "MetricGroupManager"),
    ("pmcc", "MetricGroupPrinter"),
    ("pmda", "PMDA"),
    ("pmda", "pmdaMetric"),
    ("pmda", "pmdaIndom"),
    ("pmi", "pmiLogImport"),
    ("mmv", "MemoryMappedValues"),
    ("pmconfig", "pmConfig"),
]

#: methods ours has as static methods where PCP's binding has instance methods that
#: never use the instance (ours can be called both ways; PCP's only on an instance)
STATIC_HERE = {"pmContext.pmLocaltime", "pmContext.pmCtime",
               "MetricGroupManager.pmLocaltime", "MetricGroupManager.pmCtime"}  # fmt: skip

#: ctypes structures whose Python __init__ in PCP's binding only sets a field ctypes
#: already zeroes (ours keeps ctypes' own)
CTYPES_INIT = {"pmResult.__init__"}

#: PCP's methods ours does not have (docs/python-api.md, "Not built yet"); in PCP
#: 6.0.3's binding pmParseMetricSpec crashes the interpreter on instances and
#: pmDerivedErrStr fails (their C results are declared wrongly), and pmMergeLabelSets
#: needs libpcp's pmLabelSet structures, which ours does not hand out
NOT_BUILT = {
    f"{cls}.{name}"
    for cls in ("pmContext", "MetricGroupManager")
    for name in ("pmParseMetricSpec", "pmDerivedErrStr", "pmMergeLabelSets")
}


SCRIPT = """
import importlib, inspect, json, sys
out = {}
for module, name in json.loads(sys.argv[1]):
    cls = getattr(importlib.import_module("pcp." + module), name)
    for attr in dir(cls):
        if attr.startswith("_") and attr != "__init__":
            continue
        raw = inspect.getattr_static(cls, attr)
        kind = ("static" if isinstance(raw, staticmethod) else
                "class" if isinstance(raw, classmethod) else "method")
        func = raw.__func__ if kind != "method" else raw
        if not inspect.isfunction(func):
            continue
        params = list(inspect.signature(func).parameters.values())
        out[name + "." + attr] = [kind, [
            p.name if p.kind.name in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY") else "*"
            for p in params]]
print(json.dumps(out, sort_keys=True))
"""


@pytest.mark.interop
def test_methods_take_pcps_arguments(tmp_path):
    require_pcp_bindings()
    pcp, ours = run_both(SCRIPT, [json.dumps(CLASSES)], tmp_path)
    assert pcp[2] == 0 and ours[2] == 0, pcp[1] + ours[1]
    theirs, mine = json.loads(pcp[0]), json.loads(ours[0])
    problems = []
    for method, (kind, names) in sorted(theirs.items()):
        if method in CTYPES_INIT:
            continue
        if method in NOT_BUILT:
            assert method not in mine, f"{method} is built now: take it out of NOT_BUILT"
            continue
        if method not in mine:
            problems.append(f"{method}: missing")
            continue
        my_kind, my_names = mine[method]
        if method in STATIC_HERE:
            my_kind, names = kind, [n for n in names if n != "self"]
        if "*" in my_names:  # (ours takes what it is given on: only the kind matters)
            names = my_names
        if (my_kind, my_names) != (kind, names):
            problems.append(f"{method}: PCP's {kind}{names}, ours {my_kind}{my_names}")
    assert not problems, "\n".join(problems)
