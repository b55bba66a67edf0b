"""Functions and arithmetic in pmseries queries (purepcp.series.functions).

The unit tests run the whole evaluation over an in-memory stand-in for Redis holding
three metrics of PCP's QA archive `proc` (ids and samples as `pmseries --load` stores
them), and check the answers PCP 6.0.3 gives: its QA outputs qa/1886.out and
qa/1906.out, and answers of PCP's pmproxy recorded on this machine.  The interop tests
load PCP's QA archives (proc, sample-labels and the two hosts of farm) with PCP's
pmseries into two Redis servers alike, ask PCP's pmproxy (on one) and ours (on the
other) the same /series/query, and compare the answers byte for byte and the
expression keys each wrote.  They leave out the queries that make PCP 6.0.3's pmproxy
crash (errors found once values are read, functions meeting a sample that a window
left out, and a few more): those are unit tests of ours below.
"""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.pmapi.cnumbers import atof, strtof
from purepcp.pmproxy.series import sds_repr, values_json, window_of
from purepcp.series import schema
from purepcp.series.functions import run_function, values_of_expression
from purepcp.series.functions.calculate import FUNCTIONS
from purepcp.series.functions.loops import Grid
from purepcp.series.functions.valuesets import Desc, Series, Value
from purepcp.series.functions.valuetext import FLT, printf_e, printf_f6, scan
from purepcp.series.ids import string_id
from purepcp.series.parse import Func, parse
from purepcp.series.query import run_query
from purepcp.series.read import SeriesError, SeriesReader, Window
from tests.support.pmproxy_servers import Proxy, our_pmproxy
from tests.support.redis_servers import redis_server, require_redis
from tests.support.series_reference import (
    QA_DIRS,
    load_archive,
    pcp_pmproxy_series,
    qa_archive,
    require_pcp_series,
)

# --- an in-memory key server ------------------------------------------------------------


def _id(text: bytes | str) -> tuple[int, int]:
    text = text.decode() if isinstance(text, bytes) else text
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


class FakeRedis:
    """The commands the query side uses, over dicts (keys str, values bytes)."""

    def __init__(self) -> None:
        self.hashes: dict[str, dict[bytes, bytes]] = {}
        self.sets: dict[str, set[bytes]] = {}
        self.streams: dict[str, list[tuple[bytes, dict[bytes, bytes]]]] = {}

    @staticmethod
    def _bytes(value: object) -> bytes:
        return value if isinstance(value, bytes) else str(value).encode()

    def hgetall(self, key: str) -> dict[bytes, bytes]:
        return dict(self.hashes.get(key, {}))

    def hmget(self, key: str, *fields: str) -> list[bytes | None]:
        found = self.hashes.get(key, {})
        return [found.get(self._bytes(f)) for f in fields]

    def hget(self, key: str, name: str) -> bytes | None:
        return self.hashes.get(key, {}).get(self._bytes(name))

    def hset(self, key: str, mapping: dict) -> int:
        stored = self.hashes.setdefault(key, {})
        for name, value in mapping.items():
            stored[self._bytes(name)] = self._bytes(value)
        return len(mapping)

    def hvals(self, key: str) -> list[bytes]:
        return list(self.hashes.get(key, {}).values())

    def hscan_iter(self, key: str, count: int | None = None) -> Iterator[tuple[bytes, bytes]]:
        yield from list(self.hashes.get(key, {}).items())

    def smembers(self, key: str) -> set[bytes]:
        return set(self.sets.get(key, set()))

    def _range(self, key: str, low: str, high: str) -> list:
        lo = (0, 0) if low in ("-", "0-0") else _id(low)
        hi = (2**64, 0) if high == "+" else _id(high)
        return [e for e in self.streams.get(key, []) if lo <= _id(e[0]) <= hi]

    def xrange(self, key: str, min: str = "-", max: str = "+", count: int | None = None) -> list:
        return self._range(key, min, max)[:count]

    def xrevrange(self, key: str, max: str = "+", min: str = "-", count: int | None = None):
        return list(reversed(self._range(key, min, max)))[:count]

    # loading

    def metric(self, name: str, sid: str, desc: dict[str, str], samples: list) -> None:
        raw = bytes.fromhex(sid)
        self.hashes.setdefault("pcp:map:metric.name", {})[string_id(name)] = name.encode()
        self.sets.setdefault(schema.series_key("metric.name", string_id(name)), set()).add(raw)
        self.sets[schema.names_key(raw)] = {string_id(name)}
        self.hset(schema.desc_key(raw), dict(desc, source=bytes(range(1, 21))))
        self.streams[schema.values_key(raw)] = [
            (entry.encode(), {bytes.fromhex(i): v.encode() for i, v in fields.items()})
            for entry, fields in samples
        ]


