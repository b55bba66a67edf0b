"""The text of pmproxy's ``/metrics``: PCP metrics in the OpenMetrics exposition format.

Per metric: a ``# PCP5`` line with its name, PMID, type, instance domain, semantics and
units, ``# HELP`` with its one-line help, ``# TYPE`` (gauge for instantaneous and
discrete metrics, counter for counters), then a sample per value, the metric's labels
and an instance's ``instname`` and ``instid`` as labels.  Only numeric metrics are
written; names have their dots made underscores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from purepcp.pmapi.ids import pmIDStr, pmInDomStr
from purepcp.pmapi.labels import LabelSet
from purepcp.pmapi.types import PMSem, pmSemStr

from .webtext import type_name, units_text

if TYPE_CHECKING:
    from .webgroup import WebContext


def metric_name(name: str, compat: bool = False) -> str:
    """open_metrics_name: dots become underscores (colons in the pre-PCP-5 form)."""
    return name.replace(".", ":" if compat else "_")


def quote_value(value: str) -> str:
    """A label value in double quotes, escaped as the exposition format reads it."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def scrape_text(web: WebContext, names: list[str], times: bool, compat: bool) -> str:
    """The /metrics lines for NAMES (one batch of a namespace walk)."""
    lines: list[str] = []
    stamp_ms = ""
    current = None
    samples = list(web.scrape(names))
    if times:
        stamp = web.last_stamp
        stamp_ms = f" {stamp.sec * 1000 + stamp.nsec // 1_000_000}"
    for sample in samples:
        metric = sample.metric
        oname = metric_name(sample.name, compat)
        if current != (metric.pmid, sample.name):
            current = (metric.pmid, sample.name)
            desc = metric.desc
            sem = pmSemStr(desc.sem)
            if compat:
                lines.append(f"# PCP {sample.name} {sem} {units_text(desc)}\n")
            else:
                lines.append(
                    f"# PCP5 {sample.name} {pmIDStr(desc.pmid)} {type_name(desc.type)} "
                    f"{pmInDomStr(desc.indom)} {sem} {units_text(desc)}\n"
                )
            if metric.oneline is not None:
                lines.append(f"# HELP {oname} {metric.oneline}\n")
            kind = (
                "gauge" if desc.sem in (PMSem.PM_SEM_INSTANT, PMSem.PM_SEM_DISCRETE) else "counter"
            )
            lines.append(f"# TYPE {oname} {kind}\n")
        if sample.labels:
            labels = ",".join(f"{k}={quote_value(v)}" for k, v in sample.labels.items())
            lines.append(f"{oname}{{{labels}}} {sample.value}{stamp_ms}\n")
        else:
            lines.append(f"{oname} {sample.value}{stamp_ms}\n")
    return "".join(lines)


def open_labels(
    sets: Sequence[LabelSet | None], inst: int | None = None, iname: str | None = None
) -> dict[str, str]:
    """open_metrics_labels: every label of SETS (later ones win), values without their
    JSON quotes; then instname and instid for an instance, unless a label gave them."""
    out: dict[str, str] = {}
    for lset in sets:
        if lset is None:
            continue
        for label in lset.labels:
            value = lset.label_value(label)
            if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
                value = value[1:-1]
            out[lset.label_name(label)] = value
    if iname is not None and "instname" not in out:
        out["instname"] = iname
    if inst is not None and "instid" not in out:
        out["instid"] = str(inst)
    return out
