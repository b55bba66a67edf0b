"""`python -m purepcp.tools.pmlogsummary`: the pmlogsummary command."""

import sys

from purepcp.tools.pmlogsummary.cli import main

sys.exit(main())
