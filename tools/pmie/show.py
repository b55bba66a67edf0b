"""How pmie shows values: -v's plain values, -V's annotated with host and
instance, -W's satisfying bindings, and the %h %i %v %c of action strings."""

from __future__ import annotations

import functools
import math

from . import values as v
from .values import B_FALSE, B_TRUE, B_UNKNOWN, Node

_EXTREMA = frozenset(f"{op}_{axis}" for op in ("max", "min") for axis in ("host", "inst", "sample"))
_INT_LIMIT = 2**31


@functools.lru_cache(maxsize=4096)
def number(d: float) -> str:
    """One number as pmie prints it: integral values as integers, else 2-3 figures."""
    if -_INT_LIMIT <= d < _INT_LIMIT and d == int(d):
        return str(int(d))
    a = abs(d)
    if a < 0.5:
        return f"{d:g}"
    if a < 5:
        return f"{d:.2f}"
    if a < 50:
        return f"{d:.1f}"
    return f"{d:.0f}"


def _truth(val: int) -> str:
    if val == B_FALSE:
        return "false"
    if val == B_TRUE:
        return "true"
    if val == B_UNKNOWN:
        return "unknown"
    return "0x%02x?" % (val & 0xFF)


def show_boolean(x: Node, nth: int) -> str:
    return " ".join(
        "unknown" if x.valid == 0 else _truth(x.sample(k)[nth]) for k in range(x.nsmpls)
    )


def show_num(x: Node, nth: int) -> str:
    out = []
    for k in range(x.nsmpls):
        d = x.sample(k)[nth] if x.valid > k else math.nan
        if isinstance(d, str):
            d = math.nan
        if math.isnan(d):
            out.append("unknown" if x.sem == v.SEM_BOOLEAN else "?")
        else:
            out.append(number(d))
    return " ".join(out)


def _show_strings(x: Node, nth: int) -> str:
    return " ".join(f'"{x.sample(k)[nth]}"' for k in range(x.nsmpls))


def concat_value(x: Node, i: int) -> str:
    """concatvalue: the Ith value of X in each of its samples."""
    if x.sem in (v.SEM_NUMVAR, v.SEM_NUMCONST, v.SEM_UNKNOWN):
        return show_num(x, i)
    if x.sem == v.SEM_BOOLEAN:
        return show_boolean(x, i)
    if x.sem == v.SEM_CHAR:
        return f'"{x.text}"' if i == 0 else ""
    if x.sem in (v.PM_SEM_INSTANT, v.PM_SEM_DISCRETE):
        m = x.metrics
        stringy = m is not None and m.desc is not None and m.desc.type == v.STRING_TYPE
        if x.op == "fetch" and stringy:
            return _show_strings(x, i)
        return show_num(x, i)
    return f"concatvalue: botch sem={x.sem}"


def show_value(x: Node) -> str:
    """-v: every value of X, or "?" when it has none."""
    if x.nvals <= 0:
        return "?"
    if x.sem == v.SEM_CHAR:
        return concat_value(x, 0)
    return " ".join(concat_value(x, i) for i in range(x.tspan)) or "?"


def lookup_host_inst(x: Node, nth: int) -> tuple[str | None, str | None, str | None]:
    """The host, archive and instance of X's NTH value (an extremum's: where it came from)."""
    pick = -1
    m = None
    if x.op in _EXTREMA:
        wanted, axis = x.sample()[0], x.op.rsplit("_", 1)[1]
        assert x.a1 is not None
        x = x.a1
        if (x.e_idom <= 0 and x.hdom <= 0) or x.metrics is None:
            return None, None, None
        if axis == "sample":
            hit = any(wanted == x.sample(k)[0] for k in range(x.nsmpls))
            pick = nth if hit else -1
        else:
            found = [k for k in range(x.tspan) if wanted == x.sample()[k]]
            pick = found[0] if found and axis == "inst" else -1
            hit = bool(found)
        m = x.metrics if hit else None
        hosts = v.bounds(x)
        if hit and axis == "host" and found[0] < len(hosts):
            m = hosts[found[0]]  # (the host whose value was the extremum)
    else:
        if (x.e_idom <= 0 and x.hdom <= 0) or x.metrics is None:
            return None, None, None
        pick, m = nth, None
        for m in v.bounds(x):  # (the host holding the nth value)
            if pick < m.m_idom:
                break
            pick -= max(m.m_idom, 0)
        else:
            return None, None, None
    if m is None:
        return None, None, None
    inst = m.inames[pick] if pick >= 0 and x.e_idom > 0 and m.inames else None
    return m.hname, m.hconn, inst


def _binding(x: Node, i: int, shown: Node) -> str:
    host, _, inst = lookup_host_inst(x, i)
    host = "(null)" if host is None else host  # (printf's word for C's NULL, as pmie's)
    where = f"{host}: [{inst}] " if inst else f"{host}: "
    body = show_boolean(shown, i) if shown.sem == v.SEM_BOOLEAN else show_num(shown, i)
    return "\n    " + where + body


def show_annotated(x: Node) -> str:
    """-V: each value with the host and instance it belongs to."""
    if (x.e_idom <= 0 and x.hdom <= 0) or x.sem == v.SEM_CHAR or x.metrics is None or x.valid == 0:
        return show_value(x)
    return "".join(_binding(x, i, x) for i in range(x.tspan))


def _find_metrics(y: Node | None) -> Node | None:
    if y is None:
        return None
    if y.metrics is not None:
        return y
    if y.op != "&&":
        return None
    return _find_metrics(y.a1) or _find_metrics(y.a2)


