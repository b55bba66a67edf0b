"""pmseries' main: the command line read, then --load or a report mode; each path
imports what it needs (-V and --help stop before the key server's client is imported)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from .options import TOOL, parse_options
from .request import Mode


def run(argv: Sequence[str]) -> int:
    for stream in (sys.stdout, sys.stderr):  # names and values may hold any bytes
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")
    request = parse_options(argv)
    if request.timezone is not None:  # as PCP's setenv: ctime's zone, and the window's times
        os.environ["TZ"] = request.timezone
    from .config import store_config

    config = store_config(request)
    if request.mode is Mode.LOAD:
        from .load import load

        return load(request, config)
    from .modes import report

    return report(request, config)


def main(argv: Sequence[str] | None = None) -> int:
    return TOOL.main(run, argv)
