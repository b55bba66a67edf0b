"""Values as PCP's tools print them: pmPrintValue, pmAtomStr, pminfo -f and pmval's columns.

Every function returns the text libpcp (or the tool) writes, byte for byte on a
little-endian Linux host, so a command-line layer only has to print it.
"""

from __future__ import annotations

import math
import struct
import time
from collections.abc import Callable
from typing import Any

from .cnumbers import wrap
from .convert import pmExtractValue
from .desc import Desc
from .errors import PM_ERR_INST, PMError, pmErrStr
from .ids import PM_INDOM_NULL, pmInDomStr
from .types import PMSem, PMType, ValFmt, pmTypeStr
from .values import ARRAY_CODES, ValueBlock, ValueSet, block_payload

__all__ = [
    "pmAtomStr", "pmPrintValue", "pminfo_values", "pmval_real", "pmval_width", "pmvalue_of",
    "print_value",
]  # fmt: skip

_EVENT_TYPES = (PMType.PM_TYPE_EVENT, PMType.PM_TYPE_HIGHRES_EVENT)
_PM_EVENT_FLAG_MISSED = 1 << 31


def _printf(fmt: str, *args: Any) -> str:
    """C printf's text for FMT: Python's % operator agrees for these conversions."""
    return fmt % args  # printf semantics, negative "*" widths included


def _cfloat(spec: str, width: int, x: float) -> str:
    """printf's %*<spec> of X: like Python's, but a NaN with its sign bit prints "-nan"."""
    if math.isnan(x) and math.copysign(1.0, x) < 0:
        return _printf(spec, width, -math.inf).replace("inf", "nan").replace("INF", "NAN")
    return _printf(spec, width, x)


def _cstr(raw: bytes) -> str:
    """Bytes as text for output, undecodable bytes kept (surrogateescape)."""
    return raw.decode("utf-8", "surrogateescape")


def _isprint(byte: int) -> bool:
    return 0x20 <= byte < 0x7F


# --- pmAtomStr ------------------------------------------------------------------------


def _block_bytes(atom: Any) -> tuple[int | None, bytes]:
    if isinstance(atom, ValueBlock):
        return atom.vtype, atom.vbuf
    return None, bytes(atom)


def pmAtomStr(atom: Any, type_: int) -> str:
    """ATOM of TYPE_ as libpcp's pmAtomStr writes it ("%e" for floats, quoted strings).

    Aggregates and events may be given as bytes (the block payload; the block type
    is then TYPE_) or as a ValueBlock; None is a null pointer.
    """
    if type_ in (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64):
        return str(atom)
    if type_ in (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE):
        return _cfloat("%*e", 0, atom)
    if type_ == PMType.PM_TYPE_STRING:
        if atom is None:
            return "<null>"
        raw = atom.encode("utf-8", "surrogateescape") if isinstance(atom, str) else bytes(atom)
        raw = raw.split(b"\0", 1)[0]
        return f'"{_cstr(raw)}"' if len(raw) < 38 else f'"{_cstr(raw[:34])}..."'
    if type_ in (PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_AGGREGATE_STATIC):
        if atom is None:
            return "<null>"
        vtype, vbuf = _block_bytes(atom)
        text = f"[type={pmTypeStr(type_ if vtype is None else vtype)} len={len(vbuf)}]"
        for i, byte in enumerate(vbuf[:12]):
            text += f" {byte:02x}" if i % 4 == 0 else f"{byte:02x}"
        return text + (" ..." if len(vbuf) > 12 else "")
    if type_ in _EVENT_TYPES:
        n = struct.unpack_from(">i", _block_bytes(atom)[1])[0]
        return "[1 event record]" if n == 1 else f"[{n} event records]"
    if type_ == PMType.PM_TYPE_NOSUPPORT:
        return "Error: unexpected type: Not Supported"
    if type_ == PMType.PM_TYPE_UNKNOWN:
        return "Error: unexpected type: Unknown"
    return f"Error: unexpected type: Illegal type={type_}"


# --- pmPrintValue ---------------------------------------------------------------------


def _stamp(sec: int, frac: int, digits: int) -> str:
    tm = time.localtime(sec)
    return f"{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}.{frac:0{digits}d}"


