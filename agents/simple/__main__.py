import sys

from purepcp.pmda import main

from . import Simple

sys.exit(main(Simple))
