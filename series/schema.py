"""PCP 6's pmseries key layout in Redis (schema version 2): key names, stream entry ids
and how values and descriptors are written as text.  See docs/series-notes.md."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_NYI
from purepcp.pmapi.ids import (
    PM_INDOM_NULL,
    pmID_cluster,
    pmID_domain,
    pmID_item,
    pmInDom_domain,
    pmInDom_serial,
)
from purepcp.pmapi.types import PMType, pmSemStr
from purepcp.pmapi.units import pmUnitsStr

if TYPE_CHECKING:  # (NumPy loads with the first values written: a reader needs none)
    import numpy as np

SCHEMA_VERSION = 2
VERSION_KEY = "pcp:version:schema"
LOCATION_KEY = "pcp:source:location"
#: the string maps: an id (bin20 S(name)) -> the name
MAPS = ("context.name", "metric.name", "inst.name", "label.name")
#: pmwebapi_type_str's names, by PM_TYPE (the desc hash's spelling)
TYPE_NAMES = (
    "32", "u32", "64", "u64", "float", "double", "string",
    "aggregate", "aggregate_static", "event", "highres_event",
)  # fmt: skip
#: the same names back to PM_TYPE
TYPE_CODES = {name: code for code, name in enumerate(TYPE_NAMES)}
#: [pmseries] defaults
DEFAULT_MAXLEN = 8640
DEFAULT_EXPIRE = 86400
DEFAULT_CURSOR_COUNT = 256


def map_key(mapname: str) -> str:
    """The hash of the string map MAPNAME (`metric.name`, `label.<hex>.value`, ...)."""
    return f"pcp:map:{mapname}"


def label_value_map(label_id: bytes) -> str:
    """The name of the map of one label's values."""
    return f"label.{label_id.hex()}.value"


def channel(mapname: str) -> str:
    """Where a new map entry is announced."""
    return f"pcp:channel:{mapname}"


def series_key(what: str, ident: bytes) -> str:
    """`pcp:series:<what>:<hex>`: the metric series having that name, instance name,
    source name or label value (WHAT is `metric.name`, `inst.name`, `context.name`,
    `label.<hex>.value`)."""
    return f"pcp:series:{what}:{ident.hex()}"


def desc_key(sid: bytes) -> str:
    return f"pcp:desc:series:{sid.hex()}"


def names_key(sid: bytes) -> str:
    """The set of a metric series' name ids."""
    return f"pcp:metric.name:series:{sid.hex()}"


def instances_key(sid: bytes) -> str:
    return f"pcp:instances:series:{sid.hex()}"


def inst_key(isid: bytes) -> str:
    return f"pcp:inst:series:{isid.hex()}"


def labelvalue_key(sid: bytes) -> str:
    return f"pcp:labelvalue:series:{sid.hex()}"


def labelflags_key(sid: bytes) -> str:
    return f"pcp:labelflags:series:{sid.hex()}"


def values_key(sid: bytes) -> str:
    return f"pcp:values:series:{sid.hex()}"


def expr_key(sid: bytes) -> str:
    return f"pcp:expr:series:{sid.hex()}"


def source_by_name_key(name_id: bytes) -> str:
    """The set of sources known by a name (archive path or host name)."""
    return f"pcp:source:context.name:{name_id.hex()}"


def names_of_source_key(source: bytes) -> str:
    """The set of a source's name ids."""
    return f"pcp:context.name:source:{source.hex()}"


# ----------------------------------------------------------------------- descriptors


def type_name(type_: int) -> str:
    if 0 <= type_ < len(TYPE_NAMES):
        return TYPE_NAMES[type_]
    return "unsupported" if type_ == PMType.PM_TYPE_NOSUPPORT else "unknown"


def pmid_text(pmid: int) -> str:
    return f"{pmID_domain(pmid)}.{pmID_cluster(pmid)}.{pmID_item(pmid)}"


