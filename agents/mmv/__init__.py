"""The mmv agent (domain 70): exports the metrics programs publish in MMV files, as
PCP's pmdammv does.

Each file in $PCP_TMP_DIR/mmv (written by PCP's libpcp_mmv, its Perl or Python
bindings, or our pcp.mmv) is mapped read-only and its metrics exported as
mmv.FILE.METRIC (mmv.METRIC with MMV_FLAG_NOPREFIX), with PMID cluster the one the
file asks for (or the lowest free one), item the metric's, instance domains
(cluster << 11 | serial), help text and labels from the file, and values read from
the map at each fetch.  Before each request it checks whether the directory changed,
a file was rewritten (its generation) or its writer died (MMV_FLAG_PROCESS), and
scans again if so (agents/mmv/catalog.py).  Its own metrics are mmv.control.reload
(store non-zero to force a scan), mmv.control.debug and mmv.control.files.

The namespace is all dynamic, so the agent answers each request itself from its
current catalog rather than from metrics declared on the class; pmcd's namespace
has "mmv 70:*:*" for it.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

from purepcp.pmapi.errors import (
    PM_ERR_BADSTORE,
    PM_ERR_INDOM,
    PM_ERR_INST,
    PM_ERR_PERMISSION,
    PM_ERR_PMID,
    PM_ERR_TEXT,
    PMError,
)
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL, pmID_cluster, pmID_item
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
    LabelSet,
)
from purepcp.pmapi.mmvdir import make_stats_dir, stats_dir
from purepcp.pmapi.pdu.constants import (
    PM_TEXT_HELP,
    PM_TEXT_INDOM,
    PM_TEXT_ONELINE,
    PMCDState,
)
from purepcp.pmapi.pdu.records import (
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
from purepcp.pmapi.values import Result, Timestamp, ValueSet
from purepcp.pmda import Agent
from purepcp.pmda.agent import match_instance_name

from .catalog import Catalog, scan

PM_TYPE_32 = 0

#: The help of the agent's own metrics: item -> (one line, help), as pmdammv has them.
CONTROL_TEXT = {
    0: (
        "Control maps reloading",
        "Writing anything other then 0 to this metric will result in\n"
        "re-reading directory and re-mapping files.\n",
    ),
    1: (
        "Debug flag",
        "See pmdbg(1).  pmstore into this metric to change the debug value.\n",
    ),
    2: (
        "Memory mapped file count",
        "Count of currently mapped and exported statistics files.\n",
    ),
}


class MMV(Agent):
    """PCP's pmdammv: the metrics of every MMV file in $PCP_TMP_DIR/mmv."""

    name, domain = "mmv", 70
    dynamic_pmns = True

    def __init__(
        self, domain: int | None = None, *, statsdir: str | Path | None = None, **kwargs: Any
    ) -> None:
        super().__init__(domain, **kwargs)
        self.prefix = "mmv"
        self.statsdir = Path(statsdir) if statsdir is not None else stats_dir(self.prefix)
        make_stats_dir(self.statsdir)  # (where the writers put their files, for them)
        self.debug = 0
        self.catalog: Catalog | None = None
        self._dir_seen: tuple[int, int] | None = None  # (mtime_ns, 0) or (0, errno)
        self._notify = False
        self._reload = 0

    # -- keeping up with the directory ---------------------------------------------

    def reload_maybe(self) -> None:
        """Scan again if asked to, if a file was rewritten or its writer died, or if the
        directory changed (mmv_reload_maybe)."""
        catalog = self.catalog
        need = catalog is None or bool(self._reload) or catalog.stale()
        try:
            seen = (os.stat(self.statsdir).st_mtime_ns, 0)
        except OSError as exc:
            seen = (0, exc.errno or errno.ENOENT)
        if seen != self._dir_seen:
            need, self._dir_seen = True, seen
        if need:
            self._rescan()

    def _rescan(self) -> None:
        old = self.catalog
        self.catalog = scan(self.statsdir, self.prefix, self.domain)
        self.pmns = self.catalog.pmns
        self._reload = self.catalog.reload
        if old is not None:
            self._notify = True  # (pmcd passes PMCD_NAMES_CHANGE on to its clients)
            old.close()

    def stop(self) -> None:
        super().stop()
        if self.catalog is not None:
            self.catalog.close()
            self.catalog = None

    # -- requests -------------------------------------------------------------------

    def handle(self, pdu: Any) -> Any:
        """Every request but those about clients looks at the directory first."""
        answer = _ANSWERS.get(type(pdu))
        if answer is None:
            return super().handle(pdu)
        if not (isinstance(pdu, TextReqPDU) and pdu.type & PM_TEXT_INDOM):
            self.reload_maybe()
        try:
            return answer(self, pdu)
        except PMError as exc:
            return ErrorPDU(exc.code)

    def _catalog(self) -> Catalog:
        if self.catalog is None:
            self.reload_maybe()
        return self.catalog  # type: ignore[return-value]

    def _desc(self, pdu: DescReqPDU) -> DescPDU:
        desc = self._catalog().descs.get(pdu.pmid)
        if desc is None:
            raise PMError(PM_ERR_PMID)
        return DescPDU(desc)

    def _fetch(self, pdu: FetchPDU) -> ResultPDU:
        vsets = tuple(self._value_set(pmid) for pmid in pdu.pmids)
        flags = PMCDState.PMCD_NAMES_CHANGE if self._notify else PMCDState.PMCD_NO_CHANGE
        self._notify = False
        return ResultPDU(Result(Timestamp(int(flags), 0), vsets))

    def _value_set(self, pmid: int) -> ValueSet:
        """One metric's values, as pmdaFetch gathers them from mmv_fetchCallBack."""
        catalog = self._catalog()
        desc = catalog.descs.get(pmid)
        if desc is None:
            return ValueSet.of_error(pmid, PM_ERR_PMID)
        if desc.indom == PM_INDOM_NULL:
            insts = [PM_IN_NULL]
        else:
            known = catalog.indoms.get(desc.indom, {})
            insts = [i for i in known if self.in_profile(desc.indom, i)]
            if not insts:
                return ValueSet.empty(pmid)
        pairs, status = [], 0
        for inst in insts:
            try:
                value = self.value(pmid, inst)
            except PMError as exc:
                status = exc.code
                continue
            if value is None:
                status = 0
            else:
                pairs.append((inst, value))
        if not pairs and status < 0:
            return ValueSet.of_error(pmid, status)
        return ValueSet.of_atoms(pmid, desc.type, pairs)

    def value(self, pmid: int, inst: int) -> Any:
        """The value of PMID's instance INST now (None: none), as mmv_fetchCallBack."""
        catalog = self._catalog()
        if pmID_cluster(pmid) == 0:
            control = {0: self._reload, 1: self.debug, 2: len(catalog.files)}
            if pmID_item(pmid) not in control:
                raise PMError(PM_ERR_PMID)
            return control[pmID_item(pmid)]
        if not catalog.files:
            return None
        mapped, metric, offset = catalog.lookup(pmid, inst)
        return mapped.value(metric, offset)

    def _text(self, pdu: TextReqPDU) -> TextPDU:
        if pdu.type & PM_TEXT_INDOM:
            raise PMError(PM_ERR_TEXT)
        ident = pdu.ident
        if pmID_cluster(ident) == 0:
            if pmID_item(ident) not in CONTROL_TEXT:
                raise PMError(PM_ERR_PMID)
            oneline, text = CONTROL_TEXT[pmID_item(ident)]
            return TextPDU(ident, oneline if pdu.type & PM_TEXT_ONELINE else text)
        try:
            mapped, metric, _ = self._catalog().lookup(ident, PM_IN_NULL)
        except PMError:
            raise PMError(PM_ERR_PMID) from None
        if pdu.type & PM_TEXT_ONELINE and metric.shorttext:
            return TextPDU(ident, mapped.text(metric.shorttext))
        if pdu.type & PM_TEXT_HELP and metric.helptext:
            return TextPDU(ident, mapped.text(metric.helptext))
        raise PMError(PM_ERR_TEXT)

    def _instance(self, pdu: InstanceReqPDU) -> InstancePDU:
        instances = self._catalog().indoms.get(pdu.indom)
        if instances is None:
            raise PMError(PM_ERR_INDOM)
        inst = pdu.inst & 0xFFFFFFFF
        if inst == PM_IN_NULL and pdu.name is None:
            return InstancePDU(pdu.indom, tuple(instances), tuple(instances.values()))
        if pdu.name is None:
            if inst not in instances:
                raise PMError(PM_ERR_INST)
            return InstancePDU(pdu.indom, (PM_IN_NULL,), (instances[inst],))
        return InstancePDU(pdu.indom, (match_instance_name(instances, pdu.name),), ("",))

    def _store(self, pdu: ResultPDU) -> ErrorPDU:
        """Only mmv.control.reload and mmv.control.debug take values (mmv_store)."""
        for vs in pdu.result.vsets:
            if pmID_cluster(vs.pmid) != 0:
                raise PMError(PM_ERR_PERMISSION)
            item = pmID_item(vs.pmid)
            if item > 2:
                continue
            if vs.numval != 1:
                raise PMError(PM_ERR_BADSTORE)
            value = int(vs.atoms(PM_TYPE_32)[0])
            if item == 0:
                self._reload = value
            elif item == 1:
                self.debug = value
            else:
                raise PMError(PM_ERR_PERMISSION)
        return ErrorPDU(0)

    def _labels(self, pdu: LabelReqPDU) -> LabelPDU:
        """Labels from the files' label sections (mmv_label), over the framework's
        domain label; instances' labels one set each, as pmdaLabel gives them."""
        level = pdu.type & (PM_LABEL_CLUSTER | PM_LABEL_ITEM | PM_LABEL_INDOM | PM_LABEL_INSTANCES)
        if level == PM_LABEL_INSTANCES:
            return LabelPDU(pdu.ident, pdu.type, self._instance_labels(pdu.ident))
        texts = list(self._file_labels(pdu.ident, level)) if level else []
        if not texts:
            return LabelPDU(pdu.ident, pdu.type, self.label_sets(pdu.ident, pdu.type))
        return LabelPDU(pdu.ident, pdu.type, (_label_set(texts, level),))

    def _file_labels(self, ident: int, level: int) -> Any:
        catalog = self._catalog()
        if level == PM_LABEL_INDOM:
            cluster, wanted = None, ident & 0x3FFFFF
        elif level == PM_LABEL_ITEM:
            cluster, wanted = pmID_cluster(ident), pmID_item(ident)
        else:
            cluster = wanted = pmID_cluster(ident)
        for mapped in catalog.files:
            if cluster is not None and mapped.cluster != cluster:
                continue
            for label in mapped.records.labels:
                got = (
                    (mapped.cluster << 11 | label.identity)
                    if level == PM_LABEL_INDOM
                    else label.identity
                )
                if label.flags & level and got == wanted:
                    yield label.payload

    def _instance_labels(self, indom: int) -> tuple[LabelSet, ...]:
        catalog = self._catalog()
        instances = catalog.indoms.get(indom)
        if instances is None:
            return ()
        sets = []
        for inst in instances:
            if not self.in_profile(indom, inst):
                continue
            texts = [
                label.payload
                for mapped in catalog.files
                for label in mapped.records.labels
                if label.flags & PM_LABEL_INSTANCES
                and label.internal & 0xFFFFFFFF == inst
                and (mapped.cluster << 11 | label.identity) == indom & 0x3FFFFF
            ]
            sets.append(_label_set(texts, PM_LABEL_INSTANCES, inst) if texts else LabelSet(inst))
        return tuple(sets)

    def _pmns(self, pdu: Any) -> Any:
        return super().handle(pdu)


def _label_set(texts: list[str], level: int, inst: int = PM_IN_NULL) -> LabelSet:
    """One set of the labels in TEXTS (JSON objects), later ones winning."""
    merged: dict[str, Any] = {}
    for text in texts:
        try:
            merged.update(json.loads(text))
        except (ValueError, TypeError):
            continue
    return LabelSet.from_dict(merged, level, inst=inst)


_ANSWERS = {
    DescReqPDU: MMV._desc,
    FetchPDU: MMV._fetch,
    TextReqPDU: MMV._text,
    InstanceReqPDU: MMV._instance,
    ResultPDU: MMV._store,
    LabelReqPDU: MMV._labels,
    PMNSIdsPDU: MMV._pmns,
    PMNSNamesPDU: MMV._pmns,
    PMNSChildPDU: MMV._pmns,
    PMNSTraversePDU: MMV._pmns,
}

__all__ = ["MMV", "stats_dir"]
