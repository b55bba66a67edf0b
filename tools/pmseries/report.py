"""pmseries' printing: the callbacks libpcp_web makes (on_series_*) and the little state
PCP's pmseries keeps between them (the series being reported, whether a line is open,
whether a comma is due), from which its blank lines and separators come."""

from __future__ import annotations

import sys
from functools import cmp_to_key
from typing import TextIO

from purepcp.pmapi.errors import pmErrStr
from purepcp.pmapi.timewindow import NSEC, pm_ctime, tzinfo_for
from purepcp.series.read import SeriesDesc

from .formats import (
    TYPE_PHRASES,
    UNKNOWN,
    Inst,
    Value,
    compare_insts,
    indom_parts,
    pmid_parts,
    sorted_labels,
)
from .options import PROG
from .request import Show

#: libpcp_web's log levels as pmLogLevelPrint names and colours them
LEVELS = {
    "Info": "\x1b[32m",
    "Warning": "\x1b[33m",
    "Error": "\x1b[31m",
    "Bad request": "\x1b[47m\x1b[31m",
    "Bad response": "\x1b[47m\x1b[31m",
    "Corrupt TSDB": "\x1b[41m\x1b[30m",
}


class Report:
    """pmseries' printing state and callbacks (on_series_*), one per kind of answer;
    SHOW says what to print, COLOUR whether diagnostics are coloured."""

    def __init__(
        self,
        show: Show,
        colour: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.show = show
        self.colour = colour
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.status = 0
        self.series = ""
        self.source = ""
        self.labels: list[tuple[str, str]] = []
        self.insts: list[Inst] = []
        self.iseries: list[str] = []
        self.zone = tzinfo_for(None)
        self.need_eol = False  # a line is open
        self.need_comma = False  # a list of names is open: the next follows a comma
        self.need_reset = False  # the next step starts another series' report
        self.inst_labels = False  # the labels arriving are the instances'

    # -- state ----------------------------------------------------------------------------

    def write(self, text: str) -> None:
        self.out.write(text)

    def next_series(self, sid: str) -> bool:
        """series_next: a new series closes the open line and forgets the last one's
        labels and instances."""
        if sid == self.series:
            return False
        self.need_comma = self.need_reset = False
        if self.need_eol:
            self.need_eol = False
            self.write("\n")
        self.series = sid
        self.source = ""
        self.labels = []
        self.insts = []
        return True

    def reset(self) -> None:
        """series_data_reset: between the series of a report."""
        self.series = ""
        self.source = ""
        self.inst_labels = False
        self.labels = []
        self.insts = []

    def done(self, sts: int = 0) -> None:
        """on_series_done: the end of each step (a lookup, or a piece of the report)."""
        if self.need_reset:
            self.need_reset = False
            self.reset()
        if self.need_eol:
            self.need_eol = False
            self.write("\n")
        if self.status == 0 and sts < 0:
            self.out.flush()
            self.err.write(f"{PROG}: {pmErrStr(sts)}\n")
            self.status = 1

    def log(self, level: str, message: str) -> None:
        """on_series_info: libpcp_web's diagnostics, "pmseries: [Error] message"; errors
        make the exit status 1, information goes to stdout."""
        if level in ("Info", "Warning"):
            stream = self.out
        else:
            self.status = 1
            stream = self.err
            self.out.flush()
        if self.colour:
            stream.write(f"{PROG}: [{LEVELS[level]}{level}\x1b[0m] {message}\n")
        else:
            stream.write(f"{PROG}: [{level}] {message}\n")

    def fail(self, message: str) -> None:
        """pmseries' own complaint ("pmseries: message" on stderr): the status is 1."""
        self.err.write(f"{PROG}: {message}\n")
        self.status = 1

    def get_inst(self, series: str) -> Inst | None:
        return next((ip for ip in self.insts if ip.series == series), None)

    def expect_instance_labels(self) -> None:
        """The labels that arrive next are those of the instances just listed."""
        self.inst_labels = True

    # -- callbacks ------------------------------------------------------------------------

    def on_match(self, sid: str) -> None:
        if self.next_series(sid):
            self.write(f"{sid}\n")

    def on_value(self, sid: str, value: Value) -> None:
        if self.next_series(sid):
            self.write(f"\n{sid}\n")
        stamp = value.timestamp if self.show.numeric_times else self.ctime_stamp(value.ns)
        line = f"    [{stamp}] {value.value}"
        if value.instance != sid:
            ip = self.get_inst(value.instance)
            line += f" {value.instance}" if ip is None else f' "{ip.name}"'
        self.write(line + "\n")

    def ctime_stamp(self, ns: int) -> str:
        """printstamp: ctime's text with nanoseconds before the year, in $TZ (-Z)."""
        sec, nsec = divmod(ns, NSEC)
        text = pm_ctime(sec, self.zone)
        return f"{text[:19]}.{nsec:09d} {text[20:24]}"

    def on_desc(self, sid: str, desc: SeriesDesc) -> None:
        if self.next_series(sid):
            self.write(f"\n{sid}")
        else:
            self.write("   ")
        self.source = desc.source
        self.write(self.desc_text(desc))
        self.need_eol = False

    def desc_text(self, desc: SeriesDesc) -> str:
        """The descriptor's lines: PMID, type, InDom, semantics and units (-d), the
        numbers (-M, -I), the source (-s)."""
        show = self.show
        pmid, pmid_value = pmid_parts(desc.pmid)
        indom, indom_value = indom_parts(desc.indom)
        text = ""
        if show.full_pmid or show.descs:
            text += f" PMID: {pmid}"
        if show.full_pmid:
            text += f" = {pmid_value} = 0x{pmid_value:x}"
        if show.full_pmid or show.descs:
            text += "\n"
        if show.descs:
            text += f"    Data Type: {TYPE_PHRASES.get(desc.type.lower(), UNKNOWN)}"
            if desc.type == UNKNOWN:
                text += f" ({desc.type})"
        if show.full_indom or show.descs:
            text += f"  InDom: {indom}"
        if show.full_indom:
            text += f" = {indom_value} ="
        if show.full_indom or show.descs:
            text += f" 0x{indom_value:x}\n"
        if show.descs:
            text += f"    Semantics: {desc.semantics}"
            if desc.semantics == UNKNOWN:
                text += f" ({desc.semantics})"
            text += f"  Units: {desc.units or 'none'}\n"
        if show.series_ids:
            text += f"    Source: {desc.source}\n"
        return text

    def on_instance(self, name: str) -> None:
        """An instance name of the listing without arguments."""
        if self.show.instances:
            self.write(f"{name}\n")

    def on_inst(self, sid: str, instid: str, name: str, series: str) -> None:
        if self.next_series(sid) and self.show.instances:
            self.write(f"\n{sid}\n")
        if self.get_inst(series) is None:
            self.insts.append(Inst(instid, name, series))

    def on_label(self, series: str | None, name: str) -> None:
        if series is None:  # the listing of every label name
            self.write(f"{name}\n")
            return
        if not self.show.label_names_only:
            return
        if self.next_series(series):
            self.write(f"\n{series}")
        self.write(f", {name}" if self.need_comma else f"    Labels: {name}")
        self.need_comma = self.need_eol = True

    def on_labelmap(self, series: str, name: str, value: str) -> None:
        if self.inst_labels:
            ip = self.get_inst(series)
            if ip is not None:
                ip.labels.append((name, value))
            return
        if self.next_series(series) and not self.show.series_ids:
            self.write(f"\n{series}\n")
        self.labels.append((name, value))

    def on_label_value(self, name: str, value: str) -> None:
        """A value of label NAME (-v: the name stands in for a series)."""
        self.write(f"{name}: {value}" if self.next_series(name) else f", {value}")
        self.need_eol = True

    def on_metric(self, series: str | None, name: str) -> None:
        if series is None:
            self.write(f"{name}\n")
            return
        if self.next_series(series):
            self.write(f"\n{series}")
        self.write(f", {name}" if self.need_comma else f"    Metric: {name}")
        self.need_comma = self.need_eol = True

    def on_context(self, source: str | None, name: str) -> None:
        if source is None:
            self.write(f"{name}\n")
            return
        self.source = source
        self.write(f", {name}" if self.need_comma else f"    Context: {name}")
        self.need_comma = self.need_eol = True

    # -- the pieces of the metadata report ------------------------------------------------

    def header(self, sid: str | None) -> int:
        if sid is not None and self.next_series(sid):
            self.write(f"\n{sid}\n")
        return 0

    def end_section(self) -> int:
        self.need_comma = False
        return 0

    def footer(self) -> int:
        self.need_eol = False
        return 0

    def next_report(self) -> int:
        self.need_reset = True
        return 0

    def instance_names(self) -> int:
        """The instances of the series, by number then name, as pmseries sorts them."""
        self.insts.sort(key=cmp_to_key(compare_insts))
        for ip in self.insts:
            if self.show.instances:
                self.write(f'    inst [{ip.instid} or "{ip.name}"] series {ip.series}\n')
        self.iseries = [ip.series for ip in self.insts]
        return 0

    def metric_labels(self) -> int:
        if not self.show.label_names_only:
            text = sorted_labels(self.labels)
            if len(text) > 2:
                self.write(f"    labels {text}\n")
        return 0

    def instance_labels(self) -> int:
        if not self.show.label_names_only:
            for ip in self.insts:
                text = sorted_labels(ip.labels)
                self.write(f'    inst [{ip.instid} or "{ip.name}"] labels {text}\n')
        return 0
