"""The purepcp Agent that a pcp.pmda.PMDA drives: PCP's Python agent API on our framework.

PCP's binding keeps its dispatch state in C statics (cpmda): the callbacks, the
metric and instance-domain tables, the help text and the namespace.  Here that
state is a `Dispatch` record, and `BridgeAgent` (an `purepcp.pmda.Agent`) answers
pmcd's requests from it, calling the agent's callbacks as libpcp_pmda's
pmdaFetch, pmdaInstance, pmdaStore, pmdaText and pmdaLabel call theirs; the
framework supplies the transport (pmda.serve), the instance profile, client
contexts and the namespace requests of a dynamic subtree.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import (
    PM_ERR_INDOM,
    PM_ERR_INST,
    PM_ERR_NOTCONN,
    PM_ERR_PERMISSION,
    PM_ERR_PMID,
    PM_ERR_TEXT,
    PM_ERR_TYPE,
    PM_ERR_VALUE,
    PMError,
    pmErrStr,
)
from purepcp.pmapi.helptext import load_help
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_cluster, pmID_item, pmIDStr
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_COMPOUND,
    PM_LABEL_DOMAIN,
    PM_LABEL_INSTANCES,
    PM_LABEL_OPTIONAL,
    LabelSet,
    domain_labels,
)
from purepcp.pmapi.pdu.constants import PM_TEXT_HELP, PM_TEXT_INDOM, PM_TEXT_PMID
from purepcp.pmapi.pdu.records import (
    AttrPDU,
    DescPDU,
    DescReqPDU,
    ErrorPDU,
    FetchPDU,
    InstancePDU,
    InstanceReqPDU,
    LabelPDU,
    LabelReqPDU,
    PMNSChildPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    PMNSTraversePDU,
    ResultPDU,
    TextPDU,
    TextReqPDU,
)
from purepcp.pmapi.pmns import PMNS
from purepcp.pmapi.types import PMType
from purepcp.pmapi.units import Units
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.pmda import Agent

from .pmda_cache import find_cache

#: The callbacks an agent may set (PMDA.set_NAME), by name.
CALLBACKS = (
    "fetch",
    "refresh",
    "instance",
    "label",
    "notes",
    "fetch_callback",
    "store_callback",
    "label_callback",
    "notes_callback",
    "attribute_callback",
    "endcontext_callback",
    "refresh_all",
    "refresh_metrics",
)

PMDA_FETCH_NOVALUES, PMDA_FETCH_STATIC = 0, 1


@dataclass
class Dispatch:
    """What cpmda keeps for the agent: its tables (shared with the PMDA object, which
    edits them in place), help text, callbacks and the "tables changed" flag."""

    domain: int
    name: str  # pmdaNAME
    metrics: dict[int, Any] = field(default_factory=dict)  # pmid -> pmdaMetric
    names: dict[int, str] = field(default_factory=dict)  # pmid -> name
    indoms: dict[int, Any] = field(default_factory=dict)  # pmInDom -> pmdaIndom
    indom_table: list[Any] = field(default_factory=list)  # pmdaIndom, as added
    texts: dict[tuple[int, int], Mapping[int, str]] = field(default_factory=dict)
    callbacks: dict[str, Callable[..., Any]] = field(default_factory=dict)
    need_refresh: bool = True
    helpfile: str = ""  # a readable help file given to the agent ("" for none)
    wants_credentials: bool = False


class BridgeAgent(Agent):
    """An Agent whose metrics, instances, help and labels come from a Dispatch."""

    dynamic_pmns = True  # Python agents' names are a dynamic subtree ("simple 253:*:*")

    def __init__(self, dispatch: Dispatch, log: logging.Logger) -> None:
        self.name = dispatch.name  # type: ignore[misc]
        super().__init__(dispatch.domain, pmns_path="/dev/null", help_path="/dev/null", log=log)
        self.dispatch = dispatch
        self.wants_credentials = dispatch.wants_credentials  # type: ignore[misc]
        self._rebuild()

    # -- requests ---------------------------------------------------------------------

    def handle(self, pdu: Any) -> Any:
        """Answer from the dispatch tables; the framework answers the rest."""
        method = _BRIDGED.get(type(pdu))
        if method is None:
            return super().handle(pdu)
        self._context = getattr(pdu, "sender", 0)
        try:
            return method(self, pdu)
        except PMError as exc:
            return ErrorPDU(exc.code)

    def _before(self) -> None:
        """The refresh_metrics hook, then the tables rebuilt if the agent changed them."""
        hook = self.dispatch.callbacks.get("refresh_metrics")
        if hook is not None:
            self._call("refresh_metrics", hook)
        self._refresh_if_needed()

    def _refresh_if_needed(self) -> None:
        if self.dispatch.need_refresh:
            self._rebuild()

    def _rebuild(self) -> None:
        """The namespace from the agent's names (pmdaTreeCreate/Insert)."""
        pmns = PMNS()
        for name, pmid in tree_order(self.dispatch.names):
            try:
                pmns.add(name, pmid, checked=False)  # (pmdaTreeInsert checks no syntax)
            except PMError as exc:
                self.log.error("failed to add metric %s to namespace: %s", name, exc)
        self.pmns = pmns
        self.dispatch.need_refresh = False
        if self.dispatch.helpfile:
            self._help_db = self._load_help_db()

    def _load_help_db(self) -> Any:
        """The help of an installed help file (HELP.dir built by newhelp beside its
        source HELP), read from that source; None (no help at all) otherwise."""
        source = self.dispatch.helpfile
        if not os.path.exists(source + ".dir"):
            return None
        try:
            return load_help(source, self.pmns, {self.name[4:].upper(): self.domain})
        except (PMError, OSError, ValueError) as exc:
            self.log.error("help text from %s: %s", source, exc)
            return None

    def _call(self, what: str, func: Callable[..., Any], *args: Any) -> Any:
        """Call an agent callback; a failure is logged with its traceback and is -EAGAIN."""
        try:
            return func(*args)
        except Exception:
            self.log.exception("%s: callback failed", what)
            raise PMError(-errno.EAGAIN) from None

    def _on_fetch_req(self, pdu: FetchPDU) -> ResultPDU | ErrorPDU:
        callbacks = self.dispatch.callbacks
        self._before()
        if "fetch" in callbacks:
            self._call("prefetch", callbacks["fetch"])
        if "refresh" in callbacks or "refresh_all" in callbacks:
            clusters = list(dict.fromkeys(pmID_cluster(p) for p in pdu.pmids))
            failed = False
            if "refresh_all" in callbacks:
                failed |= self._quietly("refresh_all_clusters", callbacks["refresh_all"], clusters)
            if "refresh" in callbacks:
                for cluster in clusters:
                    failed |= self._quietly("refresh_cluster", callbacks["refresh"], cluster)
            self._refresh_if_needed()
            if failed:
                return ErrorPDU(-errno.EAGAIN)
        vsets = tuple(self._value_set(pmid) for pmid in pdu.pmids)
        changes = self._changes
        self._changes = 0  # type: ignore[assignment]
        return ResultPDU(Result(Timestamp(int(changes), 0), vsets))

    def _quietly(self, what: str, func: Callable[..., Any], arg: Any) -> bool:
        """Call a refresh callback; whether it failed (all of them run regardless)."""
        try:
            self._call(what, func, arg)
        except PMError:
            return True
        return False

    def _value_set(self, pmid: int) -> ValueSet:
        """One metric's values, from the fetch callback per instance (pmdaFetch)."""
        metric = self.dispatch.metrics.get(pmid)
        if metric is None:
            return ValueSet.of_error(pmid, PM_ERR_PMID)
        desc = metric.m_desc
        indom = desc.indom & 0xFFFFFFFF
        insts = (
            [PM_IN_NULL]
            if indom == PM_INDOM_NULL
            else [i for i, _ in self.instances_of(indom) if self.in_profile(indom, i)]
        )
        if not insts:
            return ValueSet.empty(pmid)
        pairs, status = [], 0
        for inst in insts:
            status, value = self._fetch_value(desc, inst)
            if status > 0:
                try:  # a value the type cannot hold: logged and dropped, as __pmStuffValue
                    ValueSet.of_atoms(pmid, desc.type, [(inst, value)])
                except PMError as exc:
                    self.log.error("pmdaFetch: bad value for %s: %s", pmIDStr(pmid), exc)
                    status = PM_ERR_TYPE
                    continue
                pairs.append((inst, value))
            elif status < 0 and status not in _QUIET_FETCH_ERRORS:
                self.log.error(
                    "pmdaFetch: Fetch callback error from metric PMID %s[%d]: %s",
                    pmIDStr(pmid),
                    _as_signed(inst),
                    pmErrStr(status),
                )
        if pairs:
            return ValueSet.of_atoms(pmid, desc.type, pairs)
        return ValueSet.of_error(pmid, status) if status < 0 else ValueSet.empty(pmid)

    def _fetch_value(self, desc: Any, inst: int) -> tuple[int, Any]:
        """(status, value) from the fetch callback, read as cpmda reads its [value, code]."""
        callback = self.dispatch.callbacks.get("fetch_callback")
        if callback is None:
            return PM_ERR_VALUE, None
        pmid = desc.pmid & 0xFFFFFFFF
        try:
            result = self._call(
                "fetch_callback", callback, pmID_cluster(pmid), pmID_item(pmid), inst
            )
        except PMError as exc:
            return exc.code, None
        return fetch_status(desc.type, result, self.log)

    def _on_names(self, pdu: Any) -> Any:
        """A namespace request, answered from the tree after the refresh_metrics hook,
        as cpmda's pmns_pmid, pmns_name and pmns_children run it (an agent such as
        openmetrics adds its metrics there)."""
        self._before()
        return super().handle(pdu)

    def _on_desc(self, pdu: DescReqPDU) -> DescPDU:
        self._before()
        metric = self.dispatch.metrics.get(pdu.pmid)
        if metric is None:
            raise PMError(PM_ERR_PMID)
        return DescPDU(desc_of(metric.m_desc))

    def instances_of(self, indom: int) -> list[tuple[int, str]]:
        """INDOM's current (inst, name) pairs: a cache's active entries, else the table's."""
        cache = find_cache(indom)
        if cache is not None:
            return [(e.inst, e.name) for e in cache.active()]
        for entry in self.dispatch.indom_table:
            if entry.it_indom == indom:
                return list(entry.instance_pairs())
        return []

    def _known_indom(self, indom: int) -> bool:
        return find_cache(indom) is not None or any(
            entry.it_indom == indom for entry in self.dispatch.indom_table
        )

    def _on_instance(self, pdu: InstanceReqPDU) -> InstancePDU:
        self._before()
        hook = self.dispatch.callbacks.get("instance")
        if hook is not None:
            self._call("preinstance", hook, pdu.indom & 0x3FFFFF)
        if not self._known_indom(pdu.indom):
            raise PMError(PM_ERR_INDOM)
        pairs = self.instances_of(pdu.indom)
        inst = pdu.inst & 0xFFFFFFFF
        if inst == PM_IN_NULL and pdu.name is None:
            return InstancePDU(pdu.indom, tuple(i for i, _ in pairs), tuple(n for _, n in pairs))
        if pdu.name is None:
            for i, name in pairs:
                if i == inst:
                    return InstancePDU(pdu.indom, (PM_IN_NULL,), (name,))
            raise PMError(PM_ERR_INST)
        return InstancePDU(pdu.indom, (match_instance(pairs, pdu.name),), ("",))

    def _on_text(self, pdu: TextReqPDU) -> TextPDU:
        self._before()
        if self.dispatch.helpfile:  # a readable help file: pmdaText's, not the agent's text
            return self._text_from_db(pdu)
        kind = PM_TEXT_PMID if pdu.type & PM_TEXT_PMID else PM_TEXT_INDOM
        texts = self.dispatch.texts.get((kind, pdu.type & PM_TEXT_HELP))
        text = None if texts is None else texts.get(pdu.ident)
        if text is None:
            raise PMError(PM_ERR_TEXT)
        return TextPDU(pdu.ident, text)

    def _text_from_db(self, pdu: TextReqPDU) -> TextPDU:
        db = self._help_db
        texts = None
        if db is not None:
            table = db.pmids if pdu.type & PM_TEXT_PMID else db.indoms
            texts = table.get(pdu.ident)
        if texts is None:
            raise PMError(PM_ERR_TEXT)
        return TextPDU(pdu.ident, texts[1] if pdu.type & PM_TEXT_HELP else texts[0])

    def _on_store(self, pdu: ResultPDU) -> ErrorPDU:
        self._before()
        callback = self.dispatch.callbacks.get("store_callback")
        if callback is None:
            raise PMError(PM_ERR_PERMISSION)
        for vs in pdu.result.vsets:
            metric = self._metric_by_cluster_item(vs.pmid)
            if metric is None:
                raise PMError(PM_ERR_PMID)
            type_ = metric.m_desc.type
            for inst, value in zip(vs.insts, vs.atoms(type_), strict=True):
                pmid = vs.pmid
                status = self._call(
                    "store_callback", callback, pmID_cluster(pmid), pmID_item(pmid), inst, value
                )
                if not isinstance(status, int):
                    self.log.error("store callback gave bad status (int expected)")
                    raise PMError(-errno.EINVAL)
                if status < 0:
                    raise PMError(status)
        return ErrorPDU(0)

    def _metric_by_cluster_item(self, pmid: int) -> Any:
        key = (pmID_cluster(pmid), pmID_item(pmid))
        for candidate, metric in self.dispatch.metrics.items():
            if (pmID_cluster(candidate), pmID_item(candidate)) == key:
                return metric
        return None

    def _on_labels(self, pdu: LabelReqPDU) -> LabelPDU:
        self._before()
        return LabelPDU(pdu.ident, pdu.type, self._label_sets(pdu.ident, pdu.type))

    def _label_sets(self, ident: int, type_: int) -> tuple[LabelSet, ...]:
        """The label and notes callbacks' labels for IDENT, then pmdaLabel's defaults."""
        level = type_ & ~(PM_LABEL_COMPOUND | PM_LABEL_OPTIONAL)
        callbacks = self.dispatch.callbacks
        labels: dict[str, Any] = {}
        notes: dict[str, Any] = {}
        arg = pmID_cluster(ident) if level == PM_LABEL_CLUSTER else ident
        for key, into in (("label", labels), ("notes", notes)):
            if key in callbacks:
                into.update(self._labels_from(key, callbacks[key](arg, type_)))
        if level == PM_LABEL_INSTANCES:
            return tuple(
                self._instance_set(ident, inst)
                for inst, _ in self.instances_of(ident)
                if self.in_profile(ident, inst)
            )
        if not labels and not notes:
            if level == PM_LABEL_DOMAIN:
                return (domain_labels(self.name),)
            return ()
        return (label_set(labels, notes, level),)

    def _instance_set(self, indom: int, inst: int) -> LabelSet:
        callbacks = self.dispatch.callbacks
        labels: dict[str, Any] = {}
        notes: dict[str, Any] = {}
        for key, into in (("label_callback", labels), ("notes_callback", notes)):
            if key in callbacks:
                try:
                    into.update(self._labels_from(key, callbacks[key](indom, inst)))
                except Exception:
                    self.log.exception("%s failed", key)
        if not labels and not notes:
            return LabelSet(inst, 0, b"", ())
        return label_set(labels, notes, PM_LABEL_INSTANCES, inst)

    def _labels_from(self, what: str, text: Any) -> dict[str, Any]:
        """A label callback's JSON text as a dict; a bad one is logged and gives none."""
        if not isinstance(text, str):
            self.log.error("bad %s result (expected string)", what)
            return {}
        if len(text) < 2 or text.startswith("{}"):
            return {}
        try:
            value = json.loads(text)
        except ValueError:
            self.log.error("__pmAddLabels failed: bad JSON from %s: %s", what, text)
            return {}
        return value if isinstance(value, dict) else {}

    def _on_attribute(self, pdu: AttrPDU) -> None:
        super().handle(pdu)
        callback = self.dispatch.callbacks.get("attribute_callback")
        if callback is not None:
            value = (
                pdu.value.decode(errors="replace") if isinstance(pdu.value, bytes) else pdu.value
            )
            with contextlib.suppress(PMError):  # (logged by _call)
                self._call("attribute", callback, pdu.sender, pdu.attr, str(value).rstrip("\0"))
        return None

    def _on_error_pdu(self, pdu: ErrorPDU) -> None:
        super().handle(pdu)
        callback = self.dispatch.callbacks.get("endcontext_callback")
        if pdu.code == PM_ERR_NOTCONN and callback is not None:
            with contextlib.suppress(PMError):  # (logged by _call)
                self._call("endcontext", callback, pdu.sender)
        return None


