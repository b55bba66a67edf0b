"""The README's line counts of our agents and PCP's Python ones: what the counter computes.

benchmarks/agent_lines.py counts both sides alike (code only: no blank lines, comments,
licence header or docstrings); the README must state its figures.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.agent_lines import AGENTS, code_lines, count, ours, pcps

README = Path(__file__).resolve().parents[1] / "README.md"


def _readme_figures() -> dict[str, tuple[int, int]]:
    """AGENT -> (ours, PCP's) as the README states them."""
    text = " ".join(README.read_text().split())
    found = {}
    for agent in AGENTS:
        m = re.search(
            rf"`agents/{agent}` \((?:[^()]*, )?(\d+) code lines; PCP's Python version (\d+)\)", text
        )
        assert m, f"the README states no line counts for agents/{agent}"
        found[agent] = (int(m.group(1)), int(m.group(2)))
    return found


def test_code_lines_leaves_out_all_but_code():
    source = (
        "#!/usr/bin/env pmpython\n"
        "#\n# Copyright (c) 2004 Someone.  All Rights Reserved.\n#\n\n"
        '"""A module docstring\n\nover several lines."""\n\n'
        "import time  # a comment after code\n\n\n"
        "class Agent:\n"
        "    '''A class docstring.'''\n\n"
        "    def fetch(self):\n"
        '        """A function docstring."""\n'
        "        return [time.time(),\n"
        "                1]\n"
        "    help = ('a string argument',\n"
        "            '''is code''')\n"
        "    'a lone string after the first statement is code too'\n"
    )
    assert code_lines(source) == 8


def test_the_readme_states_our_counts():
    figures = _readme_figures()
    for agent in AGENTS:
        assert figures[agent][0] == count(ours(agent)), agent


@pytest.mark.interop
def test_the_readme_states_pcps_counts():
    for agent in AGENTS:
        if not pcps(agent).exists():
            pytest.skip(f"{pcps(agent)} is not installed (Debian package pcp)")
        assert _readme_figures()[agent][1] == count([pcps(agent)]), agent
