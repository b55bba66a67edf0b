"""The archive the derived-metric tests run PCP's tools and ours over: the metrics of
/work/notes/derived_facts.md's experiments (the seed's worked example, one metric of each
type, zeros, overflows, a U32 counter that decreases, wraps and loses an instance for a
while, units of every scale, strings, a discrete metric), ten samples a second apart on
whole seconds."""

from __future__ import annotations

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet

T0 = 1_704_067_200  # 2024-01-01 00:00:00 UTC
NS = 10  # samples, one a second, on whole seconds

_32, _U32, _64, _U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
_FLT, _DBL, _STR = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
INST, CTR, DISC = PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_COUNTER, PMSem.PM_SEM_DISCRETE

NONE = Units()
BYTE = Units(1, 0, 0, 0, 0, 0)
KBYTE = Units(1, 0, 0, 1, 0, 0)
MBPS = Units(1, -1, 0, 2, 3, 0)  # Mbyte / sec
USEC = Units(0, 1, 0, 0, 1, 0)
MSEC = Units(0, 1, 0, 0, 2, 0)
SEC = Units(0, 1, 0, 0, 3, 0)
MIN = Units(0, 1, 0, 0, 4, 0)
SEC2 = Units(0, 2, 0, 0, 3, 0)
CNT = Units(0, 0, 1, 0, 0, 0)
KCNT = Units(0, 0, 1, 0, 0, 3)  # count x 10^3
CNTPS = Units(0, -1, 1, 0, 3, 0)  # count / sec


def _indom(serial: int) -> int:
    return 60 << 22 | serial


IND3, NET, OTH = _indom(1), _indom(2), _indom(3)
INDOMS = {IND3: ["a", "b", "c"], NET: ["eth0", "lo"], OTH: ["p", "q"]}


def _const(v):
    return [v] * NS


