"""pmContext: a source of metrics and the PMAPI calls made on it, as PCP's binding has
them, on purepcp's contexts (host, archive, local)."""

from __future__ import annotations

import contextlib
import sys
import time
from ctypes import c_uint, pointer
from typing import Any

import cpmapi as c_api
from cpmapi import contexts, zones
from purepcp.pmapi.errors import PMError

from . import tooltime
from .structures import (
    _atom,
    _c_desc,
    _c_result,
    _c_units,
    _extracted,
    _our_result,
    _raised,
    _tm_of,
    get_indom,
    pmAtomValue,
    pmDesc,
    pmErr,
    pmHighResLogLabel,
    pmLogLabel,
    pmUnits,
    pmUsageErr,
    pmValue,
    timespec,
    timeval,
    tm,
)

# ---- contexts -----------------------------------------------------------------------------


class pmContext:
    """A source of metrics (a pmcd, an archive, or this process's agents) and the PMAPI
    calls made on it: ``pmContext(PM_CONTEXT_HOST, "local:")``,
    ``pmContext(PM_CONTEXT_ARCHIVE, "path")``, ``pmContext.fromOptions(opts, argv)``."""

    def __init__(self, typed: int = c_api.PM_CONTEXT_HOST, target: Any = "local:") -> None:
        self._type = typed
        self._target = target
        self._ctx = c_api.PM_ERR_NOCONTEXT
        name = target.decode() if isinstance(target, bytes) else target
        try:
            self._our = _new_context(typed, name)
        except Exception as exc:  # (what libpcp's pmNewContext fails with, as pmErr)
            raise _raised(exc, [target]) from None
        self._ctx = contexts.register(self._our)

    type = property(lambda self: self._type)
    target = property(lambda self: self._target)
    ctx = property(lambda self: self._ctx)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # (at interpreter exit: nothing left to close)
            self._destroy()

    @classmethod
    def fromOptions(
        cls, options: Any, argv: list[str], typed: int = 0, index: int = 0
    ) -> pmContext:
        """A context made from a command line parsed as pmGetOptions parses it (the
        options set up with pmOptions first): the host, archive or local context it
        names (local: by default), its time window and zone applied."""
        if typed is None or typed <= 0:
            options.need_reset = True
            if c_api.pmGetOptionsFromList(argv):
                raise pmUsageErr
            typed = options.pmGetOptionContext()
        if typed == c_api.PM_CONTEXT_ARCHIVE:
            source = options.pmGetOptionArchives()[index]
        elif typed == c_api.PM_CONTEXT_HOST:
            source = options.pmGetOptionHosts()[index]
        elif typed == c_api.PM_CONTEXT_LOCAL:
            source = None
        elif options.pmGetOptionOrigin() is not None:
            typed, source = c_api.PM_CONTEXT_ARCHIVE, options.pmGetOptionArchives()[index]
        else:
            typed, source = c_api.PM_CONTEXT_HOST, "local:"
        context = cls(typed, source)
        if c_api.pmSetContextOptions(context.ctx, options.mode, options.delta):
            raise pmUsageErr
        return context

    def _call(self, call: Any, *args: Any) -> Any:
        """CALL(*ARGS) on the purepcp context, its failures raised as pmErr; the context
        becomes the current one first, as PCP's binding makes it (pmUseContext)."""
        contexts.use(self._ctx)
        try:
            return call(*args)
        except pmErr:
            raise
        except Exception as exc:
            from purepcp.pmapi.errors import PMError

            if isinstance(exc, (PMError, OSError)):
                raise _raised(exc) from None
            raise

    # -- the namespace -----------------------------------------------------------------

    def pmGetChildren(self, name: str) -> list[str]:
        return [child for child, _ in self._call(self._our.children, name)]

    def pmGetChildrenStatus(self, name: str) -> tuple[list[str], list[int]]:
        found = self._call(self._our.children, name)
        return (
            [child for child, _ in found],
            [c_api.PMNS_LEAF_STATUS if leaf else c_api.PMNS_NONLEAF_STATUS for _, leaf in found],
        )

    def pmGetPMNSLocation(self) -> int:
        if getattr(self._our, "kind", "host") == "archive":
            return c_api.PMNS_ARCHIVE
        return c_api.PMNS_LOCAL if self._our.pmns is not None else c_api.PMNS_REMOTE

    def pmLoadNameSpace(self, filename: str) -> int:
        from purepcp.pmapi.pmns import PMNS

        self._our.pmns = self._call(PMNS.from_file, filename)
        return 0

    def pmUnLoadNameSpace(self) -> None:
        self._our.pmns = None

    def pmLookupName(self, nameA: Any, relaxed: int = 0) -> Any:
        """The PMIDs of the names (an array of pmID); with RELAXED, PM_ID_NULL for the
        unknown ones, else pmErr(PM_ERR_NAME) naming the first."""
        names = [nameA] if isinstance(nameA, (str, bytes)) else list(nameA)
        texts = [n.decode() if isinstance(n, bytes) else n for n in names]
        array = c_uint * len(texts)
        array.__module__ = "pcp.pmapi"  # (its repr names the module, as in a pmErr's text)
        pmids = array()
        try:
            found = self._our.lookup_names(texts)
        except Exception as exc:  # (libpcp's status for the call: the array goes with it)
            raise _raised(exc, pmids) from None
        pmids[:] = found
        missing = [n for n, pmid in zip(names, found, strict=True) if pmid == c_api.PM_ID_NULL]
        if missing and len(texts) == 1:
            raise pmErr(c_api.PM_ERR_NAME, pmids)
        if missing and not relaxed:
            raise pmErr(c_api.PM_ERR_NAME, missing)
        return pmids

    def pmNameAll(self, pmid: int) -> list[str]:
        return self._call(self._our.name_all, pmid)

    def pmNameID(self, pmid: int) -> str:
        return self.pmNameAll(pmid)[0]

    def pmTraversePMNS(self, name: str, callback: Any) -> int:
        names = self._call(self._our.traverse, name)
        for leaf in names:
            callback(leaf)
        return len(names)

    def pmRegisterDerived(self, name: str, expr: str) -> None:
        """A derived metric for every context (pmErr PM_ERR_CONV with libpcp's message
        when the expression is refused); this context sees it at once, as PCP's binding
        reconnects it."""
        from purepcp.pmapi.derived.registry import default_registry, register_metric_message

        try:
            default_registry().register(name, expr)
        except Exception as exc:
            if not hasattr(exc, "offset"):
                raise
            raise pmErr(c_api.PM_ERR_CONV, register_metric_message(name, expr, exc)) from None
        rebind = getattr(self._our, "use_registry", None)
        if rebind is not None:  # (a context binds its derived metrics when first asked)
            rebind(default_registry())
        self.pmReconnectContext()

    def pmLoadDerivedConfig(self, fname: str) -> int:
        from purepcp.pmapi.derived.registry import default_registry, load_config

        status = load_config(default_registry(), fname, sys.stderr)
        if status < 0:
            raise pmErr(status)
        return status

    # -- descriptors, instances, text -----------------------------------------------------

    def pmLookupDesc(self, pmid_p: Any) -> Any:
        pmid = pmid_p.value if hasattr(pmid_p, "value") else int(pmid_p)
        return _c_desc(self._call(self._our.lookup_desc, pmid))

    def pmLookupDescs(self, pmids_p: Any) -> list[Any]:
        """The descriptors of the PMIDs, as libpcp's pmLookupDescs answers: one that cannot
        be had is all zeros but its PMID, PM_ID_NULL; only a lone derived metric that
        failed to bind raises (PM_ERR_BADDERIVE)."""
        pmids = [pmids_p] if isinstance(pmids_p, int) else [int(p) for p in pmids_p]
        descs = self._call(self._our.lookup_descs, pmids)
        if len(pmids) == 1 and descs[0] is None and self._is_derived(pmids[0]):
            raise pmErr(c_api.PM_ERR_BADDERIVE)
        return [_c_desc(d) if d is not None else pointer(pmDesc(c_api.PM_ID_NULL)) for d in descs]

    def _is_derived(self, pmid: int) -> bool:
        derived = self._our.derived_among((pmid,))
        return derived is not None and derived.is_derived(pmid)

    def pmLookupText(self, pmid: int, kind: int = c_api.PM_TEXT_ONELINE) -> bytes:
        """A metric's one-line (or, with PM_TEXT_HELP, full) help text, as bytes (as PCP's
        binding returns it)."""
        text = self._call(
            self._our.text,
            pmid,
            bool(kind & c_api.PM_TEXT_HELP),
            False,
            bool(kind & c_api.PM_TEXT_DIRECT),
        )
        return text.encode("utf-8", "surrogateescape")

    def pmLookupInDomText(self, pmdesc: Any, kind: int = c_api.PM_TEXT_ONELINE) -> str:
        return self._call(
            self._our.text,
            get_indom(pmdesc),
            bool(kind & c_api.PM_TEXT_HELP),
            True,
            bool(kind & c_api.PM_TEXT_DIRECT),
        )

    def pmGetInDom(self, pmdescp: Any = None, indom: int | None = None) -> tuple[Any, Any]:
        """The instances of a descriptor's domain (or of INDOM): ([ids], [names]), or
        (None, None) where it has none; PM_INDOM_NULL is libpcp's PM_ERR_INDOM."""
        if pmdescp is None and indom is None:
            raise pmErr(c_api.PM_ERR_GENERIC, "invalid arguments")
        if indom is None:
            indom = get_indom(pmdescp)
        if indom == c_api.PM_INDOM_NULL:
            raise pmErr(c_api.PM_ERR_INDOM)
        pairs = self._call(self._our.instances, indom)
        if not pairs:
            return None, None
        return [i for i, _ in pairs], [n for _, n in pairs]

    def pmGetInDomDict(self, indom: Any) -> dict[int, str]:
        """{inst: name} of INDOM ({} where it has none)."""
        ids, names = self.pmGetInDom(indom=get_indom(indom))
        return dict(zip(ids or [], names or [], strict=True))

    def pmLookupInDom(self, pmdesc: Any, name: str) -> int:
        return self._call(self._our.instance_id, get_indom(pmdesc), name)

    def pmNameInDom(self, pmdesc: Any, instval: int) -> str:
        if instval == c_api.PM_IN_NULL:
            return "PM_IN_NULL"
        return self._call(self._our.instance_name, get_indom(pmdesc), instval)

    def pmGetInDomArchive(self, pmdescp: Any) -> tuple[Any, Any]:
        """Every instance the archive holds of the domain: ([ids], [names]), or (None,
        None) where it holds none; PM_INDOM_NULL is libpcp's PM_ERR_INDOM."""
        indom = get_indom(pmdescp)
        if indom == c_api.PM_INDOM_NULL:
            raise pmErr(c_api.PM_ERR_INDOM)
        pairs = self._call(self._archive().instances_archive, indom)
        if not pairs:
            return None, None
        return [i for i, _ in pairs], [n for _, n in pairs]

    def pmLookupInDomArchive(self, pmdesc: Any, name: str) -> int:
        return self._call(self._archive().instance_id_archive, get_indom(pmdesc), name)

    def pmNameInDomArchive(self, pmdesc: Any, inst: int) -> str:
        return self._call(self._archive().instance_name_archive, get_indom(pmdesc), inst)

    def _archive(self) -> Any:
        if getattr(self._our, "kind", None) != "archive":
            raise pmErr(c_api.PM_ERR_NOTARCHIVE)
        return self._our

    # -- the context itself ---------------------------------------------------------------

    def pmNewContext(self, typed: int, name: Any) -> None:
        """(As in PCP's binding, nothing: the constructor makes the context.)"""

    def pmDestroyContext(self, handle: int | None = None) -> None:
        """(As in PCP's binding, nothing for a script: the context goes with the object.)"""

    def _destroy(self) -> None:
        """The context out of the table and closed (the object is going)."""
        if self._ctx >= 0:
            contexts.forget(self._ctx)
            self._ctx = c_api.PM_ERR_NOCONTEXT
            close = getattr(self._our, "close", None)
            if close is not None:
                close()

    def pmDupContext(self) -> int:
        dup = pmContext(self._type, self._target)
        self._dups = [*getattr(self, "_dups", []), dup]
        return dup.ctx

    def pmUseContext(self, handle: int) -> int:
        contexts.use(handle)
        return 0

    @staticmethod
    def pmWhichContext() -> int:
        """The current context's handle (PM_ERR_NOCONTEXT where none is open)."""
        handle = contexts.current_handle()
        if handle < 0:
            raise pmErr(c_api.PM_ERR_NOCONTEXT)
        return handle

    def pmAddProfile(self, pmdesc: Any, instL: Any) -> int:
        self._call(self._our.profile.add, get_indom(pmdesc), list(instL or []))
        return 0

    def pmDelProfile(self, pmdesc: Any, instL: Any) -> int:
        self._call(self._our.profile.delete, get_indom(pmdesc), list(instL or []))
        return 0

    def pmSetMode(self, mode: int, timeVal: Any, delta: int) -> int:
        """pmSetMode: MODE (PM_MODE_*, with an extended time base in its top bits), the
        origin (a timeval, or None: where the context is), DELTA (milliseconds unless the
        time base says otherwise)."""
        from purepcp.pmapi.values import Timestamp

        base = c_api.PM_XTB_GET(mode)
        unit_ns = {0: 1, 1: 1000, 2: 1_000_000, 3: 10**9, 4: 60 * 10**9, 5: 3600 * 10**9}
        step = int(delta) * unit_ns.get(base, 1_000_000)
        origin = None
        if timeVal is not None:
            origin = Timestamp(int(timeVal.tv_sec), int(timeVal.tv_usec) * 1000)
        self._call(self._archive().set_mode, mode & 0xFFFF, origin, step)
        return 0

    def pmSetModeHighRes(self, mode: int, origin: Any, interval: Any) -> int:
        from purepcp.pmapi.values import Timestamp

        when = None
        if origin is not None:
            when = Timestamp(int(origin.tv_sec), int(origin.tv_nsec))
        if interval is None:  # (no step: forward or backward, record by record)
            step = 0
        elif hasattr(interval, "tv_sec"):
            step = int(interval.tv_sec) * 10**9 + int(interval.tv_nsec)
        else:
            step = int(interval)
        self._call(self._archive().set_mode, mode & 0xFFFF, when, step)
        return 0

    def pmReconnectContext(self) -> int:
        reconnect = getattr(self._our.source, "reconnect", None)
        if reconnect is not None:
            self._call(reconnect)
        return self._ctx

    def pmGetContextHostName(self) -> str:
        """libpcp's answer: a pmcd's pmcd.hostname (else the host named, this host's name
        for a unix socket or localhost), an archive's label's host, this host locally."""
        from purepcp.pmapi.hostname import context_hostname

        return self._call(context_hostname, self._our)

    def pmGetContextHostname(self) -> str:
        return self.pmGetContextHostName()

    # -- time zones -----------------------------------------------------------------------

    def pmNewContextZone(self) -> int:
        from purepcp.pmapi.zone import context_zone

        return zones.add(self._call(context_zone, self._our), zones.context_text(self._our))

    @staticmethod
    def pmNewZone(tz: str) -> int:
        from purepcp.pmapi.timewindow import new_zone

        try:
            return zones.add(new_zone(tz), tz)
        except Exception:
            raise pmErr(c_api.PM_ERR_GENERIC, tz) from None

    @staticmethod
    def pmUseZone(tz_handle: int) -> int:
        previous = zones.use(tz_handle)
        if previous is None:
            raise pmErr(-22)  # (EINVAL, as libpcp)
        return previous

    @staticmethod
    def pmWhichZone() -> str:
        return zones.which()

    @staticmethod
    def pmLocaltime(seconds: Any) -> tm:
        """struct tm of SECONDS in the zone in use (the local one until one is made)."""
        return _tm_of(zones.local_time(seconds))

    @staticmethod
    def pmCtime(seconds: Any) -> str:
        """ctime(3)'s text of SECONDS in the zone in use, with its newline."""
        return zones.ctime(seconds)

    # -- values ---------------------------------------------------------------------------

    def pmFetch(self, pmidA: Any) -> Any:
        """The values of the PMIDs now: a pointer to a pmResult."""
        pmids = [pmidA] if isinstance(pmidA, int) else [int(p) for p in pmidA]
        return _c_result(self._call(self._our.fetch, pmids).result)

    def pmFetchHighRes(self, pmidA: Any) -> Any:
        pmids = [pmidA] if isinstance(pmidA, int) else [int(p) for p in pmidA]
        return _c_result(self._call(self._our.fetch, pmids).result, highres=True)

    pmHighResFetch = pmFetchHighRes

    def pmFetchArchive(self) -> Any:
        return _c_result(self._call(self._archive().fetch_archive))

    def pmFetchHighResArchive(self) -> Any:
        return _c_result(self._call(self._archive().fetch_archive), highres=True)

    @staticmethod
    def pmFreeResult(result_p: Any) -> None:
        """(Nothing to free: the structures go when the last reference does.)"""

    pmFreeHighResResult = pmFreeResult

    @staticmethod
    def pmSortInstances(result_p: Any) -> None:
        """Each value set of the result in instance order, in place (libpcp's qsort on
        the instance as a signed int)."""
        import ctypes

        from .structures import pmValue

        result = result_p.contents if hasattr(result_p, "contents") else result_p
        size = ctypes.sizeof(pmValue)
        for i in range(result.numpmid):
            count = result.get_numval(i)
            if count < 2:
                continue
            values = [pmValue.from_buffer_copy(result.get_vlist(i, j)) for j in range(count)]
            for j, value in enumerate(sorted(values, key=lambda v: v.inst)):
                place = ctypes.addressof(result.get_vlist(i, j))
                ctypes.memmove(place, ctypes.addressof(value), size)

    pmSortHighResInstances = pmSortInstances

    @staticmethod
    def pmPrintValue(
        fileObj: Any, result: Any, ptype: Any, vset_idx: int, vlist_idx: int, min_width: int
    ) -> None:
        """One value of a result, as libpcp's pmPrintValue prints it, written to FILEOBJ
        (PTYPE: the metric's descriptor)."""
        from purepcp.pmapi.printvalue import pmPrintValue

        from .structures import _our_value

        r = result.contents if hasattr(result, "contents") else result
        valfmt = r.get_valfmt(vset_idx)
        value = _our_value(valfmt, r.get_vlist(vset_idx, vlist_idx))
        vtype = ptype.contents.type if hasattr(ptype, "contents") else ptype.type
        fileObj.write(pmPrintValue(valfmt, vtype, value, min_width))

    def pmStore(self, result: Any) -> Any:
        self._call(self._our.store, _our_result(result))
        return result

    pmStoreHighRes = pmStore

    # -- archives -------------------------------------------------------------------------

    def pmGetArchiveLabel(self) -> pmLogLabel:
        label = self._archive().archive.label
        return pmLogLabel(
            c_api.PM_LOG_MAGIC | self._archive().archive.version,
            label.pid,
            timeval(label.start.sec, label.start.nsec // 1000),
            label.hostname.encode()[: c_api.PM_LOG_MAXHOSTLEN - 1],
            label.timezone.encode()[: c_api.PM_TZ_MAXLEN - 1],
        )

    def pmGetHighResArchiveLabel(self) -> pmHighResLogLabel:
        label = self._archive().archive.label
        zoneinfo = getattr(label, "zoneinfo", "") or ""
        return pmHighResLogLabel(
            c_api.PM_LOG_MAGIC | self._archive().archive.version,
            label.pid,
            timespec(label.start.sec, label.start.nsec),
            label.hostname.encode(),
            label.timezone.encode(),
            zoneinfo.encode(),
        )

    def pmGetArchiveEnd(self) -> timeval:
        end = self._end()
        return timeval(end.sec, end.nsec // 1000)

    def pmGetHighResArchiveEnd(self) -> timespec:
        end = self._end()
        return timespec(end.sec, end.nsec)

    def _end(self) -> Any:
        from purepcp.pmapi.archive.multi import end_of

        end = self._call(end_of, self._archive().archive)
        if end is None:
            raise pmErr(c_api.PM_ERR_LOGREC)
        return end

    # -- labels ---------------------------------------------------------------------------

    def _label_set(self, ident: int, kind: int) -> dict[str, Any]:
        """The labels of one level (PM_LABEL_*) of IDENT, as a dict ({} for none)."""
        import json

        sets = self._call(self._our.labels, ident, kind)
        return json.loads(sets[0].json) if sets and sets[0].json else {}

    def pmGetContextLabels(self) -> dict[str, Any]:
        """The context's labels (an archive without any: its host's name, as libpcp)."""
        found = self._label_set(c_api.PM_ID_NULL, c_api.PM_LABEL_CONTEXT)
        return found or {"hostname": self.pmGetContextHostName()}

    def pmGetDomainLabels(self, domain: int) -> dict[str, Any]:
        return self._label_set(domain, c_api.PM_LABEL_DOMAIN)

    def pmGetInDomLabels(self, indom: Any) -> dict[str, Any]:
        indom = get_indom(indom)
        if indom == c_api.PM_INDOM_NULL:
            return {}
        return self._label_set(indom, c_api.PM_LABEL_INDOM)

    def pmGetClusterLabels(self, pmid: int) -> dict[str, Any]:
        return self._label_set(pmid, c_api.PM_LABEL_CLUSTER)

    def pmGetItemLabels(self, pmid: int) -> dict[str, Any]:
        return self._label_set(pmid, c_api.PM_LABEL_ITEM)

    def pmLookupLabels(self, pmid: int) -> dict[int, dict[str, Any]]:
        """A metric's labels by level ({PM_LABEL_CONTEXT: {...}, ...}), the levels that
        have any; instances' are pmGetInstancesLabels'."""
        from purepcp.pmapi.ids import pmID_domain

        desc = self._call(self._our.lookup_desc, pmid)
        levels = {
            c_api.PM_LABEL_CONTEXT: self.pmGetContextLabels(),
            c_api.PM_LABEL_DOMAIN: self.pmGetDomainLabels(pmID_domain(pmid)),
            c_api.PM_LABEL_INDOM: self.pmGetInDomLabels(desc.indom),
            c_api.PM_LABEL_CLUSTER: self.pmGetClusterLabels(pmid),
            c_api.PM_LABEL_ITEM: self.pmGetItemLabels(pmid),
        }
        return {level: found for level, found in levels.items() if found}

    def pmGetInstancesLabels(self, indom: Any) -> dict[int, dict[str, Any]]:
        """Each instance's own labels, by instance id."""
        import json

        indom = get_indom(indom)
        if indom == c_api.PM_INDOM_NULL:
            return {}
        return {
            lset.inst: json.loads(lset.json)
            for lset in self._call(self._our.labels, indom, c_api.PM_LABEL_INSTANCES)
            if lset.json
        }

    # -- conversions and text (libpcp's helpers, as the binding's static methods) ---------

    @staticmethod
    def pmGetConfig(variable: str) -> str | None:
        """A PCP_* setting (None: no such setting), from where its files are: the
        environment, purepcp's layout or PCP's pcp.conf (pcp.getconfig says which)."""
        from .getconfig import get_config

        return get_config(variable)

    @staticmethod
    def pmErrStr(code: int) -> str:
        from purepcp.pmapi.errors import pmErrStr

        return pmErrStr(code)

    @staticmethod
    def pmExtractValue(valfmt: int, vlist: pmValue, intype: int, outtype: int) -> pmAtomValue:
        """The value in VLIST (a pmValue of a set of VALFMT) of type INTYPE as OUTTYPE."""
        try:
            value = _extracted(valfmt, vlist, intype, outtype)
        except PMError as exc:
            raise pmErr(exc.code) from None
        if outtype == c_api.PM_TYPE_DOUBLE:
            atom = pmAtomValue()
            atom.d = value
            return atom
        return _atom(value, outtype)

    @staticmethod
    def pmConvScale(
        inType: int, inAtom: pmAtomValue, desc: Any, metric_idx: int, outUnits: pmUnits
    ) -> pmAtomValue:
        from purepcp.pmapi.convert import pmConvScale
        from purepcp.pmapi.errors import PMError

        units = desc[metric_idx].contents.units
        try:
            value = pmConvScale(inType, inAtom.dref(inType), units._units(), outUnits._units())
        except PMError as exc:
            raise pmErr(exc.code) from None
        return _atom(value, inType)

    @staticmethod
    def pmUnitsStr(units: pmUnits) -> str:
        return str(units)

    @staticmethod
    def pmNumberStr(value: float) -> str:
        from purepcp.pmapi.printvalue import pmNumberStr

        return pmNumberStr(value)

    @staticmethod
    def pmIDStr(pmid: int) -> str:
        from purepcp.pmapi.ids import pmIDStr

        return pmIDStr(int(pmid))

    @staticmethod
    def pmInDomStr(pmdescp: Any) -> str:
        from purepcp.pmapi.ids import pmInDomStr

        return pmInDomStr(get_indom(pmdescp))

    @staticmethod
    def pmTypeStr(typed: int) -> str:
        from purepcp.pmapi.types import pmTypeStr

        return pmTypeStr(typed)

    @staticmethod
    def pmSemStr(sem: int) -> str:
        from purepcp.pmapi.types import pmSemStr

        return pmSemStr(sem)

    @staticmethod
    def pmAtomStr(atom: pmAtomValue, typed: int) -> str:
        from purepcp.pmapi.printvalue import pmAtomStr

        return pmAtomStr(atom.dref(typed), typed)

    @staticmethod
    def pmID_build(d: int, c: int, i: int) -> int:
        from purepcp.pmapi.ids import pmID_build

        return pmID_build(d, c, i)

    @staticmethod
    def pmID_domain(pmid: int) -> int:
        return (int(pmid) >> 22) & 0x1FF

    @staticmethod
    def pmID_cluster(pmid: int) -> int:
        return (int(pmid) >> 10) & 0xFFF

    @staticmethod
    def pmID_item(pmid: int) -> int:
        return int(pmid) & 0x3FF

    @staticmethod
    def pmInDom_build(d: int, s: int) -> int:
        from purepcp.pmapi.ids import pmInDom_build

        return pmInDom_build(d, s)

    @staticmethod
    def pmInDom_domain(indom: int) -> int:
        return (int(indom) >> 22) & 0x1FF

    @staticmethod
    def pmInDom_serial(indom: int) -> int:
        return int(indom) & 0x3FFFFF

    @staticmethod
    def pmParseInterval(interval: str) -> tuple[timeval, str]:
        return timeval.fromInterval(interval), ""

    @staticmethod
    def pmParseHighResInterval(interval: str) -> tuple[timespec, str]:
        return timespec.fromInterval(interval), ""

    @staticmethod
    def pmMergeLabels(labels: Any) -> str:
        """Label JSON texts (the lowest precedence first) merged into one, as libpcp
        merges them (nested maps flattened to dotted names; "" when all are empty)."""
        from purepcp.pmapi.labels import pmMergeLabels

        texts = labels if isinstance(labels, list) else [labels]
        try:
            return pmMergeLabels(texts)
        except PMError as exc:
            raise pmErr(exc.code) from None

    @staticmethod
    def pmFreeLabelSets(labelSets: Any, nsets: int = 1) -> None:
        """(Nothing to free: the structures go when the last reference does.)"""

    def pmlabelset_to_dict(self, lset: Any, flags: int = 0xFF) -> dict[str, Any]:
        """A label set's labels as a dict (FLAGS ignored, as in PCP's binding)."""
        import json

        if lset is not None and lset.jsonlen > 0 and lset.json is not None:
            return json.loads(lset.json.decode())
        return {}

    @staticmethod
    def pmParseUnitsStr(string: str) -> tuple[pmUnits, float]:
        from purepcp.pmapi.units_parse import parse_units

        try:
            units, mult = parse_units(string)
        except Exception as exc:
            raise pmErr(c_api.PM_ERR_CONV, str(exc)) from None
        return _c_units(units), mult

    @staticmethod
    def pmtimevalSleep(tvp: timeval) -> None:
        time.sleep(float(tvp))

    @staticmethod
    def pmtimespecSleep(spec: timespec) -> None:
        time.sleep(float(spec))

    @staticmethod
    def pmprintf(fmt: str, *args: Any) -> int:
        """pmprintf: FMT (printf's format, with ARGS) kept until pmflush writes it (to
        standard error)."""
        from cpmapi import options

        if args:
            fmt = fmt % tuple(a.decode() if isinstance(a, bytes) else a for a in args)
        return options.pmprintf(fmt)

    @staticmethod
    def pmflush() -> int:
        from cpmapi import options

        return options.pmflush()

    @staticmethod
    def pmProgname() -> str:
        from purepcp.pmapi import progname

        return progname()

    @staticmethod
    def pmDebug(flags: Any) -> int:
        from purepcp.pmapi import debug

        return int(bool(debug.enabled))

    # -- PCP's tool-support helpers (pcp.tooltime) ---------------------------------------

    set_connect_options = staticmethod(tooltime.set_connect_options)
    get_current_tz = staticmethod(tooltime.get_current_tz)
    posix_tz_to_utc_offset = staticmethod(tooltime.posix_tz_to_utc_offset)
    set_timezone = staticmethod(tooltime.set_timezone)
    datetime_to_secs = staticmethod(tooltime.datetime_to_secs)
    get_mode_step = staticmethod(tooltime.get_mode_step)
    prepare_execute = tooltime.prepare_execute


def _new_context(typed: int, name: str | None) -> Any:
    """The purepcp context pmNewContext makes for TYPED and NAME (connected now, as
    libpcp's connects at once), with the namespace -n loaded and, for a local context,
    the agents -K changed (when pmGetOptions read the command line)."""
    options = sys.modules.get("cpmapi.options")
    state = options.state() if options is not None else None
    pmns = state.namespace if state is not None else None
    kind = typed & c_api.PM_CONTEXT_TYPEMASK
    if kind == c_api.PM_CONTEXT_HOST:
        from purepcp.pmapi.context import Context

        ctx = Context.host(name or "local:", pmns)
        ctx.source.ensure()
        return ctx
    if kind == c_api.PM_CONTEXT_ARCHIVE:
        from purepcp.pmapi.archive.context import ArchiveContext

        if not name:
            raise pmErr(c_api.PM_ERR_NOCONTEXT)
        return ArchiveContext(name, pmns)
    if kind == c_api.PM_CONTEXT_LOCAL:
        from purepcp.pmapi.context import Context

        return Context.local(list(state.specs) if state is not None else (), pmns)
    raise pmErr(c_api.PM_ERR_NOCONTEXT)
