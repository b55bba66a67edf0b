"""pmrep's command line and its run, shared by pmrep and pmplot: the options, the settings
they and pmrep.conf(5) make, the metrics source, and the pipeline from it to an output.

An archive is replayed a chunk of samples at a time through the columnar reader, its
rates, scaling and text made in NumPy; a live source is fetched one sample at a time
through the same conversion and formatting.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from purepcp.pmapi.errors import PMError
from purepcp.pmapi.options import (
    ALIGN,
    ARCHIVE,
    FINISH,
    HELP,
    HOST,
    HOSTZONE,
    INTERVAL,
    LOCALPMDA,
    ORIGIN,
    SAMPLES,
    SPECLOCAL,
    START,
    TIMEZONE,
    VERSION,
    Opt,
    Parsed,
    Tool,
    archive_end,
    archive_folio,
    load_derived,
)
from purepcp.tools.report.config import (
    ConfigError,
    Spec,
    apply_options,
    check_path,
    conf_files,
    default_path,
    load,
    parse_instances,
    wanted_metrics,
)
from purepcp.tools.report.settings import CHART_DPI, CHART_SIZE, Settings

PROG = "pmrep"
NSEC = 1_000_000_000
CHARTS = ("png", "svg")
OUTPUTS = ("archive", "csv", "stdout", "json", *CHARTS)

CONFIG = Opt("c", "config", "FILE", "config file path")
CHECK = Opt("C", "check", None, "check config and metrics and exit")
OUTPUT = Opt(
    "o", "output", "OUTPUT", "output target: archive, csv, stdout (default), json, png, svg"
)
OUTFILE = Opt("F", "output-file", "OUTFILE", "output file")
DERIVED = Opt("e", "derived", "FILE|DFNT", "derived metrics definitions")
DAEMONIZE = Opt(None, "daemonize", None, "daemonize on startup")
DEBUG = Opt("D", "debug", "DBG", "set debug options")
PROGRESS = Opt(None, "no-progress", None, "no progress bar for long archive replays")
REPORTING = (
    Opt("H", "no-header", None, "omit headers"),
    Opt("U", "no-unit-info", None, "omit unit info from headers"),
    Opt(None, "no-inst-info", None, "omit instance info from headers"),
    Opt("G", "no-globals", None, "omit global metrics"),
    Opt("p", "timestamps", None, "print timestamps"),
    ALIGN, START, FINISH, ORIGIN, SAMPLES, INTERVAL, TIMEZONE, HOSTZONE,
    Opt("d", "delay", None, "delay, pause between updates for archive replay"),
    Opt("r", "raw", None, "output raw counter values (no rate conversion)"),
    Opt("R", "raw-prefer", None, "prefer output raw counter values (no rate conversion)"),
    Opt("I", "ignore-incompat", None, "ignore incompatible instances (default: abort)"),
    Opt("5", "ignore-unknown", None, "ignore unknown metrics (default: abort)"),
    Opt("i", "instances", "STR", "instances to report (default: all current)"),
    Opt("j", "live-filter", None, "perform instance live filtering"),
    Opt("J", "rank", "COUNT", "limit results to COUNT highest/lowest valued instances"),
    Opt("2", "overall-rank", None, "report overall ranking from archive"),
    Opt("3", "overall-rank-alt", None, "report overall ranking from archive in pmrep format"),
    Opt("4", "names-change", "ACTION", "update/ignore/abort on PMNS changes (default: ignore)"),
    Opt("8", "limit-filter", "LIMIT", "default limit for value filtering"),
    Opt("9", "limit-filter-force", "LIMIT", "forced limit for value filtering"),
    Opt("n", "invert-filter", None, "perform ranking before live filtering"),
    Opt("N", "predicate", "METRIC", "set predicate filter reference metric"),
    Opt("6", "sort-metric", "METRIC", "set sort reference metric for colxrow output"),
    Opt("v", "omit-flat", None, "omit single-valued metrics"),
    Opt("m", "include-labels", None, "include metric label info"),
    Opt(None, "include-texts", None, "include metric help texts in archive output"),
    Opt("X", "colxrow", "STR", "swap stdout columns and rows using STR as header label"),
    Opt("w", "width", "N", "default column width"),
    Opt("W", "width-force", "N", "forced column width"),
    Opt("P", "precision", "N", "prefer N digits after decimal separator (default: 3)"),
    Opt("0", "precision-force", "N", "force N digits after decimal separator"),
    Opt("l", "delimiter", "STR", "delimiter to separate csv/stdout columns"),
    Opt("k", "extended-csv", None, "write extended CSV"),
    Opt("x", "extended-header", None, "display extended header"),
    Opt("7", "fixed-header", None, "fixed header and dynamic instances with colxrow output"),
    Opt("E", "repeat-header", "N", "repeat stdout headers every N lines"),
    Opt("1", "dynamic-header", None, "update header dynamically on metric/instance changes"),
    Opt("g", "separate-header", None, "write separated header before metrics"),
    Opt("f", "timestamp-format", "STR", "strftime string for timestamp format"),
    Opt("u", "no-interpol", None, "disable interpolation mode with archives"),
    Opt("q", "count-scale", "SCALE", "default count unit"),
    Opt("Q", "count-scale-force", "SCALE", "forced count unit"),
    Opt("b", "space-scale", "SCALE", "default space unit"),
    Opt("B", "space-scale-force", "SCALE", "forced space unit"),
    Opt("y", "time-scale", "SCALE", "default time unit"),
    Opt("Y", "time-scale-force", "SCALE", "forced time unit"),
    PROGRESS,
)  # fmt: skip
#: pmplot's (and pmrep -o png|svg's) chart options
CHART = (
    Opt(None, "separate", None, "one file per metric (BASE-METRIC.png) instead of a grid"),
    Opt(None, "chart-size", "WxH",
        "each chart's size in inches (default {}x{})".format(*CHART_SIZE)),
    Opt(None, "columns", "N", "charts side by side (default: 1 up to 3 charts, 2 up to 8, else 3)"),
    Opt(None, "dpi", "N", f"dots per inch of PNG charts (default {CHART_DPI})"),
)  # fmt: skip
GENERAL = (ARCHIVE, Opt(None, "archive-folio", "FILE", "read metric source list from FILE"),
           Opt(None, "container", "NAME", "specify an individual container to be queried"),
           HOST, LOCALPMDA, SPECLOCAL, CONFIG, CHECK, OUTPUT, OUTFILE, DERIVED, DAEMONIZE,
           VERSION, HELP)  # fmt: skip
#: what only a text report uses (pmplot has none of these)
TEXT_ONLY = {
    "no-header", "no-unit-info", "no-inst-info", "timestamps", "overall-rank",
    "overall-rank-alt", "sort-metric", "include-labels", "include-texts", "colxrow", "width",
    "width-force", "precision", "precision-force", "delimiter", "extended-csv",
    "extended-header", "fixed-header", "repeat-header", "dynamic-header", "separate-header",
    "timestamp-format",
}  # fmt: skip
#: pmplot's options: pmrep's, but -o and -F name a chart, and no text-only options
PLOT_OUTPUT = Opt("o", "output", "FORMAT", "chart format: png or svg (default: -F's suffix)")
PLOT_OUTFILE = Opt("F", "output-file", "OUTFILE", "chart file, .png or .svg (default pmplot.png)")
PLOT_GENERAL = tuple(
    PLOT_OUTPUT if opt is OUTPUT else PLOT_OUTFILE if opt is OUTFILE else opt for opt in GENERAL
)
PLOT_REPORTING = tuple(opt for opt in REPORTING if opt.long not in TEXT_ONLY)
TOOL = Tool(
    PROG,
    "[option...] metricspec [...]",
    (
        ("General options", GENERAL),
        ("Reporting options", REPORTING),
        ("Chart options", CHART),
        ("", (DEBUG,)),
    ),  # (-D is accepted but not listed, as PCP's pmrep lists it not)
    help_status=0,
)

#: options this pmrep reads but does not act on yet: said so, rather than ignored
NOT_BUILT = {"container": "--container"}
#: command-line flags that set a pmrep.conf key to 1 (or 0)
FLAGS = {
    "no-header": ("header", 0), "no-unit-info": ("unitinfo", 0), "no-inst-info": ("instinfo", 0),
    "no-globals": ("globals", 0), "timestamps": ("timestamp", 1), "delay": ("delay", 1),
    "raw": ("type", 1), "raw-prefer": ("type_prefer", 1), "ignore-incompat": ("ignore_incompat", 1),
    "ignore-unknown": ("ignore_unknown", 1), "live-filter": ("live_filter", 1),
    "overall-rank": ("overall_rank", 1), "overall-rank-alt": ("overall_rank_alt", 1),
    "invert-filter": ("invert_filter", 1), "omit-flat": ("omit_flat", 1),
    "include-labels": ("include_labels", 1), "include-texts": ("include_texts", 1),
    "extended-csv": ("extcsv", 1), "extended-header": ("extheader", 1),
    "fixed-header": ("fixed_header", 1), "dynamic-header": ("dynamic_header", 1),
    "separate-header": ("separate_header", 1), "no-interpol": ("interpol", 0),
    "check": ("check", 1), "daemonize": ("daemonize", 1),
}  # fmt: skip
#: command-line options with a value that set a pmrep.conf key
VALUES = {
    "output": "output", "rank": "rank", "limit-filter": "limit_filter",
    "limit-filter-force": "limit_filter_force", "predicate": "predicate",
    "sort-metric": "sort_metric", "colxrow": "colxrow", "width": "width",
    "width-force": "width_force", "precision": "precision", "precision-force": "precision_force",
    "delimiter": "delimiter", "repeat-header": "repeat_header", "timestamp-format": "timefmt",
    "count-scale": "count_scale", "count-scale-force": "count_scale_force",
    "space-scale": "space_scale", "space-scale-force": "space_scale_force",
    "time-scale": "time_scale", "time-scale-force": "time_scale_force",
    "samples": "samples", "interval": "interval",
}  # fmt: skip


def fail(message: str) -> NoReturn:
    """One line to stderr, then exit 1 (pmrep's errors are whole sentences, no prefix)."""
    sys.stdout.flush()
    sys.stderr.write(message + "\n")
    raise SystemExit(1)


def settings_for(parsed: Parsed, prog: str = PROG, usage: str = "") -> tuple[Settings, Any]:
    """The settings: defaults, then pmrep.conf's [options] and metricsets, then the command
    line; and what the configuration files hold (PROG: the command, for its messages;
    USAGE: what follows a bad sample count or interval, as pmrep prints its usage)."""
    s = Settings()
    path = parsed.get("config")
    if path is not None:
        check_path(str(path))
    else:
        path = default_path()
    loaded = load(conf_files(str(path) if path else None))
    metricsets = [op[1:] for op in parsed.operands if op.startswith(":")]
    apply_options(loaded, s, metricsets)
    # the files' samples and interval go through pmSetOptionSamples/Interval, whose
    # messages are libpcp's own, under its default program name
    check_sampling(s.samples, s.interval, "pcp: sample count must be a positive numeric "
                   "argument", "pcp: interval argument", usage)  # fmt: skip
    check_sampling(parsed.get("samples"), parsed.get("interval"), f"{prog}: -s requires a "
                   "positive numeric argument", f"{prog}: -t argument", usage)  # fmt: skip
    for opt, value in parsed.pairs:
        key = opt.long or opt.short or ""
        if key in FLAGS:
            name, flag = FLAGS[key]
            setattr(s, name, flag)
        elif key in VALUES:
            setattr(s, VALUES[key], value)
        elif key == "instances":
            s.instances = s.instances + parse_instances(str(value))
        elif key == "derived":
            earlier = s.derived if s.derived and s.derived.startswith(";") else ""
            s.derived = f"{earlier};{value}"  # (-e replaces the files' definitions)
        elif key == "names-change":
            if value not in ("ignore", "abort", "update"):
                fail(f"Unknown names-change action '{value}' specified.")
            s.names_change = ("ignore", "abort", "update").index(str(value))
        elif key == "output-file":
            s.outfile = str(value)
        elif key == "separate":
            s.chart_grid = False
        elif key == "chart-size":
            s.chart_size = chart_size(str(value), prog)
        elif key == "columns":
            s.chart_columns = positive_int("--columns", str(value), prog)
        elif key == "dpi":
            s.chart_dpi = positive_int("--dpi", str(value), prog)
        elif key == "no-progress":
            s.progress = False
        elif key == "spec-local":  # (-K replaces the files' speclocal, then adds up)
            earlier = s.speclocal if s.speclocal and s.speclocal.startswith(";") else ""
            s.speclocal = f"{earlier};{value}"
    return s, loaded


def check_sampling(samples, interval, count_error: str, interval_what: str, usage: str) -> None:
    """A sample count must be a whole number, not negative, and an interval one
    pmParseHighResInterval reads; else COUNT_ERROR (or INTERVAL_WHAT's message and the
    parser's) and USAGE, and exit 1, as PCP's option handling does."""
    import re

    from purepcp.pmapi.timewindow import TimeParseError, parse_interval

    if samples not in (None, ""):
        text = str(samples)
        if not re.fullmatch(r"\s*[+-]?[0-9]+", text) or int(text) < 0:
            fail(count_error + "\n" + usage.rstrip("\n"))
    if interval in (None, ""):
        return
    try:
        parse_interval(str(interval))
    except TimeParseError as exc:
        fail(f"{interval_what} not in pmParseHighResInterval(3) format:\n{exc.errmsg}\n"
             + usage.rstrip("\n"))  # fmt: skip


def chart_size(text: str, prog: str = PROG) -> tuple[float, float]:
    """--chart-size WxH, in inches (each chart's)."""
    try:
        width, height = (float(x) for x in text.lower().split("x"))
        if width > 0 and height > 0:
            return width, height
    except ValueError:
        pass
    fail(f"{prog}: --chart-size wants WIDTHxHEIGHT in inches, not '{text}'")


def positive_int(flag: str, text: str, prog: str = PROG) -> int:
    if text.isdigit() and int(text) > 0:
        return int(text)
    fail(f"{prog}: {flag} requires a positive numeric argument")


def check_outfile(path: str) -> None:
    if os.path.exists(path + ".index"):
        fail(f"Archive {path} already exists.")
    if os.path.exists(path):
        kind = "File" if os.path.isfile(path) else "Directory"
        fail(f"{kind} {path} already exists.")


def chart_file(path: str, fmt: str | None, prog: str = PROG) -> str:
    """The chart format for -F PATH (FMT: -o's, None when not given): PATH's suffix says
    it, and must agree with -o; no suffix is FMT, else png.  Any other suffix is refused
    (no PNG bytes under a .jpg name), as is a directory that is not there to write in."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix and suffix not in CHARTS:
        fail(f"{prog}: cannot write {path}: charts are png or svg, name the file .png or .svg")
    if suffix and fmt and suffix != fmt:
        fail(f"{prog}: cannot write {path} as {fmt}: name the file .{fmt}")
    where = os.path.dirname(path) or "."
    problem = None
    if not os.path.isdir(where):
        problem = errno.ENOTDIR if os.path.exists(where) else errno.ENOENT
    elif not os.access(where, os.W_OK | os.X_OK):
        problem = errno.EACCES
    if problem is not None:
        fail(f"{prog}: cannot write {path}: {os.strerror(problem)}")
    return suffix or fmt or "png"


def validate(s: Settings, parsed: Parsed, prog: str = PROG) -> None:
    """pmrep's checks of the settings before any connection is made."""
    if s.version != 1:
        fail(f"Incompatible configuration file version (read v{s.version}, need v1).")
    for name, what in (("width", "Non-negative integer expected"),
                       ("width_force", "Non-negative integer expected"),
                       ("precision", "Non-negative integer expected"),
                       ("precision_force", "Non-negative integer expected"),
                       ("limit_filter", "Integer expected"),
                       ("limit_filter_force", "Integer expected"),
                       ("rank", "Integer expected")):  # fmt: skip
        value = getattr(s, name)
        if value in (None, "", 0):
            continue
        try:
            number = int(value)
        except ValueError:
            number = None
        if number is None or (what.startswith("Non") and number < 0):
            fail(f"Error while reading option {name}: {what}.")
        setattr(s, name, number)
    if s.separate_header and not s.width:  # (pmrep's default width for -g)
        s.width = 8
    if s.repeat_header not in (0, "", "auto"):
        try:
            s.repeat_header = int(s.repeat_header)
            if s.repeat_header < 0:
                raise ValueError
        except ValueError:
            fail("Error while reading option repeat_header: Non-negative integer expected.")
    if s.include_labels and s.output == "archive":
        fail(f"{prog}: -m with -o archive is not implemented by this pmrep yet.")
    if (s.overall_rank or s.overall_rank_alt) and not s.rank:
        fail("Overall ranking requires ranking enabled.")
    if s.output not in OUTPUTS:
        fail("Error while parsing options: Invalid output target specified.")
    if s.output in ("archive", *CHARTS) and not s.outfile:
        what = "Output archive" if s.output == "archive" else "Output chart file"
        fail(f"{what} must be defined with {s.output} output.")
    if s.output in CHARTS:
        chart_file(str(s.outfile), s.output, prog)
    if s.output == "archive":
        outdir = os.path.dirname(s.outfile or "") or "."
        if not os.access(outdir, os.W_OK | os.X_OK):
            fail(f"Output directory {outdir} not accessible.")


def early_checks(s: Settings, parsed: Parsed, prog: str = PROG) -> None:
    """What pmrep refuses while it reads its options, before it connects: an output
    file already there (-F), an option this pmrep does not build."""
    if s.outfile and s.output not in CHARTS:  # (a chart is drawn again over its file)
        check_outfile(s.outfile)
    for key, flag in NOT_BUILT.items():
        attr = FLAGS.get(key, (key.replace("-", "_"), 1))[0]
        if key in parsed or getattr(s, attr, 0) not in (0, None, ""):
            fail(f"{prog}: option {flag} ({key}) is not implemented by this pmrep yet.")


def open_context(s: Settings, parsed: Parsed, tool: Tool = TOOL):
    """The metrics source: -a, -h or -L, else the configuration's source, else local:."""
    prog = tool.prog
    values = dict(parsed.values)
    if "archive-folio" in values:
        try:
            folio = archive_folio(str(values.pop("archive-folio")))
        except ValueError as exc:
            fail(f"{prog}: {exc}")
        if not folio or "archive" in values or "host" in values:
            fail(f"{prog}: only one of hosts or archives allowed" if folio else
                 f"{prog}: archive folio lists no archives")  # fmt: skip
        values["archive"] = ",".join(folio)
    if not any(k in values for k in ("archive", "host", "local-PMDA")):
        source = s.source or "local:"  # (pmrep's: a path is an archive, "@" local PMDAs)
        if "/" in source or os.path.exists(source + ".index") or os.path.isdir(source):
            values["archive"] = source
        elif source == "@":
            values["local-PMDA"] = True
        elif source != "local:":
            values["host"] = source
    specs = [x for x in (s.speclocal or "").split(";") if x]
    return connect(Parsed(values=values, specs=specs, operands=parsed.operands), tool)


def connect(parsed: Parsed, tool: Tool):
    """The context PARSED names; one that cannot be made is pmrep's one line, the error's
    message after the program's name ("; is pmcd running?" when refused)."""
    from purepcp.pmapi.context import Context

    if len([k for k in ("archive", "host", "local-PMDA") if k in parsed]) > 1:
        tool.fail("at most one of -a, -h and -L allowed", usage=True)
    try:
        if "archive" in parsed:
            from purepcp.pmapi.archive.context import ArchiveContext

            return ArchiveContext(str(parsed.get("archive")), None)
        if "local-PMDA" in parsed:
            return Context.local(parsed.specs, None)
        host = str(parsed.get("host") or os.environ.get("PMCD_HOST") or "local:")
        return Context.host(host, None)
    except PMError as exc:
        refused = "; is pmcd running?" if exc.message == "Connection refused" else ""
        fail(f"{tool.prog}: {exc.message}{refused}")


def run(argv: list[str], tool: Tool = TOOL, chart: str | None = None) -> int:
    """pmrep with ARGV; for pmplot, TOOL is its own and CHART the default output.  As
    PCP's pmrep: the options and configuration files are read and the metricsets found,
    then the source is opened, then the settings are checked and the metrics resolved."""
    parsed = tool.parse(argv)
    debug = check_debug(parsed, tool)
    if not parsed.operands:
        sys.stderr.write("No metrics specified.\n")
        sys.stderr.write(tool.usage())
        return 1
    prog = tool.prog
    try:
        s, loaded = settings_for(parsed, prog, tool.usage())
        if chart is not None:
            plot_output(s, parsed, prog, chart)
        early_checks(s, parsed, prog)
        wanted = wanted_metrics(parsed.operands, loaded, s)
    except ConfigError as exc:
        config_fail(exc)
    ctx = open_context(s, parsed, tool)
    try:
        validate(s, parsed, prog)
        keywords = bool({"appl1", "all"} & debug)
        return report(ctx, s, parsed, wanted, prog, keywords)
    except ConfigError as exc:
        config_fail(exc)
    except BrokenPipeError:
        raise
    except OSError as exc:  # (a file that cannot be written: PCP's pmrep prints it so)
        fail(str(exc))
    finally:
        with contextlib.suppress(PMError, OSError):
            ctx.close()
    return 0


def config_fail(exc: ConfigError) -> NoReturn:
    """A configuration problem's message on stderr, then what pmrep prints on stdout
    with it (the instances -i asked for, when none matched), and exit 1."""
    sys.stdout.flush()
    sys.stderr.write(f"{exc}\n")
    sys.stderr.flush()
    if exc.stdout:
        sys.stdout.write(exc.stdout)
    raise SystemExit(1)


def check_debug(parsed: Parsed, tool: Tool) -> set[str]:
    """-D's debug options (pmSetDebug's names, lower case); a specification pmSetDebug
    would not take ends the run as pmrep's options do."""
    from purepcp.pmapi.options import debug_spec_ok

    names: set[str] = set()
    for opt, value in parsed.pairs:
        if opt is not DEBUG:
            continue
        if not debug_spec_ok(str(value)):
            tool.fail(f"unrecognized debug options specification ({value})", usage=True)
        names.update(t.strip().lower() for t in str(value).split(","))
    return names


def show_keywords() -> None:
    """-D appl1: the keywords pmrep.conf(5) knows, as pmrep lists them on stdout."""
    from purepcp.tools.report.config import SPEC_FIELDS
    from purepcp.tools.report.settings import KEYS

    sys.stdout.write(f"Known config file keywords: {tuple(KEYS)!r}\n")
    sys.stdout.write(f"Known metric spec keywords: {SPEC_FIELDS!r}\n")


def plot_output(s: Settings, parsed: Parsed, prog: str, default: str) -> None:
    """pmplot's output: a chart only (-o png|svg, or -F's suffix), to -F or pmplot.FORMAT;
    what a configuration file says of outputs does not apply."""
    asked = str(parsed.get("output")) if "output" in parsed else None
    if asked is not None and asked not in CHARTS:
        fail(f"{prog}: invalid output '{asked}': {prog} draws charts, -o png or -o svg "
             f"(for text, csv, json or an archive use pmrep)")  # fmt: skip
    if s.outfile:
        s.output = chart_file(s.outfile, asked, prog)
    else:
        s.output = asked or default
        s.outfile = f"{prog}.{s.output}"


@dataclass(frozen=True)
class Timing:
    """When the samples are: the first, the interval, how many (None: to the end)."""

    origin_ns: int
    interval: float
    samples: int | None
    window: Any  # pmapi.timewindow.TimeWindow
    runtime: float | None = None  # -T's: seconds from the first sample to the end

    @property
    def delta_ns(self) -> int:
        return round(self.interval * NSEC)


def one_line(errmsg: str) -> str:
    """A time parser's message (the text, a caret line, the reason) as one line."""
    lines = [line for line in errmsg.splitlines() if line.strip()]
    reason = lines[-1].split("-- ", 1)[-1] if len(lines) > 1 else ""
    return f"{lines[0].strip()}: {reason}" if reason else " ".join(lines)


def reporting_zone(ctx, parsed: Parsed, archive: bool):
    """-z (the source's zone), -Z TZ, else the local zone."""
    from purepcp.pmapi.timewindow import new_zone, tzinfo_for
    from purepcp.pmapi.zone import archive_zone, context_zone

    if "hostzone" in parsed:
        return archive_zone(ctx) if archive else context_zone(ctx)
    if "timezone" in parsed:
        return new_zone(str(parsed.get("timezone")))
    return tzinfo_for(None)


def timing(ctx, s: Settings, parsed: Parsed, archive: bool, zone, prog: str = PROG) -> Timing:
    """pmrep's samples: -t, -s, and -S/-T/-O/-A within an archive (-T alone when live);
    -T with -s spreads the samples over the window, -T alone counts them."""
    from purepcp.pmapi.timewindow import TimeParseError, parse_interval, parse_time_window

    try:
        interval = parse_interval(str(s.interval))
    except TimeParseError as exc:
        fail(f"{prog}: -t argument not in pmParseInterval(3) format: {one_line(exc.errmsg)}")
    samples: int | None = None
    if s.samples not in (None, ""):
        text = str(s.samples)
        if not text.isdigit():
            fail(f"{prog}: -s requires a positive numeric argument")
        samples = int(text)
    now = time.time_ns()
    try:
        if archive:
            name = str(parsed.get("archive") or s.source)
            window = parse_time_window(parsed.get("start"), parsed.get("finish"),
                                       parsed.get("align"), parsed.get("origin"),
                                       ctx.archive.label.start,
                                       archive_end(prog, name, ctx.archive), tz=zone)  # fmt: skip
        else:
            window = parse_time_window(None, parsed.get("finish"), None, None,
                                       (now // NSEC, now % NSEC), None, tz=zone)  # fmt: skip
    except TimeParseError as exc:
        fail(f"{prog}: invalid time window: {one_line(exc.errmsg)}")
    origin_ns = window.origin_ns if archive else now
    runtime = None
    if "finish" in parsed:
        runtime = (window.end_ns - origin_ns) / NSEC
        if samples:
            samples = max(2, samples)
            interval = runtime / (samples - 1)
        elif interval > 0:
            samples = int(runtime / interval + 1)
    if interval <= 0:
        fail("Interval must be greater than zero.")
    return Timing(origin_ns, interval, samples, window, runtime)


def report(ctx, s: Settings, parsed: Parsed, wanted, prog: str = PROG,
           keywords: bool = False) -> int:  # fmt: skip
    """Resolve the metrics, write the headers, then every sample's values (KEYWORDS:
    first the keywords pmrep.conf knows, as pmrep -D appl1 lists them)."""
    from purepcp.tools.report.resolve import Resolver
    from purepcp.tools.report.values import Converter, Layout

    archive = hasattr(ctx, "archive")
    predicates = [p for p in (s.predicate or "").split(",") if p]
    if s.overall_rank or s.overall_rank_alt:
        predicates = []
    for name in predicates:  # (a predicate not asked for is reported too, as pmrep does)
        wanted.specs.setdefault(name, Spec(name))
    resolver = Resolver(ctx, s, archive)
    resolver.register_derived(wanted, load_derived)
    metrics = resolver.resolve(wanted)
    check_predicates(predicates, metrics)
    zone = reporting_zone(ctx, parsed, archive)
    when = timing(ctx, s, parsed, archive, zone, prog)
    if keywords:
        show_keywords()
    layout = Layout(metrics)
    columns = [c for m in metrics for c in m.columns()]
    # the text goes to -F's file, but an archive's is the archive and stdout says so
    text = s.outfile and s.output in ("stdout", "csv", "json")
    out = open(s.outfile, "w") if text else sys.stdout  # noqa: SIM115 (an OSError: see run)
    writer = make_writer(s, ctx, archive, metrics, columns, zone, when, parsed, out, prog)
    if s.extheader:
        name = str(getattr(ctx, "name", None) or parsed.get("archive") or s.source)
        extended_header(out, s, ctx, archive, metrics, zone, when, name)
    if s.header and not (s.overall_rank or s.overall_rank_alt):
        writer.header()
    if s.check:
        return 0
    if s.daemonize:
        daemonize(out)
    converter = Converter(layout, int(s.rank or 0), bool(s.invert_filter), predicates)
    try:
        if archive and s.interpol and not s.delay:
            blocks = replay_blocks(ctx, metrics, layout, when, s, prog)
        else:
            blocks = fetch_blocks(ctx, metrics, layout, s, when, archive)
        for raw in blocks:
            writer.write(converter.convert(raw))
            if not archive:
                out.flush()
    except BaseException:  # (Ctrl-C: what was sampled is still written; the error is told)
        finish(writer, out, prog, quiet=True)
        raise
    finish(writer, out, prog)
    return 0


def finish(writer, out, prog: str, quiet: bool = False) -> None:
    """Close the output (a chart is drawn then) and say which files were written.  A
    chart that cannot be written is a one-line error, unless QUIET (another is told)."""
    from purepcp.tools.report.chart import ChartError

    try:
        for path in writer.close() or ():
            sys.stderr.write(f"{prog}: wrote {path}\n")
    except ChartError as exc:
        if not quiet:
            fail(f"{prog}: {exc}")
    finally:
        if out is not sys.stdout:
            try:
                out.close()
            except OSError:
                if not quiet:
                    raise


def make_writer(s, ctx, archive, metrics, columns, zone, when: Timing, parsed, out, prog=PROG):
    """The output target's writer."""
    from purepcp.tools.report.text import (
        ColxrowWriter,
        CsvWriter,
        OverallRankWriter,
        StdoutWriter,
    )

    delimiter = s.delimiter
    if delimiter is None:
        delimiter = "," if s.output == "csv" else "  "
    timefmt = s.timefmt
    if timefmt is None:
        timefmt = "%Y-%m-%d %H:%M:%S" if s.output == "csv" else "%H:%M:%S"
    host = source_host(ctx, archive)
    mode = header_mode(s)
    if s.output == "csv":
        if mode == "dynamic":
            from purepcp.tools.report.dynamic import DynamicCsvWriter

            return DynamicCsvWriter(out, columns, rank=bool(s.rank),
                                    repeat=s.repeat_header if s.header else 0,
                                    delimiter=delimiter, timefmt=timefmt, zone=zone,
                                    header=bool(s.header), extcsv=bool(s.extcsv), host=host,
                                    tzname=utc_offset(zone, when.origin_ns / NSEC),
                                    labels=bool(s.include_labels))  # fmt: skip
        return CsvWriter(out, columns, delimiter=delimiter, timefmt=timefmt, zone=zone,
                         header=bool(s.header), extcsv=bool(s.extcsv), host=host,
                         tzname=utc_offset(zone, when.origin_ns / NSEC),
                         labels=bool(s.include_labels))  # fmt: skip
    if s.output == "archive":
        from purepcp.tools.report.records import ArchiveOut, help_texts

        tz = ctx.archive.label.timezone if archive else utc_offset(zone)
        return ArchiveOut(out, metrics, str(s.outfile), hostname=host, timezone=tz,
                          samples=when.samples, interval=when.interval, live=not archive,
                          texts=help_texts(ctx, metrics) if s.include_texts else ())  # fmt: skip
    if s.output == "json":
        from purepcp.tools.report.records import JsonOut

        source = str(parsed.get("archive") or "") if archive else host
        return JsonOut(out, columns, host=host, source=source, interval=when.interval, zone=zone)
    if s.output in ("png", "svg"):
        from purepcp.tools.report.chart import (
            ChartOptions,
            ChartWriter,
            MissingExtra,
            require_matplotlib,
        )

        try:
            require_matplotlib()
        except MissingExtra as exc:  # (its text names pmrep; pmplot says its own name)
            fail(f"{prog}: {str(exc).split(': ', 1)[-1]}")
        title = f"{host}: {parsed.get('archive') or s.source}" if archive else host
        width, height = s.chart_size
        options = ChartOptions(str(s.outfile), s.output, grid=s.chart_grid, width=width,
                               height=height, dpi=s.chart_dpi, title=title, tz=zone,
                               columns=s.chart_columns)  # fmt: skip
        return ChartWriter(columns, options)
    common = dict(delimiter=delimiter, timestamp=bool(s.timestamp), timefmt=timefmt, zone=zone,
                  header=bool(s.header), instinfo=bool(s.instinfo), unitinfo=bool(s.unitinfo),
                  repeat=s.repeat_header, now_ns=time.time_ns(),
                  separate=bool(s.separate_header), labels=bool(s.include_labels))  # fmt: skip
    if s.overall_rank or s.overall_rank_alt:
        if not archive or s.output != "stdout":
            fail("Overall ranking supported only with archive input and stdout output.")
        return OverallRankWriter(out, columns, rank=int(s.rank), alt=bool(s.overall_rank_alt),
                                 delimiter=delimiter)  # fmt: skip
    if s.colxrow is not None:
        sort = sort_metrics(s, metrics)
        if mode != "static":
            from purepcp.tools.report.dynamic import DynamicColxrowWriter

            fixed = mode == "fixed"
            return DynamicColxrowWriter(out, columns, colxrow=s.colxrow, sort=sort, fixed=fixed,
                                        rank=bool(s.rank), **common)  # fmt: skip
        return ColxrowWriter(out, columns, colxrow=s.colxrow, sort=sort, **common)
    if mode == "dynamic":
        from purepcp.tools.report.dynamic import DynamicStdoutWriter

        return DynamicStdoutWriter(out, columns, rank=bool(s.rank), empty_width=int(s.width or 0),
                                   **common)  # fmt: skip
    return StdoutWriter(out, columns, **common)


def header_mode(s: Settings) -> str:
    """The header's kind: "dynamic" (-1, or -4 update), "fixed" (-7 with -X to stdout) or
    "static", as pmrep settles its header options (an archive written has neither; our JSON and
    charts, which PCP's pmrep has not, neither)."""
    dynamic, fixed = bool(s.dynamic_header), bool(s.fixed_header)
    if s.colxrow is None or s.output != "stdout":
        fixed = False
    if dynamic:
        fixed = False
    if s.names_change == 2:
        dynamic, fixed = True, False
    if s.output not in ("stdout", "csv"):
        dynamic = fixed = False
    return "dynamic" if dynamic else "fixed" if fixed else "static"


def daemonize(out) -> None:
    """--daemonize: carry on in a child of init in a session of its own (pmServerStart's
    way); the command itself returns at once."""
    out.flush()
    sys.stderr.flush()
    if os.fork() > 0:
        os._exit(0)
    os.setsid()


def check_predicates(predicates: Sequence[str], metrics) -> None:
    """-N: each predicate is a reported metric with instances and numeric values."""
    from purepcp.pmapi.ids import PM_INDOM_NULL
    from purepcp.pmapi.types import PMType

    for name in predicates:
        metric = next((m for m in metrics if m.name == name), None)
        if metric is None:
            fail(f"Predicate metric {name} filtered out.")
        if metric.desc.indom == PM_INDOM_NULL or metric.names[0] is None:
            fail("Predicate metric must have instances.")
        if metric.desc.type == PMType.PM_TYPE_STRING:
            fail("Predicate metric values must be numeric.")


def sort_metrics(s: Settings, metrics) -> list[tuple[str, bool]]:
    """-6 METRIC[,-METRIC...]: what -X's instance lines are sorted by (a leading "-" sorts
    lowest first); each must be a reported metric with instances."""
    found = []
    for item in (s.sort_metric or "").split(","):
        if not item:
            continue
        name = item[1:] if item.startswith("-") else item
        metric = next((m for m in metrics if m.name == name), None)
        if metric is None:
            fail(f"Sort reference metric {name} not part of metrics.")
        if metric.names[0] is None:
            fail("Sort reference metric must have instances.")
        found.append((name, not item.startswith("-")))
    return found


def source_host(ctx, archive: bool) -> str:
    if archive:
        return ctx.archive.label.hostname
    if getattr(ctx, "kind", "") == "local":
        return "localhost"
    from purepcp.pmapi.hostname import context_hostname

    return context_hostname(ctx)


def current_tz(zone, at: float | None = None) -> str:
    """pmrep's get_current_tz: ZONE as a POSIX TZ value ("AEST-10") at AT (seconds since
    the epoch; now when None), built as Python's time module sees a zone: its standard
    and daylight offsets are the current year's (January's and July's), and which one
    applies is whether daylight time is in force at AT."""
    from datetime import UTC, datetime

    year = datetime.now(UTC).year
    jan, jul = (datetime(year, m, 1, tzinfo=UTC).astimezone(zone) for m in (1, 7))
    janzone, julzone = (-int(d.utcoffset().total_seconds()) for d in (jan, jul))
    names = (jan.tzname() or "", jul.tzname() or "")
    if janzone < julzone:  # (daylight time in January: the southern hemisphere)
        offsets, names = (julzone, janzone), (names[1], names[0])
    else:
        offsets = (janzone, julzone)
    when = datetime.now(zone) if at is None else datetime.fromtimestamp(at, zone)
    dst = int(bool(when.dst()))
    offset, text = offsets[dst], names[dst]
    if offset:
        text += ("+" if offset >= 0 else "") + str(int(offset / 3600.0))
        if int(offset % 3600 / 60):
            text += ":" + str(int(offset % 3600 / 60))
    return text


def utc_offset(zone, at: float | None = None) -> str:
    """pmrep's zone text, posix_tz_to_utc_offset of current_tz: UTC+0, UTC+N or UTC-N
    (west of Greenwich is -), from the POSIX value's text as pmrep reads it."""
    tz = current_tz(zone, at)
    if "+" not in tz and "-" not in tz:
        return "UTC+0"
    offset = tz.split("+")[1] if "+" in tz else tz.split("-")[1]
    return "UTC" + ("+" if "-" in tz else "-") + offset


def replay_blocks(ctx, metrics, layout, when: Timing, s: Settings, prog: str = PROG) -> Iterator:
    """The archive's samples, interpolated, a chunk at a time (until -s, -T or its end)."""
    from purepcp.pmapi.archive.context import PM_MODE_INTERP
    from purepcp.pmapi.archive.replay import EOL_SLOP_NS
    from purepcp.pmapi.values import Timestamp

    end, origin_ns, delta_ns = when.window.end_ns, when.origin_ns, when.delta_ns
    count = when.samples
    if count is None:
        count = (
            0 if end + EOL_SLOP_NS < origin_ns else (end + EOL_SLOP_NS - origin_ns) // delta_ns + 1
        )
    ctx.set_mode(PM_MODE_INTERP, Timestamp(origin_ns // NSEC, origin_ns % NSEC), delta_ns)
    progress = _progress(count, s, prog) if count > 0 else None
    try:
        for chunk in ctx.replays([m.pmid for m in metrics], count):
            eol = chunk.eol
            stop = int(eol.argmax()) if eol.any() else None
            # a fetch that fails (the archive's damage) ends the report there, with
            # PCP's words (pmFetch's error, as PCP's pmrep says it)
            failed = chunk.failed
            bad = int(failed.argmax()) if failed is not None and failed.any() else None
            broken = bad is not None and (stop is None or bad < stop)
            stop = bad if broken else stop
            raw = layout.from_replay(chunk)
            if stop is not None:
                raw.times, raw.values, raw.has = raw.times[:stop], raw.values[:stop], raw.has[:stop]
                raw.strings = {c: v[:stop] for c, v in raw.strings.items()}
                raw.empty = None if raw.empty is None else raw.empty[:stop]
            if progress is not None:
                progress.update(len(raw.times))
            yield raw
            if broken:
                raise PMError(chunk.fail_code)
            if stop is not None:
                return
    finally:
        if progress is not None:
            progress.close()


def _progress(total: int, s: Settings, prog: str = PROG):
    """A progress bar on stderr for a replay that takes over two seconds, when stderr is a
    terminal (--no-progress or PCP_NO_PROGRESS=1 turns it off)."""
    if not s.progress or os.environ.get("PCP_NO_PROGRESS") or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=" samples", file=sys.stderr, leave=False, delay=2.0,
                mininterval=0.5, desc=prog)  # fmt: skip


def fetch_blocks(ctx, metrics, layout, s: Settings, when: Timing, archive: bool) -> Iterator:
    """One fetch per sample: live, paced by the interval; an archive's records in turn
    (-u); or an archive's interpolated samples paced by the interval (-d)."""
    from purepcp.pmapi.archive.context import PM_MODE_FORW, PM_MODE_INTERP
    from purepcp.pmapi.values import Timestamp

    pmids = [m.pmid for m in metrics]
    samples, interval, window = when.samples, when.interval, when.window
    if archive:
        origin = Timestamp(when.origin_ns // NSEC, when.origin_ns % NSEC)
        if s.interpol:
            ctx.set_mode(PM_MODE_INTERP, origin, when.delta_ns)
        else:
            ctx.set_mode(PM_MODE_FORW, origin)
    first = None
    taken = 0
    while samples is None or taken < samples:
        try:
            fetched = ctx.fetch(pmids)
        except PMError as exc:
            if exc.code == -12370:  # PM_ERR_EOL
                return
            raise
        raw = layout.from_fetch(fetched)
        if archive and int(raw.times[0]) > window.end_ns:
            return
        yield raw
        taken += 1
        if archive and not s.delay:
            continue
        if samples is not None and taken >= samples:
            return
        first = first if first is not None else time.time()  # (-d: paced from now)
        pause = first + interval * taken - time.time()
        if pause > 0:
            time.sleep(pause)


def _asctime(secs: float, zone) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(int(secs), zone).strftime("%a %b %e %H:%M:%S %Y")


def extended_header(out, s, ctx, archive, metrics, zone, when: Timing, name: str) -> None:
    """-x: where the values come from and what is reported, before the header."""
    origin_ns, samples, interval, window = when.origin_ns, when.samples, when.interval, when.window
    host = (
        "localhost, using DSO PMDAs"
        if getattr(ctx, "kind", "") == "local"
        else source_host(ctx, archive)
    )
    instances = sum(len(m.insts) for m in metrics)
    word = "instances" if instances != 1 else "instance"
    if header_mode(s) != "static":
        word += " present in archive" if archive else " initially"
    if when.runtime is not None:
        count: int | str = samples or 0
        duration = when.runtime
    elif samples:
        count = samples
        duration = (samples - 1) * interval
    else:
        duration = (window.end_ns - origin_ns) / NSEC
        count = max(0, int(duration / interval + 1))
        duration = max(0.0, (count - 1) * interval)
    end = origin_ns / NSEC + duration
    uninterpolated = archive and not s.interpol
    if uninterpolated:
        duration = max(0.0, (window.end_ns - origin_ns) / NSEC)
        count = f"{count} (requested)" if s.samples not in (None, "", 0, "0") else "N/A"
    if archive:
        from purepcp.pmapi.archive.multi import end_of

        last = end_of(ctx.archive)
        end = float(last) if last is not None else end
    from purepcp.pmapi.timewindow import tzinfo_for

    zone_text = utc_offset(zone, origin_ns / NSEC)
    here = utc_offset(tzinfo_for(None))  # (this host's zone now, as pmrep's localtz)
    if zone_text != here:
        zone_text += f" (reporting, current is {here})"
    comment = "#" if s.output == "csv" else ""
    lines = [""]
    if archive:
        lines.append(f"  archive: {name}")
    lines += [
        f"     host: {host}",
        f" timezone: {zone_text}",
        f"    start: {_asctime(origin_ns / NSEC, zone)}",
        f"      end: {_asctime(end, zone)}",
        f"  metrics: {len(metrics)} ({instances} {word})",
        f"  samples: {count}",
        " interval: N/A" if uninterpolated else f" interval: {float(interval)} sec",
        f" duration: {_readable(duration)}",
        "",
    ]
    out.write("".join(comment + line + "\n" for line in lines))


def _readable(seconds: float) -> str:
    import math
    from datetime import timedelta

    whole = math.floor(seconds + math.copysign(0.5, seconds))  # (half away from zero)
    parts = str(timedelta(seconds=whole)).split(":")
    if len(parts[0]) == 1:
        parts[0] = "0" + parts[0]
    elif parts[0][-2] == " ":  # ("1 day, 2" is "1 day, 02")
        parts[0] = parts[0][:-1] + "0" + parts[0][-1]
    return ":".join(parts)
