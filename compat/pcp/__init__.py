"""PCP's Python API (``from pcp import pmapi, pmda, pmi, pmcc``) on purepcp's pure-Python
core: scripts, tools and agents written for PCP's bindings run without libpcp."""

from . import cmodules as _cmodules

_cmodules.install()