def find_bindings(x: Node) -> Node:
    """The subexpression whose instances say which bindings made X true."""
    if x.metrics is None:
        x = _find_metrics(x.a1) or x
    while x.metrics is not None and (x.e_idom <= 0 or x.hdom <= 0):
        if x.op in v.AGGREGATES:
            break
        if x.a1 is not None and x.metrics is x.a1.metrics:
            x = x.a1
        elif x.a2 is not None:
            x = x.a2
        else:
            break
    return x


def find_values(x: Node) -> Node:
    """The subexpression whose values those bindings had."""
    while x.sem == v.SEM_BOOLEAN and x.metrics is not None:
        assert x.a1 is not None
        nxt = x.a1 if x.metrics is x.a1.metrics else x.a2
        assert nxt is not None
        x = nxt
    return x


def _satisfied(x1: Node, i: int) -> bool:
    if x1.sem == v.SEM_BOOLEAN:
        return x1.sample()[i] == B_TRUE
    return x1.sem != v.SEM_UNKNOWN


def show_satisfying(x: Node) -> str:
    """-W: the bindings that made a rule true, with their values."""
    if x.metrics is None or x.valid == 0:
        return show_value(x)
    if x.sem != v.SEM_BOOLEAN:
        return show_annotated(x)
    x1 = find_bindings(x)
    x2 = find_values(x1)
    if not x1.valid:
        return " <no bindings available>"
    return "".join(_binding(x1, i, x2) for i in range(x1.tspan) if _satisfied(x1, i))


_FORMATS = "hivc"


def _next_format(text: str, start: int) -> int:
    """Where the next %h, %i, %v or %c begins (-1: none)."""
    at = text.find("%", start)
    while at >= 0:
        if text[at + 1 : at + 2] in tuple(_FORMATS):
            return at
        at = text.find("%", at + 1)
    return -1


def format_satisfying(curr: Node, text: str) -> str | None:
    """An action string, repeated for each satisfying binding with its substitutions
    (None: it has substitutions and no binding satisfied)."""
    parts = _parts(text)
    if len(parts) == 1:
        return text
    x1 = find_bindings(curr)
    x2 = find_values(x1)
    if not x1.valid:
        return text
    if x1.sem == v.SEM_BOOLEAN:
        sample = x1.sample()
        chosen = tuple(i for i in range(x1.tspan) if sample[i] == B_TRUE)
    elif x1.sem != v.SEM_UNKNOWN:
        chosen = tuple(range(x1.tspan))
    else:
        chosen = ()
    if "v" in parts[1::2] or x1.op in _EXTREMA:
        return _substitute(parts, x1, x2, chosen)
    # (without values, the text depends only on which bindings satisfied: kept, for as
    # long as the instances' names are the same list)
    made = _memo(x1)
    key = (text, chosen)
    if key not in made:
        made[key] = _substitute(parts, x1, x2, chosen)
    return made[key]


def _substitute(parts: tuple[str, ...], x1: Node, x2: Node, chosen) -> str | None:
    out: list[str] = []
    value = _value_shower(x2)
    pairs = list(zip(parts[1::2], parts[2::2], strict=True))
    words = _words_of(x1)
    for i in chosen:
        said = words(i)
        out.append(parts[0])
        for code, literal in pairs:
            out.append(value(i) if code == "v" else said[code])
            out.append(literal)
    return "".join(out) if out else None


def _memo(x1: Node) -> dict:
    """What was made from X1's bindings, kept while the instances' names of each of its
    hosts are the same lists (an instance domain that changes gets new ones)."""
    names = [m.inames for m in v.bounds(x1)]
    kept = x1.memo
    if (
        kept is None
        or len(kept[0]) != len(names)
        or any(a is not b for a, b in zip(kept[0], names, strict=True))
    ):
        x1.memo = kept = (names, {})
    return kept[1]


def _words_of(x1: Node):
    """The %h %i %c words of each of X1's bindings: looked up once per binding while
    the instances' names are the same list (an extremum's depend on its value: each
    time)."""

    def lookup(i: int) -> dict[str, str]:
        host, conn, inst = lookup_host_inst(x1, i)
        return {
            "h": host or "<%h undefined>",
            "i": inst or "<%i undefined>",
            "c": conn or "<%c undefined>",
        }

    if x1.op in _EXTREMA:
        return lookup
    made = _memo(x1)

    def cached(i: int) -> dict[str, str]:
        key = ("#words", i)
        if key not in made:
            made[key] = lookup(i)
        return made[key]

    return cached


def _value_shower(x: Node):
    """concat_value for X's values, made once for all of them: for one sample of
    numbers (the common case) directly, else concat_value itself."""
    stringy = x.op == "fetch" and x.metrics is not None and x.metrics.desc is not None \
        and x.metrics.desc.type == v.STRING_TYPE  # fmt: skip
    if x.nsmpls != 1 or x.sem in (v.SEM_BOOLEAN, v.SEM_CHAR) or stringy:
        return lambda i: concat_value(x, i)
    if x.valid <= 0:
        return lambda i: "?"
    ring = x.sample()

    def show(i: int) -> str:
        d = ring[i]
        if isinstance(d, str) or math.isnan(d):
            return "?"
        return number(d)

    return show


@functools.lru_cache(maxsize=256)
def _parts(text: str) -> tuple[str, ...]:
    """TEXT split at its %h %i %v %c: literal, code, literal, ... code, literal."""
    parts: list[str] = []
    prev, at = 0, _next_format(text, 0)
    while at >= 0:
        parts += [text[prev:at], text[at + 1]]
        prev = at + 2
        at = _next_format(text, prev)
    parts.append(text[prev:])
    return tuple(parts)