# (name, type, indom, semantics, units, values): values are NS entries for a singular
# metric, or {instance name: NS entries} for one with an instance domain; None: absent
METRICS = [
    # the seed's worked example
    ("network.interface.speed", _FLT, NET, INST, MBPS,
     {"eth0": _const(100.0), "lo": _const(1000.0)}),
    ("network.interface.in.bytes", _U64, NET, CTR, BYTE,
     {"eth0": [i * 1048576 for i in range(NS)], "lo": [i * 524288 for i in range(NS)]}),
    ("sample.milliseconds", _DBL, None, CTR, MSEC, [i * 1000.0 for i in range(NS)]),
    # one of each type, singular, instantaneous, no units
    ("ty.i32", _32, None, INST, NONE, _const(-7)),
    ("ty.u32", _U32, None, INST, NONE, _const(3)),
    ("ty.i64", _64, None, INST, NONE, _const(-11)),
    ("ty.u64", _U64, None, INST, NONE, _const(13)),
    ("ty.flt", _FLT, None, INST, NONE, _const(2.5)),
    ("ty.dbl", _DBL, None, INST, NONE, _const(0.5)),
    # zeros
    ("z.i32", _32, None, INST, NONE, _const(0)),
    ("z.u32", _U32, None, INST, NONE, _const(0)),
    ("z.u64", _U64, None, INST, NONE, _const(0)),
    ("z.flt", _FLT, None, INST, NONE, _const(0.0)),
    ("z.dbl", _DBL, None, INST, NONE, _const(0.0)),
    # the largest (and the smallest) of each integer type
    ("ov.i32", _32, None, INST, NONE, _const(2**31 - 1)),
    ("ov.neg32", _32, None, INST, NONE, _const(-(2**31))),
    ("ov.u32", _U32, None, INST, NONE, _const(2**32 - 1)),
    ("ov.i64", _64, None, INST, NONE, _const(2**63 - 1)),
    ("ov.u64", _U64, None, INST, NONE, _const(2**64 - 1)),
    # a U32 counter over 3 instances: a decreases once, b wraps and is absent twice
    ("ind.u32ctr", _U32, IND3, CTR, NONE, {
        "a": [100, 200, 300, 250, 350, 450, 550, 650, 750, 850],
        "b": [4294967000, 4294967100, 4294967200, None, None, 4294967290, 50, 150, 250, 350],
        "c": [10 * i for i in range(NS)]}),
    ("ind.i32", _32, IND3, INST, NONE, {
        "a": [5 + i for i in range(NS)],
        "b": [-3, -3, -3, None, None, -3, -3, -3, -3, -3],
        "c": _const(0)}),
    ("ind.ac", _U32, IND3, INST, NONE, {"a": _const(1000), "c": _const(3000)}),  # no b
    ("ind.str", _STR, IND3, INST, NONE,
     {"a": _const("alpha"), "b": _const("beta"), "c": _const("gamma")}),
    ("oth.v", _U32, OTH, INST, NONE, {"p": _const(1), "q": _const(2)}),
    ("c.u64b", _U64, None, CTR, BYTE,
     [1000, 2024, 3048, 2000, 5000, 6024, 7048, 8072, 9096, 10120]),
    ("i.i64", _64, None, INST, NONE, [9223372036854775000 + 50 * i for i in range(NS)]),
    ("i.flt", _FLT, None, INST, MBPS, _const(1.5)),
    ("i.dbl", _DBL, None, INST, MSEC, _const(250.0)),
    ("c.dbl", _DBL, None, CTR, MSEC, [500.0 * i for i in range(NS)]),
    ("s.str", _STR, None, INST, NONE, _const("hello")),
    ("one.cnt", _U32, None, INST, CNT, _const(42)),
    ("d.disc", _U32, None, DISC, NONE, _const(7)),
    ("d.disc2", _U32, None, DISC, NONE, _const(2)),
    ("gap.m", _U32, None, INST, NONE, [1, 2, 3, None, None, 6, 7, 8, 9, 10]),
    ("gap.ctr", _U32, None, CTR, NONE, [10, 20, 30, None, None, 60, 70, 80, 90, 100]),
    ("ctr.none", _U32, None, CTR, NONE, [5 * i for i in range(NS)]),
    ("ctr.i32", _32, None, CTR, NONE,
     [2147483547, 2147483597, 2147483647, -2147483599, -2147483549, -2147483499, 0, 50, 100,
      150]),
    ("ctr.u64", _U64, None, CTR, NONE,
     [18446744073709551000, 18446744073709551100, 18446744073709551200, 50, 150, 250, 350,
      450, 550, 650]),
    # scales
    ("sc.byte", _U32, None, INST, BYTE, _const(2048)),
    ("sc.kbyte", _U32, None, INST, KBYTE, _const(3)),
    ("sc.msec", _U32, None, INST, MSEC, _const(1500)),
    ("sc.sec", _U32, None, INST, SEC, _const(2)),
    ("sc.cnt", _U32, None, INST, CNT, _const(5000)),
    ("sc.kcnt", _U32, None, INST, KCNT, _const(2)),
    ("sc.cntps", _DBL, None, INST, CNTPS, _const(10.0)),
    ("sc.t2", _U32, None, INST, SEC2, _const(4)),
    ("sc.bytectr", _U32, None, CTR, BYTE, [1024 * i for i in range(NS)]),
    ("sc.kbytectr", _U32, None, CTR, KBYTE, list(range(NS))),
    ("sc.usecctr", _U64, None, CTR, USEC, [250000 * i for i in range(NS)]),
    ("sc.secctr", _U32, None, CTR, SEC, [i // 2 for i in range(NS)]),
    ("sc.minctr", _U32, None, CTR, MIN, list(range(NS))),
    ("sc.cntctr", _U32, None, CTR, CNT, [7 * i for i in range(NS)]),
]  # fmt: skip


def write_archive(base: str) -> str:
    """The archive of METRICS (PMIDs 60.0.1, 60.0.2, ... in order) at BASE."""

    def at(sec: int) -> Timestamp:
        return Timestamp(T0 + sec, 0)

    with ArchiveWriter(base, hostname="dfacts", timezone="UTC", start=at(0)) as w:
        pmids = {}
        for item, (name, type_, indom, sem, units, _) in enumerate(METRICS, start=1):
            pmids[name] = 60 << 22 | item
            indom = indom if indom is not None else 0xFFFFFFFF
            w.put_desc(Desc(pmids[name], type_, indom, sem, units), [name])
        for indom, names in INDOMS.items():
            w.put_indom(at(0), indom, list(range(len(names))), names)
        w.put_index(at(0))  # (PCP reads an archive with an empty index as empty)
        for s in range(NS):
            vsets = []
            for name, type_, indom, _, _, values in METRICS:
                if isinstance(values, dict):
                    ids = {n: i for i, n in enumerate(INDOMS[indom])}
                    pairs = [(ids[n], v[s]) for n, v in values.items() if v[s] is not None]
                else:
                    pairs = [(0xFFFFFFFF, values[s])] if values[s] is not None else []
                if pairs:
                    vsets.append(ValueSet.of_atoms(pmids[name], type_, pairs))
            w.put_result(Result(at(s), tuple(vsets)))
    return base
