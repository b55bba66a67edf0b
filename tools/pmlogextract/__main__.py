"""`python -m purepcp.tools.pmlogextract`: the pmlogextract command."""

import sys

from purepcp.tools.pmlogextract.cli import main

sys.exit(main())