def _event_summary(vbuf: bytes, highres: bool) -> str:
    """libpcp's one-line summary of an event array (wire layout, big-endian).

    libpcp's walk does not step over a "missed" record, so its count of missed
    records and its last timestamp come out as it computes them; so do these.
    """
    header = struct.Struct(">qqIi" if highres else ">iiIi")
    nrecords = struct.unpack_from(">i", vbuf)[0]
    base, nmissed = 4, 0
    for _ in range(nrecords - 1):
        flags, nparams = header.unpack_from(vbuf, base)[2:]
        if flags & _PM_EVENT_FLAG_MISSED:
            nmissed += nparams
            continue
        base += header.size
        for _ in range(nparams):
            vlen = struct.unpack_from(">I", vbuf, base + 4)[0] & 0xFFFFFF
            base += 4 + (vlen + 3) // 4 * 4

    def stamp(offset: int) -> str:
        sec, sub = header.unpack_from(vbuf, offset)[:2]
        if highres:
            return _stamp(sec, wrap(sub, 32, True), 9)
        return _stamp(sec, int(sub / 1000), 3)

    text = f"[{nrecords} event record" + ("s" if nrecords != 1 else "")
    if nmissed > 0:
        text += f" ({nmissed} missed)"
    if nrecords > 0:
        text += " timestamp" + ("s " if nrecords > 1 else " ") + stamp(4)
        if nrecords > 1:
            text += "..." + stamp(base)
    return text + "]"


def _pmlc_control(lval: int) -> str:
    """pmlogger's logging state packed in an event metric's insitu word (pmlc)."""
    text = "[pmlc control " + ("mand " if lval & 2 else "adv ") + ("on " if lval & 1 else "off ")
    if lval & 8:
        text += " " if lval & 4 else "na "
    else:
        text += "nl "
    return text + f"{(lval & ~0xF) >> 4 & 0x0FFFFFFF}]"


def _host_bytes(block: ValueBlock) -> bytes:
    """A block's payload as libpcp holds it in memory after decoding (host order)."""
    code = ARRAY_CODES.get(block.vtype)
    if code is not None and len(block.vbuf) == struct.calcsize(code):
        return struct.pack("<" + code, struct.unpack(">" + code, block.vbuf)[0])
    return block.vbuf


def _raw_dump(valfmt: int, value: int | ValueBlock, minwidth: int) -> str:
    """pmPrintValue's dump of a value it cannot read as its type: every reading."""
    if valfmt == ValFmt.PM_VAL_INSITU and isinstance(value, int):
        word = value & 0xFFFFFFFF
        text = _printf("%*u", minwidth, word)
        fval = struct.unpack("<f", struct.pack("<I", word))[0]
        if not math.isnan(fval):
            text += " " + _cfloat("%*.8g", minwidth, fval)
        return text + _printf(" 0x%*x", minwidth - 2 if minwidth > 2 else minwidth, word)
    if valfmt not in (ValFmt.PM_VAL_DPTR, ValFmt.PM_VAL_SPTR) or not isinstance(value, ValueBlock):
        return f"pmPrintValue: bad valfmt ({valfmt})?\n"
    vbuf = _host_bytes(value)
    parts = []
    if len(vbuf) == 8:
        parts.append(_printf("%*u", minwidth, struct.unpack("<Q", vbuf)[0]))
        dval = struct.unpack("<d", vbuf)[0]
        if not math.isnan(dval):
            parts.append(_cfloat("%*.16g", minwidth, dval))
    if len(vbuf) == 4:
        fval = struct.unpack("<f", vbuf)[0]
        if not math.isnan(fval):
            parts.append(_cfloat("%*.8g", minwidth, fval))
    if all(map(_isprint, vbuf)):
        parts.append(" " * max(0, minwidth - len(vbuf) - 2) + f'"{_cstr(vbuf)}"')
    pad = " " * max(0, minwidth - 2 * len(vbuf) - 2)
    text = " ".join(parts)
    return text + pad + (" " if parts else "") + "[" + vbuf.hex() + "]"


