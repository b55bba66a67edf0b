"""PCP's QA archives (qa/archives, qa/badarchives), read where Debian's pcp-testsuite
package puts them; PCP's QA data is GPL, so it is never copied here (.ci/run unpacks the
package)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: where PCP's QA archives are: $PCP_QA_ARCHIVES, the pcp-testsuite package installed, or
#: its files unpacked under /opt/pcp-testsuite (.ci/run does that, without installing it)
QA_DIRS = [
    *([Path(os.environ["PCP_QA_ARCHIVES"])] if os.environ.get("PCP_QA_ARCHIVES") else []),
    Path("/var/lib/pcp/testsuite"),
    Path("/opt/pcp-testsuite/var/lib/pcp/testsuite"),
]


def qa(name: str) -> str:
    """PCP's QA archive NAME (from qa/archives or qa/badarchives); skips, saying why,
    when PCP's QA archives are not on this machine."""
    for top in QA_DIRS:
        for sub in ("archives", "badarchives"):
            if any((top / sub / f"{name}.meta{z}").exists() for z in ("", ".xz")):
                return str(top / sub / name)
    pytest.skip(
        f"PCP's QA archive {name} is not here: install or unpack Debian's pcp-testsuite "
        "package (or set PCP_QA_ARCHIVES to its testsuite directory)"
    )


def qa_dir(name: str) -> str:
    """PCP's QA directory of archives NAME (under qa/archives): a multi-archive source;
    skips, saying why, when PCP's QA archives are not on this machine."""
    for top in QA_DIRS:
        if (top / "archives" / name).is_dir():
            return str(top / "archives" / name)
    pytest.skip(
        f"PCP's QA archives {name} are not here: install or unpack Debian's pcp-testsuite "
        "package (or set PCP_QA_ARCHIVES to its testsuite directory)"
    )