#: proc's four records, as stream ids
STAMPS = ("1317633022959-242", "1317633023300-460", "1317633023802-930", "1317633024305-845")
PSWITCH = "d51624d12da45900bfee2fd73f1e23f3ccabb784"
LOAD = "fecd5a4b4c6e1273eaa001287a6dd57b7bbd19f7"
UPTIME = "01d8bc7fa75aaff98a08aa0b1c0f2394368d5183"
ONE, FIVE, FIFTEEN = (
    "59181b1de54ff2b383cfd1cdd8636f86c880b69b",
    "ab010c7d45145aa33c8f8fa681a68c9d4102ae19",
    "9d418095c9f971ff4fd44d6828ead27f9d021dc3",
)


def proc_store() -> FakeRedis:
    """kernel.all.pswitch (u64 counter), kernel.all.load (float, three instances) and
    kernel.all.uptime (u32 seconds) as PCP stores them from QA's proc archive."""
    store = FakeRedis()
    store.metric(
        "kernel.all.pswitch", PSWITCH,
        {"indom": "none", "pmid": "60.0.13", "semantics": "counter", "type": "u64",
         "units": "count"},
        [(s, {"": v}) for s, v in zip(STAMPS, ("172598244", "172598364", "172598481",
                                                "172598559"), strict=True)],
    )  # fmt: skip
    loads = {ONE: "0.000000e+00", FIVE: "2.000000e-02", FIFTEEN: "5.000000e-02"}
    store.metric(
        "kernel.all.load", LOAD,
        {"indom": "60.2", "pmid": "60.2.0", "semantics": "instant", "type": "float",
         "units": "none"},
        [(s, loads) for s in STAMPS],
    )  # fmt: skip
    store.metric(
        "kernel.all.uptime", UPTIME,
        {"indom": "none", "pmid": "60.26.0", "semantics": "instant", "type": "u32",
         "units": "sec"},
        [(s, {"": v}) for s, v in zip(STAMPS, ("516660", "516660", "516661", "516661"),
                                      strict=True)],
    )  # fmt: skip
    return store


def answer(store: FakeRedis, text: str) -> str:
    """The JSON body pmproxy answers /series/query with (without its \\r\\n)."""
    result = run_query(SeriesReader(store), text)
    if result.values is not None:
        return values_json(result.values)
    return "[" + ",".join(f'"{s}"' for s in result.sids) + "]"


def points(store: FakeRedis, text: str) -> list[tuple[str, str, str, str]]:
    """(series, instance, timestamp, value) of each value of TEXT's answer."""
    result = run_query(SeriesReader(store), text)
    assert result.values is not None
    return [(v.series, v.instance, v.timestamp, v.value) for v in result.values]


def stamp(entry: str) -> str:
    return entry.replace("-", ".")


def desc(store: FakeRedis, sid: str) -> dict[str, bytes]:
    return {k.decode(): v for k, v in store.hgetall(f"pcp:desc:series:{sid}").items()}


# --- C's number reading and printing ----------------------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [("172598244", 172598244.0), ("5.000000e-02", 0.05), (" -1.5e+00x", -1.5), ("0x10", 16.0),
     ("1e", 1.0), ("no value", 0.0), ("", 0.0), ('"shard"', 0.0), ("inf", math.inf),
     ("-inf", -math.inf), ("1e999", math.inf)],
)  # fmt: skip
def test_strtod_reads_a_leading_number(text, value):
    assert atof(text) == value


def test_strtod_nan_keeps_its_sign():
    assert math.copysign(1.0, atof("-nan")) == -1.0
    assert math.isnan(atof("nan"))


def test_strtof_rounds_once_to_single_precision():
    assert scan(FLT, "0.1") == 0.10000000149011612
    assert scan(FLT, "no value") is None
    # 1 + 2^-24 + 2^-60 lies just above half-way between two floats: a double in between
    # would round it to the even one, strtof rounds it up
    assert strtof("1.00000005960464477550").value == 1.0000001192092896


@pytest.mark.parametrize(
    "x, text",
    [(0.0, "0.000000e+00"), (-0.0, "-0.000000e+00"), (1033322.0, "1.033322e+06"),
     (math.inf, "inf"), (-math.inf, "-inf"), (math.nan, "nan"),
     (math.copysign(math.nan, -1.0), "-nan")],
)  # fmt: skip
def test_e_format_is_printfs(x, text):
    assert printf_e(x) == text


