"""pmloglabel: check, repair and print the labels of a PCP archive's files, as PCP 6's.

Every file of an archive starts with a label (magic and version, logger PID, start
time, volume number, host, timezone).  pmloglabel loads each one as libpcp does,
reports the ones libpcp would refuse and those that disagree with the first good
("golden") one, then, when asked to change anything (-h, -p, -s, -V, -Z), writes the
golden label, changed, over every file's label; -l and -L print it.

The parts: cli (main: one run), options (the command line), labels (loading and
checking a file's label as libpcp does, with its -Dlog trace) and rewrite (writing the
labels back).  Importing this package imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmloglabel(1) on ARGV (else sys.argv): its exit status."""
    from .cli import main as run_main

    return run_main(argv)


__all__ = ["main"]
