"""Derived metrics bound and evaluated in archive contexts: seed 000's rules, PCP 6's
types, units, messages and values (the values here were checked against PCP 6.0.3, see
tests/pmapi/test_derived_interop.py for the runs side by side)."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from purepcp.pmapi.archive import ArchiveWriter
from purepcp.pmapi.archive.context import PM_MODE_FORW, PM_MODE_INTERP, ArchiveContext
from purepcp.pmapi.derived.registry import Registry
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_BADDERIVE, PMError
from purepcp.pmapi.ids import PM_ID_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units, parse_units_str
from purepcp.pmapi.values import Result, Timestamp, ValueSet

S = 1_000_000_000
T0 = 1_704_067_200  # 2024-01-01 00:00:00 UTC
NULL = 0xFFFFFFFF
T32, U32, T64, U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
FLT, DBL, STR = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE, PMType.PM_TYPE_STRING
COUNTER, INSTANT, DISCRETE = PMSem.PM_SEM_COUNTER, PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_DISCRETE
ABC = pmInDom_build(60, 1)
NET = pmInDom_build(60, 2)
OTHER = pmInDom_build(60, 3)
SAMPLES = 10


def _metrics():
    """(name, type, indom, sem, units, value of sample i: {inst: atom} or an atom or None)."""
    ones = Units(dimCount=1)

    def ctr_a(i):
        return [100, 200, 300, 250, 350, 450, 550, 650, 750, 850][i]

    def ctr_b(i):
        b = [4294967000, 4294967100, 4294967200, None, None, 4294967290, 50, 150, 250, 350]
        return b[i]

    return [
        ("ty.i32", T32, None, INSTANT, Units(), lambda i: -7),
        ("ty.u32", U32, None, INSTANT, Units(), lambda i: 3),
        ("ty.i64", T64, None, INSTANT, Units(), lambda i: -11),
        ("ty.u64", U64, None, INSTANT, Units(), lambda i: 13),
        ("ty.flt", FLT, None, INSTANT, Units(), lambda i: 2.5),
        ("ty.dbl", DBL, None, INSTANT, Units(), lambda i: 0.5),
        ("z.u32", U32, None, INSTANT, Units(), lambda i: 0),
        ("z.dbl", DBL, None, INSTANT, Units(), lambda i: 0.0),
        ("ov.i32", T32, None, INSTANT, Units(), lambda i: 2**31 - 1),
        ("ov.u32", U32, None, INSTANT, Units(), lambda i: 2**32 - 1),
        ("network.interface.speed", FLT, NET, INSTANT, parse_units_str("Mbyte/sec"),
         lambda i: {0: 100.0, 1: 1000.0}),
        ("network.interface.in.bytes", U64, NET, COUNTER, Units(dimSpace=1),
         lambda i: {0: i * 1048576, 1: i * 524288}),
        ("sample.milliseconds", DBL, None, COUNTER, parse_units_str("millisec"),
         lambda i: i * 1000.0),
        ("sc.byte", U32, None, INSTANT, parse_units_str("byte"), lambda i: 2048),
        ("sc.kbyte", U32, None, INSTANT, parse_units_str("Kbyte"), lambda i: 3),
        ("sc.msec", U32, None, INSTANT, parse_units_str("millisec"), lambda i: 1500),
        ("sc.sec", U32, None, INSTANT, parse_units_str("sec"), lambda i: 2),
        ("sc.cnt", U32, None, INSTANT, ones, lambda i: 5000),
        ("sc.kcnt", U32, None, INSTANT, Units(dimCount=1, scaleCount=3), lambda i: 2),
        ("sc.cntps", DBL, None, INSTANT, parse_units_str("count/sec"), lambda i: 10.0),
        ("sc.minctr", U32, None, COUNTER, parse_units_str("min"), lambda i: i),
        ("ctr.none", U32, None, COUNTER, Units(), lambda i: 5 * i),
        ("one.cnt", U32, None, INSTANT, ones, lambda i: 42),
        ("ind.u32ctr", U32, ABC, COUNTER, Units(),
         lambda i: {k: v for k, v in ((0, ctr_a(i)), (1, ctr_b(i)), (2, 10 * i)) if v is not None}),
        ("ind.i32", T32, ABC, INSTANT, Units(),
         lambda i: {0: 5 + i, 2: 0} if i in (3, 4) else {0: 5 + i, 1: -3, 2: 0}),
        ("oth.v", U32, OTHER, INSTANT, Units(), lambda i: {0: 1, 1: 2}),
        ("s.str", STR, None, INSTANT, Units(), lambda i: "hello"),
        ("d.disc", U32, None, DISCRETE, Units(), lambda i: 7),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> str:
    base = str(tmp_path_factory.mktemp("derived") / "t")
    metrics = _metrics()
    with ArchiveWriter(base, hostname="dfacts", timezone="UTC", start=Timestamp(T0, 0)) as w:
        for n, (name, type_, indom, sem, units, _) in enumerate(metrics):
            desc = Desc(pmID_build(60, 0, n), type_, indom if indom else NULL, sem, units)
            w.put_desc(desc, [name])
        w.put_indom(Timestamp(T0, 0), ABC, [0, 1, 2], ["a", "b", "c"])
        w.put_indom(Timestamp(T0, 0), NET, [0, 1], ["eth0", "lo"])
        w.put_indom(Timestamp(T0, 0), OTHER, [0, 1], ["p", "q"])
        w.put_index(Timestamp(T0, 0))
        for i in range(SAMPLES):
            vsets = []
            for n, (_, type_, indom, _, _, value) in enumerate(metrics):
                got = value(i)
                pairs = list(got.items()) if indom else [(NULL, got)]
                vsets.append(ValueSet.of_atoms(pmID_build(60, 0, n), type_, pairs))
            w.put_result(Result(Timestamp(T0 + i, 0), tuple(vsets)))
    return base


def _context(archive: str, **defs: str) -> tuple[ArchiveContext, io.StringIO]:
    """An archive context whose derived metrics are DEFS (name with _ for .)."""
    registry = Registry()
    for name, expr in defs.items():
        registry.register(name.replace("__", "."), expr)
    ctx = ArchiveContext(archive)
    ctx.use_registry(registry)
    err = io.StringIO()
    ctx.derived().err = err  # type: ignore[union-attr]
    return ctx, err


def _desc(archive: str, expr: str) -> Desc:
    ctx, err = _context(archive, d__x=expr)
    try:
        return ctx.lookup_desc(ctx.lookup_name("d.x"))
    except PMError:
        raise AssertionError(err.getvalue()) from None


def _first(archive: str, expr: str, at: int = 0) -> dict[int, object]:
    """The values of EXPR interpolated at sample AT (delta and rate against AT - 1)."""
    ctx, _ = _context(archive, d__x=expr)
    pmid = ctx.lookup_name("d.x")
    start = max(at - 1, 0)
    ctx.set_mode(PM_MODE_INTERP, Timestamp(T0 + start, 0), S)
    fetched = None
    for _ in range(at - start + 1):
        fetched = ctx.fetch([pmid])
    assert fetched is not None
    return fetched.values(pmid)


# -- metadata --------------------------------------------------------------------------

TYPES = {"i32": T32, "u32": U32, "i64": T64, "u64": U64, "flt": FLT, "dbl": DBL}
# seed 000's table, evaluated top to bottom, for + - *
PROMOTION = """
        i32     u32     i64     u64     flt     dbl
 i32     32     U32      64     U64   FLOAT  DOUBLE
 u32    U32     U32      64     U64   FLOAT  DOUBLE
 i64     64      64      64     U64   FLOAT  DOUBLE
 u64    U64     U64     U64     U64   FLOAT  DOUBLE
 flt  FLOAT   FLOAT   FLOAT   FLOAT   FLOAT  DOUBLE
 dbl DOUBLE  DOUBLE  DOUBLE  DOUBLE  DOUBLE  DOUBLE