def test_rate_format_is_six_decimals():
    assert printf_f6(155.0957923) == "155.095792"
    assert printf_f6(math.copysign(math.nan, -1.0)) == "-nan"


# --- the evaluation's parts ---------------------------------------------------------------


def test_every_function_has_its_calculation():
    assert set(FUNCTIONS) == set(Func)


def test_the_loops_pass_over_a_sample_with_another_number_of_instances():
    """query.c's per-instance and per-sample loops read only the samples that hold as
    many instances as the first."""
    values = [["1", "2"], ["3"], ["4", "5"]]
    samples = [[Value("1.0", 0, "i", data) for data in sample] for sample in values]
    grid = Grid.of(Series("s", None, Desc("", "", "", b"", "double", ""), 3, samples))
    assert grid is not None
    assert [(j, v.data) for j, v in grid.column(1)] == [(0, "2"), (2, "5")]
    assert list(grid.row(1)) == []
    assert [(k, v.data) for k, v in grid.row(2, 1)] == [(1, "5")]


# --- functions, against PCP's QA outputs ------------------------------------------------


def test_rate_of_a_counter():
    """qa/1886: rate(kernel.all.pswitch[count:5]), newest first, stamped with the later
    sample of each pair, %.6f."""
    rate = "79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71"
    assert points(proc_store(), "rate(kernel.all.pswitch[count:5])") == [
        (rate, PSWITCH, stamp(STAMPS[2]), "155.095792"),
        (rate, PSWITCH, stamp(STAMPS[1]), "232.849722"),
        (rate, PSWITCH, stamp(STAMPS[0]), "351.681330"),
    ]


def test_without_a_time_window_the_answer_is_the_expressions_id():
    """The id, and the descriptor and text PCP stores for it (observed in Redis)."""
    store = proc_store()
    sid = "79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71"
    assert answer(store, "rate(kernel.all.pswitch)") == f'["{sid}"]'
    assert desc(store, sid) == {
        "indom": b"none", "pmid": b"511.0.0", "semantics": b"instant", "source": bytes(20),
        "type": b"double", "units": b"count / sec",
    }  # fmt: skip
    assert store.hgetall(f"pcp:expr:series:{sid}") == {b"query": b"rate(kernel.all.pswitch)"}


def test_a_window_inside_the_function_gives_values_and_the_same_keys():
    store = proc_store()
    run_query(SeriesReader(store), "rate(kernel.all.pswitch[samples:3])")
    assert desc(store, "79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71")["units"] == b"count / sec"


def test_nothing_matched_is_an_empty_answer_and_no_keys():
    store = proc_store()
    before = set(store.hashes)
    assert answer(store, "max(no.such.metric)") == "[]"
    assert answer(store, "max(no.such.metric[samples:2])") == "[]"
    assert set(store.hashes) == before


def test_rate_needs_a_counter():
    store = proc_store()
    before = set(store.hashes)
    with pytest.raises(SeriesError) as caught:
        run_query(SeriesReader(store), "rate(kernel.all.load)")
    assert str(caught.value) == (
        "Can't rate convert 'kernel.all.load', counter semantics required\n"
    )
    assert set(store.hashes) == before


def test_max_and_min_over_time_and_over_instances():
    """qa/1886: max/min keep the value text; over time the first extreme sample wins."""
    store = proc_store()
    assert points(store, "max(kernel.all.uptime[count:10])") == [
        ("2e16825660ef3ddbc40c3d1db3ed58bd9d724ced", UPTIME, stamp(STAMPS[3]), "516661")
    ]
    assert points(store, "min(kernel.all.uptime[count:10])") == [
        ("b0df81d2b0877521bc6f696ccaaf473be095c2c7", UPTIME, stamp(STAMPS[1]), "516660")
    ]
    sample_max = points(store, "max_sample(kernel.all.load[count:5])")
    assert [(i, v) for _, i, _, v in sample_max] == [(FIFTEEN, "5.000000e-02")] * 4
    sample_min = points(store, "min_sample(kernel.all.load[count:5])")
    assert [(i, v) for _, i, _, v in sample_min] == [(ONE, "0.000000e+00")] * 4


