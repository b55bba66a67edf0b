import sys

from pmda import main

from . import Simple

sys.exit(main(Simple))
