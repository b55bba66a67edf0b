"""PCP's ``pcp.pmcc``: groups of metrics fetched together, their values converted
(counters to rates over the interval between two fetches, into chosen units), and a
manager that runs a monitor's fetch-and-report loop from its command line.  The classes
and properties are PCP's (pcp-iostat, pcp-mpstat, pcp-pidstat, pcp-ps and others are
written against them); the values come from pcp.pmapi on purepcp's core."""

from __future__ import annotations

import sys
from ctypes import POINTER, c_char_p, c_uint, cast
from typing import Any

from cpmapi import (
    PM_CONTEXT_ARCHIVE,
    PM_CONTEXT_HOST,
    PM_ERR_EOL,
    PM_ID_NULL,
    PM_IN_NULL,
    PM_INDOM_NULL,
    PM_SEM_COUNTER,
    PM_TYPE_DOUBLE,
)

from .pmapi import pmContext, pmDesc, pmErr, pmValue, timeval


class MetricCore:
    """What one metric name has that does not change: its context, name (bytes, as PCP
    keeps it), PMID, descriptor and text; shared by every Metric of the name."""

    def __init__(self, ctx: MetricCache, name: str | bytes, pmid: int) -> None:
        self.ctx = ctx
        self.name = name if isinstance(name, bytes) else name.encode("utf-8")
        self.pmid = pmid
        self.desc: Any = None
        self.text: Any = None
        self.help: Any = None


def _values_of(vset: Any) -> list[pmValue]:
    """A value set's pmValues (VSET a pointer to pmValueSet)."""
    listed = cast(vset.contents.vlist, POINTER(pmValue))
    return [listed[i] for i in range(vset.contents.numval)]


class Metric:
    """One metric of a group: its latest and previous value sets, the type and units its
    values are converted to, and the values as (pmValue, instance name, value) triples."""

    def __init__(self, core: MetricCore) -> None:
        self._core = core
        self._vset: Any = None
        self._prevvset: Any = None
        self._values: Any = None
        self._prevValues: Any = None
        self._convType = core.desc.contents.type
        self._convUnits: Any = None
        self._errorStatus: Any = None
        self._netValues: Any = None
        self._netPrevValues: Any = None
        self._netConvValues: Any = None

    ctx = property(lambda self: self._core.ctx)
    name = property(lambda self: self._core.name.decode())
    pmid = property(lambda self: self._core.pmid)
    desc = property(lambda self: self._core.desc)
    text = property(lambda self: self._core.text)
    help = property(lambda self: self._core.help)

    def get_vlist(self, vset: Any, vlist_idx: int) -> pmValue:
        return cast(vset.contents.vlist, POINTER(pmValue))[vlist_idx]

    def get_inst(self, vset: Any, vlist_idx: int) -> int:
        return self.get_vlist(vset, vlist_idx).inst

    def _converted(self, vset: Any, value: pmValue, otype: int) -> Any:
        """VALUE (of VSET) as OTYPE, scaled into convUnits when they are set."""
        ctx = self.ctx
        atom = ctx.pmExtractValue(vset.contents.valfmt, value, self.desc.type, otype)
        if self._convUnits:
            descs = (POINTER(pmDesc) * 1)(self.desc)
            atom = ctx.pmConvScale(otype, atom, descs, 0, self._convUnits)
        return atom.dref(otype)

    def _names(self) -> dict[int, Any]:
        return self.ctx.mcGetInstD(self.desc.contents.indom)

    def computeValues(self, inValues: Any) -> list[tuple[pmValue, Any, Any]]:
        """INVALUES' values as (pmValue, instance name, value) of convType."""
        names = self._names()
        return [
            (v, names.get(v.inst, ""), self._converted(inValues, v, self._convType))
            for v in _values_of(inValues)
        ]

    def convertValues(self, values: Any, prevValues: Any, delta: float) -> Any:
        """A counter's values as rates: the change since PREVVALUES over DELTA seconds
        (instances that went backwards or were not there before left out); other
        metrics' values as they are; None for a counter without previous values."""
        if self.desc.sem != PM_SEM_COUNTER:
            return self.computeValues(values)
        if prevValues is None:
            return None
        names = self._names()
        before = _values_of(prevValues)
        out = []
        for i, now in enumerate(_values_of(values)):
            then = _same_instance(before, i, now.inst)
            if then is None:
                continue
            value = self._converted(values, now, PM_TYPE_DOUBLE)
            previous = self._converted(prevValues, then, PM_TYPE_DOUBLE)
            if value >= previous:
                out.append((now, names.get(now.inst, ""), (value - previous) / delta))
        return out

    values = property(lambda self: self._values)
    prevValues = property(lambda self: self._prevValues)
    errorStatus = property(lambda self: self._errorStatus)
    netConvValues = property(lambda self: self._netConvValues)

    @values.setter
    def values(self, values: Any) -> None:
        self._prevValues, self._values = self._values, values

    @property
    def convType(self) -> int:
        return self._convType

    @convType.setter
    def convType(self, value: int) -> None:
        self._convType = value

    @property
    def convUnits(self) -> Any:
        return self._convUnits

    @convUnits.setter
    def convUnits(self, value: Any) -> None:
        self._convUnits = value

    @property
    def netValues(self) -> Any:
        if not self._vset:
            return None
        self._netValues = self.computeValues(self._vset)
        return self._netValues

    @property
    def netPrevValues(self) -> Any:
        if not self._prevvset:
            return None
        self._netPrevValues = self.computeValues(self._prevvset)
        return self._netPrevValues

    def metricPrint(self) -> None:
        print("   ", "indom:", self.ctx.pmInDomStr(self.desc.indom))
        for _, name, value in self.netValues:
            print("   ", name, value)

    def metricConvert(self, delta: float) -> Any:
        self._netConvValues = self.convertValues(self._vset, self._prevvset, delta)
        return self._netConvValues