def test_rescale_converts_and_prints_e():
    """qa/1886: seconds to minutes, then to hours."""
    store = proc_store()
    assert [p[3] for p in points(store, 'rescale(kernel.all.uptime[count:2], "min")')] == [
        "8.611017e+03", "8.611017e+03",
    ]  # fmt: skip
    nested = 'rescale(rescale(kernel.all.uptime[count:2], "min"), "hour")'
    assert [p[3] for p in points(store, nested)] == ["1.435170e+02", "1.435170e+02"]
    assert desc(store, "86f41f18d689b1d6bf33b0009a6b1d533ac1a179")["units"] == b"hour"
    assert desc(store, "86f41f18d689b1d6bf33b0009a6b1d533ac1a179")["type"] == b"u32"


def test_rescale_errors():
    store = proc_store()
    with pytest.raises(SeriesError, match="^Dimensions of units mismatch, for series "
                       f"{UPTIME} the units is sec\n$"):  # fmt: skip
        run_query(SeriesReader(store), 'rescale(kernel.all.uptime, "Kbyte")')
    with pytest.raises(SeriesError, match=f"^Units string of {LOAD} parse error, "
                       "unrecognized or duplicate base unit\n$"):  # fmt: skip
        run_query(SeriesReader(store), 'rescale(kernel.all.load, "count")')


def test_log_floor_round_abs():
    """qa/1886; log's result type is written in pmTypeStr's spelling."""
    store = proc_store()
    assert [p[3] for p in points(store, "log(kernel.all.pswitch[count:2],3)")] == [
        "1.726403e+01", "1.726403e+01",
    ]  # fmt: skip
    twice = "log(log(kernel.all.pswitch[count:2],3),2)"
    assert [p[3] for p in points(store, twice)] == ["4.109697e+00", "4.109697e+00"]
    assert desc(store, "4e4736380d8f408a8787ac500fcdb323f8d0a17a")["type"] == b"DOUBLE"
    for func in ("floor", "round"):
        values = {p[3] for p in points(store, f"{func}(kernel.all.load[count:5])")}
        assert values == {"0.000000e+00"}
    assert {p[3] for p in points(store, "abs(kernel.all.load[count:5])")} == {
        "0.000000e+00", "2.000000e-02", "5.000000e-02",
    }  # fmt: skip


def test_sums_averages_and_their_instance():
    store = proc_store()
    per_sample = points(store, "sum_sample(kernel.all.load[count:5])")
    assert [(i, v) for _, i, _, v in per_sample] == [("", "7.000000e-02")] * 4
    per_instance = points(store, "avg(kernel.all.load[count:5])")
    assert [(i, t, v) for _, i, t, v in per_instance] == [
        (ONE, stamp(STAMPS[3]), "0.000000e+00"),
        (FIVE, stamp(STAMPS[3]), "2.000000e-02"),
        (FIFTEEN, stamp(STAMPS[3]), "5.000000e-02"),
    ]
    assert desc(store, "25d50fd9d9eb35171ce900948b37f2e485bf0cee")["semantics"] == b"instance"


# --- arithmetic ------------------------------------------------------------------------


def test_addition_and_its_descriptor():
    """qa/1886: u32 + u32 stays u32.  The scale conversion towards units whose dimensions
    are still zero fails once values are there, so the window's answer says nanosec
    where the id's alone says sec (both observed)."""
    store = proc_store()
    text = "kernel.all.uptime[count:5] + kernel.all.uptime[count:5]"
    assert [p[3] for p in points(store, text)] == ["1033322", "1033322", "1033320", "1033320"]
    sid = "0399c30275cb99bb9fbb677a2f4acc1560e25dd9"
    assert desc(store, sid)["type"] == b"U32"
    assert desc(store, sid)["units"] == b"nanosec"
    run_query(SeriesReader(store), "kernel.all.uptime + kernel.all.uptime")
    assert desc(store, sid)["units"] == b"sec"


def test_products_that_overflow_or_are_signed_have_no_value():
    """qa/1906: a u32 square that overflows is "no value"."""
    store = proc_store()
    text = "kernel.all.uptime[count:10] * kernel.all.uptime[count:10]"
    assert {p[3] for p in points(store, text)} == {"no value"}


def test_division_is_double_and_zero_by_zero_is_minus_nan():
    store = proc_store()
    text = "kernel.all.load[count:5] / kernel.all.load[count:5]"
    assert [p[3] for p in points(store, text)][:3] == ["-nan", "1.000000e+00", "1.000000e+00"]
    text = "kernel.all.uptime[count:5] - kernel.all.uptime[count:5]"
    assert {p[3] for p in points(store, text)} == {"0"}


