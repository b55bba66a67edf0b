"""`python -m purepcp.tools.pmieconf`: the pmieconf command."""

import sys

from purepcp.tools.pmieconf.cli import main

sys.exit(main())
