"""pmproxy: PCP's REST API (pmwebapi(3), /pmapi/*) and OpenMetrics (/metrics) over HTTP,
in front of any pmcd, for Grafana's PCP data sources, Prometheus and curl."""

from __future__ import annotations

try:
    from importlib.metadata import version as _version

    __version__ = _version("purepcp")
except Exception:  # (run from a source tree that is not installed)
    __version__ = "0.1.0"
