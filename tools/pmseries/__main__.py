"""`python -m purepcp.tools.pmseries`: the pmseries command."""

import sys

from purepcp.tools.pmseries.cli import main

sys.exit(main())
