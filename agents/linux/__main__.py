"""Run the linux agent as a daemon PMDA: `python -m purepcp_agents.linux [-d DOMAIN] ...`."""

import sys

from pmda import main

from . import Linux

sys.exit(main(Linux))
