"""pmieconf's two output streams as C's stdio gives them, and its pager.

Standard output is block-buffered when it is not a terminal (written in 4096-byte
blocks, and at exit), standard error is not: where both go to one file, an error
appears before earlier output still held, as with PCP's pmieconf.  On a terminal (both
ends), long answers pause for `more?` at each screenful, and errors go to standard
output as `  Error - ...`.
"""

from __future__ import annotations

import os
import sys

BLOCK = 4096
SHORT_PROMPT = "more? (h=help) "
LONG_PROMPT = "[q or n to stop, y or <space> to go on, <enter> to step] more? "


class Output:
    """stdout (buffered as stdio does), stderr, and the pager's state."""

    def __init__(self, prog: str = "pmieconf") -> None:
        self.prog = prog
        self._pending = bytearray()
        self._tty = _isatty(1)
        self.scrolling = False  # paging answers (an interactive terminal session)
        self.lines = 0  # lines printed since the last pause
        self.skip = False  # the user asked for no more of this answer
        self.rows, self.cols = _screen()

    # -- the plain streams ---------------------------------------------------------------

    def write(self, text: str) -> None:
        """Text to standard output."""
        self._pending += text.encode("latin-1", "replace")
        if self._tty:
            self.flush()
        elif len(self._pending) >= BLOCK:
            cut = len(self._pending) - len(self._pending) % BLOCK
            _write_all(1, bytes(self._pending[:cut]))
            del self._pending[:cut]

    def flush(self) -> None:
        if self._pending:
            _write_all(1, bytes(self._pending))
            self._pending.clear()

    def stderr(self, text: str) -> None:
        """Text to standard error, at once."""
        sys.stderr.flush()
        _write_all(2, text.encode("latin-1", "replace"))

    # -- paged answers and errors --------------------------------------------------------

    def reset(self) -> None:
        """A new command: its answer starts a new page."""
        self.lines, self.skip = 0, False

    def page(self, text: str) -> None:
        """Part of an answer (PCP's pprintf): pauses at a screenful when paging."""
        if self.skip:
            return
        if self.scrolling:
            if self.lines >= self.rows - 1:
                self._more()
                if self.skip:
                    return
            self.lines += text.count("\n")
        self.write(text)

    def error(self, message: str) -> None:
        """An error: on standard output when paging, else on standard error."""
        if self.skip:
            return
        if self.scrolling:
            self.write(f"  Error - {message}\n")
        else:
            self.stderr(f"{self.prog}: error - {message}\n")
        self.lines += 1

    def _more(self) -> None:
        """Ask whether to go on (a key at a time, without echo)."""
        import termios

        blank = "\r" + " " * (self.cols - 1) + "\r"
        try:
            saved = termios.tcgetattr(0)
        except termios.error as exc:
            self.stderr(f"{self.prog}: TCGETA ioctl failed: {exc.args[-1]}\n")
            raise SystemExit(1) from None
        raw = list(saved)
        raw[3] &= ~(termios.ICANON | termios.ECHO)
        raw[6] = list(raw[6])
        raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 1
        termios.tcsetattr(0, termios.TCSADRAIN, raw)
        prompt = SHORT_PROMPT
        try:
            while True:
                self.write(blank + prompt)
                self.flush()
                key = os.read(0, 1)
                if not key:
                    break
                if key in b"nq":
                    self.skip = True
                    self.lines = 0
                    break
                if key in b"y ":
                    self.lines = 0
                    break
                if key == b"\n":
                    self.lines = self.rows
                    break
                prompt = LONG_PROMPT
        finally:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
        self.write(blank)
        self.flush()


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _screen() -> tuple[int, int]:
    """The terminal's rows and columns, at least 24 by 80."""
    try:
        size = os.get_terminal_size(0)
        rows, cols = size.lines, size.columns
    except OSError:
        rows = cols = 0
    return max(rows, 24), max(cols, 80)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        try:
            done = os.write(fd, data)
        except BrokenPipeError:
            return
        data = data[done:]
