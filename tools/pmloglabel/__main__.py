"""`python -m purepcp.tools.pmloglabel`: the pmloglabel command."""

import sys

from purepcp.tools.pmloglabel.cli import main

sys.exit(main())