def indom_text(indom: int) -> str:
    if indom == PM_INDOM_NULL:
        return "none"
    return f"{pmInDom_domain(indom)}.{pmInDom_serial(indom)}"


def desc_fields(desc: Desc, source: bytes) -> dict[str, Any]:
    """The fields of `pcp:desc:series:<sid>`, as PCP writes them."""
    return {
        "indom": indom_text(desc.indom),
        "pmid": pmid_text(desc.pmid),
        "semantics": pmSemStr(desc.sem),
        "source": source,
        "type": type_name(desc.type),
        "units": pmUnitsStr(desc.units) or "none",
    }


# ------------------------------------------------------------------------- streams


def stream_id(ns: int) -> str:
    """A sample time (ns since the epoch) as a stream entry id: milliseconds, then the
    microseconds within that millisecond (finer digits dropped), as PCP writes it."""
    sec, nsec = divmod(int(ns), 1_000_000_000)
    return f"{sec * 1000 + nsec // 1_000_000}-{nsec % 1_000_000 // 1000}"


def stream_ids(ns: np.ndarray) -> list[str]:
    """stream_id over an array of times."""
    import numpy as np

    ns = np.asarray(ns, dtype=np.int64)
    ms = ns // 1_000_000
    usec = ns % 1_000_000 // 1000
    if not len(ns):
        return []
    return ("%d-%d\0" * len(ns) % tuple(np.column_stack((ms, usec)).ravel().tolist())).split("\0")[
        :-1
    ]


def stream_ns(entry_id: bytes | str) -> int:
    """A stream entry id back to ns since the epoch."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, usec = text.partition("-")
    return int(ms) * 1_000_000 + int(usec or 0) * 1000


def timestamp_json(entry_id: bytes | str) -> str:
    """A stream entry id as pmproxy writes a timestamp: the id with `-` as `.` (so the
    part after the point is the unpadded microsecond count)."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return text.replace("-", ".")


_KEPT = frozenset(
    c
    for c in range(128)
    if chr(c).isalnum() or c == 0x20 or (0x21 <= c <= 0x7E and c not in b'\\"')
)
_ESCAPES = [chr(c) if c in _KEPT else f"\\u00{c:02X}" for c in range(128)] + ["\\uFFFD"] * 128


def encode_string(data: bytes) -> str:
    """A string or aggregate value as PCP stores it: quoted; letters, digits, space and
    printable punctuation but quote and backslash kept; other ASCII as \\u00XX; every
    byte past ASCII as \\uFFFD."""
    return '"' + "".join(_ESCAPES[b] for b in data) + '"'


def value_texts(type_: int, values: Sequence[Any] | np.ndarray) -> list[str]:
    """VALUES of TYPE as PCP writes them in streams: integers in decimal, floats with
    %e, strings quoted (encode_string), anything else PM_ERR_NYI's number."""
    n = len(values)
    if not n:
        return []
    if type_ in (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64):
        import numpy as np  # (only numbers need it: discovery's strings load no NumPy)

        return list(map(str, np.asarray(values).tolist()))
    if type_ in (PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE):
        import numpy as np

        floats = np.asarray(values, dtype=np.float64).tolist()
        return ("%e\0" * n % tuple(floats)).split("\0")[:-1]
    if type_ == PMType.PM_TYPE_STRING:
        return [encode_string(_string_bytes(v)) for v in values]
    if type_ in (PMType.PM_TYPE_AGGREGATE, PMType.PM_TYPE_AGGREGATE_STATIC):
        return [encode_string(_bytes(v)) for v in values]
    return [str(PM_ERR_NYI)] * n


def _string_bytes(value: Any) -> bytes:
    """A string value's bytes without its terminating NUL: the reader gives a str for a
    plain C string, else the raw payload, of which PCP drops the last byte."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return bytes(value)[:-1]


def _bytes(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return bytes(value)
