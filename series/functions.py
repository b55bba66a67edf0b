"""Functions and arithmetic in pmseries queries (`rate(m[samples:3])`, `a + b`, `2 * m`,
`rescale(m, "min")`, ...), computed as PCP 6.0.3's libpcp_web computes them in query.c,
quirks included, so that /series/query answers what PCP's pmproxy answers.

How PCP does it, and so how this module does it:

* Every vector of the expression is a *data node*: its series (as `select` finds them),
  each with its descriptor (`HMGET pcp:desc:series:<sid> indom semantics source type
  units`, pmid taken as 511.0.0) and its metric name (`SMEMBERS
  pcp:metric.name:series:<sid>`).
* With a time window, each series' stream is read with the window the parser had read
  when it reached that vector (XREVRANGE for samples only, else XRANGE start..end), and
  samples are picked with the window of the *whole query* (its samples cap and interval,
  the query path's interval stepping without the extra nanosecond).  Picked samples keep
  the position they had in the stream reply; the others are empty slots, which the
  functions skip or stumble over as PCP's do (see `_store`).
* The functions are applied bottom-up to these value sets (`_calculate`), each exactly
  as its series_calculate_* does, with its number formats (rate `%.6f`; sums, averages,
  standard deviations, rescale, log, sqrt and arithmetic on floats `%e`; min, max, topk,
  percentiles copy the stored text) and its descriptor changes.
* The answer's series id is the SHA-1 of the expression's canonical text
  (`parse.canonical`, where a glob or a vector with qualifiers is named by the metric
  name of its first series).  Whenever the expression matched series and nothing went
  wrong, `pcp:desc:series:<id>` (pmid 511.0.0, source 20 zero bytes, the result's indom,
  semantics, type, units) and `pcp:expr:series:<id>` (`query` = canonical text) are
  written, window or not.  Without a time window only that id is answered.
* Errors are reported with PCP's message (the first one, as pmproxy replies with the
  first); no keys are written then.

Where PCP 6.0.3 reads freed or uninitialised memory or crashes (see the notes on each
function), this module does what the code evidently meant, or refuses with the error
PCP would have reported.
"""

from __future__ import annotations

import math
import re
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np

from purepcp.pmapi.convert import pmConvScale, wrap
from purepcp.pmapi.errors import PM_ERR_CONV, PMError
from purepcp.pmapi.printvalue import pmAtomStr
from purepcp.pmapi.timewindow import NSEC, PM_MAX_TIME_T
from purepcp.pmapi.types import PMType, pmSemStr, pmTypeStr
from purepcp.pmapi.units import Units, pmUnitsStr

from . import schema
from .ids import NULL_ID, expr_id
from .parse import (
    Arith,
    Binary,
    Call,
    Expr,
    Func,
    Number,
    Query,
    QuerySyntaxError,
    Vector,
    canonical,
    parse,
    parse_units,
)
from .read import SeriesError, SeriesReader, SeriesValue, Window
from .vectors import QueryAnswer, select
from .window import Timing, WindowError, resolve_window

__all__ = ["EXPR_PMID", "run_function", "values_of_expression"]

#: the pmid of every expression's descriptor
EXPR_PMID = "511.0.0"

_I32, _U32, _I64, _U64 = (int(PMType.PM_TYPE_32), int(PMType.PM_TYPE_U32),
                          int(PMType.PM_TYPE_64), int(PMType.PM_TYPE_U64))  # fmt: skip
_FLT, _DBL = int(PMType.PM_TYPE_FLOAT), int(PMType.PM_TYPE_DOUBLE)
_UNKNOWN = int(PMType.PM_TYPE_UNKNOWN)
_COUNTER, _INSTANT, _DISCRETE = 1, 3, 4
_NEG_NAN = math.copysign(math.nan, -1.0)


# --- C's number reading and printing ------------------------------------------------------

_STRTOD = re.compile(
    r"[ \t\n\v\f\r]*([+-]?)(?:"
    r"(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|([iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?))"
)
_INTEGER = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)")


def _number(text: str) -> tuple[Fraction | float, bool] | None:
    """The number strtod would read at the start of TEXT: (exact value or inf/nan,
    negative), None when it reads none."""
    m = _STRTOD.match(text)
    if m is None:
        return None
    negative = m.group(1) == "-"
    if m.group(2):
        body = m.group(2)[2:].lower()
        mantissa, _, exponent = body.partition("p")
        whole, _, frac = mantissa.partition(".")
        value = Fraction(int(whole or "0", 16) * 16 ** len(frac) + int(frac or "0", 16))
        value /= 16 ** len(frac)
        value *= Fraction(2) ** int(exponent or "0")
        return value, negative
    if m.group(3):
        return Fraction(m.group(3)), negative
    word = m.group(4).lower()
    return (math.inf if word.startswith("inf") else math.nan), negative


def c_strtod(text: str) -> float:
    """C's strtod (and atof): the double at the start of TEXT, 0.0 when there is none."""
    found = _number(text)
    if found is None:
        return 0.0
    value, negative = found
    if isinstance(value, Fraction):
        try:
            result = float(value)
        except OverflowError:
            result = math.inf
    else:
        result = value
    return -result if negative else result


def _nearest_f32(value: Fraction) -> float:
    """VALUE (>= 0) correctly rounded to single precision (ties to even), as strtof."""
    guess = np.float32(float(value)) if value < 2**129 else np.float32(np.inf)
    best = None
    below, above = np.nextafter(guess, np.float32(0)), np.nextafter(guess, np.float32(np.inf))
    for candidate in (below, guess, above):
        if not np.isfinite(candidate):
            continue
        distance = abs(Fraction(float(candidate)) - value)
        even = int(candidate.view(np.uint32)) % 2 == 0
        if best is None or distance < best[0] or (distance == best[0] and even):
            best = (distance, candidate)
    assert best is not None
    largest = Fraction(float(np.finfo(np.float32).max))
    half_ulp = Fraction(2) ** 103  # half the gap above FLT_MAX
    if value >= largest + half_ulp:
        return math.inf
    return float(best[1])


def c_strtof(text: str) -> float | None:
    """sscanf's %f: the float at the start of TEXT (a Python float holding a single
    precision value), None when there is none."""
    found = _number(text)
    if found is None:
        return None
    value, negative = found
    result = _nearest_f32(value) if isinstance(value, Fraction) else value
    return -result if negative else result


