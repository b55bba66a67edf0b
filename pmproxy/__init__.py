"""pmproxy: PCP's REST API (pmwebapi(3), /pmapi/*) and OpenMetrics (/metrics) over HTTP,
in front of any pmcd, for Grafana's PCP data sources, Prometheus and curl."""

from __future__ import annotations

from purepcp.pmapi import __version__  # noqa: F401  (one version for every command)
