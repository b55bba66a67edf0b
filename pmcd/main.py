"""The pmcd command.  The daemon itself is not built yet; for now it reports its version."""

from __future__ import annotations

import sys

from pmapi import PCP_COMPAT_VERSION, __version__


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        print(f"pmcd (pypcp) {__version__}, compatible with PCP {PCP_COMPAT_VERSION}")
        return 0
    print(
        "pmcd: the collector daemon is not built yet; only --version works in this release",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
