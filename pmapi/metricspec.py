"""pmParseMetricSpec: a metric named with its own source and instances.

``[host:]metric[[inst,...]]``, ``archive/metric`` or ``@:metric`` (a local context), as
pmval and the other tools that take one metric on their command line read it; a spec
libpcp rejects gives its two-line message (the spec, a caret under the fault, the reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MetricSpec", "SpecError", "parse_metric_spec"]


@dataclass
class MetricSpec:
    metric: str
    source: str | None = None  # the host or archive the spec names, None for the default
    kind: str = "host"  # "host", "archive" or "local" (the "@:" prefix)
    insts: list[str] = field(default_factory=list)


class SpecError(ValueError):
    """A spec pmParseMetricSpec rejects; errmsg is its two lines (spec, caret, reason)."""

    def __init__(self, spec: str, offset: int, reason: str) -> None:
        super().__init__(reason)
        pad = "".join(" " if "!" <= c <= "~" else c for c in spec[:offset])
        self.errmsg = f"{spec}\n{pad}^ -- {reason}\n"


def parse_metric_spec(spec: str) -> MetricSpec:
    """Split SPEC as pmParseMetricSpec does; SpecError with libpcp's message if it cannot."""
    n = len(spec)
    i = 0
    while i < n and spec[i].isspace():
        i += 1
    start = i
    source, kind = None, "host"
    bracket = spec.find("[", start)
    mark = bracket if bracket >= 0 else n - 1
    while mark >= start:
        c = spec[mark]
        if c in ":/":
            end = mark
            while end > start and spec[end - 1].isspace():
                end -= 1
            if end == start:
                what = "host name expected" if c == ":" else "archive name expected"
                raise SpecError(spec, start, what)
            source = _unescape(spec[start:end])
            kind = "archive" if c == "/" else ("local" if spec[start:end] == "@" else "host")
            i = mark + 1
            break
        mark -= 1
    while i < n and spec[i].isspace():
        i += 1
    m_start = i
    while i < n and not spec[i].isspace() and spec[i] != "[":
        if spec[i] in "],":
            raise SpecError(spec, i, "unexpected character in metric name")
        if spec[i] == "\\" and i + 1 < n:
            i += 1
        i += 1
    if i == m_start:
        raise SpecError(spec, m_start, "performance metric name expected")
    metric = _unescape(spec[m_start:i])
    while i < n and spec[i].isspace():
        i += 1
    insts: list[str] = []
    if i < n and spec[i] == "[":
        i += 1
        while i < n and spec[i].isspace():
            i += 1
        i_start, quoted = i, False
        while True:
            if i >= n:
                reason = 'closing " and ] expected' if quoted else "closing ] expected"
                raise SpecError(spec, i, reason)
            if spec[i] == "\\" and i + 1 < n:
                i += 1
            elif spec[i] == '"':
                quoted = not quoted
            elif not quoted and spec[i] == "]":
                break
            i += 1
        insts = _instance_list(spec[i_start:i])
        i += 1
    while i < n and spec[i].isspace():
        i += 1
    if i < n:
        raise SpecError(spec, i, "unexpected extra characters")
    return MetricSpec(metric, source, kind, insts)


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        out.append(text[i])
        i += 1
    return "".join(out)


def _instance_list(body: str) -> list[str]:
    """The names between a spec's brackets: comma or blank separated, "quoted" allowed."""
    names, i, n = [], 0, len(body)
    while i < n:
        name = []
        if body[i] == '"':
            i += 1
            while i < n and body[i] != '"':
                if body[i] == "\\":
                    i += 1
                if i < n:
                    name.append(body[i])
                    i += 1
            i += 1
        else:
            while i < n and not body[i].isspace() and body[i] != ",":
                if body[i] == "\\":
                    i += 1
                if i < n:
                    name.append(body[i])
                    i += 1
        names.append("".join(name))
        while i < n and (body[i].isspace() or body[i] == ","):
            i += 1
    return names
