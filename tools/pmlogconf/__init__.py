"""pmlogconf: create or update a pmlogger configuration from group files, each group
probed against a pmcd to decide whether its metrics are logged, as PCP's pmlogconf(1)
does.

The parts: options (the command line), text (the files' small text rules), groups
(group files, their probe and force rules, the states groups end in), probe (the
pmcd's answers), config (the configuration file written and read back) and command
(the run, with its questions).  Importing this package imports none of them.  Our own
group files, for the metrics our agents serve, are in groupfiles/ (package data), used
when PCP's ($PCP_VAR_DIR/config/pmlogconf) are not installed.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """pmlogconf(1) on ARGV (else sys.argv): its exit status."""
    from .command import main as run_main

    return run_main(argv)


__all__ = ["main"]
