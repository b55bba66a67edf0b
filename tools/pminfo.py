"""pminfo: names, descriptors, help text, labels and values of metrics, as PCP's pminfo.

Names are gathered by traversing the namespace (every name, or each argument's
subtree; an argument starting with a digit is a PMID or an InDom), then reported
in batches (-b): one name lookup, one fetch and one descriptor request per batch.
The output is byte for byte what PCP 6's pminfo prints for the same metrics.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any

from purepcp.pmapi.archive.damage import ArchiveError
from purepcp.pmapi.archive.modes import PM_MODE_FORW
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PM_ERR_NAME, PM_ERR_PROFILE, PMError, pmErrStr
from purepcp.pmapi.ids import (
    PM_ID_NULL,
    PM_INDOM_NULL,
    pmID_build,
    pmIDStr,
    pmInDom_build,
    pmInDomStr,
)
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
    PM_LABEL_OPTIONAL,
    LabelSet,
    pmMergeLabelSets,
)
from purepcp.pmapi.options import (
    ARCHIVE,
    DEBUG,
    HELP,
    HOST,
    HOSTZONE,
    LOCALPMDA,
    NAMESPACE,
    ORIGIN,
    SPECLOCAL,
    TIMEZONE,
    VERSION,
    Opt,
    Parsed,
    Tool,
    debug_complaint,
    load_derived,
)
from purepcp.pmapi.types import PMType, pmSemStr, pmTypeStr, type_description
from purepcp.pmapi.units import pmUnitsStr
from purepcp.pmapi.values import Timestamp
from purepcp.tools.stdio import c_stdout

UNIQNAMES = Opt("N", "uniqnames", "FILE", "like -n, with only one name for each PMID")
BATCH = Opt("b", "batch", "N", "fetch N metrics at a time for -f and -v [128]")
DESC = Opt("d", "desc", None, "print each metric's descriptor")
FETCH = Opt("f", "fetch", None, "fetch and print values of every instance")
FETCHALL = Opt("F", "fetchall", None, "like -f, also for indoms that cannot be listed")
FULLINDOM = Opt("I", "fullindom", None, "print InDoms in long form")
LABELS = Opt("l", "labels", None, "print labels of InDoms, metrics and instances")
PMID = Opt("m", "pmid", None, "print the PMID")
FULLPMID = Opt("M", "fullpmid", None, "print the PMID in long form")
SERIES = Opt("s", "series", None, "print source, metric and instance series ids")
ONELINE = Opt("t", "oneline", None, "print the one-line help text")
HELPTEXT = Opt("T", "helptext", None, "print the full help text")
DERIVED = Opt("c", "derived", "FILE", "load derived metric definitions from FILE")
EVENTS = Opt("x", "events", None, "unpack fetched event records")
VERIFY = Opt("v", "verify", None, "only report metrics that have no values")

TOOL = Tool(
    "pminfo",
    "[options] [metricname | pmid | indom]...",
    [
        (
            "General options",
            [
                ARCHIVE,
                HOST,
                LOCALPMDA,
                SPECLOCAL,
                NAMESPACE,
                UNIQNAMES,
                ORIGIN,
                TIMEZONE,
                HOSTZONE,
                VERSION,
                HELP,
            ],
        ),
        (
            "Protocol options",
            [
                BATCH,
                DESC,
                FETCH,
                FETCHALL,
                FULLINDOM,
                LABELS,
                PMID,
                FULLPMID,
                SERIES,
                ONELINE,
                HELPTEXT,
            ],
        ),
        ("Metrics options", [DERIVED, EVENTS, VERIFY]),
        ("", [DEBUG]),  # (-D is accepted, not listed, as PCP's pminfo does)
    ],
)

_PMID_ARG = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_INDOM_ARG = re.compile(r"(\d+)\.(\d+)")
#: pmcd refuses client PDUs over 64 KB: keep a batch's name lookup below 63 KB
_PDU_LIMIT = 63 * 1024
_EVENT_TYPES = (PMType.PM_TYPE_EVENT, PMType.PM_TYPE_HIGHRES_EVENT)


class Report:
    """pminfo's state: what to print, the batch of names, and the caches it keeps."""

    def __init__(self, parsed: Parsed, out: Any) -> None:
        self.out = out
        self.mid = "pmid" in parsed or "fullpmid" in parsed
        self.fullmid = "fullpmid" in parsed
        self.fulliid = "fullindom" in parsed
        self.desc = "desc" in parsed or self.fulliid
        self.label = "labels" in parsed
        self.series = "series" in parsed
        self.oneline = "oneline" in parsed
        self.help = "helptext" in parsed
        self.force = "fetchall" in parsed
        self.events = "events" in parsed
        self.value = "fetch" in parsed or self.force or self.events
        self.verify = "verify" in parsed
        if self.verify:
            self.desc = self.mid = self.fullmid = self.help = self.oneline = False
            self.value = self.force = self.label = False
        self.batchsize = 128
        self.names: list[str] = []
        self.pdusize = 20
        self.ctx: Any = None
        self._indom: int | None = None
        self._insts: list[tuple[int, str]] = []
        self._inst_labels: tuple[LabelSet, ...] | None = None
        self._label_cache: dict[tuple[int, int], LabelSet | None] = {}
        self._last_cluster: tuple[int, LabelSet | None] | None = None  # (pmid asked, its set)
        self._context_labels: LabelSet | None = None
        self.origin: Timestamp | None = None  # where an archive's fetches start (-O)
        self._damage_told: set[tuple[str, int]] = set()
        self.zone: Any = None  # where -x shows record times (None: local time)

    @property
    def needs_context(self) -> bool:
        return (
            self.desc
            or self.value
            or self.label
            or self.series
            or self.oneline
            or self.help
            or self.verify
        )

    # -- gathering names -----------------------------------------------------------------

    def metric(self, name: str) -> None:
        """dometric: add NAME to the batch, reporting the batch when it is full."""
        if name == "":
            self.out.write("PMNS appears to be empty!\n")
            return
        self.names.append(name)
        if self.ctx is not None and getattr(self.ctx.source, "kind", None) == "host":
            self.pdusize += 4 + (len(name.encode()) + 3) // 4 * 4
            if self.pdusize > _PDU_LIMIT:
                self.batchsize = len(self.names)
        if len(self.names) >= self.batchsize:
            self.report()

    def argument(self, arg: str) -> None:
        """One operand: a PMID or InDom when it starts with a digit, else a subtree."""
        if arg[:1].isdigit():
            match = _PMID_ARG.match(arg)
            if match:
                pmid = pmID_build(*map(int, match.groups()))
                name = self.ctx.name_all(pmid)[0]
                for leaf in self.ctx.walk(name):
                    self.metric(leaf)
                return
            match = _INDOM_ARG.match(arg)
            if match:
                self.indom(pmInDom_build(*map(int, match.groups())))
                return
            raise PMError(PM_ERR_NAME)
        for leaf in self.ctx.walk(arg):
            self.metric(leaf)

    def indom(self, indom: int) -> None:
        if self.verify:
            return
        w = self.out.write
        w(f"\nInDom: {pmInDomStr(indom)}")
        if self.fulliid:
            w(f" = {indom} =")
        w(f" 0x{indom:x}")
        if self.oneline:
            self._oneline(indom, True, self.fulliid)
        w("\n")
        if self.label:
            merged = self._merge(
                [self._context(), self._domain(indom >> 22), self._indom_labels(indom)]
            )
            if merged is not None:
                w(f"    labels {merged}\n")
        if self.help:
            self._helptext(indom, True)

    # -- reporting a batch -----------------------------------------------------------------

    def report(self) -> None:
        names, self.names = self.names, []
        if not names:
            return
        try:
            self._report(names)
        finally:
            if self.ctx is not None and getattr(self.ctx.source, "kind", None) == "host":
                self.pdusize = 20

    def _report(self, names: list[str]) -> None:
        ctx, w = self.ctx, self.out.write
        try:
            pmids = ctx.lookup_names(names)
        except PMError as exc:
            for name in names:
                w(f"{name}: pmLookupName: {exc.message}\n")
            return
        result = None
        if self.value or self.label or self.verify:
            try:
                if self.origin is not None:  # an archive: each batch reads from the origin on
                    ctx.set_mode(PM_MODE_FORW, self.origin)
                result = ctx.fetch(pmids)
            except PMError as exc:
                for name in names:
                    w(f"{name}: pmFetch: {exc.message}\n")
                self._tell_damage(exc)
                return
        descs: list[Desc | None] = [None] * len(pmids)
        wants_desc = self.desc or self.value or self.label or self.series or self.verify
        if wants_desc:
            descs = [result.descs.get(p) for p in pmids] if result else self._descs(pmids)
        for i, (name, pmid) in enumerate(zip(names, pmids, strict=True)):
            desc = descs[i]
            if wants_desc and desc is None:
                w(f"{name}: pmLookupDesc: {self._desc_error(pmid)}\n")
                continue
            if self.desc or self.help or self.value or self.label:
                w("\n")
            vset = result.result.vsets[i] if result is not None else None
            if self.force and vset is not None and vset.numval == PM_ERR_PROFILE:
                vset = self._fetch_all(name, pmid, desc)
                if vset is None:
                    continue
            if self.verify:
                if desc.type == PMType.PM_TYPE_NOSUPPORT:
                    w(f"{name}: Not Supported\n")
                elif vset.numval < 0:
                    w(f"{name}: {pmErrStr(vset.numval)}\n")
                elif vset.numval == 0:
                    w(f"{name}: No value(s) available\n")
                continue
            w(name)
            if self.mid:
                w(f" PMID: {pmIDStr(pmid)}")
            if self.fullmid:
                w(f" = {pmid} = 0x{pmid:x}")
            if self.oneline:
                self._oneline(pmid, False, self.fullmid)
            w("\n")
            if self.desc:
                self._desc(desc)
            if self.series:
                self._metric_series(name, desc)
            if self.label:
                self._metric_labels(desc)
            if self.help:
                self._helptext(pmid, False)
            if self.value:
                self._dump(desc, vset)
            if self.series:
                self._instance_series(desc.indom)
            if self.label:
                self._instance_labels(desc)

    def _descs(self, pmids: list[int]) -> list[Desc | None]:
        """The descriptors of a batch; one at a time (None for a failure) when the batch
        fails as a whole, as pminfo asks pmLookupDesc for each metric."""
        try:
            return self.ctx.lookup_descs(pmids)
        except PMError:
            pass
        descs: list[Desc | None] = []
        for pmid in pmids:
            try:
                descs.append(self.ctx.lookup_desc(pmid))
            except PMError:
                descs.append(None)
        return descs

    def _desc_error(self, pmid: int) -> str:
        if pmid == PM_ID_NULL:
            return pmErrStr(-12358)  # PM_ERR_PMID
        try:
            self.ctx.lookup_desc(pmid)
        except PMError as exc:
            return exc.message
        return pmErrStr(-12358)

    def _tell_damage(self, exc: PMError) -> None:
        """Where an archive is damaged, once, on stderr (the lines above are PCP's)."""
        if isinstance(exc, ArchiveError) and (exc.file, exc.offset) not in self._damage_told:
            self._damage_told.add((exc.file, exc.offset))
            sys.stderr.write(f"{TOOL.prog}: {exc}\n")

    def _fetch_all(self, name: str, pmid: int, desc: Desc) -> Any:
        """-F: fetch a metric of a non-enumerable indom once per its listed instances."""
        ctx, w = self.ctx, self.out.write
        try:
            insts = ctx.instances(desc.indom)
        except PMError as exc:
            w(f"{name}: pmGetIndom: {exc.message}\n")
            return None
        if not insts:
            w(f"{name}: pmGetIndom: No instances?\n")
            return None
        ctx.profile.delete(desc.indom)
        ctx.profile.add(desc.indom, [inst for inst, _ in insts])
        try:
            return ctx.fetch([pmid]).result.vsets[0]
        except PMError as exc:
            w(f"{name}: pmFetch: {exc.message}\n")
            self._tell_damage(exc)
            return None
        finally:
            ctx.profile.delete(desc.indom)
            ctx.profile.add(desc.indom)

    # -- pieces of a metric's report -------------------------------------------------------

    def _oneline(self, ident: int, indom: bool, long_form: bool) -> None:
        w = self.out.write
        try:
            text = self.ctx.text(ident, help=False, indom=indom)
        except PMError as exc:
            w(f" One-line Help: Error: {exc.message}")
            return
        w("\n    " if long_form else " ")
        w(f"[{text}]")

    def _helptext(self, ident: int, indom: bool) -> None:
        w = self.out.write
        try:
            text = self.ctx.text(ident, help=True, indom=indom)
        except PMError as exc:
            w(f"Full Help: Error: {exc.message}\n")
            return
        text = text.rstrip("\n")
        if text:
            w(f"Help:\n{text}\n")
        else:
            w("Help: <empty entry>\n")

    def _desc(self, desc: Desc) -> None:
        w = self.out.write
        type_text = type_description(desc.type)
        w(f"    Data Type: {type_text}")
        if type_text == "???":
            w(f" ({desc.type})")
        w(f"  InDom: {pmInDomStr(desc.indom)}")
        if self.fulliid:
            w(f" = {desc.indom} =")
        w(f" 0x{desc.indom:x}\n")
        sem = pmSemStr(desc.sem)
        w(f"    Semantics: {sem}")
        if sem == "???":
            w(f" ({desc.sem})")
        w(f"  Units: {pmUnitsStr(desc.units) or 'none'}\n")

    def _instances(self, indom: int) -> list[tuple[int, str]]:
        if indom != self._indom:
            self._indom = indom
            self._inst_labels = None
            try:
                self._insts = self.ctx.instances(indom)
            except PMError:
                self._insts = []
        return self._insts

    def _instance_name(self, indom: int, inst: int) -> str | None:
        for i, name in self._instances(indom):
            if i == inst:
                return name
        return None

    def _dump(self, desc: Desc, vset: Any) -> None:
        from purepcp.pmapi.printvalue import pminfo_values

        def name_of(inst: int) -> str | None:
            return self._instance_name(desc.indom, inst)

        if self.events and desc.type in _EVENT_TYPES and vset.numval > 0:
            self._dump_events(desc, vset)
            return
        self.out.write(pminfo_values(desc, vset, name_of, self.force))

    def _dump_events(self, desc: Desc, vset: Any) -> None:
        """-x: each value of an event metric, then the records it holds (myeventdump)."""
        from purepcp.pmapi.printvalue import pminfo_values
        from purepcp.tools.pminfo_events import event_dump

        def name_of(inst: int) -> str | None:
            return self._instance_name(desc.indom, inst)

        for j in range(vset.numval):
            one = vset._replace(
                numval=1, insts=vset.insts[j : j + 1], values=vset.values[j : j + 1]
            )
            self.out.write(pminfo_values(desc, one, name_of, self.force))
            self.out.write(event_dump(self.ctx, vset, j, desc.type, self.zone, self._instance_name))

    def set_zone(self, parsed: Parsed) -> None:
        """pmGetContextOptions for an archive: -z or -Z sets the zone record times are
        shown in, and says so first (a host's are always shown in local time)."""
        if "hostzone" in parsed:
            from purepcp.pmapi.zone import archive_zone

            self.zone = archive_zone(self.ctx)
            host = self.ctx.archive.label.hostname
            self.out.write(
                f'Note: timezone set to local timezone of host "{host}" from archive\n\n'
            )
        elif "timezone" in parsed:
            from purepcp.pmapi.timewindow import new_zone

            self.zone = new_zone(str(parsed.get("timezone")))
            self.out.write(f'Note: timezone set to "TZ={parsed.get("timezone")}"\n\n')

    # -- labels ----------------------------------------------------------------------------

    def _labels(self, ident: int, kind: int) -> LabelSet | None:
        key = (kind, ident)
        if key not in self._label_cache:
            try:
                sets = self.ctx.labels(ident, kind)
            except PMError:
                sets = ()
            self._label_cache[key] = sets[0] if sets else None
        return self._label_cache[key]

    def _context(self) -> LabelSet | None:
        if self._context_labels is None:
            found = self._labels(PM_ID_NULL, PM_LABEL_CONTEXT)
            if found is None or found.nlabels <= 0:
                found = LabelSet.from_dict({"hostname": self.ctx.hostname}, PM_LABEL_CONTEXT)
            self._context_labels = found
        return self._context_labels

    def _domain(self, domain: int) -> LabelSet | None:
        return self._labels(domain, PM_LABEL_DOMAIN)

    def _indom_labels(self, indom: int) -> LabelSet | None:
        return self._labels(indom, PM_LABEL_INDOM)

    def _cluster(self, pmid: int) -> LabelSet | None:
        """pmGetClusterLabels as PCP's pminfo asks it: with the metric's own PMID (so an
        archive, which holds a cluster's labels under item 0, gives none), and again only
        when the domain or cluster differs from the last asked."""
        last = self._last_cluster
        if last is None or (last[0] ^ pmid) & ~0x3FF:
            try:
                sets = self.ctx.labels(pmid, PM_LABEL_CLUSTER)
            except PMError:
                sets = ()
            last = self._last_cluster = (pmid, sets[0] if sets else None)
        return last[1]

    def _item(self, pmid: int) -> LabelSet | None:
        return self._labels(pmid, PM_LABEL_ITEM)

    def _per_instance(self, indom: int) -> tuple[LabelSet, ...]:
        self._instances(indom)
        if self._inst_labels is None:  # not asked for this indom yet
            try:
                self._inst_labels = tuple(self.ctx.labels(indom, PM_LABEL_INSTANCES))
            except PMError:
                self._inst_labels = ()
        return self._inst_labels

    @staticmethod
    def _merge(sets: Sequence[LabelSet | None], intrinsic: bool = False) -> str | None:
        keep = (lambda label, json: not label.flags & PM_LABEL_OPTIONAL) if intrinsic else None
        merged = pmMergeLabelSets(sets, keep)
        return merged.json.decode("utf-8", "surrogateescape") if merged.json else None

    def _metric_sets(self, desc: Desc, with_indom: bool) -> list[LabelSet | None]:
        sets = [self._context(), self._domain(desc.pmid >> 22 & 0x1FF)]
        if with_indom:
            sets.append(self._indom_labels(desc.indom))
        return [*sets, self._cluster(desc.pmid), self._item(desc.pmid)]

    def _metric_labels(self, desc: Desc) -> None:
        merged = self._merge(self._metric_sets(desc, desc.indom != PM_INDOM_NULL))
        if merged is not None:
            self.out.write(f"    labels {merged}\n")

    def _instance_rows(self, indom: int, base: list[LabelSet | None]):
        """(inst, name, merged labels) for each instance, as pminfo walks them."""
        inst_sets = self._per_instance(indom)
        insts = self._insts
        count = len(inst_sets) if inst_sets else len(insts)
        for j in range(count):
            own = inst_sets[j] if j < len(inst_sets) else None
            merged = self._merge([*base, own] if own is not None else base)
            if merged is None:
                continue
            inst = own.inst if own is not None else insts[j][0] if j < len(insts) else 4294967295
            yield inst, self._instance_name(indom, inst), merged

    def _instance_labels(self, desc: Desc) -> None:
        from purepcp.pmapi.cnumbers import int32

        if desc.indom == PM_INDOM_NULL:
            return
        base = self._metric_sets(desc, True)
        for inst, name, merged in self._instance_rows(desc.indom, base):
            self.out.write(
                f'    inst [{int32(inst)} or "{name or "DISAPPEARED"}"] labels {merged}\n'
            )

    # -- series identifiers ----------------------------------------------------------------

    def _metric_series(self, name: str, desc: Desc) -> None:
        w = self.out.write
        source = self._merge([self._context()], intrinsic=True)
        if source is not None:
            text = '{"series":"source","labels":' + source + "}"
            w(f"    Source: {_sha1(text)}\n")
        sets = [
            self._context(),
            self._domain(desc.pmid >> 22 & 0x1FF),
            self._indom_labels(desc.indom),
            self._cluster(desc.pmid),
            self._item(desc.pmid),
        ]
        labels = self._merge(sets, intrinsic=True)
        if labels is not None:
            text = (
                f'{{"series":"metric","name":"{name}","labels":{labels},'
                f'"semantics":"{pmSemStr(desc.sem)}","type":"{pmTypeStr(desc.type)}",'
                f'"units":"{pmUnitsStr(desc.units)}"}}'
            )
            w(f"    Series: {_sha1(text)}\n")

    def _instance_series(self, indom: int) -> None:
        from purepcp.pmapi.cnumbers import int32

        if indom == PM_INDOM_NULL:
            return
        base = [self._context(), self._domain(indom >> 22), self._indom_labels(indom)]
        for inst, name, merged in self._instance_rows(indom, base):
            text = f'{{"series":"instance","name":"{name or "???"}","labels":{merged}}}'
            self.out.write(
                f'    inst [{int32(inst)} or "{name or "DISAPPEARED"}"] series {_sha1(text)}\n'
            )


