"""What pmproxy's web contexts know and answer with: a metric and an instance domain as a
context learns them (caching what libpcp_web caches), a fetch's values, a /metrics
sample, and the error a call fails with (pmproxy's text and HTTP status)."""

from __future__ import annotations

from dataclasses import dataclass, field

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.labels import LabelSet

__all__ = ["FetchedMetric", "InDom", "Metric", "ScrapeSample", "WebError"]


class WebError(Exception):
    """A call that fails: MESSAGE is pmproxy's text, STATUS the HTTP status it gives,
    CONTEXT the context number the answer names (None: the one the request named)."""

    def __init__(self, message: str, status: int = 400, context: int | str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.context = context


@dataclass(eq=False)
class Metric:
    """A metric as a web context knows it: descriptor, every name, and lazily its labels
    and help text."""

    desc: Desc
    names: list[str]
    all_names: bool = False  # whether names holds every name pmNameAll gives
    item_labels: LabelSet | None = None
    item_labels_read: bool = False
    oneline: str | None = None
    oneline_read: bool = False
    helptext: str | None = None
    text_read: bool = False

    @property
    def pmid(self) -> int:
        return self.desc.pmid


@dataclass(eq=False)
class InDom:
    """An instance domain as a web context knows it: names, label sets, help text."""

    indom: int
    names: dict[int, str] = field(default_factory=dict)
    labels: LabelSet | None = None
    inst_labels: dict[int, LabelSet] = field(default_factory=dict)
    labels_read: bool = False
    oneline: str | None = None
    helptext: str | None = None
    text_read: bool = False


@dataclass(frozen=True)
class FetchedMetric:
    """One metric name's values in a fetch: (instance or None, JSON value text) pairs."""

    pmid: int
    name: str
    values: tuple[tuple[int | None, str], ...]


@dataclass(frozen=True)
class ScrapeSample:
    """One line of /metrics: the metric, its labels, its value text."""

    metric: Metric
    name: str
    labels: dict[str, str]
    value: str
