"""purepcp.pmapi.rate: counter rates as pmval computes them.

The interop tests write an archive of counters with the reference PCP's log-import
library (pcp.pmi, under /usr/bin/python3), replay it with the reference pmval -U
(every record, no interpolation) and compare each printed rate column with ours,
with and without PCP_COUNTER_WRAP.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from purepcp.pmapi.cnumbers import float32
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_CONV, PMError
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_build, pmInDom_build
from purepcp.pmapi.printvalue import pmval_real, pmval_width
from purepcp.pmapi.rate import (
    CounterRates,
    counter_rate,
    counter_wrap_enabled,
    rate_units,
    rate_units_str,
    time_scale,
    timestamp_seconds,
)
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Timestamp, ValueSet
from tests.support.examples import examples
from tests.support.libpcp_oracle import SKIP_REASON, SYSTEM_PYTHON, available

I32, U32, I64, U64 = PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64
FLT, DBL = PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE
COUNTER = PMSem.PM_SEM_COUNTER
T0 = Timestamp(1700000000, 0)
BYTES, KBYTES = Units(dimSpace=1), Units(dimSpace=1, scaleSpace=1)
MSEC = Units(dimTime=1, scaleTime=2)
COUNT = Units(dimCount=1)


def later(seconds: float) -> Timestamp:
    return Timestamp.from_float(float(T0) + seconds)


# --- examples -------------------------------------------------------------------------


def test_rate_units():
    assert rate_units_str(KBYTES) == "Kbyte / sec"
    assert rate_units_str(COUNT) == "count / sec"
    assert rate_units_str(Units()) == "/ sec"
    assert rate_units_str(MSEC) == "time utilization"
    assert rate_units_str(Units(dimSpace=1, dimTime=2, scaleTime=4)) == "byte min"
    assert rate_units(MSEC) == Units(scaleTime=2)
    assert rate_units(COUNT) == Units(dimTime=-1, dimCount=1, scaleTime=3)


def test_time_scale():
    assert time_scale(BYTES) == 1.0
    assert time_scale(MSEC) == 1000.0
    assert time_scale(Units(dimTime=1, scaleTime=0)) == 1e9
    # pmval keeps the factor in a C float: 1/60 and 1/3600 rounded to 32 bits
    assert time_scale(Units(dimTime=1, scaleTime=4)) == 0.01666666753590107
    assert time_scale(Units(dimTime=-1, scaleTime=5)) == 0.00027777778450399637


def test_rate_of_minutes_with_pmvals_float_factor():
    """A case hypothesis found: a wrapping 64-bit counter of minutes 12994 ns apart.
    pmval prints 8.440E+25 (its float factor); a double factor gives 8.441E+25."""
    minutes = Units(dimTime=1, scaleTime=4)
    then, now = Timestamp(1700000000, 0), Timestamp(1700000000, 12994)
    rate = counter_rate(0, then, -1, now, I64, minutes, wrap=True)
    assert pmval_real(rate, COUNTER, pmval_width(I64)).strip() == "8.440E+25"


def test_counter_rate():
    assert counter_rate(100, T0, 300, later(2), U64, KBYTES) == 100.0
    # milliseconds over seconds: a utilization
    assert counter_rate(0, T0, 500, later(1), I64, MSEC) == 0.5
    # a counter that went backwards: negative (pmval prints "!") unless wrapping
    assert counter_rate(2**32 - 10, T0, 10, later(1), U32, COUNT) == -(2**32 - 20)
    assert counter_rate(2**32 - 10, T0, 10, later(1), U32, COUNT, wrap=True) == 20.0
    assert counter_rate(2**64 - 1, T0, 1, later(1), U64, COUNT, wrap=True) == 0.0  # in doubles
    assert counter_rate(5.0, T0, 4.5, later(1), DBL, COUNT, wrap=True) == -0.5
    assert math.isinf(counter_rate(0, T0, 1, T0, U32, COUNT))
    assert math.isnan(counter_rate(1, T0, 1, T0, U32, COUNT))
    with pytest.raises(PMError) as exc:
        counter_rate("a", T0, "b", later(1), PMType.PM_TYPE_STRING, COUNT)
    assert exc.value.code == PM_ERR_CONV


def test_counter_wrap_from_environment():
    assert counter_wrap_enabled({"PCP_COUNTER_WRAP": ""})
    assert not counter_wrap_enabled({})


def test_timestamp_seconds_as_long_double():
    assert timestamp_seconds(Timestamp(1, 500_000_000)) == 1.5
    stamp = Timestamp(1700000000, 123456789)
    assert abs(timestamp_seconds(stamp) - float(stamp)) <= math.ulp(float(stamp))


def test_counter_rates_pairs_instances_like_pmval():
    pmid, indom = pmID_build(29, 0, 1), pmInDom_build(29, 1)
    desc = Desc(pmid, U32, indom, COUNTER, COUNT)
    rates = CounterRates(wrap=False)
    first = ValueSet.of_atoms(pmid, U32, [(0, 10), (1, 20)])
    assert rates.update_set(desc, first, T0) == {0: None, 1: None}
    second = ValueSet.of_atoms(pmid, U32, [(0, 30), (2, 5)])
    assert rates.update_set(desc, second, later(2)) == {0: 10.0, 2: None}
    third = ValueSet.of_atoms(pmid, U32, [(0, 30), (1, 40)])
    # instance 1 was absent from the previous sample: no rate, as pmval prints "?"
    assert rates.update_set(desc, third, later(4)) == {0: 0.0, 1: None}
    assert rates.update_set(desc, ValueSet.of_error(pmid, -12357), later(6)) == {}
    assert rates.update_set(desc, third, later(8)) == {0: None, 1: None}


def test_counter_rates_single_values():
    rates = CounterRates(wrap=True)
    assert rates.update(1, PM_IN_NULL, U32, COUNT, 4294967295, T0) is None
    assert rates.update(1, PM_IN_NULL, U32, COUNT, 1, later(2)) == 1.0
    rates.forget(1)
    assert rates.update(1, PM_IN_NULL, U32, COUNT, 5, later(3)) is None


@given(
    st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=20),
    st.lists(st.integers(1, 10**10), min_size=19, max_size=19),
)
def test_wrapped_u32_counter_rates_are_increments_over_time(increments, gaps):
    rates, value, stamp = CounterRates(wrap=True), 0, T0
    assert rates.update(1, PM_IN_NULL, U32, COUNT, value, stamp) is None
    for inc, gap in zip(increments, gaps, strict=False):
        ns = stamp.sec * 10**9 + stamp.nsec + gap
        value, stamp, before = (value + inc) % 2**32, Timestamp(ns // 10**9, ns % 10**9), stamp
        rate = rates.update(1, PM_IN_NULL, U32, COUNT, value, stamp)
        dt = timestamp_seconds(stamp) - timestamp_seconds(before)
        if dt:
            assert rate == inc / dt
        else:  # both stamps round to the same double: C's division by zero
            assert math.isinf(rate) if inc else math.isnan(rate)


# --- against the reference pmval ------------------------------------------------------

# Runs under the system interpreter: writes the archive described on stdin.
WRITER = r"""
import json, sys
from pcp import pmi
import cpmapi as c

