"""What `pmseries --load` is asked to load: an archive path, or PCP's form
`{source.path: "PATH"[, metric.name: "NAME" ...]}[start: T, finish: T]`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from purepcp.pmapi.cnumbers import cstring

from .parse import QuerySyntaxError, parse_window
from .window import WindowError, resolve_window

#: the qualifier names that name the archive (PCP accepts all of these)
SOURCE_NAMES = {
    "source.path", "source.name", "context.path", "context.name",
    "s.path", "s.name", "c.path", "c.name",
}  # fmt: skip
METRIC_NAMES = {"metric.name", "m.name"}
_QUAL = re.compile(r'\s*([A-Za-z_][\w.]*)\s*(?:==|:|=)\s*"((?:[^"\\]|\\.)*)"\s*')


class LoadSpecError(ValueError):
    """A load request that names no archive, or cannot be read."""


@dataclass(frozen=True)
class LoadSpec:
    path: str
    metrics: tuple[str, ...] = ()
    start_ns: int | None = None
    finish_ns: int | None = None


def load_spec(text: str) -> LoadSpec:
    """TEXT as pmseries --load reads it; a bare path stands for {source.path: PATH}.
    Text after a NUL is not read (PCP reads a C string)."""
    text = cstring(text).strip()
    if not text.startswith("{"):
        if not text:
            raise LoadSpecError("found no context to load")
        return LoadSpec(text)
    close = text.find("}")
    if close < 0:
        raise LoadSpecError(f"cannot parse load request {text!r}: no closing brace")
    body, rest = text[1:close], text[close + 1 :].strip()
    path = None
    metrics: list[str] = []
    for part in _split(body):
        m = _QUAL.fullmatch(part)
        if not m:
            raise LoadSpecError(f"cannot parse load request qualifier {part.strip()!r}")
        name, value = m.group(1), re.sub(r"\\(.)", r"\1", m.group(2))
        if name in SOURCE_NAMES:
            path = value
        elif name in METRIC_NAMES:
            metrics.append(value)
        else:
            raise LoadSpecError(f"cannot load by {name!r}: only source paths and metric names")
    if path is None:
        raise LoadSpecError("found no context to load")
    start, finish = _window(rest)
    return LoadSpec(os.path.expanduser(path), tuple(metrics), start, finish)


def _split(body: str) -> list[str]:
    parts, depth, quoted, at = [], 0, False, 0
    for i, c in enumerate(body):
        if c == '"' and (i == 0 or body[i - 1] != "\\"):
            quoted = not quoted
        elif c == "," and not quoted and depth == 0:
            parts.append(body[at:i])
            at = i + 1
    parts.append(body[at:])
    return [p for p in parts if p.strip()]


def _window(rest: str) -> tuple[int | None, int | None]:
    """The records a load takes: the window's start and finish, read as a query's are
    (seconds since the epoch, or PCP's time forms)."""
    if not rest:
        return None, None
    try:
        timing = resolve_window(parse_window(rest))
    except (QuerySyntaxError, WindowError) as exc:
        message = getattr(exc, "message", str(exc)).strip().splitlines()[0]
        raise LoadSpecError(f"cannot parse load window {rest!r}: {message}") from None
    return timing.start or None, timing.end or None
