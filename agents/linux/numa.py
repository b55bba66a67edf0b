"""The linux agent: this family is being written."""

from __future__ import annotations

from .base import LinuxBase
from .records import MetricInfo

#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = ()


class Numa(LinuxBase):
    """This family\'s instance domains and refresh methods."""