spec = json.load(sys.stdin)
log = pmi.pmiLogImport(spec["path"])
log.pmiSetHostname("rates")
log.pmiSetTimezone("UTC")
indom = log.pmiInDom(29, 1)
for name, inst in spec["instances"]:
    log.pmiAddInstance(indom, name, inst)
for m in spec["metrics"]:
    log.pmiAddMetric(m["name"], log.pmiID(29, 0, m["item"]), m["type"],
                     indom if m["indom"] else c.PM_INDOM_NULL, c.PM_SEM_COUNTER,
                     log.pmiUnits(*m["units"]))
for sec, nsec, values in spec["samples"]:
    for name, inst, text in values:
        log.pmiPutValue(name, inst, text)
    log.pmiHighResWrite(sec, nsec)
log.pmiEnd()
"""

STAMP = re.compile(r"\d\d:\d\d:\d\d\.\d{3}")
INSTANCES = [("a", 0), ("b", 1), ("c", 7)]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("PCP_COUNTER_WRAP", None)
    return env | {"TZ": "UTC"} | extra


def _require_reference() -> None:
    if not available() or shutil.which("pmval") is None:
        pytest.skip(SKIP_REASON)


def _text(value: Any, type_: int) -> str:
    return repr(float(value)) if type_ in (FLT, DBL) else str(value)


def _write_archive(path: Path, metrics: list[dict[str, Any]], stamps: list[Timestamp]) -> None:
    samples = []
    for i, stamp in enumerate(stamps):
        values = []
        for m in metrics:
            for inst_name, value in m["samples"][i].items():
                if value is not None:
                    values.append([m["name"], inst_name, _text(value, m["type"])])
        samples.append([stamp.sec, stamp.nsec, values])
    spec = {
        "path": str(path),
        "instances": INSTANCES,
        "metrics": [
            {
                "name": m["name"],
                "item": i + 1,
                "type": m["type"],
                "indom": m["indom"],
                "units": m["units"],
            }
            for i, m in enumerate(metrics)
        ],
        "samples": samples,
    }
    done = subprocess.run(
        [SYSTEM_PYTHON, "-c", WRITER],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        env=_env(PCP_ARCHIVE_VERSION="3"),  # nanosecond timestamps
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def _pmval(archive: Path, name: str, wrap: bool) -> tuple[str, list[str]]:
    """pmval -U's "units:" header line and its rate columns (after the timestamp)."""
    env = _env(PCP_COUNTER_WRAP="1") if wrap else _env()
    done = subprocess.run(
        ["pmval", "-U", str(archive), name], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    units = next(line for line in lines if line.startswith("units:"))
    return units, [line[12:] for line in lines if STAMP.match(line)]


def _ours(m: dict[str, Any], stamps: list[Timestamp], wrap: bool) -> list[str]:
    """The rate columns pmval would print, from CounterRates and pmval_real."""
    pmid = pmID_build(29, 0, 1)
    units = Units(*m["units"])
    indom = pmInDom_build(29, 1) if m["indom"] else PM_INDOM_NULL
    desc = Desc(pmid, m["type"], indom, COUNTER, units)
    ids = {name: inst for name, inst in INSTANCES} | {"": PM_IN_NULL}
    cols = pmval_width(m["type"])
    rates, lines = CounterRates(wrap=wrap), []
    for i, (stamp, sample) in enumerate(zip(stamps, m["samples"], strict=True)):
        atoms = [(ids[k], v) for k, v in sample.items() if v is not None]
        got = rates.update_set(desc, ValueSet.of_atoms(pmid, m["type"], atoms), stamp)
        if i == 0:
            continue
        cells = [
            "?".rjust(cols) if got.get(inst) is None else pmval_real(got[inst], COUNTER, cols)
            for inst in (sorted(ids[n] for n, _ in INSTANCES) if m["indom"] else [PM_IN_NULL])
        ]
        lines.append("".join(c + " " for c in cells) if m["indom"] else cells[0])
    return lines


def _check(tmp_path: Path, metrics: list[dict[str, Any]], stamps: list[Timestamp]) -> None:
    _require_reference()
    archive = tmp_path / "rates"
    _write_archive(archive, metrics, stamps)
    for m in metrics:
        for wrap in (False, True):
            units_line, columns = _pmval(archive, m["name"], wrap)
            units = Units(*m["units"])
            assert units_line.endswith(f"(converting to {rate_units_str(units)})"), units_line
            assert columns == _ours(m, stamps, wrap), (m, wrap)


def _metric(name: str, type_: int, units: Units, values: list[Any], indom: bool = False):
    u = units
    return {
        "name": name,
        "type": type_,
        "indom": indom,
        "units": [u.dimSpace, u.dimTime, u.dimCount, u.scaleSpace, u.scaleTime, u.scaleCount],
        "samples": [v if indom else {"": v} for v in values],
    }


@pytest.mark.interop
def test_rates_match_pmval(tmp_path):
    stamps = [T0, Timestamp(T0.sec + 2, 250_000_000), Timestamp(T0.sec + 4, 500_000_123),
              Timestamp(T0.sec + 5, 999_999_999), Timestamp(T0.sec + 9, 1)]  # fmt: skip
    usec, nsec = Units(dimTime=1, scaleTime=1), Units(dimTime=1, scaleTime=0)
    hours = Units(dimTime=1, scaleTime=5)
    metrics = [
        _metric("t.u32", U32, COUNT, [10, 20, 5, 2**32 - 6, 2**32 - 1]),
        _metric("t.i32", I32, Units(), [0, -100, 2**31 - 1, -(2**31), 7]),
        _metric("t.kb", U64, KBYTES, [100, 2**63, 2**64 - 1, 3, 2**53 + 1]),
        _metric("t.ms", I64, MSEC, [0, 500, 900, 1900, 1900]),
        _metric("t.us", DBL, usec, [0.0, 1e6, 2.5e6, 2.4e6, 9e6]),
        _metric("t.ns", U64, nsec, [0, 10**9, 3 * 10**9, 3 * 10**9 + 7, 10**12]),
        _metric("t.hr", FLT, hours, [0.0, float32(0.1), float32(0.2), float32(1e6), float32(1e6)]),
        _metric(
            "t.inst",
            U32,
            BYTES,
            [
                {"a": 1, "b": 5},
                {"a": 100, "b": 6, "c": 1},
                {"a": 150, "c": 2},
                {"a": 150, "b": 1, "c": 2**20},
                {"a": 2, "b": 2, "c": 2**32 - 1},
            ],
            indom=True,
        ),
    ]
    _check(tmp_path, metrics, stamps)


counter_types = st.sampled_from([I32, U32, I64, U64, DBL])
time_units = st.builds(
    Units,
    dimSpace=st.integers(0, 1),
    dimTime=st.integers(-1, 1),
    dimCount=st.integers(0, 1),
    scaleSpace=st.integers(0, 4),
    scaleTime=st.integers(0, 5),
)
VALUES = {
    I32: st.integers(-(2**31), 2**31 - 1),
    U32: st.integers(0, 2**32 - 1),
    I64: st.integers(-(2**63), 2**63 - 1),
    U64: st.integers(0, 2**64 - 1),
    DBL: st.floats(-1e300, 1e300),
}


FIXTURE = HealthCheck.function_scoped_fixture


@st.composite
def archives(draw):
    n = draw(st.integers(2, 6))
    steps = draw(st.lists(st.integers(1, 10**11), min_size=n - 1, max_size=n - 1))
    stamps, ns = [T0], T0.sec * 10**9
    for step in steps:
        ns += step
        stamps.append(Timestamp(ns // 10**9, ns % 10**9))
    metrics = []
    for k in range(draw(st.integers(1, 4))):
        type_ = draw(counter_types)
        small = st.integers(0, 10**6) if type_ != DBL else st.floats(0, 1e6)
        values = st.one_of(VALUES[type_], small)
        metrics.append(
            _metric(
                f"g.m{k}", type_, draw(time_units), draw(st.lists(values, min_size=n, max_size=n))
            )
        )
    return metrics, stamps


@pytest.mark.interop
@settings(
    max_examples=examples(4),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(archives())
def test_rates_match_pmval_generated(tmp_path_factory, case):
    metrics, stamps = case
    _check(tmp_path_factory.mktemp("gen"), metrics, stamps)
