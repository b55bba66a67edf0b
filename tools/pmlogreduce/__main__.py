"""`python -m purepcp.tools.pmlogreduce`: the pmlogreduce command."""

import sys

from purepcp.tools.pmlogreduce.cli import main

sys.exit(main())