def pmPrintValue(valfmt: int, type_: int, value: int | ValueBlock, minwidth: int = 1) -> str:
    """The text libpcp's pmPrintValue writes for one pmValue of a metric of TYPE_.

    VALUE is the insitu 32-bit word (an int) or the ValueBlock.  Integers print as
    "%*d", floats as "%*.8g", doubles as "%*.16g", strings in double quotes padded to
    MINWIDTH; a value that cannot be read as TYPE_ (and every aggregate) is dumped
    every way it can be read, ending in its bytes in hex.
    """
    atom: Any = None
    if type_ not in (PMType.PM_TYPE_UNKNOWN, *_EVENT_TYPES):
        try:
            atom = pmExtractValue(valfmt, value, type_, type_)
        except PMError:
            type_ = PMType.PM_TYPE_UNKNOWN
    if type_ in (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64):
        return _printf("%*d", minwidth, atom)
    if type_ == PMType.PM_TYPE_FLOAT:
        return _cfloat("%*.8g", minwidth, atom)
    if type_ == PMType.PM_TYPE_DOUBLE:
        return _cfloat("%*.16g", minwidth, atom)
    if type_ == PMType.PM_TYPE_STRING:
        raw = atom.encode("utf-8", "surrogateescape")
        return " " * max(0, minwidth - len(raw) - 2) + f'"{atom}"'
    if type_ in (PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_UNKNOWN):
        return _raw_dump(valfmt, value, minwidth)
    if type_ in _EVENT_TYPES:
        if isinstance(value, int):  # insitu: pmlogger's state word, not an event array
            return _pmlc_control(value)
        try:
            return _event_summary(value.vbuf, type_ == PMType.PM_TYPE_HIGHRES_EVENT)
        except (struct.error, OverflowError, OSError, ValueError):
            return "[malformed event record array]"  # libpcp would read past the block
    # unreachable in libpcp too: a failed extraction turned any other type into UNKNOWN
    return f"pmPrintValue: unknown value type={type_}\n"


def pmvalue_of(atom: Any, type_: int) -> tuple[int, int | ValueBlock]:
    """(valfmt, value) of the pmValue PCP would build for ATOM of TYPE_ (pmStuffValue)."""
    if isinstance(atom, ValueBlock):
        return ValFmt.PM_VAL_DPTR, atom
    if type_ in (PMType.PM_TYPE_32, PMType.PM_TYPE_U32) or (
        type_ == PMType.PM_TYPE_UNKNOWN and isinstance(atom, int)
    ):
        return ValFmt.PM_VAL_INSITU, atom & 0xFFFFFFFF
    if type_ in _EVENT_TYPES or type_ == PMType.PM_TYPE_AGGREGATE_STATIC:
        return ValFmt.PM_VAL_SPTR, ValueBlock(type_, bytes(atom))
    if type_ in ARRAY_CODES or type_ == PMType.PM_TYPE_STRING:
        return ValFmt.PM_VAL_DPTR, ValueBlock(type_, block_payload(type_, atom))
    return ValFmt.PM_VAL_DPTR, ValueBlock(type_, bytes(atom))


def print_value(atom: Any, type_: int, minwidth: int = 1) -> str:
    """ATOM (a plain Python value of metric type TYPE_) as pmPrintValue prints it."""
    valfmt, value = pmvalue_of(atom, type_)
    return pmPrintValue(valfmt, type_, value, minwidth)


# --- pminfo -f ------------------------------------------------------------------------


def pminfo_values(
    desc: Desc,
    vset: ValueSet,
    instname: Callable[[int], str | None],
    force: bool = False,
    indent: str = "",
) -> str:
    """The lines pminfo -f prints for one metric's values (mydump), newline-ended.

    INSTNAME maps an instance id to its name (None when unknown); FORCE is pminfo -F,
    which reports an unknown instance as "DISAPPEARED" instead of an error.
    """
    if vset.numval == 0:
        return indent + "No value(s) available!\n"
    if vset.numval < 0:
        return indent + f"Error: {pmErrStr(vset.numval)}\n"
    out = [indent]
    for inst, value in zip(vset.insts, _pmvalues(vset), strict=True):
        if desc.indom != PM_INDOM_NULL:
            name = instname(inst)
            number = wrap(inst, 32)  # (as C's %d prints it)
            if name is None and force:
                out.append(f'    inst [{number} "DISAPPEARED"]\n')
                continue
            if name is None:
                out.append(
                    f"pmNameIndom: indom={pmInDomStr(desc.indom)} inst={number}: "
                    f"{pmErrStr(PM_ERR_INST)}\n    inst [{number}]"
                )
            else:
                out.append(f'    inst [{number} or "{name}"]')
        else:
            out.append("   ")
        out.append(" value " + pmPrintValue(vset.valfmt, desc.type, value, 1) + "\n")
    return "".join(out)


def _pmvalues(vset: ValueSet) -> list[int | ValueBlock]:
    """Each value of a set as its pmValue payload: the insitu word or the block."""
    if vset.valfmt == ValFmt.PM_VAL_INSITU:
        return list(vset.values)
    return [value for _, value in vset.vlist]


# --- pmval's columns ------------------------------------------------------------------

