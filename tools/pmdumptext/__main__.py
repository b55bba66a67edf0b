"""`python -m purepcp.tools.pmdumptext`: the pmdumptext command."""

import sys

from purepcp.tools.pmdumptext.command import main

sys.exit(main())
