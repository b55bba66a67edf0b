"""`python -m purepcp.tools.pmval`: the pmval command."""

import sys

from purepcp.tools.pmval.command import main

sys.exit(main())
