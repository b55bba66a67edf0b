"""`python -m purepcp.tools.pmlogconf`: the pmlogconf command."""

import sys

from purepcp.tools.pmlogconf.command import main

sys.exit(main())
