"""PCP's C extension modules ``cpmda``, ``cpmi`` and ``cmmv`` as names a script can import
once this ``pcp`` package is imported.

PCP's bindings install them at the top level, and some of PCP's scripts import them
directly (pmrep and pcp2csv: ``from cpmi import PMI_ERR_DUPINSTNAME``; the zswap,
openmetrics and rabbitmq agents: ``from cpmda import PMDA_FETCH_NOVALUES``), always after
``from pcp import ...``.  purepcp installs no such top-level names (only ``pcp`` and
``cpmapi``); instead, importing ``pcp`` puts a finder first on ``sys.meta_path`` that
answers these three names with the modules of this package that hold their contents, the
same module objects ``pcp.pmda``, ``pcp.pmi`` and ``pcp.mmv`` use, so that agent state set
through one is seen through the other.  Any other name is left to the usual finders.
"""

from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType

#: each C extension's name, and the module of this package that stands for it
MODULES = {
    "cpmda": "pcp.pmda_cpmda",
    "cpmi": "pcp.pmi_cpmi",
    "cmmv": "pcp.mmv_cmmv",
}


class _Alias:
    """Finds the three names and loads each as the module it stands for (a meta path
    finder and loader by protocol: importlib.abc costs 18 ms to import)."""

    def find_spec(self, fullname, path=None, target=None):
        if path is None and fullname in MODULES:
            return ModuleSpec(fullname, self, origin=MODULES[fullname])
        return None

    def create_module(self, spec) -> ModuleType:
        return importlib.import_module(MODULES[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was made when it was first imported."""


def install() -> None:
    """Put the finder first on sys.meta_path, once."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
