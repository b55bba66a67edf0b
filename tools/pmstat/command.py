"""pmstat's run: the command line checked, a context and fetch group opened for every
source (each -a, -h or -H host; else the local pmcd, falling back to a local context),
the reporting zone and time window settled on the first one, then a line per sample
and source, a heading every screenful.

Only a run that reports imports the reporting modules: `pmstat -V` and a usage error
import none of them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .options import ARCHIVE, HOST, LOCAL, PROG, USAGE, Options, read_options

if TYPE_CHECKING:
    from datetime import tzinfo

    from .fetchgroup import FetchGroup


def main(argv: Sequence[str] | None = None) -> int:
    """pmstat(1) on ARGV (else sys.argv): its exit status."""
    from purepcp.pmapi.options import Tool

    return Tool(PROG, "[options]", []).main(run, argv)


def run(argv: list[str]) -> int:
    o = read_options(argv)
    for message in o.getopt_errors:  # (getopt prints these as it meets them)
        sys.stderr.write(message)
    if o.version:
        from purepcp.pmapi import version_line

        sys.stderr.write("".join(o.messages) + version_line(PROG) + "\n")
        return 0
    if o.operands:
        o.complain("too many options")
    if o.pause and o.kind != ARCHIVE:
        o.complain("-P can only be used with archives")
    pmns = _namespace(o) if o.namespace is not None and not o.errors else None
    if o.errors:
        sys.stderr.write("".join(o.messages) + ("" if o.runtime_error else USAGE))
        return 1
    if o.gui:
        sys.stderr.write(f"{PROG}: time control (-g, -p): not available in purepcp\n")
        return 1
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    return Report(o, pmns).run()


def _namespace(o: Options) -> Any:
    """-n's namespace (a complaint, and a run-time error, if it will not load)."""
    from purepcp.pmapi.errors import PMError, pmErrStr
    from purepcp.pmapi.pmns import PMNS, load_complaint

    path = str(o.namespace)
    try:
        return PMNS.from_file(path, dupok=True)
    except PMError as exc:
        o.messages.append(load_complaint(exc, path))
        code = exc.code
    except OSError as exc:
        code = -(exc.errno or 5)
    o.complain(f'Cannot load namespace from "{path}": {pmErrStr(code)}')
    o.runtime_error = True
    return None


@dataclass
class Source:
    """One source's fetch group, its name once known, and whether it ever gave values."""

    group: FetchGroup | None
    name: str | None = None
    fetched: bool = False
    last_stamp: tuple[int, int] = (0, 0)  # (the time of its last fetch, once closed)

    @property
    def stamp(self) -> tuple[int, int]:
        """The time of its last fetch, as a timeval."""
        return self.group.timestamp if self.group is not None else self.last_stamp


