"""The worked example in docs/clients.md runs and prints a rate."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.client_servers import ours_serving, tool_env

DOC = Path(__file__).resolve().parents[1] / "docs" / "clients.md"


def test_the_rate_example_runs(tmp_path):
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    with ours_serving(tmp_path) as ours:
        code = code.replace('Context.host("localhost")', f'Context.host("{ours.host}")')
        done = subprocess.run(
            [sys.executable, "-c", code], env=tool_env(), capture_output=True, text=True
        )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"kernel\.all\.cpu\.user: \d+\.\d{3} \(time utilization\)\n", done.stdout)