_PMVAL_WIDTHS = {
    PMType.PM_TYPE_32: 11,
    PMType.PM_TYPE_U32: 11,
    PMType.PM_TYPE_64: 21,
    PMType.PM_TYPE_U64: 21,
    PMType.PM_TYPE_FLOAT: 13,
    PMType.PM_TYPE_DOUBLE: 21,
    PMType.PM_TYPE_STRING: 21,
    PMType.PM_TYPE_EVENT: 0,
    PMType.PM_TYPE_HIGHRES_EVENT: 0,
    PMType.PM_TYPE_AGGREGATE: 21,
    PMType.PM_TYPE_AGGREGATE_STATIC: 21,
}


def pmval_width(type_: int) -> int:
    """pmval's default column width for values of TYPE_; KeyError for a type it refuses."""
    return _PMVAL_WIDTHS[PMType(type_)]


def pmval_real(v: float, sem: int, minwidth: int, fixed: int = -1) -> str:
    """A float or rate in pmval's column format: magnitude-dependent decimals, aligned
    points, "!" for a negative counter rate; FIXED (pmval -f) forces "%.Nf"."""
    if v < 0.0 and sem == PMSem.PM_SEM_COUNTER:
        return _printf("%*s", minwidth, "!")
    if fixed != -1:
        if math.isnan(v):
            return _cfloat("%*f", minwidth, v)
        return _printf("%*.*f", minwidth, fixed, v)
    if v == 0:
        fmt, minwidth = "%*.0f.0   ", minwidth - 5
    elif v < 0.1 or v > 9999:
        fmt = "%*.3E"
    elif v <= 0.9999:
        fmt = "%*.4f"
    elif v <= 9.999:
        fmt, minwidth = "%*.3f ", minwidth - 1
    elif v <= 99.99:
        fmt, minwidth = "%*.2f  ", minwidth - 2
    elif v <= 999.9:
        fmt, minwidth = "%*.1f   ", minwidth - 3
    else:
        fmt, minwidth = "%*.0f.    ", minwidth - 5
    return _cfloat(fmt, minwidth, v)


def pmval_reals(values: Any, sem: int, minwidth: int, fixed: int = -1) -> list[str]:
    """pmval_real of every value in VALUES (floats, e.g. a NumPy array): the same text,
    with each value's format picked by comparisons made once for all of them."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    w = minwidth
    if fixed != -1:
        fmts = [f"%{w}.{fixed}f"]
        kind = np.zeros(len(v), dtype=np.int8)
    else:
        fmts = [f"%{w - 5}.0f.0   ", f"%{w}.3E", f"%{w}.4f", f"%{w - 1}.3f ",
                f"%{w - 2}.2f  ", f"%{w - 3}.1f   ", f"%{w - 5}.0f.    "]  # fmt: skip
        kind = np.select(
            [v == 0, (v < 0.1) | (v > 9999), v <= 0.9999, v <= 9.999, v <= 99.99, v <= 999.9],
            [0, 1, 2, 3, 4, 5],
            6,
        ).astype(np.int8)
    out = [fmts[k] % x for k, x in zip(kind.tolist(), v.tolist(), strict=True)]
    odd = ~np.isfinite(v)
    if sem == PMSem.PM_SEM_COUNTER:
        odd |= v < 0.0
    for i in np.flatnonzero(odd).tolist():
        out[i] = pmval_real(float(v[i]), sem, minwidth, fixed)
    return out


#: pmNumberStr's scales: (the least magnitude shown so for a positive value, and for a
#: negative one (a place less of room), the divisor, the suffix), largest first
_NUMBER_SCALES = (
    (999995000000.0, 99995000000.0, 1e12, "T"),
    (999995000.0, 99995000.0, 1e9, "G"),
    (999995.0, 99995.0, 1e6, "M"),
    (999.995, 99.995, 1e3, "K"),
    (0.005, 0.005, 1.0, " "),
)


def pmNumberStr(value: float) -> str:
    """libpcp's pmNumberStr: VALUE in seven characters, scaled to K, M, G or T (values
    too big are " inf?  ", those under a half hundredth 0)."""
    positive = value >= 0.0
    size = value if positive else -value
    if size >= (999995000000000.0 if positive else 99995000000000.0):
        return " inf?  " if positive else "-inf?  "
    for up, down, scale, suffix in _NUMBER_SCALES:
        if size >= (up if positive else down):
            return f"{value / scale:6.2f}{suffix}"
    return f"{0.0:6.2f} "
