"""pmGetContextHostName: the name of the host a context's metrics come from."""

from __future__ import annotations

import socket
from typing import Any

from .errors import PMError
from .types import ValFmt


def context_hostname(ctx: Any) -> str:
    """pmcd.hostname from a pmcd, an archive's label, else this host."""
    if ctx.kind == "archive":
        return ctx.hostname
    if ctx.kind != "host":
        return socket.gethostname()
    try:
        pmid = ctx.lookup_name("pmcd.hostname")
        vset = ctx.fetch([pmid]).result.vsets[0]
        if vset.numval > 0 and vset.valfmt != ValFmt.PM_VAL_INSITU:
            value = vset.values[0]
            return value if isinstance(value, str) else value.split(b"\0", 1)[0].decode()
    except PMError:
        pass
    spec = getattr(ctx.source, "spec", None)
    host = getattr(spec, "host", None)
    if host is None or host.startswith("localhost"):
        return socket.gethostname()
    return host
