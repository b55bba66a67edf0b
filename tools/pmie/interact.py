"""pmie -d: the interactive debugger, as pmie's interact() runs it.  Commands are read
from standard input, one a line, by their first character: f (load rules), l and v
(list rules, and the subexpressions of their bindings), r (run), S and T (the run's
start and length), h or ? (the menu), q (quit)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from purepcp.pmapi import PCP_COMPAT_VERSION

from .options import PROG

if TYPE_CHECKING:
    from .replay import Engine

PROMPT = "pmie> "
MENU = """\
pmie debugger commands

  f [file-name]      - load expressions from given file or stdin
  l [expr-name]      - list named expression or all expressions
  r [interval]       - run for given or default interval
  S time-spec        - set start time for run
  T time-spec        - set default interval for run command
  v [expr-name]      - print subexpression used for %h, %i and
                       %v bindings
  h or ?             - print this menu of commands
  q                  - quit

"""
#: the longest command line read (longer ones are read on as the next command)
LINE_LENGTH = 255


class Debugger:
    """The debugger's state: the engine its rules are bound in, and the run's window."""

    def __init__(self, engine: Engine, load) -> None:
        from .check import Program

        self.engine = engine
        self.load_text = load  # (file name or None) -> (the rules' text, their source name)
        self.program = Program()
        self.status = 0  # pmie -C's, of the last file loaded
        feed = engine.feed
        self.start = feed.start
        self.run_time = feed.stop - feed.start  # (the whole window, until T says)

    def loop(self, lines) -> None:
        out = sys.stdout
        out.write(f"Performance Co-Pilot Inference Engine (pmie), Version {PCP_COMPAT_VERSION}"
                  f"\n\n{MENU}{PROMPT}")  # fmt: skip
        out.flush()
        for line in lines:
            command, arg = line[:1], _argument(line[1:])
            if command == "q":
                return
            self.command(command, arg)
            out.write(PROMPT)
            out.flush()

    def command(self, command: str, arg: str | None) -> None:
        actions = {"f": self.load, "l": self.list, "v": self.sublist, "r": self.run,
                   "S": self.set_start, "T": self.set_length}  # fmt: skip
        action = actions.get(command)
        if action is None:
            sys.stdout.write(MENU)
            return
        action(arg)

    def load(self, name: str | None) -> None:
        from . import operators as ops
        from .check import check

        text, source = self.load_text(name)
        if not ops.CLOCK.perf.config:
            ops.CLOCK.perf.config = source
        result = check(text, name, self.program)
        for message in result.messages:
            sys.stderr.write(message if message.endswith("\n") else message + "\n")
        self.engine.bind(result, name)
        self.status = 1 if result.status or self.engine.refused else 0

    def _rules(self) -> list[tuple[str, object]]:
        return [rule for t in self.engine.tasks for rule in t.rules]

    def _show(self, name: str | None, show, quote: str) -> None:
        rules = self._rules()
        if name is None:
            sys.stdout.write("".join(show(n, x) for n, x in rules))
            return
        found = next((x for n, x in rules if n == name), None)
        if found is None:
            sys.stdout.write(f"{PROG}: error - rule {quote}{name}{quote} not defined\n")
            return
        sys.stdout.write(show(name, found))

    def list(self, name: str | None) -> None:
        from .listing import show_syntax

        self._show(name, show_syntax, '"')

    def sublist(self, name: str | None) -> None:
        from .listing import show_subsyntax

        self._show(name, show_subsyntax, "'")

    def run(self, arg: str | None) -> None:
        import time

        if arg is not None:
            length = _interval(arg)
            if length is None:
                return
            self.run_time = length
        feed = self.engine.feed
        if feed.live:  # (from now, the values known so far forgotten)
            self._invalidate()
            self.start = max(self.start, time.time())
        sys.stdout.flush()
        self.engine.run((self.start, self.start + self.run_time))

    def set_start(self, arg: str | None) -> None:
        from purepcp.pmapi.timewindow import TimeParseError, parse_time
        from purepcp.pmapi.values import Timestamp

        if arg is None:
            sys.stderr.write(f"{PROG}: error - argument required\n")
            return
        feed = self.engine.feed
        start = Timestamp.from_ns(round(self.start * 1e9))
        end = None if feed.live else Timestamp.from_ns(round(feed.last * 1e9))
        try:
            at = parse_time(arg, start, end, tz=feed.zone)
        except TimeParseError as exc:
            sys.stderr.write(exc.errmsg if exc.errmsg.endswith("\n") else exc.errmsg + "\n")
            return
        self.start = at // 1000 / 1e6  # (a timeval's whole microseconds)
        if not feed.live:
            self._invalidate()

    def _invalidate(self) -> None:
        """invalidate(): every rule's values made unknown."""
        from .live import clobber

        for t in self.engine.tasks:
            for _, node in t.rules:
                clobber(node)

    def set_length(self, arg: str | None) -> None:
        if arg is None:
            sys.stderr.write(f"{PROG}: error - argument required\n")
            return
        length = _interval(arg)
        if length is not None:
            self.run_time = length


def _interval(text: str) -> float | None:
    """pmParseInterval's seconds, or None after its message."""
    from purepcp.pmapi.timewindow import TimeParseError, parse_interval

    try:
        return parse_interval(text)
    except TimeParseError as exc:
        sys.stderr.write(exc.errmsg if exc.errmsg.endswith("\n") else exc.errmsg + "\n")
        return None


def _argument(text: str) -> str | None:
    """scanArg: the rest of the line without the blanks around it (None: nothing)."""
    text = text.strip(" \t\n\r\f\v")
    return text or None


def command_lines(stream):
    """readLine's lines: blanks before a command skipped, each line cut at LINE_LENGTH
    characters (the one after them lost, the rest read as the next line), and a last
    line without its newline never run (readLine reports the end of input instead)."""
    pending = ""
    while True:
        pending = pending.lstrip(" \t\n\r\f\v")
        while not pending:
            more = stream.readline()
            if not more:
                return
            pending = more.lstrip(" \t\n\r\f\v")
        while "\n" not in pending and len(pending) <= LINE_LENGTH:
            more = stream.readline()
            if not more:
                return
            pending += more
        line, sep, rest = pending.partition("\n")
        if len(line) > LINE_LENGTH:
            line, rest = line[:LINE_LENGTH], line[LINE_LENGTH + 1 :] + sep + rest
        pending = rest
        yield line
