"""Run the linux agent as a daemon PMDA: `python -m agents.linux [-d DOMAIN] [-l LOG] ...`."""

import sys

from pmda import main

from . import Linux

sys.exit(main(Linux))
