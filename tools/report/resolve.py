"""The report's metrics made concrete against a context, as PCP's pmConfig.validate_metrics
makes them: derived definitions registered, non-leaf names expanded, instances chosen,
and each metric's label, unit label, rate and scale conversion, width and precision set.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from purepcp.pmapi.convert import pmConvScale
from purepcp.pmapi.desc import Desc
from purepcp.pmapi.errors import PMErr, PMError, pmErrStr
from purepcp.pmapi.ids import PM_IN_NULL, PM_INDOM_NULL
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units, pmUnitsStr
from purepcp.pmapi.units_parse import parse_units

from .config import ConfigError, Spec, Wanted
from .model import Column, Kind
from .settings import Settings

TRUNC = "xxx"
_NUMERIC = (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64,
            PMType.PM_TYPE_FLOAT, PMType.PM_TYPE_DOUBLE)  # fmt: skip
_INTS = (PMType.PM_TYPE_32, PMType.PM_TYPE_U32, PMType.PM_TYPE_64, PMType.PM_TYPE_U64)
#: per second to per time unit, as the fetchgroup adjusts its multiplier (divide, times)
PM_ERR_CONV = int(PMErr.PM_ERR_CONV)
_RATE_TIME = {0: (1e9, 0), 1: (1e6, 0), 2: (1e3, 0), 3: (0, 1.0), 4: (0, 60.0), 5: (0, 3600.0)}


@dataclass(frozen=True)
class Conversion:
    """What PCP's fetchgroup does to a metric's values: rate-convert (counters, per
    second), then multiply by FACTOR (pmConvScale's) and by MULT (the unit string's)."""

    rate: bool
    factor: float
    mult: float
    otype: int  # the type values are delivered as (ints truncate toward zero)

    def kind(self) -> Kind:
        if self.otype == PMType.PM_TYPE_STRING:
            return Kind.STRING
        return Kind.INT if self.otype in _INTS else Kind.FLOAT


@dataclass(frozen=True)
class ReportMetric:
    """One metric of the report, resolved."""

    name: str
    pmid: int
    desc: Desc
    insts: tuple[int, ...]  # the instances reported (PM_IN_NULL alone when singular)
    names: tuple[str | None, ...]
    label: str
    unit: str  # the unit label ("KB/s")
    conv: Conversion
    width: int
    precision: int
    limit: int
    raw: bool
    shown: tuple[bool, ...] | None = None  # -j: which instances the live filter lets through
    labels: tuple[str, ...] = ()  # -m: the metric's label string, then each instance's
    named: bool = False  # LABEL is the spec's own (a metricset's "r", not pmrep's k.a.running)

    def columns(self) -> list[Column]:
        kind = self.conv.kind()
        shape = (self.name, self.label)
        rest = (self.unit, self.width, self.precision, kind, self.desc.indom)
        labels = self.labels[1:] or ("",) * len(self.insts)
        whole = self.labels[0] if self.labels else ""
        return [
            Column(*shape, name, inst, *rest, text, whole, self.named)
            for inst, name, text in zip(self.insts, self.names, labels, strict=True)
        ]


def fetch_conversion(desc: Desc, scale: str) -> tuple[bool, float, float]:
    """(rate, factor, mult) for DESC's values asked for in SCALE's units, as PCP's
    fetchgroup works them out: same dimensions, a rescale; one time dimension fewer, a
    rate (per second, rescaled to SCALE's time unit); anything else PM_ERR_CONV.  An
    empty SCALE (a dimensionless metric's raw units) is no scale at all, as PCP's pmapi
    passes it: a counter is then still a rate, even with -r."""
    if not scale:
        return desc.sem == PMSem.PM_SEM_COUNTER, 1.0, 1.0
    try:
        out, mult = parse_units(scale)
    except ValueError as exc:
        raise PMError(PM_ERR_CONV, str(exc)) from None
    u = desc.units
    same = (u.dimSpace, u.dimCount) == (out.dimSpace, out.dimCount)
    if same and u.dimTime == out.dimTime:
        return False, pmConvScale(PMType.PM_TYPE_DOUBLE, 1.0, u, out), mult
    if same and u.dimTime == out.dimTime + 1:
        if out.scaleTime not in _RATE_TIME:
            raise PMError(PM_ERR_CONV)
        divide, times = _RATE_TIME[out.scaleTime]
        mult = mult / divide if divide else mult * times
        out = Units(out.dimSpace, out.dimTime + 1, out.dimCount, out.scaleSpace,
                    out.scaleTime, out.scaleCount)  # fmt: skip
        return True, pmConvScale(PMType.PM_TYPE_DOUBLE, 1.0, u, out), mult
    raise PMError(PM_ERR_CONV)


def format_label(label: str) -> str:
    """pmrep's short form of a unit label with a divisor: "count / sec" is "count/s"."""
    if " / " in label:
        for long, short in (("nanosec", "ns"), ("microsec", "us"), ("millisec", "ms"),
                            ("sec", "s"), ("hour", "h"), (" / ", "/")):  # fmt: skip
            label = label.replace(long, short)
    return label


def short_label(name: str) -> str:
    """pmrep's default text label: mem.util.free is m.u.free."""
    parts = name.split(".")
    return "".join(p[:1] + "." for p in parts)[:-2] + parts[-1]


def proc_basename(name: str) -> str:
    """The command of a process instance name ("1234 /usr/bin/foo -x" is "foo")."""
    if name.startswith("("):
        return name[1:-1]
    if name.startswith("-"):
        name = name[1:]
    if name.endswith(":"):
        name = name[:-1]
    return name.rsplit("/", 1)[-1]


def select_instances(wanted: list[str], ids: list[int], names: list[str]) -> tuple[list, list]:
    """The instances of (IDS, NAMES) that WANTED names, as pmrep matches them: a number
    against the leading number of names like "1234 cmd", a word against a process's
    command, else a regular expression against the whole name."""
    found: tuple[list[int], list[str]] = ([], [])
    for want in wanted:
        hit = False
        what = ""
        try:
            if want.isdigit():
                what = "Invalid instance"
                if names[0].split()[:1] and names[0].split()[0].isdigit():
                    for i, name in enumerate(names):
                        first = name.split()[0] if name.split() else ""
                        if first.isdigit() and int(want) == int(first):
                            found[0].append(ids[i])
                            found[1].append(name)
                            hit = True
                            break
            if want.replace(".", "").replace("_", "").replace("-", "").isalnum():
                what = "Invalid process"
                if " " in names[0] and names[0].split()[0].isdigit():
                    for i, name in enumerate(names):
                        words = name.split()
                        if len(words) > 1 and want == proc_basename(words[1]):
                            found[0].append(ids[i])
                            found[1].append(name)
                            hit = True
            if not hit:
                what = "Invalid regex"
                pattern = re.compile(r"\A" + want + r"\Z")
                for i, name in enumerate(names):
                    if pattern.match(name):
                        found[0].append(ids[i])
                        found[1].append(name)
        except re.error as exc:
            raise ConfigError(f"{what} '{want}': {exc}.") from None
    return found


def live_filter(wanted: list[str], names) -> tuple[bool, ...]:
    """-j: which of NAMES pmrep's live filter passes (a word against a process's command,
    else a regular expression against the whole name)."""
    patterns = []
    for w in wanted:
        try:
            patterns.append(re.compile(r"\A" + w + r"\Z"))
        except re.error as exc:
            raise ConfigError(f"Invalid regex '{w}': {exc}.") from None
    words = [w for w in wanted if w.replace(".", "").replace("_", "").replace("-", "").isalnum()]

    def passes(name: str) -> bool:
        parts = name.split()
        if words and len(parts) > 1 and parts[0].isdigit() and proc_basename(parts[1]) in words:
            return True
        return any(p.match(name) for p in patterns)

    return tuple(passes(n or "") for n in names)


class Resolver:
    """Resolves the wanted metrics in one context (archive or live)."""

    def __init__(self, ctx, settings: Settings, archive: bool) -> None:
        self.ctx = ctx
        self.settings = settings
        self.archive = archive

    # -- derived metrics -------------------------------------------------------------

    def register_derived(self, wanted: Wanted, load_file: Callable[[str], str | None]) -> None:
        """The -e/config definitions, then the metricsets' formulas (pmRegisterDerived for
        each name the source does not already have)."""
        from purepcp.pmapi.derived.registry import (
            DerivedError,
            DerivedSyntaxError,
            default_registry,
        )

        entries = [e for e in (self.settings.derived or "").split(";") if e]
        entries += wanted.derived
        if not entries:  # (the defaults load only when a name needs them)
            return
        registry = default_registry()
        for entry in entries:
            if entry.startswith(("/", ".")):
                problem = load_file(entry)
                if problem:
                    raise ConfigError(
                        f"Failed to load derived metric definitions from file '{entry}':\n"
                        f"{problem}."
                    )
                continue
            if "=" not in entry:
                raise ConfigError(
                    "Failed to register derived metric:\nInvalid syntax (expected "
                    "metric=expression)."
                )
            name, expr = (part.strip() for part in entry.split("=", 1))
            if name in registry or self._lookup_error(name) == 0:
                continue
            try:
                registry.register(name, expr)
            except (DerivedSyntaxError, DerivedError) as exc:
                raise ConfigError(
                    "Failed to register derived metric:\n"
                    f"{pmErrStr(PM_ERR_CONV)} {derive_errmsg(name, expr, exc)}."
                ) from None
        self.ctx.use_registry(registry)

    def _lookup_error(self, name: str) -> int:
        """The error looking NAME up gives (0: none, it is known)."""
        try:
            self.ctx.lookup_names([name])
        except PMError as exc:
            return exc.code
        return 0

    # -- metrics ---------------------------------------------------------------------

    def resolve(self, wanted: Wanted) -> list[ReportMetric]:
        """Every wanted metric's leaves, checked and finalised (in the report's order)."""
        leaves: dict[str, Spec] = {}
        for name, spec in wanted.specs.items():
            try:
                below = self.ctx.traverse(name)
            except PMError:
                below = []
            if not below:
                unknown = self._lookup_error(name) == -12357  # PM_ERR_NAME
                if not (self.settings.ignore_unknown and unknown):
                    leaves.setdefault(name, spec)
                continue
            for leaf in below:
                leaves.setdefault(leaf, spec.copy(leaf))
        found: list[tuple[str, Spec, int, Desc, list[int], list[str | None]]] = []
        seen: set[int] = set()
        for name, spec in leaves.items():
            checked = self._check(name, spec, seen)
            if checked is not None:
                found.append(checked)
        if not found:
            if self.settings.ignore_unknown:
                raise ConfigError("Not one known metric found.")
            wanted = self.settings.instances  # (pmrep's hint: what -i asked for)
            hint = f"\nRequested global instances:\n{wanted!r}\n" if wanted else ""
            raise ConfigError("No matching instances found.", stdout=hint)
        metrics = []
        for name, spec, pmid, desc, ids, names in found:
            metric = self._finish(name, spec, pmid, desc, ids, names)
            if metric is not None:
                metrics.append(metric)
        if not metrics:
            raise ConfigError("No compatible metrics found.")
        return metrics

    def _instances(self, indom: int) -> list[tuple[int, str]]:
        if self.archive:
            return list(self.ctx.instances_archive(indom))
        return list(self.ctx.instances(indom))

    def _check(self, name: str, spec: Spec, seen: set[int]):
        """pmConfig.check_metric: None for a duplicate, a metric left out or one whose
        instances all fail the filter; ConfigError for a metric that cannot be reported."""
        try:
            pmid = self.ctx.lookup_names([name])[0]
            if pmid in seen:
                return None
            desc = self.ctx.lookup_desc(pmid)  # (a derived one that cannot bind: BADDERIVE)
            ids: list[int] = [PM_IN_NULL]
            names: list[str | None] = [None]
            if desc.indom != PM_INDOM_NULL:
                pairs = self._instances(desc.indom)
                if pairs:
                    ids = [i for i, _ in pairs]
                    names = [n for _, n in pairs]
            if desc.type not in (*_NUMERIC, PMType.PM_TYPE_STRING):
                raise PMError(-12371)  # PM_ERR_TYPE
        except PMError as exc:
            if self.settings.ignore_incompat:
                return None
            raise ConfigError(f"Invalid metric {name} ({pcp_error(exc.code)}).") from None
        if self.settings.omit_flat and names[0] is None:
            return None
        wanted = spec.instances or self.settings.instances
        if wanted and names[0] is not None and not self.settings.live_filter:
            ids, names = select_instances(wanted, ids, names)  # type: ignore[arg-type]
            if not ids:
                return None
        seen.add(pmid)
        return name, spec, pmid, desc, ids, names

    def _finish(self, name, spec: Spec, pmid, desc: Desc, ids, names) -> ReportMetric | None:
        s = self.settings
        label = spec.label or short_label(name)
        raw = bool(s.type_prefer) if not spec.type else spec.type == "raw"
        raw = raw or s.type == 1 or s.output == "archive"
        unit = spec.unit or None
        u = desc.units
        native = pmUnitsStr(u)
        for dims, default, force in (
            ((0, 0, 1), s.count_scale, s.count_scale_force),
            ((1, 0, 0), s.space_scale, s.space_scale_force),
            ((0, 1, 0), s.time_scale, s.time_scale_force),
        ):
            if (u.dimSpace, u.dimTime, u.dimCount) == dims:
                if force:
                    unit = force
                elif default and not unit:
                    unit = default
        if not unit or s.output == "archive":
            unit = native
        try:
            parsed, _ = parse_units(unit)
        except ValueError:
            raise ConfigError(
                f"{pcp_error(PM_ERR_CONV)} unrecognized or duplicate base unit: {unit}."
            ) from None
        text = unit
        counter = desc.sem == PMSem.PM_SEM_COUNTER
        if not raw and desc.type != PMType.PM_TYPE_STRING and counter and "/" not in text:
            text += " / s"
        text = format_label(text)
        otype = PMType.PM_TYPE_DOUBLE
        if pmUnitsStr(parsed) == native:
            otype = desc.type
        if not raw and counter:
            otype = PMType.PM_TYPE_DOUBLE
        if desc.type == PMType.PM_TYPE_STRING:
            otype = PMType.PM_TYPE_STRING
        width = _non_negative(spec.width, name) if spec.width else int(s.width or 0)
        if s.width_force not in (None, ""):
            width = int(s.width_force)  # type: ignore[arg-type]
        width = max(width or len(label), len(TRUNC))
        precision = _non_negative(spec.precision, name) if spec.precision else int(s.precision)
        if s.precision_force not in (None, ""):
            precision = int(s.precision_force)  # type: ignore[arg-type]
        limit = 0
        if spec.limit:
            try:
                limit = int(spec.limit)
            except ValueError:
                raise ConfigError(f"Integer expected: {name}") from None
        elif s.limit_filter:
            limit = int(s.limit_filter)
        if s.limit_filter_force:
            limit = int(s.limit_filter_force)
        if desc.type == PMType.PM_TYPE_STRING:
            limit = 0
            conv = Conversion(False, 1.0, 1.0, otype)
        else:
            try:
                rate, factor, mult = fetch_conversion(desc, text)
            except PMError:
                if s.ignore_incompat:
                    return None
                raise PMError(PM_ERR_CONV) from None  # (pmrep: "pmrep: Impossible value ...")
            conv = Conversion(rate, factor, mult, otype)
        shown = None
        wanted = spec.instances or s.instances
        if s.live_filter and wanted and names[0] is not None:
            shown = live_filter(wanted, names)
        labels: tuple[str, ...] = ()
        if s.include_labels:
            from .labels import column_labels

            labels = tuple(column_labels(self.ctx, pmid, desc.indom, [PM_IN_NULL, *ids]))
        return ReportMetric(name, pmid, desc, tuple(ids), tuple(names), label, text, conv,
                            width, precision, limit, raw, shown, labels,
                            named=bool(spec.label))  # fmt: skip


def derive_errmsg(name: str, expr: str, exc) -> str:
    """pmRegisterDerivedMetric's error text for EXC (a DerivedSyntaxError or
    DerivedError): the call, the expression, a caret under its offset, the reason."""
    caret = " " * exc.offset + "^" if exc.offset else "^"
    text = f'Error: pmRegisterDerivedMetric("{name}", ...)\n{expr}\n{caret}\n'
    return text + f"{exc.message}\n" if exc.message else text


def pcp_error(code: int) -> str:
    """A PCP error as PCP's Python pmErr prints it: a PM_ERR_* code's name, then its
    message (an errno's message alone)."""
    try:
        return f"{PMErr(code).name} {pmErrStr(code)}"
    except ValueError:
        return pmErrStr(code)


def _non_negative(text: str, name: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"Non-negative integer expected: {name}")
    return value