def _sha1(text: str) -> str:
    import hashlib  # (only -M's series identifiers need it)

    return hashlib.sha1(text.encode("utf-8", "surrogateescape")).hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(_run, argv)


def _run(argv: list[str]) -> int:
    parsed = TOOL.parse(argv)
    for opt, value in parsed.pairs:  # (-D: our traces where they mean something; a bad one
        if opt is DEBUG:  # is refused)
            if problem := debug_complaint(value):
                TOOL.fail(problem, usage=True)
            from purepcp.pmapi import debug

            debug.set_options(value)
    # (stdout buffered as C's: diagnostics land in merged output where PCP's pminfo puts them)
    with c_stdout() as out:
        return _report_all(parsed, out)


def _report_all(parsed: Parsed, out: Any) -> int:
    report = Report(parsed, out)
    if "batch" in parsed:
        text = str(parsed.get("batch"))
        try:
            report.batchsize = int(text)
        except ValueError:
            TOOL.fail("-b requires numeric argument", usage=True)
    if "uniqnames" in parsed and "namespace" not in parsed:
        parsed.values["namespace"] = parsed.values["uniqnames"]
    for opt, value in parsed.pairs:
        if opt is DERIVED:  # (each -c in turn, as PCP's pminfo loads them)
            problem = load_derived(value)
            if problem:  # (not fatal, as in PCP)
                sys.stderr.write(f"pminfo: derived configuration(s) error: {problem}\n")
    if (
        report.needs_context
        or "namespace" not in parsed
        or "local-PMDA" in parsed
        or "host" in parsed
    ):
        report.ctx = TOOL.context(parsed)
        if report.ctx.kind == "archive":
            # one metric per batch, each found from the origin on, as pminfo does
            report.batchsize = 1
            report.set_zone(parsed)
            report.origin = TOOL.archive_origin(parsed, report.ctx)
    else:  # names alone, from the -n file: no pmcd needed
        from purepcp.pmapi.context import Context

        report.ctx = Context(None, TOOL.namespace(parsed))
    status = 0
    try:
        # (names are reported batch by batch as the traversal yields them, as pminfo's
        # pmTraversePMNS callback does: a derived metric bound at the end of a host's
        # traversal reports its error after the batches before it)
        if not parsed.operands:
            try:
                for leaf in report.ctx.walk(""):
                    report.metric(leaf)
            except PMError as exc:
                sys.stderr.write(f"Error: {exc.message}\n")
                status = 1
        for arg in parsed.operands:
            try:
                report.argument(arg)
            except PMError as exc:
                sys.stderr.write(f"Error: {arg}: {exc.message}\n")
                status = 1
        report.report()
    finally:
        if report.ctx is not None and report.ctx.source is not None:
            report.ctx.close()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
