"""`python -m purepcp.tools.pmlc`: the pmlc command."""

import sys

from purepcp.tools.pmlc.cli import main

sys.exit(main())
