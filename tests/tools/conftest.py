"""What the tools' tests share: matplotlib's font cache kept out of the user's home."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(scope="module", autouse=True)
def _private_matplotlib_cache(tmp_path_factory):
    """matplotlib's font cache goes to a directory of the test's, not the user's home."""
    with pytest.MonkeyPatch.context() as mp:
        if "matplotlib.font_manager" not in sys.modules:
            mp.setenv("MPLCONFIGDIR", str(tmp_path_factory.mktemp("mplconfig")))
        yield