#: pmdaFetch logs these callback errors only when debugging.
_QUIET_FETCH_ERRORS = frozenset({PM_ERR_INST, PM_ERR_PMID, PM_ERR_VALUE, PM_ERR_PERMISSION})

_BRIDGED: dict[type, Callable[[BridgeAgent, Any], Any]] = {
    PMNSNamesPDU: BridgeAgent._on_names,
    PMNSIdsPDU: BridgeAgent._on_names,
    PMNSChildPDU: BridgeAgent._on_names,
    PMNSTraversePDU: BridgeAgent._on_names,
    FetchPDU: BridgeAgent._on_fetch_req,
    DescReqPDU: BridgeAgent._on_desc,
    InstanceReqPDU: BridgeAgent._on_instance,
    TextReqPDU: BridgeAgent._on_text,
    ResultPDU: BridgeAgent._on_store,
    LabelReqPDU: BridgeAgent._on_labels,
    AttrPDU: BridgeAgent._on_attribute,
    ErrorPDU: BridgeAgent._on_error_pdu,
}


def _as_signed(word: int) -> int:
    return word - (1 << 32) if word & 0x80000000 else word


def _is_dynamic_root(pmid: int) -> bool:
    """Whether PMID marks a dynamic subtree's root (libpcp's IS_DYNAMIC_ROOT: domain
    DYNAMIC_PMID, 511, and item 0)."""
    return (pmid >> 22) & 0x1FF == 511 and pmid & 0x3FF == 0