def test_scalar_multiplication():
    """qa/1906: every value times the number, %e; a real number makes it double and
    "instance" semantics."""
    store = proc_store()
    assert [p[3] for p in points(store, "2 * kernel.all.uptime[count:10]")] == [
        "1.033322e+06", "1.033322e+06", "1.033320e+06", "1.033320e+06",
    ]  # fmt: skip
    assert [p[3] for p in points(store, "1.1 * kernel.all.uptime[count:10]")] == [
        "5.683271e+05", "5.683271e+05", "5.683260e+05", "5.683260e+05",
    ]  # fmt: skip
    assert desc(store, "1e88bd30825c0d37be0f8ab7be77aaa1d2ec63cb")["semantics"] == b"instance"
    assert {p[3] for p in points(store, "0 * kernel.all.uptime[count:10]")} == {"0.000000e+00"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("kernel.all.load + kernel.all.uptime",
         "Operands should have the same instance domain for all of the binary operators.\n"),
        ("kernel.all.pswitch + kernel.all.uptime",
         "Left operand is a counter and the right one is not, only multiplication or "
         "division is allowed.\n"),
        ("kernel.all.uptime + kernel.all.pswitch",
         "Left operand is not a counter and the right one is, only multiplication is "
         "allowed.\n"),
        ("kernel.all.pswitch[samples:2] * kernel.all.pswitch[samples:2]",
         "Both operands have the semantics of counter, only addition or subtraction is "
         "allowed.\n"),
        ("max(kernel.all.load[samples:2]) + kernel.all.load[samples:2]",
         f"Number of samples of two metrics are not identical, {LOAD} has 1 but {LOAD} has "
         "2\n"),
        ("max(kernel.all.*)",
         "Incompatible units between operand metrics or expressions\n'(null)' (count)\n"
         "vs'(null)' (none)\n"),
    ],
)  # fmt: skip
def test_arithmetic_errors(text, message):
    """PCP's checks and messages (the window variants crash PCP's pmproxy: it reports
    them through the wrong object; the message is what it means to say)."""
    with pytest.raises(SeriesError) as caught:
        run_query(SeriesReader(proc_store()), text)
    assert str(caught.value) == message


def test_a_sample_left_out_by_the_window_is_skipped():
    """PCP keeps a picked sample in its place in the stream reply: a samples cap after a
    start leaves empty places, over which rate() leaves the next value as it was
    (observed); where PCP would read an empty place and crash, it is passed over."""
    store = proc_store()
    rate = "79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71"
    assert points(store, "rate(kernel.all.pswitch[start:0, samples:2])") == [
        (rate, PSWITCH, stamp(STAMPS[1]), "351.681330"),
        (rate, PSWITCH, stamp(STAMPS[1]), "172598364"),
    ]
    sums = points(store, 'sum_sample(kernel.all.load[start:0, interval:"1s"])')
    assert [(t, v) for _, _, t, v in sums] == [
        (stamp(STAMPS[0]), "7.000000e-02"),
        (stamp(STAMPS[2]), "7.000000e-02"),
        (stamp(STAMPS[3]), "7.000000e-02"),
    ]


def test_run_function_uses_the_given_now():
    store = proc_store()
    query = parse("max(kernel.all.load[5m])")
    assert run_function(SeriesReader(store), query, now=1317633024 * 10**9).values != []
    assert run_function(SeriesReader(store), query, now=1317700000 * 10**9).values == []


# --- /series/values on an expression's id --------------------------------------------------


def test_values_of_an_expression_reads_every_sample_and_picks_with_the_window():
    """The whole stream is read, oldest first, and the window only caps the samples
    kept (in their places): without a window that is the first sample alone, so rate
    answers its raw value; with samples=3 the two rates and the third sample's raw
    value, which has no later one to pair with (both as PCP answers)."""
    store = proc_store()
    reader = SeriesReader(store)
    run_query(reader, "rate(kernel.all.pswitch)")
    sid = "79cc71e91ffd9f5a6adbcb8c7ee8d01164677f71"
    got = values_of_expression(reader, sid, Window())
    assert [(v.timestamp, v.value) for v in got] == [(stamp(STAMPS[0]), "172598244")]
    got = values_of_expression(reader, sid, Window(count=3))
    assert [(v.timestamp, v.value) for v in got] == [
        (stamp(STAMPS[1]), "351.681330"),
        (stamp(STAMPS[2]), "232.849722"),
        (stamp(STAMPS[2]), "172598481"),
    ]


def test_values_of_a_metric_id_is_none():
    reader = SeriesReader(proc_store())
    assert values_of_expression(reader, LOAD, Window(count=1)) is None