def _same_instance(before: list[pmValue], at: int, inst: int) -> pmValue | None:
    """The previous value of instance INST: where it was (AT) if it is still there,
    else wherever it is."""
    if at < len(before) and before[at].inst == inst:
        return before[at]
    return next((v for v in before if v.inst == inst), None)


class MetricCache(pmContext):
    """A context that remembers each metric's core (PMID, descriptor) by name and PMID,
    and each instance domain's names, so a group asks pmcd for them once."""

    def __init__(self, typed: int = PM_CONTEXT_HOST, target: Any = "local:") -> None:
        pmContext.__init__(self, typed, target)
        self._mcIndomD: dict[int, dict[int, Any]] = {}
        self._mcByNameD: dict[str, MetricCore] = {}
        self._mcByPmidD: dict[int, MetricCore] = {}
        self._mcCounter = 0  # the counters among the metrics cached
        self._mcMetrics = 0

    def mcGetInstD(self, indom: int) -> dict[int, Any]:
        """INDOM's instance names by instance id (PM_IN_NULL's for a singular metric)."""
        return self._mcIndomD[indom]

    def _mcAdd(self, core: MetricCore) -> None:
        indom = core.desc.contents.indom
        if indom not in self._mcIndomD:
            if indom == PM_INDOM_NULL:
                names: dict[int, Any] = {PM_IN_NULL: b"PM_IN_NULL"}
            else:
                lookup = (
                    self.pmGetInDomArchive if self._type == PM_CONTEXT_ARCHIVE else self.pmGetInDom
                )
                ids, labels = lookup(core.desc)  # (None, None: no instances)
                names = dict(zip(ids or [], labels or [], strict=True))
            self._mcIndomD[indom] = names
        if core.desc.contents.sem == PM_SEM_COUNTER:
            self._mcCounter += 1
        self._mcMetrics += 1
        self._mcByNameD[core.name.decode()] = core
        self._mcByPmidD[core.pmid] = core

    def mcGetCoresByName(self, nameL: Any) -> tuple[list[Any], Any]:
        """The cores of the names (made, and cached, for names not yet seen), and the
        names that have no metric (None when all have)."""
        names = [n.decode() if isinstance(n, bytes) else n for n in nameL]
        cores: list[Any] = [self._mcByNameD.get(n) for n in names]
        missing = {n: i for i, n in enumerate(names) if cores[i] is None}
        errors = None
        if missing:
            found, errors = self.mcFetchPmids(missing.keys())
            for name, pmid in found:
                if pmid == PM_ID_NULL:
                    errors = [*(errors or []), name]
                else:
                    cores[missing[name]] = self._mcCreateCore(name, pmid)
        return cores, errors

    def _mcCreateCore(self, name: str, pmid: int) -> MetricCore:
        core = MetricCore(self, name, pmid)
        try:
            core.desc = self.pmLookupDesc(pmid)
        except pmErr as error:
            sys.stderr.write(f"{error.progname()}: pmLookupDesc: {error.message()}")
            raise SystemExit(1) from None
        self._mcAdd(core)
        return core

    def mcFetchPmids(self, nameL: Any) -> tuple[Any, Any]:
        """(name, PMID) of each name; a name without a metric ends the program with
        pmLookupName's message, as PCP's does."""
        names = list(nameL)
        encoded = (c_char_p * len(names))(
            *(n if isinstance(n, bytes) else n.encode("utf-8") for n in names)
        )
        try:
            pmids = self.pmLookupName(encoded)
        except pmErr as error:
            sys.stderr.write(f"{error.progname()}: pmLookupName: {error.message()}")
            raise SystemExit(1) from None
        return zip(names, pmids, strict=True), None


