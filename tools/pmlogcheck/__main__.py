"""`python -m purepcp.tools.pmlogcheck`: the pmlogcheck command."""

import sys

from purepcp.tools.pmlogcheck.cli import main

sys.exit(main())