# --- against PCP's pmproxy ---------------------------------------------------------------

#: queries PCP 6.0.3's pmproxy answers (each was checked not to crash it)
QUERIES = [
    # qa/1886
    "rate(kernel.all.pswitch[count:5])",
    "max(kernel.all.load[count:5])", "max_inst(kernel.all.load[count:5])",
    "max_sample(kernel.all.load[count:5])", "min(kernel.all.load[count:5])",
    "min_inst(kernel.all.load[count:5])", "min_sample(kernel.all.load[count:5])",
    'max(kernel.all.load{instance.name == "5 minute"}[count:5])',
    'min_sample(kernel.all.load{instance.name == "5 minute"}[count:5])',
    "max(kernel.all.uptime[count:10])", "min(kernel.all.uptime[count:10])",
    'rescale(kernel.all.uptime[count:2], "sec")', 'rescale(kernel.all.uptime[count:2], "min")',
    'rescale(rescale(kernel.all.uptime[count:2], "min"), "hour")',
    "abs(kernel.all.load[count:5])", "log(kernel.all.pswitch[count:2],3)",
    "log(log(kernel.all.pswitch[count:2],3),2)", "floor(kernel.all.load[count:5])",
    "round(kernel.all.load[count:5])", "round(kernel.all.uptime[count:5])",
    "kernel.all.uptime[count:5] + kernel.all.uptime[count:5]",
    "kernel.all.load[count:5] + kernel.all.load[count:5]",
    "kernel.all.uptime[count:5] - kernel.all.uptime[count:5]",
    "kernel.all.load[count:5] - kernel.all.load[count:5]",
    "kernel.all.uptime[count:5] / kernel.all.uptime[count:5]",
    "kernel.all.load[count:5] / kernel.all.load[count:5]",
    # qa/1906
    "max(kernel.all.load[count:5]) * max(kernel.all.load[count:5])",
    "kernel.all.load[count:5] * kernel.all.load[count:5]",
    "abs(kernel.all.load[count:5]) * kernel.all.load[count:5]",
    "kernel.all.load[count:5] * log(kernel.all.load[count:5])",
    "kernel.all.load[count:5] * 2", "2 * abs(kernel.all.load[count:5])",
    "0 * kernel.all.load[count:5]", "1.1 * kernel.all.load[count:5]",
    "kernel.all.uptime[count:10] * kernel.all.uptime[count:10]",
    "kernel.all.uptime[count:10] * log(kernel.all.uptime[count:10])",
    "2 * kernel.all.uptime[count:10]", "kernel.all.uptime[count:10] * 1.5",
    # qa/1773, qa/1874 (two hosts and proc: three series each)
    "kernel.all.load + kernel.all.load", "kernel.all.load[samples:1] + kernel.all.load[samples:1]",
    "kernel.all.load - kernel.all.load", "kernel.all.load[samples:1] - kernel.all.load[samples:1]",
    "floor(kernel.all.load)", "floor(kernel.all.load[samples:2])",
    # the other functions
    "sum(kernel.all.load[count:5])", "sum_inst(kernel.all.load[count:5])",
    "sum_sample(kernel.all.load[count:5])", "avg(kernel.all.load[count:5])",
    "avg_inst(kernel.all.load[count:5])", "avg_sample(kernel.all.load[count:5])",
    "stdev_inst(kernel.all.load[count:5])", "stdev_sample(kernel.all.load[count:5])",
    "topk_inst(kernel.all.load[count:5], 2)", "topk_sample(kernel.all.load[count:5], 2)",
    "topk_inst(kernel.all.pswitch[count:5], 2)", "topk_sample(kernel.all.load[count:5], 9)",
    "nth_percentile_inst(kernel.all.load[count:5], 50)",
    "nth_percentile_sample(kernel.all.load[count:5], 50)",
    "nth_percentile_sample(kernel.all.pswitch[count:5], 100)",
    "sqrt(kernel.all.uptime[count:3])", "sqrt(rate(kernel.all.pswitch[count:3]))",
    "round(rate(kernel.all.pswitch[count:3]))", "abs(rate(kernel.all.pswitch[count:3]))",
    "log(kernel.all.load[count:3])",
    "topk_inst(disk.partitions.read[samples:4], 2)",
    "topk_sample(disk.partitions.read[samples:4], 3)",
    "nth_percentile_inst(disk.partitions.read[samples:4], 50)",
    "stdev_sample(disk.partitions.read[samples:4])",
    # windows inside functions, nesting, several series
    "rate(kernel.all.pswitch[samples:3])", "rate(kernel.all.pswitch[start:0, samples:2])",
    "max(kernel.all.load[start:0, samples:2])", 'max(kernel.all.load[interval:"0.5s"])',
    'kernel.all.pswitch[start:0, interval:"1s"]',
    'rate(kernel.all.pswitch[start:"2011-10-03 09:10:23", finish:"2011-10-03 09:10:24"])',
    "max(kernel.all.load[samples:0])", "x = rate(kernel.all.pswitch[samples:3])",
    "max(rate(kernel.all.pswitch[samples:4]))",
    'rescale(rate(kernel.all.pswitch[samples:4]), "count / min")',
    "rate(kernel.all.pswitch[samples:3]) + rate(kernel.all.pswitch[samples:3])",
    "rate(kernel.all.pswitch[samples:3]) * 2.5", "2 * 3 * kernel.all.load[samples:2]",
    "kernel.all.load[samples:2] + kernel.all.load[samples:2] * 2",
    "kernel.all.uptime[samples:2] / kernel.all.uptime[samples:2] / kernel.all.uptime[samples:2]",
    "rate(kernel.all.cpu.*[samples:3])", "max(kernel.all.l*[samples:2])",
    'max(kernel.all.load{hostname:"node80"}[samples:2])',
    'kernel.all.load{hostname:"node80"}[samples:1] + kernel.all.load{hostname:"node81"}[samples:1]',
    "rate(kernel.all.cpu.user[samples:3]) / rate(kernel.all.cpu.sys[samples:3])",
    'rescale(kernel.all.cpu.*[samples:2], "hour")',
    "hinv.ncpu[samples:2] * hinv.ncpu[samples:2]",
    'rescale(rate(disk.all.read_bytes[samples:3]), "Mbyte / min")',
    "sample.colour[samples:2] * sample.colour[samples:2]", "0 * sample.colour[samples:2]",
    "rate(sample.rapid[samples:4])", "hinv.physmem[samples:2] - hinv.pagesize[samples:2]",
    "kernel.all.cpu.user[samples:2] * kernel.all.uptime[samples:2]",
    # answered with the id alone, or an error found before any value is read
    "rate(kernel.all.pswitch)", "max(kernel.all.load)", "sum_sample(kernel.all.load)",
    "topk_inst(kernel.all.load, 2)", "nth_percentile_sample(kernel.all.load, 50)",
    "2*kernel.all.uptime", 'rescale(kernel.all.uptime,"min")',
    "rate(kernel.all.pswitch) + rate(kernel.all.pswitch)", "log(kernel.all.uptime)",
    "max(no.such.metric)", "max(no.such.metric[samples:3])",
    "rate(kernel.all.load)", "rate(pmcd.pmlogger.host)", "abs(pmcd.pmlogger.host)",
    "pmcd.pmlogger.host + pmcd.pmlogger.host", 'rescale(kernel.all.load, "count")',
    'rescale(kernel.all.uptime, "Kbyte")', "kernel.all.load + kernel.all.uptime",
    "kernel.all.pswitch + kernel.all.uptime", "kernel.all.uptime + kernel.all.pswitch",
    "max(kernel.all.*)", "kernel.all.pswitch[samples:2] / kernel.all.uptime[samples:2]",
    "kernel.all.uptime[samples:2] + kernel.all.uptime[samples:3]",
]  # fmt: skip