"""
_NAMED = {"32": T32, "U32": U32, "64": T64, "U64": U64, "FLOAT": FLT, "DOUBLE": DBL}


def _promotion_rows():
    lines = PROMOTION.strip().splitlines()
    cols = lines[0].split()
    for line in lines[1:]:
        row, *cells = line.split()
        for col, cell in zip(cols, cells, strict=True):
            for op in "+-*/":
                yield row, op, col, DBL if op == "/" else _NAMED[cell]


@pytest.mark.parametrize(("left", "op", "right", "want"), list(_promotion_rows()))
def test_the_type_promotion_table_row_by_row(archive, left, op, right, want):
    desc = _desc(archive, f"ty.{left} {op} ty.{right}")
    assert desc.type == want
    assert desc.sem == INSTANT


@pytest.mark.parametrize(
    ("expr", "type_", "sem", "value"),
    [
        ("3", U32, DISCRETE, 3),
        ("3.5", DBL, DISCRETE, 3.5),
        ("-3", T32, INSTANT, -3),
        ("-ty.u32", T32, INSTANT, -3),
        ("-ty.u64", T64, INSTANT, -13),
        ("ty.i32 + 1", U32, INSTANT, 4294967290),
        ("ty.i32 * 2", U32, INSTANT, 4294967282),
        ("ty.flt * 2", FLT, INSTANT, 5.0),
        ("3 / 2", DBL, DISCRETE, 1.5),
        ("7 - 10", U32, DISCRETE, 4294967293),
        ("mkconst(3, type=64)", T64, DISCRETE, 3),
        ("mkconst(2.5, type=float)", FLT, DISCRETE, 2.5),
        ("ty.i32 + ty.u32", U32, INSTANT, 4294967292),
        ("ty.u32 + ty.i64", T64, INSTANT, -8),
        ("ty.i32 / ty.u32", DBL, INSTANT, -7 / 3),
        ("ov.i32 + ov.i32", T32, INSTANT, -2),
        ("ov.u32 * 2", U32, INSTANT, 4294967294),
        ("d.disc + d.disc", U32, DISCRETE, 14),
        ("d.disc + ty.u32", U32, INSTANT, 10),
    ],
)
def test_constants_conversions_and_wrapping_as_c_does(archive, expr, type_, sem, value):
    desc = _desc(archive, expr)
    assert (desc.type, desc.sem) == (type_, sem)
    got = _first(archive, expr)[NULL]
    assert got == pytest.approx(value) if isinstance(value, float) else got == value


# (expression, units pminfo prints, value): PCP 6.0.3's, scale bugs included
UNITS = [
    ("sc.byte + sc.kbyte", DBL, "Kbyte", 5.0),
    ("sc.kbyte + sc.byte", DBL, "Kbyte", 5.0),
    ("sc.byte / sc.kbyte", DBL, "none", 2 / 3),
    ("sc.byte * sc.kbyte", DBL, "Kbyte^2", 6.0),
    ("sc.msec + sc.sec", DBL, "sec", 3.5),
    ("sc.sec - sc.msec", DBL, "sec", 0.5),
    ("sc.msec * sc.sec", DBL, "sec^2", 3.0),
    ("sc.cnt + sc.kcnt", DBL, "count x 10^3", 7.0),
    ("sc.cnt + ty.u32", U32, "count", 5003),
    ("ty.u32 + sc.cnt", U32, "none", 5003),
    ("sc.byte / sc.msec", DBL, "byte / millisec", 2048 / 1500),
    ("(sc.byte / sc.msec) * sc.sec", DBL, "byte", 0.002730666666666666),
    ("sc.sec * (sc.byte / sc.msec)", DBL, "byte", 2730.666666666667),
    ("sc.kbyte / (sc.byte / sc.sec)", DBL, "sec", 3.0),
    ("sc.byte / 2", DBL, "byte", 1024.0),
    ("sc.byte * 2", U32, "byte", 4096),
    ("2 / sc.byte", DBL, "/ byte", 0.0009765625),
    ("sc.cntps * sc.msec", DBL, "count", 15.0),
    ("sc.msec * sc.cntps", DBL, "count", 15000000.0),
    ("1 / (1 / sc.kbyte)", DBL, "Kbyte", 3.0),
    ("sc.kbyte * (1 / sc.byte)", DBL, "none", 1.5),
    ("(1 / sc.byte) * sc.kbyte", DBL, "none", 1.430511474609375e-06),
    ('rescale(sc.kbyte, "byte")', U32, "byte", 3072),
    ('mkconst(10, units="Kbyte / sec", type="U64")', U64, "Kbyte / sec", 10),
    ("count(ind.i32)", U32, "count", 3),
]


@pytest.mark.parametrize(("expr", "type_", "units", "value"), UNITS)
def test_units_scale_conversion_and_pcps_order_dependence(archive, expr, type_, units, value):
    desc = _desc(archive, expr)
    assert (desc.type, desc.units.text()) == (type_, units)
    assert _first(archive, expr)[NULL] == pytest.approx(value, rel=1e-12)


SEED = "network.interface.speed - delta(network.interface.in.bytes) / delta(sample.milliseconds)"


@pytest.mark.parametrize(
    ("expr", "type_", "units"),
    [
        ("sample.milliseconds", DBL, "millisec"),
        ("delta(sample.milliseconds)", DBL, "millisec"),
        ("network.interface.in.bytes", U64, "byte"),
        # (seed 000 says U64: PCP 6 makes delta of a U64 a double, and so do we)
        ("delta(network.interface.in.bytes)", DBL, "byte"),
        ("delta(network.interface.in.bytes) / delta(sample.milliseconds)", DBL, "byte / millisec"),
        ("network.interface.speed", FLT, "Mbyte / sec"),
        (SEED, DBL, "Mbyte / sec"),
    ],
)
def test_the_seeds_worked_example_propagates_type_and_units(archive, expr, type_, units):
    desc = _desc(archive, expr)
    assert (desc.type, desc.units.text()) == (type_, units)


def test_the_seeds_worked_example_scales_by_1048576_and_1000(archive):
    # 100 Mbyte/sec - (1048576 byte / 1000 millisec): /1048576 and *1000 make it 1 Mbyte/sec
    assert _first(archive, SEED, at=3) == {0: 99.0, 1: 999.5}
    assert _first(archive, SEED, at=0) == {}  # (delta has no previous fetch yet)


# -- semantic errors ---------------------------------------------------------------------

MESSAGES = [
    ("ctr.none * ctr.none", "ctr.none * ctr.none: Illegal operator for counters"),
    ("ctr.none / ctr.none", "ctr.none / ctr.none: Illegal operator for counters"),
    ("ctr.none + ty.u32", "ctr.none + ty.u32: Illegal operator for counter and non-counter"),
    ("ctr.none - 1", "ctr.none - 1: Illegal operator for counter and non-counter"),
    ("ty.u32 + ctr.none", "ty.u32 + ctr.none: Illegal operator for non-counter and counter"),
    ("ty.u32 / ctr.none", "ty.u32 / ctr.none: Illegal operator for non-counter and counter"),
    ("ctr.none * one.cnt",
     "ctr.none * one.cnt: Non-counter and not dimensionless for right operand"),
    ("one.cnt * ctr.none",
     "one.cnt * ctr.none: Non-counter and not dimensionless for left operand"),
    ("s.str + 1", "s.str + 1: Non-arithmetic type for left operand"),
    ("1 + s.str", "1 + s.str: Non-arithmetic type for right operand"),
    ("-s.str", "- s.str: Non-arithmetic operand for unary negation"),
    ("sum(s.str)", "SUM(s.str): Non-arithmetic operand for function"),
    ("delta(s.str)", "DELTA(s.str): Non-arithmetic operand for function"),
    ("rate(sc.cntps)", "RATE(sc.cntps): Incorrect time dimension for operand"),
    ("s.str ? 1 : 2", "s.str ? 1 : 2: Non-arithmetic operand for ternary guard"),
    ("ind.i32 ? ty.u32 : ty.u32",
     "ind.i32 ? ty.u32 : ty.u32: Non-scalar ternary guard with scalar expressions"),
    ("ty.u32 ? ty.u32 : ty.i32", "ty.u32 : ty.i32: Different types for ternary operands"),
    ("ty.u32 ? ty.u32 : ctr.none", "ty.u32 : ctr.none: Different semantics for ternary operands"),
    ("ty.u32 ? sc.byte : sc.kbyte",
     "sc.byte : sc.kbyte: Different units or scale (space) for ternary operands"),
    ("ty.u32 ? sc.msec : sc.sec",
     "sc.msec : sc.sec: Different units or scale (time) for ternary operands"),
    ("sc.byte + sc.msec", "sc.byte + sc.msec: Dimensions are not the same"),
    ("ty.dbl > sc.cntps", "ty.dbl > sc.cntps: Dimensions are not the same"),
    ("sc.byte && 1", "sc.byte && 1: Dimensions are not the same"),
    ("ind.i32 + oth.v", "ind.i32 + oth.v: Operands should have the same instance domain"),
    ("rescale(sc.byte, \"sec\")", "sc.byte RESCALE sec: Incompatible dimensions"),
    ("(ty.u32 + 1) + s.str", "<expr> + s.str: Non-arithmetic type for right operand"),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "message"), MESSAGES)
def test_semantic_errors_are_pcps_word_for_word(archive, expr, message):
    ctx, err = _context(archive, d__x=expr)
    pmid = ctx.lookup_name("d.x")  # (named and listed, but not described)
    assert err.getvalue() == ""
    with pytest.raises(PMError) as exc:
        ctx.lookup_desc(pmid)
    assert exc.value.code == PM_ERR_BADDERIVE
    assert err.getvalue() == f"Semantic error: derived metric d.x: {message}\n"
    with pytest.raises(PMError):
        ctx.lookup_desc(pmid)
    assert err.getvalue().count("\n") == 1  # (once per context)


def test_missing_operands_fail_quietly_and_cycles_are_named(archive):
    ctx, err = _context(archive, a__b="no.such.metric + 1", c__d="c.e + 1", c__e="c.d * 2")
    for name in ("a.b", "c.d"):
        with pytest.raises(PMError) as exc:
            ctx.lookup_desc(ctx.lookup_name(name))
        assert exc.value.code == PM_ERR_BADDERIVE
    assert err.getvalue() == (
        "Semantic error: derived metric c.d: c.d: Circular reference to derived metrics "
        "(c.d -> c.e -> c.d)\n"
    )


def test_derived_metrics_may_use_other_derived_metrics(archive):
    ctx, _ = _context(archive, d__b="ty.u32 + 1", d__c="d.b * 10")
    pmid = ctx.lookup_name("d.c")
    assert ctx.lookup_desc(pmid).type == U32
    ctx.set_mode(PM_MODE_INTERP, Timestamp(T0, 0), S)
    assert ctx.fetch([pmid]).values(pmid) == {NULL: 40}


def test_a_real_metric_hides_a_derived_one_of_the_same_name(archive):
    ctx, _ = _context(archive, ty__u32="99", d__x="ty.u32 + 1")
    pmid = ctx.lookup_name("ty.u32")
    assert pmid == pmID_build(60, 0, 1)
    assert ctx.traverse("ty").count("ty.u32") == 1


# -- values ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "at", "want"),
    [
        ("z.dbl / z.dbl", 0, {NULL: 0.0}),
        ("ty.dbl / z.dbl", 0, {NULL: math.inf}),
        ("ty.i32 / z.u32", 0, {NULL: -math.inf}),
        ("delta(ind.u32ctr)", 3, {0: -50, 1: 30, 2: 10}),  # (b interpolated over its gap)
        ("delta(ind.u32ctr)", 5, {0: 100, 1: 30, 2: 10}),
        ("delta(ind.u32ctr)", 6, {0: 100, 1: -4294967240, 2: 10}),
        ("rate(ind.u32ctr)", 6, {0: 100.0, 1: 56.0, 2: 10.0}),
        ("rate(ind.u32ctr)", 3, {0: 4294967246.0, 1: 30.0, 2: 10.0}),
        ("rate(sc.minctr)", 2, {NULL: 60.0}),  # (minutes per second: utilisation)
        ("avg(ind.i32)", 0, {NULL: pytest.approx(0.6666666269302368, rel=1e-15)}),
        ("sum(ind.i32)", 1, {NULL: 3}),
        ("min(ind.i32)", 0, {NULL: -3}),
        ("max(ind.i32)", 3, {NULL: 8}),
        ("count(ind.i32)", 3, {NULL: 3}),
        ("count(oth.v)", 4, {NULL: 2}),
        ("ind.u32ctr * ind.i32", 0, {0: 500, 1: 888, 2: 0}),
        ("ind.i32 * 2", 1, {0: 12, 1: 4294967290, 2: 0}),
        ("ind.i32 > 0", 0, {0: 1, 1: 1, 2: 0}),  # (signed against unsigned: as unsigned)
        ("ty.i32 < 0", 0, {NULL: 0}),
        ("1 < 2 && 3 > 4 || 1", 0, {NULL: 1}),
        ("!ty.u32", 0, {NULL: 0}),
        ("!z.dbl", 0, {NULL: 1}),
        ("ty.u32 > 2 ? 1 * ind.i32 : 9 * ind.i32", 0, {0: 5, 1: 4294967293, 2: 0}),
        ("ind.i32 > 0 ? ind.i32 : -ind.i32", 0, {0: 5, 1: -3, 2: 0}),  # (-3 > 0 unsigned)
        (
            "ind.i32 != 0 ? 100 / ind.i32 : mkconst(0.0, semantics=instant)",
            0,
            {0: 20.0, 1: -100 / 3, 2: 0.0},
        ),
        ("defined(ty.u32) + defined(no.such)", 0, {NULL: 1}),
        ("scalar(ind.i32)", 0, {NULL: 5}),
        ("ind.i32[b]", 0, {1: -3}),
        ("(ind.i32 + 1)[c]", 0, {2: 1}),
        ("matchinst(/^[ab]/, ind.i32)", 0, {0: 5, 1: -3}),
        ("matchinst(!/^[ab]/, ind.i32)", 0, {2: 0}),
        ("anon(PM_TYPE_U32)", 0, {}),
        ("instant(ctr.none)", 2, {NULL: 10}),
        ("abs(ty.i32)", 0, {NULL: 7}),
        ("floor(ty.flt) + round(ty.dbl)", 0, {NULL: 3.0}),
        ("sqrt(4.0) + log(1.0) + exp(0.0)", 0, {NULL: 3.0}),
    ],
)
def test_values_as_pcp_computes_them(archive, expr, at, want):
    assert _first(archive, expr, at) == want


def test_delta_and_rate_use_the_previous_interpolated_fetch(archive):
    ctx, _ = _context(archive, d__r="rate(ctr.none)", d__d="delta(ctr.none)")
    pmids = [ctx.lookup_name("d.r"), ctx.lookup_name("d.d")]
    ctx.set_mode(PM_MODE_INTERP, Timestamp(T0, 0), 2 * S)
    rows = [ctx.fetch(pmids) for _ in range(4)]
    assert [r.values(pmids[0]) for r in rows] == [{}, {NULL: 5.0}, {NULL: 5.0}, {NULL: 5.0}]
    assert [r.values(pmids[1]) for r in rows] == [{}, {NULL: 10}, {NULL: 10}, {NULL: 10}]


def test_a_replay_of_derived_metrics_is_the_fetches_it_stands_for(archive):
    exprs = {
        "d__a": "delta(ind.u32ctr) / 2",
        "d__b": "rate(network.interface.in.bytes)",
        "d__c": "ind.i32 > 0 ? ind.i32 : mkconst(0, type=32, semantics=instant)",
        "d__d": "sum(ind.i32) + count(ind.i32)",
    }
    names = [n.replace("__", ".") for n in exprs]
    one, _ = _context(archive, **exprs)
    many, _ = _context(archive, **exprs)
    pmids = [one.lookup_name(n) for n in names]
    for ctx in (one, many):
        ctx.set_mode(PM_MODE_INTERP, Timestamp(T0, 500_000_000), S // 2)
    fetched = [one.fetch(pmids) for _ in range(17)]
    replay = many.replay(pmids, 5)  # (in two runs: the second goes on from the first)
    rest = many.replay(pmids, 12)
    for j in range(len(pmids)):
        m1, m2 = replay.metrics[j], rest.metrics[j]
        got = [m1.value_set(k) for k in range(5)] + [m2.value_set(k) for k in range(12)]
        want = [f.result.vsets[j] for f in fetched]
        assert [dict(zip(v.insts, v.atoms(m1.desc.type), strict=True)) for v in got] == [
            dict(zip(v.insts, v.atoms(m1.desc.type), strict=True)) for v in want
        ]


def test_record_by_record_fetches_evaluate_too(archive):
    ctx, _ = _context(archive, d__x="ind.i32 + 1")
    pmid = ctx.lookup_name("d.x")
    ctx.set_mode(PM_MODE_FORW, Timestamp(T0, 0))
    assert ctx.fetch([pmid]).values(pmid) == {0: 6, 1: 4294967294, 2: 1}


# -- the namespace and help text ---------------------------------------------------------


def test_derived_metrics_live_in_the_namespace(archive):
    ctx, _ = _context(archive, my__x="ty.u32", my__sub__y="ty.u32", ty__z="1")
    assert ctx.traverse("my") == ["my.x", "my.sub.y"]
    assert ctx.children("my") == [("x", True), ("sub", False)]
    assert ctx.children("ty")[-1] == ("z", True)  # (after the real children)
    assert "ty.z" in ctx.traverse("ty")
    pmid = ctx.lookup_name("my.x")
    assert ctx.name_all(pmid) == ["my.x"]
    assert ctx.lookup_names(["ty.u32", "my.x", "no.such"])[1:] == [pmid, NULL]
    assert "event.flags" in ctx.traverse("") or "event.flags" not in [
        d.name
        for d in ctx.derived().definitions  # type: ignore[union-attr]
    ]


def test_help_text_comes_from_attributes_or_shows_the_definition(archive):
    registry = Registry()
    registry.register("my.x", "ty.u32 + 1")
    registry.register("my.y", "ty.u32 + 2")
    registry.set_attribute("my.y", "oneline", "two more")
    ctx = ArchiveContext(archive)
    ctx.use_registry(registry)
    x, y = ctx.lookup_name("my.x"), ctx.lookup_name("my.y")
    with pytest.raises(PMError):
        ctx.text(x)
    assert ctx.text(x, help=True) == "Derived metric my.x = ty.u32 + 1"
    assert ctx.text(y) == ctx.text(y, help=True) == "two more"


def test_frames_keep_numpy_types_of_pcp_types():
    from purepcp.pmapi.derived.frame import dtype_of

    assert dtype_of(U64) is np.uint64
    assert dtype_of(STR) is object


def test_names_are_looked_up_in_the_namespace_first_as_libpcp_does(archive, monkeypatch):
    """libpcp's pmLookupName asks the namespace first and derived metrics only for the
    names it lacks: a derived metric named as a real one is shadowed, and a lookup of
    real names alone never loads the derived definitions (PCP's, about 0.1 s of pmval -a)."""
    registry = Registry()
    registry.register("ty.u32", "ty.u32 + 1000")  # the name of a real metric
    registry.register("my.x", "ty.u32 + 1")
    ctx = ArchiveContext(archive)
    ctx.use_registry(registry)
    real = ctx.lookup_name("ty.u32")
    assert ctx._derived is None  # nothing derived was needed, nothing was bound
    derived = ctx.lookup_name("my.x")
    assert ctx.derived().is_derived(derived) and not ctx.derived().is_derived(real)
    assert ctx.lookup_names(["ty.u32", "my.x", "no.such"]) == [real, derived, PM_ID_NULL]
    with pytest.raises(PMError):
        ctx.lookup_name("no.such")


@pytest.mark.parametrize("shape", ["ternary", "binary"])
def test_a_singular_operand_without_a_value_gives_no_value(shape):
    """QA 598: a singular metric fetched with no value (numval 0) or an error leaves the
    expression without values (or with the error), where ours raised from NumPy."""
    from purepcp.pmapi.derived.evaluate import BinaryOp, Const, Env, Metric, Ternary
    from purepcp.pmapi.derived.frame import from_value_set

    novalue, failed = pmID_build(29, 0, 1), pmID_build(29, 0, 2)
    frames = {
        novalue: from_value_set(ValueSet.of_atoms(novalue, U32, []), U32),
        failed: from_value_set(ValueSet.of_error(failed, -1011), U32),
    }
    env = Env(frames, np.array([0], np.int64), lambda *a: "", lambda *a: 0)
    one = Const(U32, NULL, 1)
    for pmid, numval in ((novalue, 0), (failed, -1011)):
        m = Metric(U32, NULL, pmid)
        if shape == "ternary":
            plan = Ternary(U32, NULL, one, m, one)
        else:
            plan = BinaryOp(U32, NULL, "+", one, m, U32)
        assert plan.evaluate(env).value_set(7, U32).numval == numval


def test_direct_help_text_is_the_attribute_or_none(archive):
    """PM_TEXT_DIRECT (pmlogger's lookups) gives the helptext attribute alone, as libpcp's
    __dmhelptext does (QA 352): no one-line fallback, no definition."""
    registry = Registry()
    registry.register("my.x", "ty.u32 + 1")
    registry.register("my.y", "ty.u32 + 2")
    registry.set_attribute("my.y", "oneline", "two more")
    ctx = ArchiveContext(archive)
    ctx.use_registry(registry)
    for name in ("my.x", "my.y"):
        with pytest.raises(PMError):
            ctx.text(ctx.lookup_name(name), help=True, direct=True)
    assert ctx.text(ctx.lookup_name("my.y"), direct=True) == "two more"


def test_matchinst_names_an_instance_when_it_first_has_a_value(tmp_path):
    """QA 691: matchinst() decides each instance by its name at the first fetch with a
    value for it, as libpcp does; a replay of many fetches at once, in which the
    instance has left the domain by the last one, still selects it."""
    base = str(tmp_path / "m")
    pmid = pmID_build(60, 0, 0)
    with ArchiveWriter(base, hostname="m", timezone="UTC", start=Timestamp(T0, 0)) as w:
        w.put_desc(Desc(pmid, U32, ABC, INSTANT, Units()), ["m.x"])
        w.put_index(Timestamp(T0, 0))
        for i in range(6):
            insts = [0, 1] if i < 3 else [0]  # (m-01 leaves after the third sample)
            w.put_indom(Timestamp(T0 + i, 0), ABC, insts, [f"m-0{k}" for k in insts])
            pairs = [(k, 10 * i + k) for k in insts]
            w.put_result(Result(Timestamp(T0 + i, 0), (ValueSet.of_atoms(pmid, U32, pairs),)))
    ctx, _ = _context(base, q__a="matchinst(/^m-/, m.x)")
    q = ctx.lookup_name("q.a")
    ctx.set_mode(PM_MODE_INTERP, Timestamp(T0, 0), S)
    replay = ctx.replay([q], 6)
    got = [replay.metrics[0].value_set(k).insts for k in range(6)]
    assert [list(insts) for insts in got] == [[0, 1]] * 3 + [[0]] * 3


def test_one_operand_that_cannot_be_described_leaves_the_others_bound():
    """QA 256: where describing every operand at once fails (a local context has no agent
    for one's domain), each is described alone, as libpcp describes them: only the
    metrics over the missing one fail to bind."""
    from purepcp.pmapi.derived.context import DerivedMetrics, RealCalls
    from purepcp.pmapi.errors import PM_ERR_NOAGENT

    here, gone = pmID_build(30, 0, 1), pmID_build(60, 0, 1)
    pmids = {"here.one": here, "gone.one": gone}

    def descs(wanted):
        if gone in wanted:
            raise PMError(PM_ERR_NOAGENT)
        return [Desc(p, U32, NULL, INSTANT, Units()) for p in wanted]

    def names(wanted):
        return [pmids.get(n, PM_ID_NULL) for n in wanted]

    registry = Registry()
    ok = registry.register("d.ok", "2 * here.one").pmid
    bad = registry.register("d.bad", "2 * gone.one").pmid
    dm = DerivedMetrics(registry, RealCalls(names, descs, None, None))  # type: ignore[arg-type]
    assert dm.bound(ok) is not None
    assert dm.bound(bad) is None
