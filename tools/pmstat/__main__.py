"""`python -m purepcp.tools.pmstat`: the pmstat command."""

import sys

from purepcp.tools.pmstat.command import main

sys.exit(main())
