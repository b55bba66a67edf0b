"""pmrep's settings: every key pmrep.conf(5) knows, its default, and how a value read from
a file or the command line sets it (PCP's precedence: command line, then files, then
these defaults)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: the keys a [options] or metricset section may set (anything else there is a metric)
KEYS = [
    "source",
    "output",
    "derived",
    "header",
    "globals",
    "samples",
    "interval",
    "type",
    "precision",
    "daemonize",
    "timestamp",
    "unitinfo",
    "colxrow",
    "separate_header",
    "fixed_header",
    "delay",
    "width",
    "delimiter",
    "extcsv",
    "width_force",
    "extheader",
    "repeat_header",
    "timefmt",
    "interpol",
    "dynamic_header",
    "overall_rank",
    "overall_rank_alt",
    "sort_metric",
    "count_scale",
    "space_scale",
    "time_scale",
    "version",
    "count_scale_force",
    "space_scale_force",
    "time_scale_force",
    "type_prefer",
    "precision_force",
    "limit_filter",
    "limit_filter_force",
    "live_filter",
    "rank",
    "invert_filter",
    "predicate",
    "names_change",
    "speclocal",
    "instances",
    "ignore_incompat",
    "ignore_unknown",
    "omit_flat",
    "instinfo",
    "include_labels",
    "include_texts",
]

#: a chart's default size in inches (--chart-size), and its default resolution (--dpi)
CHART_SIZE = (6.4, 2.6)
CHART_DPI = 100

TRUE_WORDS = ("true", "True", "y", "yes", "Yes")
FALSE_WORDS = ("false", "False", "n", "no", "No")


@dataclass
class Settings:
    """What the report is asked for; ints where pmrep keeps flags as 0/1."""

    version: int = 1
    source: str = "local:"
    output: str = "stdout"
    speclocal: str | None = None
    derived: str | None = None  # ";"-separated definitions and files
    header: int = 1
    instinfo: int = 1
    unitinfo: int = 1
    globals: int = 1
    timestamp: int = 0
    samples: str | None = None  # as given (validated once the window is known)
    interval: str = "1"
    delay: int = 0
    type: int = 0  # 1: raw counters
    type_prefer: int = 0
    ignore_incompat: int = 0
    ignore_unknown: int = 0
    names_change: int = 0
    instances: list[str] = field(default_factory=list)
    live_filter: int = 0
    rank: int | str = 0
    overall_rank: int = 0
    overall_rank_alt: int = 0
    limit_filter: int | str = 0
    limit_filter_force: int | str = 0
    invert_filter: int = 0
    predicate: str | None = None
    sort_metric: str | None = None
    omit_flat: int = 0
    include_labels: int = 0
    include_texts: int = 0
    colxrow: str | None = None
    width: int | str = 0
    width_force: int | str | None = None
    precision: int | str = 3
    precision_force: int | str | None = None
    delimiter: str | None = None
    extcsv: int = 0
    extheader: int = 0
    fixed_header: int = 0
    repeat_header: int | str = 0
    dynamic_header: int = 0
    separate_header: int = 0
    timefmt: str | None = None
    interpol: int = 1
    count_scale: str | None = None
    count_scale_force: str | None = None
    space_scale: str | None = None
    space_scale_force: str | None = None
    time_scale: str | None = None
    time_scale_force: str | None = None
    daemonize: int = 0
    # not pmrep.conf keys: the command line only
    config: str | None = None
    check: int = 0
    outfile: str | None = None
    progress: bool = True
    chart_grid: bool = True  # one image of every chart (False: a file per metric)
    chart_size: tuple[float, float] = CHART_SIZE  # each chart's, in inches
    chart_dpi: int = CHART_DPI
    chart_columns: int | None = None  # charts side by side (None: by how many there are)

    def set_from_file(self, name: str, value: str) -> None:
        """Set NAME from a configuration file's VALUE, as PCP's pmConfig.set_attr does."""
        if name == "colxrow":
            self.colxrow = _unquote(value)
            return
        word: str | int = value
        if value in TRUE_WORDS:
            word = 1
        elif value in FALSE_WORDS:
            word = 0
        if name == "speclocal":
            self.speclocal = str(word)
        elif name == "derived":
            self.derived = value if ";" in value else value.replace(",", ";")
        elif name in ("samples", "interval"):
            setattr(self, name, value)
        elif name in ("type", "type_prefer"):
            setattr(self, name, 1 if value == "raw" else 0)
        elif name == "instances":
            self.instances = value.split(",")
        else:
            try:
                setattr(self, name, int(word))
            except ValueError:
                setattr(self, name, _unquote(str(word)))


def _unquote(value: str) -> str:
    if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
        return value[1:-1]
    return value