class MetricGroup(dict):
    """Metrics fetched together in one pmFetch, by name; the latest result and the one
    before, for rates."""

    def __init__(self, contextCache: Any, inL: Any = ()) -> None:
        dict.__init__(self)
        self._ctx = contextCache
        self._pmidArray: Any = None
        self._result: Any = None
        self._prev: Any = None
        self._altD: dict[int, Metric] = {}
        self.mgAdd(inL)

    contextCache = property(lambda self: self._ctx)
    nonCounters = property(lambda self: self._ctx._mcCounter != self._ctx._mcMetrics)
    pmidArray = property(lambda self: self._pmidArray)
    timestamp = property(lambda self: self._result.contents.timestamp)
    prev = property(lambda self: self._prev)
    prevTimestamp = property(lambda self: self._prev.contents.timestamp)

    @property
    def result(self) -> Any:
        return self._result

    @result.setter
    def result(self, pmresult: Any) -> None:
        self._prev, self._result = self._result, pmresult

    def __setitem__(self, attr: Any, value: Any) -> None:
        if attr in self:
            raise KeyError("metric group with that key already exists")
        dict.__setitem__(self, attr, MetricGroup(self, inL=value))

    def mgAdd(self, nameL: Any) -> None:
        """The names' metrics added to the group."""
        cores, _ = self._ctx.mcGetCoresByName(nameL)
        for core in cores:
            metric = Metric(core)
            self.update({metric.name: metric})
            self._altD[metric.pmid] = metric
        self._pmidArray = (c_uint * len(self))(*(m.pmid for m in self.values()))

    def mgFetch(self) -> Any:
        """One fetch of the group: each metric's value set moves to its previous one.
        The end of an archive ends the program quietly; another failure with its
        message.  Returns the result's timestamp."""
        try:
            self.result = self._ctx.pmFetch(self._pmidArray)
        except pmErr as error:
            if error.args[0] == PM_ERR_EOL:
                raise SystemExit(0) from None
            sys.stderr.write(f"{error.progname()}: pmFetch: {error.message()}")
            raise SystemExit(1) from None
        result = self._result.contents
        for i in range(result.numpmid):
            metric = self._altD[result.get_pmid(i)]
            metric._prevvset, metric._vset = metric._vset, result.get_vset(i)
        return result.timestamp

    def mgDelta(self) -> float:
        """Seconds between the last two fetches (since 0 after the first)."""
        previous = float(self.prevTimestamp) if self._prev is not None else 0.0
        return float(self.timestamp) - previous


class MetricGroupPrinter:
    """What a monitor prints after each fetch (tools override report)."""

    def report(self, manager: MetricGroupManager) -> None:
        for group in manager.values():
            for metric in group.values():
                metric.metricPrint()

    def convert(self, manager: MetricGroupManager) -> None:
        """Every metric's values converted (rates over each group's interval)."""
        for group in manager.values():
            delta = group.mgDelta()
            for metric in group.values():
                metric.metricConvert(delta)


