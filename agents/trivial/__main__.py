import sys

from pmda import main

from . import Trivial

sys.exit(main(Trivial))
