"""`python -m purepcp.tools.pmdumplog`: the pmdumplog command."""

import sys

from purepcp.tools.pmdumplog.cli import main

sys.exit(main())