def _scan_int(text: str, bits: int, signed: bool) -> int | None:
    """sscanf's %d, %u, %ld, %lu: strtol/strtoul (saturating at 64 bits), then stored in
    an integer of BITS bits; None when there are no digits."""
    m = _INTEGER.match(text)
    if m is None:
        return None
    n = int(m.group(2))
    if signed:
        n = -n if m.group(1) == "-" else n
        n = max(-(2**63), min(2**63 - 1, n))
    else:
        n = min(n, 2**64 - 1)
        n = (-n) % 2**64 if m.group(1) == "-" else n
    return wrap(n, bits, signed)


def _scan(type_: int, text: str) -> int | float | None:
    """series_extract_value: TEXT read with the sscanf conversion of TYPE_; None when
    that fails (PM_ERR_CONV)."""
    if type_ == _I32:
        return _scan_int(text, 32, True)
    if type_ == _U32:
        return _scan_int(text, 32, False)
    if type_ == _I64:
        return _scan_int(text, 64, True)
    if type_ == _U64:
        return _scan_int(text, 64, False)
    if type_ == _FLT:
        return c_strtof(text)
    if type_ == _DBL:
        return c_strtod(text) if _number(text) is not None else None
    return None


def fmt_e(x: float) -> str:
    """printf's %e (a NaN with its sign bit set is "-nan")."""
    return pmAtomStr(x, _DBL)


def fmt_f6(x: float) -> str:
    """printf's %.6f."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"{x:.6f}"


def _atom_text(type_: int, value: int | float) -> str | None:
    """series_pmAtomValue_conv_str: pmAtomStr's text of a numeric VALUE, None (PCP logs an
    error and gives up) when the type is not numeric or the text does not start with a
    digit or a sign ("nan", "inf")."""
    if type_ not in (_I32, _U32, _I64, _U64, _FLT, _DBL):
        return None
    text = pmAtomStr(value, type_)
    if text[:1].isdigit() or text[:1] in "+-":
        return text
    return None


def _c_div(a: float, b: float) -> float:
    """C's double division (x86-64): x/0 is an infinity, 0/0 the negative default NaN."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return a if math.isnan(a) else _NEG_NAN
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _c_log(x: float) -> float:
    if math.isnan(x):
        return x
    if x < 0:
        return _NEG_NAN
    if x == 0:
        return -math.inf
    return math.log(x)


def _c_sqrt(x: float) -> float:
    if math.isnan(x):
        return x
    if x < 0:
        return _NEG_NAN
    return math.sqrt(x)


def _c_floor(x: float) -> float:
    return x if not math.isfinite(x) else math.copysign(float(math.floor(x)), x)


def _c_round(x: float) -> float:
    """C's round(): halves away from zero, the sign of zero kept."""
    if not math.isfinite(x):
        return x
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return math.copysign(t, x) if t == 0 else t


def _float_of_double(d: float) -> float:
    """The float member of a pmAtomValue holding the double D (little-endian union):
    what PCP's round() of a double reads."""
    return struct.unpack("<f", struct.pack("<d", d)[:4])[0]


def _ts_delta(a_ns: int, b_ns: int) -> float:
    """pmTimespec_delta(a, b): seconds, computed as PCP computes them."""
    a_sec, a_nsec = divmod(a_ns, NSEC)
    b_sec, b_nsec = divmod(b_ns, NSEC)
    exact = np.longdouble(a_sec - b_sec) + np.longdouble(a_nsec - b_nsec) / np.longdouble(NSEC)
    return float(exact)


def _units(text: str) -> Units | None:
    """pmParseUnitsStr's units of TEXT, None when it fails (PCP's out is then zeroed)."""
    try:
        return parse_units(text)[0]
    except ValueError:
        return None


def _units_error(text: str) -> str:
    try:
        parse_units(text)
    except ValueError as exc:
        return str(exc)
    return ""


def _same_dims(a: Units, b: Units) -> bool:
    return (a.dimSpace, a.dimTime, a.dimCount) == (b.dimSpace, b.dimTime, b.dimCount)


def _value_type(text: str) -> int:
    """series_extract_type: a descriptor's type text (either spelling, by prefix) as
    PM_TYPE, PM_TYPE_UNKNOWN for the rest."""
    for prefixes, code in (
        (("32",), _I32), (("U32", "u32"), _U32), (("64",), _I64), (("U64", "u64"), _U64),
        (("FLOAT", "float"), _FLT), (("DOUBLE", "double"), _DBL),
    ):  # fmt: skip
        if text.startswith(prefixes):
            return code
    return _UNKNOWN


def _sem_code(text: str) -> int:
    """pmStrSem: a descriptor's semantics text (by prefix) as PM_SEM, -1 otherwise."""
    for word, code in (("counter", _COUNTER), ("instant", _INSTANT), ("discrete", _DISCRETE)):
        if text.startswith(word):
            return code
    return -1


# --- value sets, as PCP keeps them in query nodes ------------------------------------------


@dataclass
class _Value:
    """pmSeriesValue: one instance's value in a sample."""

    timestamp: str  # the stream id with "." for "-"
    ns: int
    series: str  # the instance's series id, the metric's (no indom), or ""
    data: str


@dataclass
class _Desc:
    indom: str
    pmid: str
    semantics: str
    source: bytes
    type: str
    units: str


@dataclass
class _Series:
    """series_sample_set_t: one series at a node.  SAMPLES are slots (an empty list is a
    slot with no instances); NUM_SAMPLES is how many of them count (PCP negates it when
    a function fails on the series)."""

    sid: str
    metric_name: str | None
    desc: _Desc
    num_samples: int = 0
    samples: list[list[_Value]] = field(default_factory=list)
    compatible: bool = True

    def derived(self) -> _Series:
        """A new series for a function's result: same id and a copy of the descriptor,
        no metric name (PCP does not copy it), no samples yet."""
        return _Series(self.sid, None, replace(self.desc))

    def slot(self, j: int) -> list[_Value]:
        return self.samples[j] if 0 <= j < len(self.samples) else []


@dataclass
class _Node:
    """A query node: the parse tree's node and the value set computed there."""

    expr: Expr | Number
    children: list[_Node]
    values: list[_Series] = field(default_factory=list)


class _Run:
    """One evaluation: the messages PCP would report (the first is the answer) and the
    data nodes by vector."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.vectors: dict[int, _Node] = {}

    def fail(self, message: str) -> None:
        self.messages.append(message)

    @property
    def failed(self) -> bool:
        return bool(self.messages)

    def canonical(self, node: _Node, idx: int) -> str:
        """series_expr_canonical of NODE, vectors named by their series IDX's metric."""

        def metric_name(vector: Vector) -> str:
            data = self.vectors.get(id(vector))
            if data is None or not 0 <= idx < len(data.values):
                return vector.name or ""
            return data.values[idx].metric_name or "(null)"

        return canonical(node.expr, metric_name)  # type: ignore[arg-type]


