"""What the tools say when configparser refuses an INI-style file (pmproxy.conf,
pmrep.conf): one line naming the file, the line and what is wrong with it."""

from __future__ import annotations

import configparser


def config_error(path: str, exc: configparser.Error) -> str:
    """PATH:LINE: what configparser could not read there (its own text names neither)."""
    if isinstance(exc, configparser.MissingSectionHeaderError):
        return f"{path}:{exc.lineno}: no [section] before {exc.line.strip()!r}"
    if isinstance(exc, configparser.ParsingError) and exc.errors:
        lineno = exc.errors[0][0]  # (its line is kept as a repr: read it again)
        with open(path, errors="replace") as f:
            line = f.read().splitlines()[lineno - 1]
        return f"{path}:{lineno}: not a 'name = value' line: {line.strip()!r}"
    lineno = getattr(exc, "lineno", None)
    where = f"{path}:{lineno}" if lineno else path
    return f"{where}: {str(exc).splitlines()[0]}"