def tree_order(names: Mapping[int, str]) -> list[tuple[str, int]]:
    """NAMES ({pmid: name}, in the order added) in the order to add them to a namespace
    that appends children, for its tree to list children as pmdaTreeInsert's does: each
    new child goes first, so siblings come newest first.  A name given a dynamic root's
    PMID (openmetrics names its root so) is an inner node, as in pmdaTreeInsert."""
    tree: dict[str, Any] = {}
    for pmid, name in names.items():
        node = tree
        parts = name.split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break  # (a leaf in the way: the insert fails, as PCP's does)
            node = child
        else:
            node.setdefault(parts[-1], {} if _is_dynamic_root(pmid) else pmid)
    ordered: list[tuple[str, int]] = []

    def walk(node: dict[str, Any], prefix: str) -> None:
        for part in reversed(node):
            child = node[part]
            if isinstance(child, dict):
                walk(child, f"{prefix}{part}.")
            else:
                ordered.append((prefix + part, child))

    walk(tree, "")
    return ordered


def desc_of(c_desc: Any) -> Desc:
    """Our descriptor record from a ctypes pmDesc."""
    u = c_desc.units
    units = Units(u.dimSpace, u.dimTime, u.dimCount, u.scaleSpace, u.scaleTime, u.scaleCount)
    return Desc(c_desc.pmid & 0xFFFFFFFF, c_desc.type, c_desc.indom & 0xFFFFFFFF, c_desc.sem, units)