#: expressions whose /series/values PCP's pmproxy answers, and the parameters (a samples
#: cap below a stream's length makes the *_sample functions crash it: the samples past
#: the cap are empty places, which they read)
VALUES = [
    ("rate(kernel.all.pswitch)", ""), ("rate(kernel.all.pswitch)", "samples=3"),
    ("rate(kernel.all.pswitch)", "start=1317633023&finish=1317633024"),
    ("max(kernel.all.load)", "samples=2"), ("kernel.all.load+kernel.all.load", "samples=1"),
    ("sum_sample(kernel.all.load)", "samples=100"), ("topk_inst(kernel.all.load, 2)", "samples=4"),
    ("nth_percentile_sample(kernel.all.load, 50)", "samples=4"),
    ("2*kernel.all.uptime", "samples=3"), ('rescale(kernel.all.uptime,"min")', ""),
    ("max(sample.colour)", "samples=2"), ("avg_sample(sample.colour)", "samples=2"),
    ("rate(sample.rapid)", "samples=10"),
]  # fmt: skip


def _farm(tmp: Path) -> list[Path]:
    """The farm archives of two hosts, unpacked from QA's farm.tar.xz."""
    for top in QA_DIRS:
        tarball = top / "archives" / "farm.tar.xz"
        if tarball.exists():
            subprocess.run(["tar", "-C", str(tmp), "-xf", str(tarball)], check=True)
            return [tmp / "farm" / node / "20201124.0" for node in ("node80", "node81")]
    pytest.skip("PCP's QA archive farm.tar.xz is not here (package pcp-testsuite)")


