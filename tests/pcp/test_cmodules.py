"""PCP's C extension names (cpmda, cpmi, cmmv): importable once ``pcp`` is, holding what
PCP's hold, and never installed as top-level names of their own."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from tests.support.pcp_bindings import SYSTEM_PYTHON, require_pcp_bindings

#: prints each module's upper-case names and their values as JSON
DUMP = """
import json, sys
import {first}
import cpmda, cpmi, cmmv
print(json.dumps({{m.__spec__.name: {{n: getattr(m, n) for n in dir(m) if n.isupper()}}
                  for m in (cpmda, cpmi, cmmv)}}))
print(json.dumps({{str(k): v for k, v in cpmi.pmiErrSymDict.items()}}))
"""


def _dump(python: str, first: str, where) -> list:
    done = subprocess.run([python, "-c", DUMP.format(first=first)], cwd=where,
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.interop
def test_names_and_values_are_pcps(tmp_path):
    """Every constant of PCP's cpmda, cpmi and cmmv, with its value, and cpmi's
    pmiErrSymDict, as PCP's C modules hold them."""
    require_pcp_bindings()
    assert _dump(sys.executable, "pcp", tmp_path) == _dump(SYSTEM_PYTHON, "pcp", tmp_path)


def test_not_importable_before_pcp(tmp_path):
    """The project installs no top-level cpmda, cpmi or cmmv: without ``import pcp`` first
    they are not there (so they cannot hide PCP's own C modules from PCP's Python)."""
    for name in ("cpmda", "cpmi", "cmmv"):
        done = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 1
        assert f"ModuleNotFoundError: No module named '{name}'" in done.stderr


def test_same_module_objects_as_pcps_submodules():
    """cpmda is pcp.pmda's agent state (a refresh asked through one is seen through the
    other); cpmi's numbers are pcp.pmi's."""
    import pcp.pmda
    import pcp.pmi

    cpmda = importlib.import_module("cpmda")  # (after pcp, which a sorted import would undo)
    cpmi = importlib.import_module("cpmi")

    assert sys.modules["cpmda"] is sys.modules["pcp.pmda_cpmda"]
    assert cpmda.state is sys.modules["pcp.pmda_cpmda"].state
    assert cpmi.PMI_ERR_DUPTEXT == pcp.pmi.PMI_ERR_DUPTEXT == -20018
    assert cpmi.pmiErrSymDict is pcp.pmi.pmiErrSymDict


def test_other_names_left_alone():
    """The finder answers only its three names."""
    with pytest.raises(ModuleNotFoundError):
        __import__("cpmapi_nonexistent")