@dataclass
class Report:
    """The sources and the time they are reported in."""

    o: Options
    pmns: Any
    sources: list[Source] = field(default_factory=list)
    zone: tzinfo | None = None
    origin_us: tuple[int, int] = (0, 0)
    finish_us: tuple[int, int] = (0, 0)
    swap_op: str = "p"

    def run(self) -> int:
        o = self.o
        if not o.interval_us:
            o.interval_us = 5_000_000
        kind = o.kind or HOST
        names = o.archives if kind == ARCHIVE else o.hosts
        if names:
            for name in names:
                self._add(kind, name, quiet=False)
        else:  # the local pmcd, else this process's own agents
            if not self._add(kind, "local:", quiet=True):
                kind = self.o.kind = LOCAL
                self._add(LOCAL, None, quiet=False)
        self.o.kind = kind
        if not self.sources:
            sys.stderr.write(f"{PROG}: No place to get data from!\n")
            return 1
        samples = self._sample_count()
        return self._loop(samples)

    # -- the sources ---------------------------------------------------------------------

    def _add(self, kind: str, name: str | None, quiet: bool) -> bool:
        """getNewContext: a context on NAME with pmstat's items (False: none)."""
        from purepcp.pmapi.errors import PMError, pmErrStr

        from .fetchgroup import SWAP_ITEMS, FetchGroup

        try:
            ctx = self._context(kind, name)
        except PMError as exc:
            if not quiet:
                sys.stderr.write(f"{PROG}: Cannot create fetchgroup: {pmErrStr(exc.code)}\n")
            return False
        group = FetchGroup(ctx)
        group.extend()
        if any(k in group.fell_back for k in SWAP_ITEMS):
            self.swap_op = "s"
        if not group.resolved():
            sys.stderr.write(f"{PROG}: {name if name is not None else '(null)'}: "
                             "Cannot resolve any metrics.\n")  # fmt: skip
            group.close()
            return False
        self.sources.append(Source(group))
        if self.zone is None:
            self._time_options(group)
        return True

    def _context(self, kind: str, name: str | None) -> Any:
        from purepcp.pmapi.context import Context

        if kind == ARCHIVE:
            from purepcp.pmapi.archive.context import ArchiveContext

            return ArchiveContext(str(name), self.pmns)
        if kind == LOCAL:
            return Context.local(self.o.specs, self.pmns)
        ctx = Context.host(str(name), self.pmns)
        try:
            ctx.source.ensure()  # (pmNewContext connects at once)
        except BaseException:
            ctx.close()
            raise
        return ctx

    # -- pmGetContextOptions: the zone and the time window ----------------------------------

    def _time_options(self, group: FetchGroup) -> None:
        """The reporting zone (noted on stdout) and the time window, from the first source."""
        from purepcp.pmapi.errors import PMError, pmErrStr
        from purepcp.pmapi.hostname import context_hostname
        from purepcp.pmapi.timewindow import TimeParseError, new_zone, tzinfo_for
        from purepcp.pmapi.zone import context_zone

        o, ctx = self.o, group.ctx
        messages: list[str] = []
        zone = tzinfo_for(None)
        if o.hostzone:
            try:
                zone = context_zone(ctx)
                where = " from archive" if o.kind == ARCHIVE else ""
                host = context_hostname(ctx)
                note = f'Note: timezone set to local timezone of host "{host}"{where}\n\n'
                sys.stdout.write(note)
            except PMError as exc:
                messages.append(f"{PROG}: Cannot set context timezone: {pmErrStr(exc.code)}\n")
        elif o.timezone is not None:
            try:
                zone = new_zone(o.timezone)
                sys.stdout.write(f'Note: timezone set to "TZ={o.timezone}"\n\n')
            except (PMError, ValueError) as exc:
                code = exc.code if isinstance(exc, PMError) else -22
                messages.append(f'{PROG}: Cannot set timezone to "{o.timezone}": '
                                f"{pmErrStr(code)}\n")  # fmt: skip
        if not messages:
            try:
                self.origin_us, self.finish_us = self._window(ctx, zone, messages)
            except TimeParseError as exc:
                messages.append(f"{PROG}: invalid time window.\n{exc.errmsg}\n")
        if messages:
            sys.stdout.flush()
            sys.stderr.write("".join(messages))
            raise SystemExit(1)
        self.zone = zone

    def _window(self, ctx: Any, zone: tzinfo, messages: list[str]) -> tuple[tuple[int, int], Any]:
        """The window's origin and end, in microseconds (pmParseTimeWindow's timevals)."""
        from purepcp.pmapi.timewindow import parse_time_window
        from purepcp.pmapi.values import Timestamp

        o = self.o
        if o.kind == ARCHIVE:
            first, last = self._bounds(ctx, messages)
            if messages:
                sys.stdout.flush()
                sys.stderr.write("".join(messages))
                raise SystemExit(1)
        else:
            first, last = _usec(Timestamp.now()), None
        window = parse_time_window(o.start, o.finish, o.align, o.origin, first, last, tz=zone)
        if window.warning:
            sys.stderr.write(f"{PROG}: {window.warning}\n")
        origin = divmod(window.origin_ns // 1000, 1_000_000)
        finish = divmod(window.end_ns // 1000, 1_000_000)
        return (int(origin[0]), int(origin[1])), finish

    def _bounds(self, ctx: Any, messages: list[str]) -> tuple[Any, Any]:
        """The archives' combined start and end (every -a's, when there are several)."""
        from purepcp.pmapi.archive.context import ArchiveContext
        from purepcp.pmapi.errors import PMError, pmErrStr
        from purepcp.pmapi.options import archive_end

        names = self.o.archives
        first = last = None
        for i, name in enumerate(names):
            try:
                other = ctx if len(names) == 1 else ArchiveContext(name, self.pmns)
            except PMError as exc:
                messages.append(f"{PROG}: Cannot open archive {name}: {pmErrStr(exc.code)}\n")
                break
            try:
                start = _usec(other.archive.label.start)
                end = archive_end(PROG, name, other.archive)
                end = _usec(end) if end is not None else None
            finally:
                if other is not ctx:
                    other.close()
            if i == 0 or start < first:
                first = start
            if i == 0 or (last is not None and (end is None or end > last)):
                last = end
        return first, last

    def _sample_count(self) -> int:
        o = self.o
        samples = o.samples
        if o.finish is not None:
            fs, fu = self.finish_us
            os_, ou = self.origin_us
            win = (fs - os_ + (fu - ou) / 1e6) / (o.interval_us / 1e6)
            if win > samples:
                samples = int(win)
        return samples

    # -- the report ----------------------------------------------------------------------

    def _loop(self, samples: int) -> int:
        import time

        from purepcp.pmapi.timewindow import pm_ctime

        from .report import heading

        o = self.o
        archive = o.kind == ARCHIVE
        for src in self.sources:
            if archive:
                self._set_mode(src.group)
            src.group.fetch()  # type: ignore[union-attr]
        rows = _rows()
        count = len(self.sources)
        multi = count > 1
        iteration = 0
        while not samples or iteration < samples:
            if (iteration * count) % rows < count:
                sec, usec = self.sources[0].stamp
                now = int(sec + 0.5 + usec / 1.0e6)
                sys.stdout.write(f"@ {pm_ctime(now, self.zone)}\n")
                sys.stdout.write(heading(multi, o.xcpu, self.swap_op))
            if not archive or o.pause:
                time.sleep(o.interval_us / 1e6)
            for src in self.sources:
                self._line(src, multi)
            iteration += 1
        return 0

    def _set_mode(self, group: Any) -> None:
        from purepcp.pmapi.archive.context import PM_MODE_INTERP
        from purepcp.pmapi.errors import PMError
        from purepcp.pmapi.values import Timestamp

        step_ms = int(self.o.interval_us // 1_000_000 * 1e3 + self.o.interval_us % 1_000_000 / 1e3)
        origin = Timestamp(self.origin_us[0], self.origin_us[1] * 1000)
        try:
            group.ctx.set_mode(PM_MODE_INTERP, origin, step_ms * 1_000_000)
        except PMError as exc:
            sys.stderr.write(f"{PROG}: pmSetMode: {exc.message}\n")
            raise SystemExit(1) from None

    def _line(self, src: Source, multi: bool) -> None:
        """One source's line for this sample (or what went wrong fetching it)."""
        from purepcp.pmapi.errors import (
            PM_ERR_EOL,
            PM_ERR_IPC,
            PM_ERR_TIMEOUT,
            pmErrStr,
        )
        from purepcp.pmapi.hostname import context_hostname

        from .report import node_name, row

        out = sys.stdout
        if multi:
            if src.name is None and src.group is not None:
                src.name = context_hostname(src.group.ctx)
            out.write(node_name(src.name or "", self.o.suffix))
            if src.group is None:
                out.write("\n")
                return
        group = src.group
        assert group is not None
        sts = group.fetch()
        if sts < 0:
            if self.o.kind == HOST and sts in (PM_ERR_IPC, PM_ERR_TIMEOUT):
                out.write(" Fetch failed. Reconnecting ...\n")
                _reconnect(group.ctx)
            elif self.o.kind == ARCHIVE and sts == PM_ERR_EOL and not src.fetched:
                out.write(" No data in the archive\n")
            else:
                out.write(f" pmFetchGroup: {pmErrStr(sts)}\n")
                if src.name is None:
                    src.name = context_hostname(group.ctx)
                src.last_stamp = group.timestamp
                group.close()
                src.group = None
                if not any(s.group is not None for s in self.sources):
                    raise SystemExit(1)
            return
        src.fetched = True
        values = {k: (group.values.get(k) if s == 0 else None) for k, s in group.sts.items()}
        out.write(row(values, multi, self.o.xcpu) + "\n")


def _reconnect(ctx: Any) -> None:
    """pmReconnectContext, as far as a host context's connection goes."""
    import contextlib

    from purepcp.pmapi.errors import PMError

    with contextlib.suppress(PMError, OSError):
        ctx.source.close()
        ctx.source.ensure()


def _rows() -> int:
    """How many lines between headings: the terminal's height less 3, else 21."""
    import os

    try:
        height = os.get_terminal_size(1).lines
    except OSError:
        return 21
    return height - 3 if height > 0 else 21


def _usec(stamp: Any) -> Any:
    """STAMP truncated to microseconds, as a timeval holds it."""
    from purepcp.pmapi.values import Timestamp

    return Timestamp(stamp.sec, stamp.nsec // 1000 * 1000)
