"""`python -m purepcp.pmda.cli.dbpmda`: the dbpmda command."""

import sys

from .main import main

sys.exit(main())
