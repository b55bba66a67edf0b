"""What pmlogcheck's passes share: the options, each file kind's state, the golden label
(the first good one pass 0 saw), the record counts, and stderr as pmlogcheck writes it."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from purepcp.pmapi.values import Timestamp

if TYPE_CHECKING:
    from .options import Options


class Sts(Enum):
    """A pass's outcome (logcheck.h's STS_*)."""

    OK = 0
    WARNING = -1
    FATAL = -2


class FileState(Enum):
    """What pass 0 made of a kind of file (logcheck.h's STATE_*)."""

    OK = 1
    MISSING = 2
    BAD = 3


@dataclass
class Golden:
    """The first label pass 0 loaded cleanly: its file, magic and start time."""

    fname: str
    magic: int
    start: Timestamp

    @property
    def version(self) -> int:
        return self.magic & 0xFF


@dataclass
class Run:
    """One pmlogcheck run's shared state."""

    o: Options
    index_state: FileState = FileState.MISSING
    meta_state: FileState = FileState.MISSING
    log_state: FileState = FileState.MISSING
    golden: Golden | None = None
    result_count: int = 0
    mark_count: int = 0
    names: dict[int, list[str]] = field(default_factory=dict)
    stdout: list[str] = field(default_factory=list)  # held, as C's buffered stdout holds it

    def flush_stdout(self) -> None:
        """Write what stdout holds (C's fflush, or its exit)."""
        if self.stdout:
            sys.stdout.write("".join(self.stdout))
            self.stdout.clear()
        sys.stdout.flush()

    @property
    def vflag(self) -> int:
        return self.o.verbose

    @property
    def golden_version(self) -> int:
        return self.golden.version if self.golden is not None else 0

    @property
    def golden_start(self) -> Timestamp:
        return self.golden.start if self.golden is not None else Timestamp(0, 0)

    def debug(self, name: str) -> bool:
        return name in self.o.debug or "all" in self.o.debug


def err(text: str) -> None:
    """Write TEXT to stderr (line-buffered there, as pmlogcheck sets it)."""
    sys.stderr.write(text)
    if text.endswith("\n"):
        sys.stderr.flush()
