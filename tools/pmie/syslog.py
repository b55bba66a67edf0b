"""The ``-p [facility.]priority`` and ``-t tag`` options of a syslog action.

pmie reads them from the front of the action's strings when it parses the
rule (warning about what it cannot use) and keeps the rest as the message.
Option values may continue into the next string ("-t" "tag"); the scan walks
the characters of the strings as one stream, skipping empty strings.
"""

from __future__ import annotations

from collections.abc import Callable

from .tree import DEFAULT_TAG, LOG_NOTICE, SyslogOptions

_SPACE = frozenset(" \t\n\v\f\r")

PRIORITIES = {
    "alert": 1,
    "crit": 2,
    "debug": 7,
    "emerg": 0,
    "err": 3,
    "error": 3,
    "info": 6,
    "none": 0x10,
    "notice": 5,
    "panic": 0,
    "warn": 4,
    "warning": 4,
}
FACILITIES = {
    "auth": 4 << 3,
    "authpriv": 10 << 3,
    "cron": 9 << 3,
    "daemon": 3 << 3,
    "ftp": 11 << 3,
    "kern": 0,
    "lpr": 6 << 3,
    "mail": 2 << 3,
    "mark": 24 << 3,
    "news": 7 << 3,
    "security": 4 << 3,
    "syslog": 5 << 3,
    "user": 1 << 3,
    "uucp": 8 << 3,
    **{f"local{n}": (16 + n) << 3 for n in range(8)},
}


class _Cursor:
    """A character position across a list of strings (pmie's nextch)."""

    def __init__(self, args: tuple[str, ...], index: int):
        self.args, self.index, self.pos = args, index, 0

    def char(self) -> str:
        text = self.args[self.index]
        return text[self.pos] if self.pos < len(text) else ""

    def advance(self) -> None:
        self.pos += 1
        while self.pos >= len(self.args[self.index]):
            if self.index + 1 >= len(self.args):
                self.pos = len(self.args[self.index])
                return
            self.index += 1
            self.pos = 0

    def word(self, warn: Callable[[str], None], what: str) -> str:
        """The option value here, up to white space in the same string."""
        text = self.args[self.index]
        end = self.pos + 1
        while end < len(text) and text[end] not in _SPACE:
            end += 1
        if end < len(text):
            warn(f"Ignoring extra text ({text[end:]}) after {what} in syslog action")
        return text[self.pos : end]


_MISSING = {
    "p": "Missing [facility.]priority after -p in syslog action",
    "t": "Missing tag after -t in syslog action",
}


def _decode(name: str, table: dict[str, int]) -> int:
    if name[:1].isdigit():
        digits = len(name) - len(name.lstrip("0123456789"))
        return int(name[:digits])
    return table.get(name.lower(), -1)


def _encode(spec: str, warn: Callable[[str], None]) -> int:
    facility = 0
    if "." in spec:
        name, _, spec = spec.partition(".")
        facility = _decode(name, FACILITIES)
        if facility < 0:
            warn(f"Ignoring unknown facility ({name}) for -p in syslog action")
            facility = 0
    level = _decode(spec, PRIORITIES)
    if level < 0:
        warn(f"Ignoring unknown priority ({spec}) for -p in syslog action")
        level = LOG_NOTICE
    return (level & 0x07) | (facility & 0x03F8)


def syslog_options(
    args: tuple[str, ...], warn: Callable[[str], None]
) -> tuple[SyslogOptions, tuple[str, ...]]:
    """Split leading -p/-t options from the message strings."""
    priority, tag = -1, None
    index = 0
    while index < len(args) and args[index].startswith("-"):
        cur = _Cursor(args, index)
        cur.advance()
        flag = cur.char()
        if not ((flag == "p" and priority == -1) or (flag == "t" and tag is None)):
            break
        cur.advance()
        while cur.char() in _SPACE and cur.char():
            cur.advance()
        if cur.char() == "":
            warn(_MISSING[flag])
        elif flag == "p":
            priority = _encode(cur.word(warn, "-p pri"), warn)
        else:
            tag = cur.word(warn, "-t tag")
        index = cur.index + 1
    options = SyslogOptions(
        LOG_NOTICE if priority < 0 else priority, DEFAULT_TAG if tag is None else tag
    )
    return options, args[index:]
