import sys

from purepcp.pmda import main

from . import Trivial

sys.exit(main(Trivial))