class MetricGroupManager(dict, MetricCache):
    """A monitor's groups by name, on one context, and its loop: fetch, report, wait,
    as many times as the command line's samples, finish time or interval say."""

    def __init__(self, typed: int = PM_CONTEXT_HOST, target: Any = "local:") -> None:
        dict.__init__(self)
        MetricCache.__init__(self, typed, target)
        self._options: Any = None
        self._default_delta = timeval(1, 0)
        self._default_pause: Any = None
        self._printer: Any = None
        self._counter = 0

    def __setitem__(self, attr: Any, value: Any) -> None:
        if attr in self:
            raise KeyError("metric group with that key already exists")
        dict.__setitem__(self, attr, MetricGroup(self, inL=value))

    @property
    def options(self) -> Any:
        return self._options

    @options.setter
    def options(self, options: Any) -> None:
        self._options = options

    @property
    def default_delta(self) -> Any:
        return self._default_delta

    @default_delta.setter
    def default_delta(self, delta: Any) -> None:
        self._default_delta = delta

    @property
    def default_pause(self) -> Any:
        return self._default_pause

    @default_pause.setter
    def default_pause(self, pause: Any) -> None:
        self._default_pause = pause

    printer = property(None, lambda self, printer: setattr(self, "_printer", printer))
    counter = property(lambda self: self._counter)

    @classmethod
    def builder(cls, options: Any, argv: list[str]) -> MetricGroupManager:
        """A manager on the context the command line names (pmContext.fromOptions)."""
        manager = cls.fromOptions(options, argv)
        manager._default_delta = timeval(options.delta, 0)
        manager._options = options
        return manager

    @staticmethod
    def _tv2float(tv: Any) -> float:
        return 0.0 if tv is None else float(tv.tv_sec) + float(tv.tv_usec) / 1e6

    def _computeSamples(self) -> tuple[int, Any]:
        """How many fetches to make (0: until interrupted or the archive ends) and the
        time to stop at: --samples, else --finish over the interval; one more when
        every metric is a counter (the first fetch only starts the rates)."""
        options = self._options
        if options is None:
            return 0, None
        extra = 0 if any(group.nonCounters for group in self.values()) else 1
        samples = options.pmGetOptionSamples()
        if samples is not None:
            return samples + extra, None
        if options.pmGetOptionFinishOptarg() is None:
            return 0, None
        origin, finish = options.pmGetOptionOrigin(), options.pmGetOptionFinish()
        delta = options.pmGetOptionInterval() or self._default_delta
        window = (self._tv2float(finish) - self._tv2float(origin)) / self._tv2float(delta)
        return int(window + 0.5) + extra, finish

    def _computePauseTime(self) -> Any:
        """The wait between fetches: as set, else none for an archive, else the
        interval asked for (or the default)."""
        if self._default_pause is None:
            if self.type == PM_CONTEXT_ARCHIVE:
                self._default_pause = timeval(0, 0)
            elif self._options is not None:
                self._default_pause = self._options.pmGetOptionInterval() or self._default_delta
            else:
                self._default_pause = self._default_delta
        return self._default_pause

    def checkMissingMetrics(self, nameL: Any) -> Any:
        """The names the context has no metric for (None when it has them all)."""
        names = list(nameL)
        try:
            pmContext.pmLookupName(self, names)
            return None
        except pmErr:
            pass
        missing = []
        for name in names:
            try:
                pmContext.pmLookupName(self, name)
            except pmErr:
                missing.append(name)
        return missing or None

    def fetch(self) -> Any:
        """Every group fetched: the latest of their timestamps."""
        latest = None
        for group in self.values():
            stamp = group.mgFetch()
            if latest is None or self._tv2float(stamp) > self._tv2float(latest):
                latest = stamp
        return latest

    def run(self) -> Any:
        """Fetch, then report and fetch again after each pause, until the samples or
        the finish time are reached (or the archive ends, or the user interrupts)."""
        samples, finish = self._computeSamples()
        timer = self._computePauseTime()
        try:
            now = self.fetch()
            while not (samples > 0 and self._counter >= samples):
                if finish is not None and self._tv2float(now) >= self._tv2float(finish):
                    break
                self._printer.report(self)
                timer.sleep()
                now = self.fetch()
                self._counter += 1
        except SystemExit as code:
            return code
        except KeyboardInterrupt:
            pass
        return 0
