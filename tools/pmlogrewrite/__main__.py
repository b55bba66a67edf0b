"""`python -m purepcp.tools.pmlogrewrite`: the pmlogrewrite command."""

import sys

from purepcp.tools.pmlogrewrite.cli import main

sys.exit(main())
