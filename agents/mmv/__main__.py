import sys

from purepcp.pmda import main

from . import MMV

sys.exit(main(MMV))