def _tree(expr: Expr | Number, run: _Run) -> _Node:
    if isinstance(expr, Call):
        children = [_tree(expr.arg, run)]
        if expr.param is not None:
            children.append(_Node(expr.param, []))
        return _Node(expr, children)
    if isinstance(expr, Binary):
        return _Node(expr, [_tree(expr.left, run), _tree(expr.right, run)])
    node = _Node(expr, [])
    if isinstance(expr, Vector):
        run.vectors[id(expr)] = node
    return node


# --- reading the data nodes ----------------------------------------------------------------


@dataclass(frozen=True)
class _Sampling:
    """The part of a window that picks samples out of a stream reply (series_values_store_to
    _node reads the whole query's timing): ns since the epoch, 0 for unset."""

    start: int = 0
    delta: int = 0
    count: int = 0


@dataclass(frozen=True)
class _Range:
    """How a vector's stream is read (series_node_prepare_time, from the vector's timing)."""

    reverse: int = 0  # XREVRANGE + - COUNT reverse, when only samples were given
    start: int = 0
    end: int = 0

    def ids(self) -> tuple[str, str]:
        start = _stream_str(self.start)
        end = _stream_str(self.end) if self.end // NSEC else "+"
        return start, end


def _stream_str(ns: int) -> str:
    """timespec_stream_str: milliseconds (an unsigned 64-bit product) - microseconds."""
    sec, nsec = divmod(ns, NSEC)
    millis = (sec * 1000 + nsec // 1_000_000) % 2**64
    return f"{millis}-{nsec % 1_000_000 // 1000}"


def _vector_range(timing: Timing, texts: Any) -> _Range:
    count_only = texts is not None and texts.count_only
    if count_only and timing.count:
        return _Range(reverse=timing.count % 2**32)
    end = timing.end
    if end and end // NSEC >= PM_MAX_TIME_T:
        end = PM_MAX_TIME_T * NSEC
    return _Range(start=timing.start, end=end)


def _read_series(reader: SeriesReader, sids: Sequence[str]) -> list[_Series]:
    """The descriptor and metric name of each series, as a data node holds them."""
    names = reader.map_all("metric.name")
    out = []
    for sid in sids:
        raw = bytes.fromhex(sid)
        fields = reader.client.hmget(
            schema.desc_key(raw), "indom", "semantics", "source", "type", "units"
        )
        if fields[0] is None:
            raise SeriesError(f"bad reply from {sid} HMGET (5)")
        text = [(f or b"").decode("utf-8", "surrogateescape") for f in fields]
        desc = _Desc(text[0], EXPR_PMID, text[1], fields[2] or b"", text[3], text[4])
        metric_name = None
        for name_id in reader.client.smembers(schema.names_key(raw)):
            if name_id in names:
                metric_name = names[name_id]
        out.append(_Series(sid, metric_name, desc))
    return out


def _fetch(reader: SeriesReader, sid: str, how: _Range) -> list:
    key = schema.values_key(bytes.fromhex(sid))
    if how.reverse:
        return reader.client.xrevrange(key, "+", "-", count=how.reverse)
    start, end = how.ids()
    return reader.client.xrange(key, start, end)


def _store(series: _Series, entries: list, sampling: _Sampling) -> None:
    """series_values_store_to_node: the picked samples, each in the slot of its position
    in the stream reply (so skipped ones leave empty slots and NUM_SAMPLES counts them
    all): every one, or one per interval (no extra nanosecond on the first goal), at
    most COUNT."""
    n = len(entries)
    series.num_samples = n
    series.samples = [[] for _ in range(n)]
    times = [schema.stream_ns(e[0]) for e in entries]
    picked = 0
    goal = 0
    for i, (entry_id, fields) in enumerate(entries):
        if sampling.delta:
            if i == 0:
                goal = sampling.start or times[0]
            if i + 1 < n:
                ahead = _ts_delta(times[i + 1], goal)
                if not ahead > 0:
                    continue
                if ahead > 2 * (sampling.delta // NSEC):
                    goal = times[i + 1]
                goal += sampling.delta
        if sampling.count and picked >= sampling.count:
            break
        picked += 1
        stamp = schema.timestamp_json(entry_id)
        slot = series.samples[i]
        for name, value in _field_pairs(fields):
            if name == b"":
                inst = series.sid
            elif len(name) == 20:
                inst = name.hex()
            else:
                continue
            slot.append(_Value(stamp, times[i], inst, value.decode("utf-8", "surrogateescape")))


def _field_pairs(fields: Any) -> Iterator[tuple[bytes, bytes]]:
    """A stream entry's field/value pairs: a dict (redis-py's parsing) or the flat list
    the server sends (the Store's clients)."""
    if isinstance(fields, dict):
        yield from fields.items()
        return
    for i in range(0, len(fields) - 1, 2):
        yield fields[i], fields[i + 1]


def _load(
    reader: SeriesReader,
    node: _Node,
    sampling: _Sampling | None,
    now: int,
    select: Callable[[SeriesReader, Vector], list[bytes]],
) -> None:
    """Fill every data node under NODE: descriptors, and with SAMPLING the values."""
    if isinstance(node.expr, Vector):
        sids = [s.hex() for s in select(reader, node.expr)]
        node.values = _read_series(reader, sids)
        if sampling is not None:
            window = node.expr.window
            timing = _resolve(window, now) if window is not None else Timing()
            how = _vector_range(timing, window)
            for series in node.values:
                _store(series, _fetch(reader, series.sid, how), sampling)
        return
    for child in node.children:
        _load(reader, child, sampling, now, select)


def _resolve(window: Any, now: int) -> Timing:
    try:
        return resolve_window(window, now=now)
    except WindowError as exc:
        raise SeriesError(exc.message) from None


# --- the functions --------------------------------------------------------------------------


def _copy(value: _Value) -> _Value:
    return replace(value)


def _calc_rate(node: _Node, run: _Run) -> None:
    """series_calculate_rate: per instance (v[j-1]-v[j])/(t[j-1]-t[j]) in %.6f, stamped
    with sample j's time, into sample j-1; one sample fewer.  Counters only."""
    left = node.children[0]
    node.values = left.values
    for i, s in enumerate(node.values):
        n_samples = s.num_samples
        if s.desc.semantics.startswith("counter"):
            n_inst = 0 if n_samples <= 0 else len(s.slot(0))
            for j in range(1, n_samples):
                if len(s.slot(j)) != n_inst:
                    continue
                earlier, later = s.slot(j - 1), s.slot(j)
                if len(earlier) < n_inst:  # PCP reads a missing sample here (and crashes)
                    continue
                for k in range(n_inst):
                    t, v = earlier[k], later[k]
                    rate = _c_div(c_strtod(t.data) - c_strtod(v.data), _ts_delta(t.ns, v.ns))
                    earlier[k] = _Value(v.timestamp, v.ns, t.series, fmt_f6(rate))
                if j == n_samples - 1:
                    s.num_samples -= 1
        else:
            expr = run.canonical(left, i)
            run.fail(f"Can't rate convert '{expr}', counter semantics required\n")
            s.num_samples = -n_samples
        units = _units(s.desc.units) or Units()
        units = replace(units, dimTime=units.dimTime - 1, scaleTime=3)
        s.desc.type = "double"
        s.desc.semantics = "instant"
        s.desc.units = pmUnitsStr(units)


def _calc_extreme(node: _Node, run: _Run, larger: bool, over_time: bool) -> None:
    """max/min (per instance, the extreme sample: one sample) and max_sample/min_sample
    (per sample, the extreme instance: one instance each); the value text is copied."""
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        n = s.num_samples
        if n <= 0:
            out.num_samples = 0
            continue
        n_inst = len(s.slot(0))

        def better(a: float, b: float) -> bool:
            return a < b if larger else a > b

        if over_time:
            picks = []
            for k in range(n_inst):
                ptr, best = 0, c_strtod(s.slot(0)[k].data)
                for j in range(1, n):
                    if len(s.slot(j)) != n_inst:
                        continue
                    d = c_strtod(s.slot(j)[k].data)
                    if better(best, d):
                        best, ptr = d, j
                picks.append(_copy(s.slot(ptr)[k]))
            out.num_samples, out.samples = 1, [picks]
        else:
            out.num_samples = n
            for j in range(n):
                sample = s.slot(j)
                if not sample:  # PCP reads a missing instance here (and crashes)
                    out.samples.append([])
                    continue
                ptr, best = 0, c_strtod(sample[0].data)
                for k in range(1, n_inst):
                    if len(sample) != n_inst:
                        continue
                    d = c_strtod(sample[k].data)
                    if better(best, d):
                        best, ptr = d, k
                out.samples.append([_copy(sample[ptr])])


def _calc_statistical(node: _Node, func: Func) -> None:
    """sum/sum_inst and avg/avg_inst: per instance over the samples, one sample stamped
    with the first one's time, %e; avg divides by the number of samples."""
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        n = s.num_samples
        if n > 0:
            first = s.slot(0)
            n_inst = len(first)
            picks = []
            for k in range(n_inst):
                total = 0.0
                for j in range(n):
                    if len(s.slot(j)) != n_inst:
                        continue
                    total += c_strtod(s.slot(j)[k].data)
                text = fmt_e(total if func in (Func.SUM, Func.SUM_INST) else _c_div(total, n))
                picks.append(_Value(first[k].timestamp, first[k].ns, first[k].series, text))
            out.num_samples, out.samples = 1, [picks]
        out.desc.type = "double"
        if func in (Func.AVG, Func.AVG_INST):
            out.desc.semantics = "instance"


def _calc_sample_statistical(node: _Node, func: Func) -> None:
    """sum_sample/avg_sample: per sample over the instances, one value with an empty
    instance id, %e; avg divides by the first sample's number of instances."""
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        n = s.num_samples
        if n > 0:
            n_inst = len(s.slot(0))
            out.num_samples = n
            for j in range(n):
                sample = s.slot(j)
                total = 0.0
                for k in range(n_inst):
                    if len(sample) != n_inst:
                        continue
                    total += c_strtod(sample[k].data)
                if not sample:  # PCP reads a missing instance here (and crashes)
                    out.samples.append([])
                    continue
                mean = total if func is Func.SUM_SAMPLE else _c_div(total, n_inst)
                out.samples.append([_Value(sample[0].timestamp, sample[0].ns, "", fmt_e(mean))])
        out.desc.type = "double"
        if func is Func.AVG_SAMPLE:
            out.desc.semantics = "instance"


def _calc_stdev(node: _Node) -> None:
    """stdev_inst: per instance over the samples (population standard deviation, %e),
    one sample stamped with the first one's time."""
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        n = s.num_samples
        if n > 0:
            first = s.slot(0)
            n_inst = len(first)
            picks = []
            for k in range(n_inst):
                total = 0.0
                for j in range(n):
                    if len(s.slot(j)) != n_inst:
                        continue
                    total += c_strtod(s.slot(j)[k].data)
                mean = _c_div(total, n)
                sd = 0.0
                for j in range(n):
                    if k < len(s.slot(j)):  # PCP reads past a shorter sample here
                        sd += math.pow(c_strtod(s.slot(j)[k].data) - mean, 2)
                text = fmt_e(_c_sqrt(_c_div(sd, n)))
                picks.append(_Value(first[k].timestamp, first[k].ns, first[k].series, text))
            out.num_samples, out.samples = 1, [picks]
        out.desc.semantics = "instance"
        out.desc.type = "double"


def _calc_sample_stdev(node: _Node) -> None:
    """stdev_sample: per sample over the instances, one value with an empty instance id."""
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        n = s.num_samples
        if n > 0:
            n_inst = len(s.slot(0))
            out.num_samples = n
            for j in range(n):
                sample = s.slot(j)
                if not sample:  # PCP reads a missing instance here (and crashes)
                    out.samples.append([])
                    continue
                total = 0.0
                for k in range(n_inst):
                    if len(sample) != n_inst:
                        continue
                    total += c_strtod(sample[k].data)
                mean = _c_div(total, n_inst)
                sd = 0.0
                for k in range(min(n_inst, len(sample))):
                    sd += math.pow(c_strtod(sample[k].data) - mean, 2)
                text = fmt_e(_c_sqrt(_c_div(sd, n_inst)))
                out.samples.append([_Value(sample[0].timestamp, sample[0].ns, "", text)])
        out.desc.semantics = "instance"
        out.desc.type = "double"


def _insert_top(data: list[float], pointers: list[int], value: float, index: int) -> None:
    """Put VALUE (from INDEX) into the descending list DATA where it is larger than an
    entry, shifting the rest down (the smallest falls off)."""
    for pos in range(len(data)):
        if value > data[pos]:
            data[pos + 1 :] = data[pos:-1]
            pointers[pos + 1 :] = pointers[pos:-1]
            data[pos], pointers[pos] = value, index
            return


def _param_int(param: Number | None) -> int:
    """sscanf's %d of a function's number argument."""
    if param is None:
        return 0
    return _scan_int(param.text, 32, True) or 0


def _calc_topk(node: _Node, param: Number | None) -> None:
    """topk_inst (series_calculate_topk): per instance, its K largest samples (values
    above zero only); the result has one "sample" per instance holding K values.  As in
    PCP, only the first of the K running maxima is reset between instances."""
    k_wanted = _param_int(param)
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        n_samples = s.num_samples
        n = min(k_wanted, n_samples) if n_samples > 0 else k_wanted
        if n_samples > 0:
            n_inst = len(s.slot(0))
            out.num_samples = n_inst
            data, pointers = [0.0] * n, [0] * n
            for k in range(n_inst):
                if n:
                    data[0] = 0.0
                picks = []
                for j in range(n_samples):
                    if len(s.slot(j)) != n_inst:
                        continue
                    value = c_strtod(s.slot(j)[k].data)
                    if n and value > data[n - 1]:
                        _insert_top(data, pointers, value, j)
                for pos in range(n):
                    sample = s.slot(pointers[pos])
                    if k < len(sample):
                        picks.append(_copy(sample[k]))
                out.samples.append(picks)
        out.desc.semantics = "instance"
        out.desc.type = "double"


def _calc_sample_topk(node: _Node, param: Number | None) -> None:
    """topk_sample: per sample, its K largest instances (values above zero only)."""
    k_wanted = _param_int(param)
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        n_samples = s.num_samples
        if n_samples > 0:
            n_inst = len(s.slot(0))
            out.num_samples = n_samples
            for j in range(n_samples):
                n = min(k_wanted, n_inst)
                data, pointers = [0.0] * n, [0] * n
                sample = s.slot(j)
                for k in range(n_inst):
                    if len(sample) != n_inst:
                        continue
                    value = c_strtod(sample[k].data)
                    if n and value > data[n - 1]:
                        _insert_top(data, pointers, value, k)
                out.samples.append([_copy(sample[p]) for p in pointers if p < len(sample)])
        out.desc.semantics = "instance"
        out.desc.type = "double"


def _percentile_pick(values: list[tuple[float, int]], size: int, rank: int) -> int:
    """The index PCP's nth percentile picks: VALUES inserted into a descending list of
    SIZE zeroes (only values above an entry get in), then entry size-1-rank."""
    data, pointers = [0.0] * size, [0] * size
    for value, index in values:
        _insert_top(data, pointers, value, index)
    if rank == size:
        return pointers[0]
    return pointers[size - 1 - rank]


def _calc_percentile(node: _Node, param: Number | None) -> None:
    """nth_percentile_inst (series_calculate_nth_percentile): per instance over the
    samples, one sample; PCP never considers the first sample."""
    pct = _param_int(param)
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        n = s.num_samples
        if n <= 0:
            continue
        n_inst = len(s.slot(0))
        rank = int(pct / 100 * n)
        picks = []
        for k in range(n_inst):
            values = [
                (c_strtod(s.slot(j)[k].data), j) for j in range(1, n) if len(s.slot(j)) == n_inst
            ]
            index = _percentile_pick(values, n, rank)
            sample = s.slot(index)
            if k < len(sample):
                picks.append(_copy(sample[k]))
        out.num_samples, out.samples = 1, [picks]


def _calc_sample_percentile(node: _Node, param: Number | None) -> None:
    """nth_percentile_sample: per sample over the instances, one instance."""
    pct = _param_int(param)
    node.values = []
    for s in node.children[0].values:
        out = s.derived()
        node.values.append(out)
        n = s.num_samples
        if n <= 0:
            continue
        n_inst = len(s.slot(0))
        rank = int(pct / 100 * n_inst)
        out.num_samples = n
        for j in range(n):
            sample = s.slot(j)
            values = [(c_strtod(sample[k].data), k) for k in range(n_inst) if len(sample) == n_inst]
            index = _percentile_pick(values, n_inst, rank)
            out.samples.append([_copy(sample[index])] if index < len(sample) else [])


def _type_of(s: _Series, run: _Run) -> int | None:
    """The series' value type for a function on values; None (and PCP's error, the sample
    count negated) when it is not numeric."""
    type_ = _value_type(s.desc.type)
    if type_ == _UNKNOWN:
        run.fail("Series values' Type extract fail, unsupported type\n")
        s.num_samples = -s.num_samples
        return None
    return type_


def _each_value(s: _Series):
    for j in range(max(s.num_samples, 0)):
        yield from s.slot(j)


def _calc_unary(node: _Node, run: _Run, func: Func) -> None:
    """abs, floor, round (the type kept), log and sqrt (double results), value by value
    in place.  As in PCP, the first value that cannot be read or printed ends the whole
    function (the rest stays as it was), and sqrt of a double prints nothing unless an
    earlier series set the result type."""
    node.values = node.children[0].values
    base = None
    if func is Func.LOG and node.expr.param is not None:  # type: ignore[union-attr]
        base = c_strtod(node.expr.param.text)  # type: ignore[union-attr]
    otype = _UNKNOWN
    for s in node.values:
        itype = _type_of(s, run)
        if itype is None:
            return
        for value in _each_value(s):
            number = _scan(itype, value.data)
            if number is None:
                return
            out_type = itype
            if func is Func.ABS:  # (negated when below zero: -0 and NaN keep their sign)
                result: float | int = -number if number < 0 else number
                if itype in (_I32, _I64):
                    result = wrap(int(result), 32 if itype == _I32 else 64, True)
            elif func is Func.FLOOR:
                result = _c_floor(number) if itype in (_FLT, _DBL) else number
            elif func is Func.ROUND:
                if itype == _FLT:
                    result = _c_round(float(number))
                elif itype == _DBL:
                    result = _c_round(_float_of_double(float(number)))
                else:
                    result = number
            elif func is Func.LOG:
                otype = out_type = _DBL
                result = _c_log(float(number))
                if base is not None:
                    result = _c_div(result, _c_log(base))
            else:  # SQRT: a double in stays a double without setting the result type
                if itype != _DBL:
                    otype = _DBL
                out_type = otype
                result = _c_sqrt(float(number))
            text = _atom_text(out_type, result)
            if text is None:
                return
            value.data = text
        if func in (Func.LOG, Func.SQRT):
            s.desc.type = pmTypeStr(otype)


def _calc_rescale(node: _Node, run: _Run) -> None:
    """rescale(expr, "units"): every value converted with pmConvScale as a double and
    printed %e; the units changed, the type text kept."""
    node.values = node.children[0].values
    target = node.expr.scale  # type: ignore[union-attr]
    for s in node.values:
        iunit = _units(s.desc.units)
        if iunit is None:
            run.fail(f"Units string of {s.sid} parse error, {_units_error(s.desc.units)}\n")
            s.num_samples = -s.num_samples
            return
        if not _same_dims(iunit, target):
            run.fail(
                f"Dimensions of units mismatch, for series {s.sid} the units is {s.desc.units}\n"
            )
            s.num_samples = -s.num_samples
            return
        if _type_of(s, run) is None:
            return
        for value in _each_value(s):
            number = _scan(_DBL, value.data)
            if number is None:
                return
            try:
                scaled = pmConvScale(_DBL, number, iunit, target)
            except PMError:
                return
            text = _atom_text(_DBL, scaled)
            if text is None:
                return
            value.data = text
        s.desc.units = pmUnitsStr(target)


# --- arithmetic -------------------------------------------------------------------------------


@dataclass
class _Operands:
    """What series_calculate_binary_check works out for two series."""

    l_type: int
    r_type: int
    l_sem: int
    r_sem: int
    l_units: Units
    r_units: Units
    large: list[int]  # scaleSpace, scaleTime, scaleCount of the result (dims set later)


def _binary_check(op: Arith, left: _Series, right: _Series, run: _Run) -> _Operands | None:
    if left.desc.indom != right.desc.indom:
        run.fail("Operands should have the same instance domain for all of the binary operators.\n")
        return None
    if left.num_samples != right.num_samples:
        run.fail(
            f"Number of samples of two metrics are not identical, {left.sid} has "
            f"{left.num_samples} but {right.sid} has {right.num_samples}\n"
        )
        return None
    l_sem, r_sem = _sem_code(left.desc.semantics), _sem_code(right.desc.semantics)
    if l_sem == _COUNTER and r_sem == _COUNTER and op not in (Arith.PLUS, Arith.MINUS):
        run.fail(
            "Both operands have the semantics of counter, only addition or subtraction "
            "is allowed.\n"
        )
        return None
    if l_sem == _COUNTER and r_sem != _COUNTER and op not in (Arith.STAR, Arith.SLASH):
        run.fail(
            "Left operand is a counter and the right one is not, only multiplication or "
            "division is allowed.\n"
        )
        return None
    if l_sem != _COUNTER and r_sem == _COUNTER and op is not Arith.STAR:
        run.fail(
            "Left operand is not a counter and the right one is, only multiplication is allowed.\n"
        )
        return None
    l_type, r_type = _value_type(left.desc.type), _value_type(right.desc.type)
    if l_type == _UNKNOWN or r_type == _UNKNOWN:
        run.fail("Series values' Type extract fail, unsupported type\n")
        return None
    units = []
    for s in (left, right):
        parsed = _units(s.desc.units)
        if parsed is None and not s.desc.units.startswith("none"):
            run.fail(f"Units string of {s.sid} parse error, {_units_error(s.desc.units)}\n")
            return None
        units.append(parsed or Units())
    l_units, r_units = units
    scales = lambda u: [u.scaleSpace, u.scaleTime, u.scaleCount]  # noqa: E731
    large = [max(a, b) for a, b in zip(scales(l_units), scales(r_units), strict=True)]
    if large != scales(l_units):
        l_type = _DBL
    if large != scales(r_units):
        r_type = _DBL
    return _Operands(l_type, r_type, l_sem, r_sem, l_units, r_units, large)


def _result_type(op: Arith, l_type: int, r_type: int) -> int:
    types = (l_type, r_type)
    if _DBL in types or op is Arith.SLASH:
        return _DBL
    for candidate in (_FLT, _U64, _I64, _U32):
        if candidate in types:
            return candidate
    return _I32


_WIDTH = {_I32: (32, True), _U32: (32, False), _I64: (64, True), _U64: (64, False)}


def _operate(op: Arith, otype: int, a: Any, b: Any, state: _BinaryState) -> Any:
    """calculate_plus/minus/star/slash: the result, None for "no value" (an unsigned
    difference below zero, an unsigned product that overflows, and see below)."""
    if otype == _FLT:
        x, y = np.float32(a), np.float32(b)
        with np.errstate(all="ignore"):
            if op is Arith.PLUS:
                return float(x + y)
            if op is Arith.MINUS:
                return float(x - y)
            if op is Arith.STAR:
                return float(x * y)
            return float(x / y) if y != 0 else _c_div(float(x), float(y))
    if otype == _DBL:
        if op is Arith.PLUS:
            return a + b
        if op is Arith.MINUS:
            return a - b
        if op is Arith.STAR:
            return a * b
        return _c_div(a, b)
    bits, signed = _WIDTH[otype]
    if op is Arith.PLUS:
        return wrap(a + b, bits, signed)
    if op is Arith.MINUS:
        if not signed and a < b:
            return None
        return wrap(a - b, bits, signed)
    if op is Arith.STAR:
        if not signed:
            if b != 0 and a > (2**bits - 1) // b:
                return None
            return a * b
        # PCP checks a signed product against its result variable before computing it:
        # `res / l != r`, with res uninitialised at first and then the last product
        # that passed; so in practice only a zero left operand (or an operation that
        # repeats the last passing one) gives a value, the rest "no value"
        if a != 0 and (state.res is None or _c_int_div(state.res, a) != b):
            return None
        state.res = wrap(a * b, bits, signed)
        return state.res
    return None  # never reached: a quotient is always a double


def _c_int_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


class _BinaryState:
    """The pmAtomValues PCP reuses across the values of one operation (a value that
    cannot be read leaves the previous one), and the result units' scales."""

    def __init__(self, ops: _Operands) -> None:
        self.ops = ops
        self.l_val: Any = 0
        self.r_val: Any = 0
        self.large = list(ops.large)
        self.otype = _UNKNOWN
        self.res: int | None = None  # the signed product check's variable (see _operate)

    def units(self, dims: tuple[int, int, int]) -> Units:
        return Units(dims[0], dims[1], dims[2], *self.large)


def _order_binary(op: Arith, ops: _Operands, state: _BinaryState, lv: _Value, rv: _Value) -> None:
    """series_calculate_order_binary: LV.data = LV op RV, in the wider type."""
    otype = _result_type(op, ops.l_type, ops.r_type)
    state.otype = otype
    r_val, l_val = _scan(otype, rv.data), _scan(otype, lv.data)
    if r_val is not None:
        state.r_val = r_val
    if l_val is not None:
        state.l_val = l_val
    if otype in (_FLT, _DBL):
        state.l_val, state.r_val = float(state.l_val), float(state.r_val)
    else:
        state.l_val, state.r_val = int(state.l_val), int(state.r_val)
    # the scale conversion is done towards units whose dimensions are still all zero,
    # so it fails (and zeroes the result scales) unless the operand is dimensionless
    for which, units in (("l_val", ops.l_units), ("r_val", ops.r_units)):
        try:
            converted = pmConvScale(otype, getattr(state, which), units, state.units((0, 0, 0)))
        except PMError:
            state.large = [0, 0, 0]
        else:
            setattr(state, which, converted)
    result = _operate(op, otype, state.l_val, state.r_val, state)
    if result is None:
        lv.data = "no value"
    else:
        lv.data = _atom_text(otype, result) or ""


def _meta_update(s: _Series, units: Units, ops: _Operands, otype: int) -> None:
    """series_binary_meta_update: units, semantics and (when a value was computed) type."""
    s.desc.units = pmUnitsStr(units)
    if ops.l_sem == _DISCRETE and ops.r_sem == _DISCRETE:
        sem = _DISCRETE
    elif ops.l_sem != _COUNTER or ops.r_sem != _COUNTER:
        sem = _INSTANT
    else:
        sem = _COUNTER
    if otype != _UNKNOWN:
        s.desc.type = pmTypeStr(otype)
    s.desc.semantics = pmSemStr(sem)


def _dims(a: Units, b: Units, op: Arith) -> tuple[int, int, int]:
    la, lb = (a.dimSpace, a.dimTime, a.dimCount), (b.dimSpace, b.dimTime, b.dimCount)
    if op is Arith.STAR:
        return (la[0] + lb[0], la[1] + lb[1], la[2] + lb[2])
    if op is Arith.SLASH:
        return (la[0] - lb[0], la[1] - lb[1], la[2] - lb[2])
    return la


def _apply(op: Arith, run: _Run, left: _Series, right: _Series) -> _BinaryState | None:
    """One series of LEFT op RIGHT, in place in LEFT's values; None after an error."""
    ops = _binary_check(op, left, right, run)
    if ops is None:
        return None
    state = _BinaryState(ops)
    for j in range(max(left.num_samples, 0)):
        lsample, rsample = left.slot(j), right.slot(j)
        if len(lsample) != len(rsample):
            run.fail("Number of instances of two metrics are inconsistent.\n")
            return None
        for lv, rv in zip(lsample, rsample, strict=True):
            _order_binary(op, ops, state, lv, rv)
    return state


def _calc_binary(node: _Node, run: _Run) -> None:
    """+, -, / (on the first series of each side only, the rest left as they are) and *
    (series by series, or every value times a number, %e)."""
    expr = node.expr
    assert isinstance(expr, Binary)
    op = expr.op
    lnode, rnode = node.children
    lvals, rvals = lnode.values, rnode.values
    if op is Arith.STAR and (not lvals or not rvals):
        _calc_scalar(node, run)
        return
    if not lvals or not rvals:
        return
    if op is not Arith.STAR:
        state = _apply(op, run, lvals[0], rvals[0])
        if state is None:
            return
        units = state.units(_dims(state.ops.l_units, state.ops.r_units, op))
        _meta_update(lvals[0], units, state.ops, state.otype)
        node.values = lvals
        return
    otype = _UNKNOWN  # (kept from one series to the next, as PCP keeps it)
    for i in range(len(lvals)):
        if i >= len(rvals):  # PCP reads past the right side's series here
            run.fail("Number of instances of two metrics are inconsistent.\n")
            return
        state = _apply(op, run, lvals[i], rvals[i])
        if state is None:
            return
        if state.otype != _UNKNOWN:
            otype = state.otype
        units = state.units(_dims(state.ops.l_units, state.ops.r_units, op))
        _meta_update(lvals[0], units, state.ops, otype)
        node.values = lvals


def _calc_scalar(node: _Node, run: _Run) -> None:
    """number * expr or expr * number: every value times the number, %e; a real number
    makes the type double and the semantics "instance"."""
    lnode, rnode = node.children
    number_node, data = (rnode, lnode) if not rnode.values else (lnode, rnode)
    if not isinstance(number_node.expr, Number):
        return  # PCP reads a missing number here (and crashes); nothing matched
    text = number_node.expr.text
    is_int = text.isdigit()
    factor: float = float(_scan_int(text, 32, True) or 0) if is_int else c_strtod(text)
    for s in data.values:
        for value in _each_value(s):
            value.data = fmt_e(c_strtod(value.data) * factor)
        if not is_int:
            s.desc.type = "double"
            s.desc.semantics = "instance"
    node.values = data.values


_OVER_TIME = {Func.MAX: True, Func.MAX_INST: True, Func.MAX_SAMPLE: False,
              Func.MIN: True, Func.MIN_INST: True, Func.MIN_SAMPLE: False}  # fmt: skip


def _calculate(node: _Node, run: _Run) -> None:
    """series_calculate: children first, then this node's function."""
    for child in node.children:
        _calculate(child, run)
    expr = node.expr
    if isinstance(expr, Binary):
        _calc_binary(node, run)
        return
    if not isinstance(expr, Call):
        return
    func = expr.func
    if func is Func.RATE:
        _calc_rate(node, run)
    elif func in _OVER_TIME:
        larger = func in (Func.MAX, Func.MAX_INST, Func.MAX_SAMPLE)
        _calc_extreme(node, run, larger, _OVER_TIME[func])
    elif func is Func.RESCALE:
        _calc_rescale(node, run)
    elif func in (Func.ABS, Func.FLOOR, Func.LOG, Func.SQRT, Func.ROUND):
        _calc_unary(node, run, func)
    elif func in (Func.SUM, Func.SUM_INST, Func.AVG, Func.AVG_INST):
        _calc_statistical(node, func)
    elif func in (Func.SUM_SAMPLE, Func.AVG_SAMPLE):
        _calc_sample_statistical(node, func)
    elif func is Func.STDEV_INST:
        _calc_stdev(node)
    elif func is Func.STDEV_SAMPLE:
        _calc_sample_stdev(node)
    elif func is Func.TOPK_INST:
        _calc_topk(node, expr.param)
    elif func is Func.TOPK_SAMPLE:
        _calc_sample_topk(node, expr.param)
    elif func is Func.NTH_PERCENTILE_INST:
        _calc_percentile(node, expr.param)
    elif func is Func.NTH_PERCENTILE_SAMPLE:
        _calc_sample_percentile(node, expr.param)


# --- the expression's id, descriptor and text ------------------------------------------------


class _Larger:
    """The larger units series_compatibility_convert converts to: a variable of
    series_redis_hash_expression that starts uninitialised and is only ever given
    scales, so its dimensions are unknown (DIMS None) until a failed conversion zeroes
    it - which the first conversion then always is, so values keep their size."""

    def __init__(self) -> None:
        self.dims: tuple[int, int, int] | None = None
        self.scales = (0, 0, 0)

    def units(self, fallback: Units) -> Units:
        dims = self.dims or (fallback.dimSpace, fallback.dimTime, fallback.dimCount)
        return Units(*dims, *self.scales)

    def convert(self, s: _Series, units: Units) -> None:
        """One side's values to these units as doubles (%e), its type and units set."""
        for value in _each_value(s):
            number = _scan(_DBL, value.data) or 0.0
            try:
                if self.dims is None:
                    raise PMError(PM_ERR_CONV)
                number = pmConvScale(_DBL, number, units, self.units(units))
            except PMError:
                self.dims, self.scales = (0, 0, 0), (0, 0, 0)
            value.data = _atom_text(_DBL, number) or ""
        s.desc.type = pmTypeStr(_DBL)
        # (with no values converted the dimensions are still unknown: the side's own)
        s.desc.units = pmUnitsStr(self.units(units))


def _hash_expression(reader: SeriesReader, root: _Node, run: _Run) -> str | None:
    """series_redis_hash_expression: the expression's id given to every result series
    (after checking their units agree, converting scales where they differ), and its
    descriptor and text stored; None when nothing matched."""
    values = root.values
    if not values:
        return None
    text = run.canonical(root, 0)
    sid = expr_id(text).hex()
    for s in values:
        s.compatible = True
    larger = _Larger()
    for i, s in enumerate(values):
        if not s.compatible:
            run.fail(
                f"Descriptors for metric '{s.metric_name or '(null)'}' between different "
                "sources are incompatible.\n"
            )
            break
        units0 = Units() if s.desc.units.startswith("none") else _units(s.desc.units)
        if units0 is None:
            s.compatible = False
            run.fail(f"Invalid units string: {s.desc.units}\n")
            break
        for j, t in enumerate(values):
            if not t.compatible or i == j:
                continue
            units1 = Units() if t.desc.units.startswith("none") else _units(t.desc.units)
            if units1 is None:
                t.compatible = False
                run.fail(f"Invalid units string: {t.desc.units}\n")
                break
            if not _same_dims(units0, units1):
                t.compatible = False
                run.fail(
                    "Incompatible units between operand metrics or expressions\n"
                    f"'{s.metric_name or '(null)'}' ({s.desc.units})\n"
                    f"vs'{t.metric_name or '(null)'}' ({t.desc.units})\n"
                )
                break
            scales0 = (units0.scaleSpace, units0.scaleTime, units0.scaleCount)
            scales1 = (units1.scaleSpace, units1.scaleTime, units1.scaleCount)
            larger.scales = tuple(max(a, b) for a, b in zip(scales0, scales1, strict=True))
            if larger.scales != scales0:
                larger.convert(s, units0)
            if larger.scales != scales1:
                larger.convert(t, units1)
        if run.failed:
            break
        s.sid = sid
    if run.failed or not values[0].compatible:
        return sid
    desc = values[0].desc
    reader.client.hset(
        schema.desc_key(bytes.fromhex(sid)),
        mapping={
            "indom": desc.indom, "pmid": desc.pmid, "semantics": desc.semantics,
            "source": NULL_ID, "type": desc.type, "units": desc.units,
        },
    )  # fmt: skip
    reader.client.hset(schema.expr_key(bytes.fromhex(sid)), mapping={"query": text})
    return sid


# --- answering ------------------------------------------------------------------------------


def _evaluate(
    reader: SeriesReader, expr: Expr, sampling: _Sampling | None, now: int
) -> tuple[str | None, list[_Series]]:
    """EXPR computed over READER's store: its id and result series (values picked with
    SAMPLING; without it, descriptors only).  SeriesError with PCP's first message."""
    run = _Run()
    root = _tree(expr, run)
    _load(reader, root, sampling, now, select)
    _calculate(root, run)
    sid = _hash_expression(reader, root, run)
    if run.failed:
        raise SeriesError(run.messages[0])
    return sid, root.values


def _values(series: list[_Series]) -> list[SeriesValue]:
    """series_node_values_report: every series' samples, instances in order."""
    out = []
    for s in series:
        for j in range(max(s.num_samples, 0)):
            for v in s.slot(j):
                out.append(SeriesValue(s.sid, v.series, v.timestamp, v.ns, v.data))
    return out


def run_function(reader: SeriesReader, query: Query, *, now: int | None = None) -> QueryAnswer:
    """The answer to QUERY, whose expression is a function call or arithmetic: without a
    time window the expression's id (`[]` when nothing matched), with one its values.
    NOW (ns since the epoch) is what relative times count from.  Writes the expression's
    `pcp:desc:series:<id>` and `pcp:expr:series:<id>` as PCP does; SeriesError with
    PCP's message for an expression PCP refuses."""
    now = time.time_ns() if now is None else now
    if not query.wants_values:
        sid, _ = _evaluate(reader, query.expr, None, now)
        return QueryAnswer([sid] if sid else [], expression=True)
    timing = _resolve(query.window, now)
    sampling = _Sampling(start=timing.start, delta=timing.delta, count=timing.count % 2**32)
    sid, series = _evaluate(reader, query.expr, sampling, now)
    if sid is None:
        return QueryAnswer([], [], expression=True)
    return QueryAnswer([sid], _values(series), expression=True)


def values_of_expression(
    reader: SeriesReader, sid: str, window: Window, *, now: int | None = None
) -> list[SeriesValue] | None:
    """/series/values for SID when it is an expression's id (series_query_expr_reply):
    the canonical text stored in `pcp:expr:series:<sid>` parsed again and evaluated with
    WINDOW as PCP does it - every vector's whole stream is read (the text has no
    windows), and WINDOW only picks samples: its samples cap (1 when the request gave
    no window), its interval (stepping from its start, or the first sample), never its
    start or finish as bounds.  So without a window the answer is each result's first
    value over the oldest sample, e.g. a raw sample for rate().  None when SID has no
    stored expression.  Rewrites the expression's descriptor, as PCP does;
    SeriesError with PCP's message when the expression fails."""
    raw = bytes.fromhex(sid)
    text = reader.client.hget(schema.expr_key(raw), "query")
    if text is None:
        return None
    try:
        query = parse(text.decode("utf-8", "surrogateescape"))
    except QuerySyntaxError as exc:
        raise SeriesError(exc.message) from None
    if not isinstance(query.expr, (Call, Binary)):
        return None
    now = time.time_ns() if now is None else now
    start = now - window.range if window.range else window.start
    count = window.count
    if not (window.start or window.end or window.delta or window.count or window.range):
        count = 1
    sampling = _Sampling(start=start, delta=window.delta, count=count % 2**32)
    expr_sid, series = _evaluate(reader, query.expr, sampling, now)
    if expr_sid is None:
        return []
    return _values(series)
