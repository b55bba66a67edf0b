"""What a pmseries command line asks for: the mode it runs in, what its report shows
and the texts its options give (options.parse_options builds one from the arguments)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Mode(Enum):
    """What pmseries does, as its options and arguments choose it."""

    LOAD = "load an archive into the key server"  # -L
    QUERY = "print what a query matches"  # -q, or arguments not all series ids
    WINDOW = "print the values of series in a time window"  # -w SID...
    LABEL_VALUES = "print the values of labels"  # -v NAME...
    SOURCES = "print the names of sources"  # -S alone
    METADATA = "report on series, or list every name"  # SID... or -a -d -i -l -m -n -s -I -M


@dataclass(frozen=True)
class Show:
    """What the report shows (PCP's OPT_* and print flags, as named switches): which
    lookups the metadata report makes, and how its callbacks write what they find."""

    descs: bool = False  # -d: each series' descriptor
    sources: bool = False  # -S: its source's names
    metrics: bool = False  # -m: its metric names
    labels: bool = False  # -l (or -n): its labels, then its instances'
    instances: bool = False  # -i: its instances
    series_ids: bool = False  # -s: the source's id under the descriptor, no label header
    label_names_only: bool = False  # -n: "Labels: name, ..." without the values
    full_pmid: bool = False  # -M: the PMID's number too
    full_indom: bool = False  # -I: the InDom's number too
    numeric_times: bool = False  # -t: values' stamps as stored (milliseconds), not ctime's

    @property
    def needs_descs(self) -> bool:
        """Whether the descriptor is looked up: for itself, or for a part of it."""
        return self.descs or self.full_pmid or self.full_indom or self.series_ids

    @property
    def needs_instances(self) -> bool:
        """Whether the instances are looked up: for themselves, or for their labels."""
        return self.instances or self.labels


@dataclass(frozen=True)
class Request:
    """A command line pmseries accepted."""

    mode: Mode
    show: Show
    #: the arguments as one string: PCP joins them with spaces when -L or -q is given,
    #: else with commas (even for a query it chose itself)
    text: str
    fast: bool = False  # -F: series metadata, not values (a query's ids; a load's metadata)
    config: str | None = None  # -c FILE
    host: str | None = None  # -h HOST
    port: str | None = None  # -p PORT
    pattern: str | None = None  # -g PATTERN
    window: str | None = None  # -w TIMESPEC
    timezone: str | None = None  # -Z TZ