def label_set(
    labels: Mapping[str, Any], notes: Mapping[str, Any], level: int, inst: int = PM_IN_NULL
) -> LabelSet:
    """One label set of LABELS (and NOTES, flagged optional) at LEVEL."""
    merged = {**labels, **{k: v for k, v in notes.items() if k not in labels}}
    flags = level | (PM_LABEL_OPTIONAL if notes and not labels else 0)
    return LabelSet.from_json(json.dumps(merged, separators=(",", ":")), flags, inst=inst)


def match_instance(pairs: list[tuple[int, str]], name: str) -> int:
    """pmdaInstance's lookup by name: exact, or (a name without spaces) by first word."""
    for inst, full in pairs:
        if full == name:
            return inst
    if " " not in name:
        for inst, full in pairs:
            if full.split(" ", 1)[0] == name:
                return inst
    raise PMError(PM_ERR_INST)


# -- the fetch callback's answer, read as cpmda reads it --------------------------------


def _signed(bits: int) -> Callable[[Any], int]:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def convert(value: Any) -> int:
        if isinstance(value, float):
            raise TypeError("integer expected")
        number = value.__index__()
        if not low <= number <= high:
            raise OverflowError("out of range")
        return number

    return convert


def _masked(bits: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if isinstance(value, float):
            raise TypeError("integer expected")
        return value.__index__() & ((1 << bits) - 1)

    return convert


def _real(value: Any) -> float:
    return float(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("str expected")
    return value


_CONVERT: dict[int, Callable[[Any], Any]] = {
    PMType.PM_TYPE_32: _signed(32),
    PMType.PM_TYPE_U32: _masked(32),
    PMType.PM_TYPE_64: _signed(64),
    PMType.PM_TYPE_U64: _masked(64),
    PMType.PM_TYPE_FLOAT: _real,
    PMType.PM_TYPE_DOUBLE: _real,
    PMType.PM_TYPE_STRING: _text,
}

_INT = _signed(32)


def _pair(result: Any) -> tuple[Any, Any]:
    """The two items of a [value, code] answer (any sequence of two)."""
    if isinstance(result, (str, bytes)) or not hasattr(result, "__len__") or len(result) != 2:
        raise TypeError("a sequence of two expected")
    return result[0], result[1]


def fetch_status(type_: int, result: Any, log: logging.Logger) -> tuple[int, Any]:
    """(status, value): status 1 with the value, 0 for no value, or a negative error.

    None or a tuple means no value; [value, code] with a nonzero code is the value;
    otherwise [error, code] gives the error (PM_ERR_TYPE if the code claims success).
    """
    if result is None or isinstance(result, tuple):
        return PMDA_FETCH_NOVALUES, None
    convert = _CONVERT.get(type_)
    if convert is None:
        log.error("unsupported metric type in fetch callback")
        return -errno.ENOTSUP, None
    try:
        raw, code = _pair(result)
        value, code = convert(raw), _INT(code)
    except (TypeError, ValueError, OverflowError, AttributeError):
        code = 0
    if code:
        return PMDA_FETCH_STATIC, value
    try:
        raw, code = _pair(result)
        status, code = _INT(raw), _INT(code)
    except (TypeError, ValueError, OverflowError, AttributeError):
        log.error("extracting error code in fetch callback")
        return -errno.EINVAL, None
    if code == 1:
        log.error("forcing error code in fetch callback")
        return PM_ERR_TYPE, None
    return status, None
