"""Run the proc agent as a daemon PMDA: `python -m purepcp.agents.proc [-d DOMAIN] ...`."""

import sys

from purepcp.pmda import main

from . import Proc

sys.exit(main(Proc))
