"""python -m purepcp.tools.pmie: pmie(1)."""

import sys

from .cli import main

sys.exit(main())
