"""pmdumptext's run: the options, the sources and metrics (from the command line, a
configuration file or stdin), the headings asked for, then a line per sample: the time
and each metric instance's value, delimited."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import tzinfo
from typing import Any

from .metrics import Group, Metric, say
from .options import PROG, USAGE, Options, finish_options, read_options

NSEC = 1_000_000_000


def main(argv: Sequence[str] | None = None) -> int:
    """pmdumptext(1) on ARGV (else sys.argv): its exit status."""
    from purepcp.pmapi.options import Tool

    return Tool(PROG, "[options] [metrics ...]", []).main(_buffered, argv)


def _buffered(argv: list[str]) -> int:
    from purepcp.tools.stdio import c_stdout

    with c_stdout():
        return run(argv)


def run(argv: list[str]) -> int:
    o = read_options(argv)
    for message in o.getopt_errors:
        sys.stderr.write(message)
    if o.errors or o.version:
        sys.stderr.write("".join(o.messages) + ("" if o.version and not o.errors else USAGE))
        return 0 if o.version and not o.errors else 1
    finish_options(o)
    group = Group(_namespace(o))
    try:
        return _report(o, group)
    finally:
        group.close()


def _namespace(o: Options) -> Any:
    if o.namespace is None:
        return None
    from purepcp.pmapi.errors import PMError, pmErrStr
    from purepcp.pmapi.pmns import PMNS

    try:
        return PMNS.from_file(o.namespace, dupok=True)
    except (PMError, OSError) as exc:
        code = exc.code if isinstance(exc, PMError) else -(exc.errno or 5)
        sys.stderr.write(f'{PROG}: Cannot load namespace from "{o.namespace}": {pmErrStr(code)}\n')
        raise SystemExit(1) from None


def _report(o: Options, group: Group) -> int:
    failed = 0
    for name in o.archives:
        failed += group.use("archive", name) is None
    if not o.archives and o.hosts:
        failed += group.use("host", o.hosts[0]) is None
    if failed:
        say(group.messages)
        return 1
    if o.operands and o.config:
        sys.stderr.write(f"{PROG}: configuration file cannot be specified with metrics\n")
        return 1
    errors = _metrics(o, group)
    if not group.metrics or not any(m.columns for m in group.metrics):
        say(group.messages)
        sys.stderr.write(f"{PROG}: no valid metrics, exiting.\n")
        return 1
    if errors:
        group.messages.append(f"{PROG}: Warning: Some metrics ignored, continuing with valid "
                              "metrics\n")  # fmt: skip
    say(group.messages)
    return Dump(o, group).run()


def _metrics(o: Options, group: Group) -> int:
    """Every metric named (operands, else -c's file, else stdin); the count that failed."""
    if o.operands:
        return sum(not _traverse(o, group, text, 0.0) for text in o.operands)
    if o.config:
        try:
            with open(o.config, errors="surrogateescape") as f:
                lines = f.read().splitlines()
        except OSError as exc:
            import os

            sys.stderr.write(f"{PROG}: Unable to open {o.config}: {os.strerror(exc.errno or 0)}\n")
            raise SystemExit(1) from None
        name = o.config
    else:
        lines, name = sys.stdin.read().splitlines(), "(stdin)"
    return _config(o, group, lines, name)


def _config(o: Options, group: Group, lines: list[str], name: str) -> int:
    """parseConfig: a metric a line, optionally followed by a scale."""
    from purepcp.pmapi.cnumbers import strtod

    errors = 0
    for number, line in enumerate(lines, start=1):
        if not line or line.startswith("#"):
            continue
        if not line.strip():
            continue
        close = line.rfind("]")
        if close < 0:
            words = line.lstrip().split(None, 1)
            end = len(line) - len(line.lstrip()) + len(words[0])
        else:
            end = close + 1
        spec, rest = line[:end], line[end + 1 :]
        scale = 0.0
        if end < len(line):
            scan = strtod(rest)
            if scan.end != len(rest):
                group.messages.append(f"{PROG}: Line {number} of {name} has an illegal scaling "
                                      "factor, assuming 0.\n")  # fmt: skip
                errors += 1
            else:
                scale = float(scan.value)
        errors += not _traverse(o, group, spec, scale)
    return errors


def _traverse(o: Options, group: Group, text: str, scale: float) -> bool:
    """A metric spec added: with instances as named, else every leaf below its name."""
    from purepcp.pmapi.errors import PMError, pmErrStr
    from purepcp.pmapi.metricspec import SpecError, parse_metric_spec

    try:
        spec = parse_metric_spec(text)
    except SpecError as exc:
        group.messages.append(f"{PROG}: Error: Unable to parse metric spec:\n{exc.errmsg}\n")
        return False
    source = _source_of(group, spec)
    if source is None:
        return False
    if spec.insts:
        return group.add(source, spec.metric, list(spec.insts), scale)
    try:
        names = source.ctx.traverse(spec.metric)
    except PMError as exc:
        group.messages.append(f"{PROG}: Error: {spec.metric}: {pmErrStr(exc.code)}\n")
        return False
    ok = True
    for name in names:
        ok = group.add(source, name, [], scale) and ok
    return ok


def _source_of(group: Group, spec: Any) -> Any:
    if spec.source is None:
        return group.default or group.use("host", "local:")
    kind = "local" if spec.kind == "local" else spec.kind
    return group.use(kind, spec.source)


class Dump:
    """The headings and the lines of values."""

    def __init__(self, o: Options, group: Group) -> None:
        self.o = o
        self.group = group
        self.out = sys.stdout
        self.columns = sum(len(m.columns) for m in group.metrics)
        source = group.default
        assert source is not None
        self.live = source.kind != "archive"
        self.zone = self._zone(source)
        self.start_ns = 0
        self.full_once = False

    def _zone(self, source: Any) -> tzinfo:
        from purepcp.pmapi.timewindow import new_zone, tzinfo_for
        from purepcp.pmapi.zone import context_zone

        if self.o.hostzone:
            return context_zone(source.ctx)
        if self.o.timezone is not None:
            return new_zone(self.o.timezone)
        return tzinfo_for(None)

    def run(self) -> int:
        import time

        from purepcp.pmapi.timewindow import TimeParseError, parse_interval_ns, parse_time_window
        from purepcp.pmapi.values import Timestamp

        o = self.o
        first, last = self._bounds()
        self.start_ns = first.ns
        try:
            window = parse_time_window(o.start, o.finish, o.align, o.origin, first, last,
                                       tz=self.zone)  # fmt: skip
        except TimeParseError as exc:
            sys.stderr.write(exc.errmsg + "\n" + USAGE)
            return 1
        interval_ns = parse_interval_ns(o.interval) // 1000 * 1000 if o.interval else NSEC
        origin = window.origin_ns // 1000 * 1000
        end = window.end_ns if (window.end_ns >= origin or o.finish is not None) else None
        if window.open_ended:
            end = None
        self.heading()
        o.full = o.full and o.full_x
        if not o.dump:
            return 0
        if not self.live:
            self._set_mode(origin, interval_ns)
        count = lines = 0
        while (end is None or origin <= end) and (o.samples == 0 or count < o.samples):
            self.group.fetch()
            count += 1
            self.out.write(self.line(Timestamp.from_ns(origin)) + "\n")
            origin += interval_ns
            if self.live:
                time.sleep(max(0.0, origin / NSEC - time.time()))
            lines += 1
            if o.repeat and lines == o.repeat:
                self.out.write("\n")
                self.heading()
                lines = 0
        return 0

    def _bounds(self) -> tuple[Any, Any]:
        from purepcp.pmapi.options import archive_end
        from purepcp.pmapi.values import Timestamp

        if self.live:
            return Timestamp.now(), None
        starts, ends = [], []
        for source in self.group.sources.values():
            if source.kind == "archive":
                starts.append(source.ctx.archive.label.start)
                end = archive_end(PROG, source.name, source.ctx.archive)
                if end is not None:
                    ends.append(end)
        first = min(starts, key=lambda t: t.ns)
        last = max(ends, key=lambda t: t.ns) if ends else None
        if last is not None and last.ns <= first.ns:
            last = None
        return first, last

    def _set_mode(self, origin_ns: int, interval_ns: int) -> None:
        from purepcp.pmapi.archive.context import PM_MODE_INTERP
        from purepcp.pmapi.values import Timestamp

        seconds = interval_ns / NSEC
        step_ns = int(seconds) * NSEC if seconds > 2073600 else int(seconds * 1000.0) * 1_000_000
        for source in self.group.sources.values():
            if source.kind == "archive":
                source.ctx.set_mode(PM_MODE_INTERP, Timestamp.from_ns(origin_ns), step_ns)

    # -- the time column -----------------------------------------------------------------

    def time_text(self, stamp: Any) -> str:
        o = self.o
        prefix = ""
        if o.offset:
            offset = (stamp.ns - self.start_ns) / NSEC
            digits = 2 if offset < 10 else 1 if offset < 100 else 0
            prefix = f"{offset:.{digits}f}" + o.delimiter
        if o.time_format:
            from datetime import datetime

            moment = datetime.fromtimestamp(stamp.sec, self.zone)
            return prefix + moment.strftime(o.time_format)
        from purepcp.pmapi.timewindow import pm_ctime

        return prefix + pm_ctime(stamp.sec, self.zone)[:19]

    # -- the lines -----------------------------------------------------------------------

    def _cells(self) -> list[tuple[Metric, int]]:
        return [(m, k) for m in self.group.metrics for k in range(len(m.columns))]

    def line(self, stamp: Any) -> str:
        o = self.o
        cells = [self.cell(m, k) for m, k in self._cells()]
        text = o.delimiter.join(cells)
        return (self.time_text(stamp) + o.delimiter + text) if o.show_time else text

    def cell(self, metric: Metric, k: int) -> str:
        o = self.o
        error, value = metric.value(k, o.raw)
        if error < 0 or value is None:
            return f"{o.unavailable:>{o.width}}" if o.nice else o.unavailable
        if isinstance(value, str):
            return self._string(value)
        if o.fixed:
            text = format_number(value)
        elif o.short:
            text = _smart(value, o.precision)
        else:
            text = f"{value:.{o.precision}f}"
        return f"{text:>{o.width}}" if o.nice else text

    def _string(self, value: str) -> str:
        o = self.o
        w = o.width
        if o.nice:
            body = value[: w - 2] if len(value) > w - 2 else value
            return f"{chr(34) + body + chr(34):>{w}}"
        if o.width_set:
            if len(value) > w - 2 and w > 5:
                return f'"{value[: w - 5]}..."'.rjust(w)
            return f'"{value[: w - 2]}"'.rjust(w)
        return f'"{value}"'

    # -- the headings --------------------------------------------------------------------

    def heading(self) -> None:
        o, out = self.o, self.out
        cells = self._cells()
        d = o.delimiter
        label_width = len(self.time_text(_ZERO)) if o.nice else 0

        def label(word: str) -> str:
            return f"{word[:label_width]:>{label_width}}{d}"

        if o.full:
            self.full_once = True
            for v, (m, k) in enumerate(cells, start=1):
                out.write(f"[{v:2d}] {m.spec(o.source, True, k)}\n")
            out.write("\n")
        if self.full_once:
            head = label("Column") if o.show_time else ""
            out.write(head + d.join(f"{v:>{o.width}}" for v in range(1, len(cells) + 1)) + "\n")
        if o.nice and o.source:
            head = label("Source") if o.show_time else ""
            out.write(
                head + d.join(f"{m.source.host()[: o.width]:>{o.width}}" for m, _ in cells) + "\n"
            )
        inst_row = False
        if o.metric_names or (o.source and not o.nice):
            head = (label("Metric") if o.nice else f"Time{d}") if o.show_time else ""
            names = []
            for m, k in cells:
                inst_row = inst_row or (o.nice and m.has_instances)
                names.append(self._name_cell(m, k))
            out.write(head + d.join(names) + "\n")
        if inst_row:
            head = (label("Inst") if o.nice else f"{o.unavailable}{d}") if o.show_time else ""
            insts = [f"{(m.columns[k].name or '')[: o.width]:>{o.width}}" if m.has_instances
                     else f"{'n/a':>{o.width}}" for m, k in cells]  # fmt: skip
            out.write(head + d.join(insts) + "\n")
        if o.norm:
            head = (label("Normal") if o.nice else f"{o.unavailable}{d}") if o.show_time else ""
            out.write(head + d.join(self._scale_cell(m) for m, _ in cells) + "\n")
        if o.units:
            head = (label("Units") if o.nice else f"none{d}") if o.show_time else ""
            out.write(head + d.join(self._units_cell(m) for m, _ in cells) + "\n")

    def _name_cell(self, m: Metric, k: int) -> str:
        o = self.o
        if not o.nice:
            return m.spec(o.source, True, k)
        text = m.spec(False, False, k)
        cut = len(text) - o.width
        if cut <= 0:
            return f"{text:>{o.width}}"
        c = max(cut - 1, 0)
        while c < len(text):
            if text[c] == ".":
                c += 1
                break
            c += 1
        return f"{text[c:] if c < len(text) else text[cut:]:>{o.width}}"

    def _scale_cell(self, m: Metric) -> str:
        o = self.o
        if o.short:
            return f"{_smart(m.scale, o.precision):>{o.width}}"
        if o.fixed:
            return f"{format_number(m.scale):>{o.width}}"
        return f"{m.scale:>{o.width}.{o.precision}f}"

    def _units_cell(self, m: Metric) -> str:
        o = self.o
        text = m.units()
        if not o.nice:
            return text
        return f"{text[-o.width :] if len(text) > o.width else text:>{o.width}}"


class _Zero:
    sec = 0
    ns = 0


_ZERO = _Zero()


def _smart(value: float, precision: int) -> str:
    """A number as Qt's stream writes one in its default notation (%g-like)."""
    return f"{value:.{max(precision, 1)}g}"


def format_number(value: float) -> str:
    """QmcMetric::formatNumber: a value in 6 columns with a K, M, G or T suffix."""
    if value >= 0.0:
        for limit, div, suffix in ((99950000000.0, 1e12, "T"), (99950000.0, 1e9, "G"),
                                   (99950.0, 1e6, "M"), (99.95, 1e3, "K")):  # fmt: skip
            if value > 99950000000000.0:
                return "  inf?"
            if value > limit:
                return f"{value / div:5.2f}{suffix}"
        return f"{value:5.2f} " if value > 0.005 else " 0.00 "
    if value < -9995000000000.0:
        return " -inf?"
    for limit, div, suffix in ((-9995000000.0, 1e12, "T"), (-9995000.0, 1e9, "G"),
                               (-9995.0, 1e6, "M"), (-9.995, 1e3, "K")):  # fmt: skip
        if value < limit:
            return f"{value / div:.2f}{suffix}"
    return f"{value:.2f} " if value < -0.005 else " 0.00  "
