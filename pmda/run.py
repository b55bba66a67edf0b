"""Run any agent as a daemon PMDA:
``python -m purepcp.pmda.run SPEC [-d DOMAIN] [-p | -i PORT | -u PATH]``.

SPEC names the agent as pmcd.conf's Python dso lines do (``module[:Class]`` or
``file.py[:Class]``); the rest is pmdaGetOpt's command line (pmda.serve).  This is
the command `pmda install --daemon` writes into pmcd.conf for an agent package
that has no ``__main__`` of its own.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .inproc import AgentLoadError, agent_class
from .serve import main as serve
from .serve import show_as_agent


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0].startswith("-"):
        print("usage: python -m purepcp.pmda.run module[:Class] [agent options]", file=sys.stderr)
        return 2
    try:
        cls = agent_class(args[0])
    except AgentLoadError as exc:
        print(f"purepcp.pmda.run: {exc}", file=sys.stderr)
        return 1
    if argv is None:  # the command itself: shown as PCP's agent would be
        show_as_agent(cls.name, args[1:])
    return serve(cls, args[1:])


if __name__ == "__main__":
    sys.exit(main())