@contextlib.contextmanager
def our_series_proxy(tmp: Path, redis_port: int) -> Iterator[Proxy]:
    """Our pmproxy answering /series/* from the Redis on REDIS_PORT."""
    tmp.mkdir(parents=True, exist_ok=True)
    conf = tmp / "pmproxy.conf"
    conf.write_text(f"[redis]\nservers = 127.0.0.1:{redis_port}\n")
    with our_pmproxy("localhost", tmp, "-c", str(conf)) as proxy:
        yield proxy


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two Redis servers with PCP's pmseries --load of proc, sample-labels and two farm
    hosts each; PCP's pmproxy on the first, ours on the second."""
    require_redis()
    require_pcp_series()
    archives = [qa_archive("proc"), qa_archive("sample-labels")]
    if None in archives:
        pytest.skip("PCP's QA archives proc and sample-labels are not here (pcp-testsuite)")
    tmp = tmp_path_factory.mktemp("functions")
    archives += _farm(tmp)
    with redis_server(tmp, name="theirs") as a, redis_server(tmp, name="ours") as b:
        for server in (a, b):
            for archive in archives:
                load_archive(archive, server.port, tmp / "load")
        with (
            pcp_pmproxy_series(tmp / "pcp", a.port) as theirs,
            our_series_proxy(tmp / "purepcp", b.port) as ours,
        ):
            yield theirs, ours, a, b


def _expression_keys(server, sid: str) -> tuple[dict, dict]:
    with server.client() as client:
        return (client.hgetall(f"pcp:desc:series:{sid}"), client.hgetall(f"pcp:expr:series:{sid}"))


def _ids(body: bytes) -> set[str]:
    found = json.loads(body) if body.strip() else []
    if not isinstance(found, list):
        return set()
    return {x if isinstance(x, str) else x["series"] for x in found}


@pytest.mark.interop
@pytest.mark.parametrize("text", QUERIES)
def test_query_answers_and_keys_are_pcps(text, pair):
    theirs, ours, a, b = pair
    path = "/series/query?expr=" + urllib.parse.quote(text, safe="")
    want = theirs.get(path)
    got = ours.get(path)
    assert got == want
    for sid in _ids(want[2]):
        assert _expression_keys(b, sid) == _expression_keys(a, sid)


@pytest.mark.interop
@pytest.mark.parametrize("text, params", VALUES)
def test_values_of_an_expression_are_pcps(text, params, pair):
    """/series/values?series=<expression id> re-evaluates the stored expression."""
    theirs, ours, _, b = pair
    path = "/series/query?expr=" + urllib.parse.quote(text, safe="")
    ids = _ids(theirs.get(path)[2])
    assert _ids(ours.get(path)[2]) == ids and len(ids) == 1
    sid = ids.pop()
    status, _, body = theirs.get(f"/series/values?series={sid}&{params}")
    query = dict(urllib.parse.parse_qsl(params))
    with b.client() as client:
        values = values_of_expression(SeriesReader(client), sid, window_of(query))
    assert values is not None
    assert (status, body.decode()) == (200, values_json(values) + "\r\n")


@pytest.mark.interop
def test_error_answers_quote_the_message(pair):
    theirs, ours, _, _ = pair
    path = "/series/query?expr=" + urllib.parse.quote("rate(kernel.all.load)", safe="")
    status, _, body = ours.get(path)
    assert status == 400
    message = "Can't rate convert 'kernel.all.load', counter semantics required\n"
    assert body == f'{{"message":{sds_repr(message)},"success":false}}\r\n'.encode()
    assert theirs.get(path)[2] == body


def test_fake_server_matches_the_commands_used():
    """(The stand-in above answers XRANGE bounds as Redis does.)"""
    store = proc_store()
    key = schema.values_key(bytes.fromhex(PSWITCH))
    assert [e[0] for e in store.xrange(key, "1317633023300-460", "+")] == [
        s.encode() for s in STAMPS[1:]
    ]
    assert [e[0] for e in store.xrevrange(key, "+", "-", count=2)] == [
        s.encode() for s in reversed(STAMPS[2:])
    ]
