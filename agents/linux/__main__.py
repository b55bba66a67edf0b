"""Run the linux agent as a daemon PMDA: `python -m purepcp.agents.linux [-d DOMAIN] ...`."""

import sys

from purepcp.pmda import main

from . import Linux

sys.exit(main(Linux))
