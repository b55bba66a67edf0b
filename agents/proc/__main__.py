"""Run the proc agent as a daemon PMDA: `python -m purepcp_agents.proc [-d DOMAIN] ...`."""

import sys

from pmda import main

from . import Proc

sys.exit(main(Proc))
