"""pmval's main loop, once for every source: a first sample (for a counter, only the
previous value of its first rate), then one a sample; a sample without values starts
over from a first one.  The source fetches and makes the rows; this says which."""

from __future__ import annotations

from enum import Enum
from typing import Protocol


class Outcome(Enum):
    """What a fetch gave pmval's loop (rows for what it lacked are already made)."""

    OK = "ok"  # values
    NONE = "none"  # no values, or the metric's error
    MARK = "mark"  # -U: a <mark> record, logging suspended: none, and reporting starts over
    END = "end"  # no more: the archive's end, the time window's, the source gone


class Samples(Protocol):
    """A source of pmval's samples, and of the rows the loop asks for."""

    @property
    def rates(self) -> bool:
        """Whether a row needs the sample before (a counter's rate)."""
        ...

    def fetch(self) -> Outcome: ...

    def labels(self) -> None:
        """The instance names over the columns (where the metric has instances)."""

    def report(self) -> None:
        """The last sample's row (its values, rates or event records)."""

    def no_values(self) -> None:
        """A "No values available" row for the last sample (a restarted rate's first)."""

    def relabel(self) -> None:
        """The instance names again, if the last sample has one not named yet."""

    def pause(self) -> None:
        """Wait for the next sample (a live source's interval, or -d's)."""

    def close(self) -> None:
        """Every row made is written."""


def walk(source: Samples, samples: int) -> None:
    """SAMPLES samples from SOURCE (-1: until it ends), as pmval's main loop takes them."""
    fetch, report, pause, relabel = source.fetch, source.report, source.pause, source.relabel
    ok, end, mark = Outcome.OK, Outcome.END, Outcome.MARK
    forever = samples < 0
    have_prev = no_values = reporting = False
    while forever or samples > 0:
        samples -= 1
        if not have_prev:
            got = fetch()
            if got is end:
                break
            if got is ok:
                have_prev = True
                source.labels()
                if not source.rates:
                    report()
                    reporting = True
                    continue
                if no_values or reporting:
                    source.no_values()
                no_values = False
            else:
                no_values = True
                reporting = reporting and got is not mark
        pause()
        if not have_prev:
            continue
        got = fetch()
        if got is end:
            break
        if got is not ok:
            have_prev = False
            reporting = reporting and got is not mark
            continue
        relabel()
        report()
        reporting = True
    source.close()
