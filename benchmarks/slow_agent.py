"""A benchmark agent whose one metric takes 200 ms to fetch: `python benchmarks/slow_agent.py`.

Domain 251, metric slow.value (namespace beside this file, in slow_agent.pmns).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from purepcp.pmda import U32, Agent, main, metric

PMNS = Path(__file__).with_name("slow_agent.pmns")


class Slow(Agent):
    name, domain = "slow", 251

    def __init__(self, *args, **kwargs):
        super().__init__(*args, pmns_path=PMNS, **kwargs)

    @metric("slow.value", U32)
    def value(self):
        time.sleep(0.2)
        return 1


if __name__ == "__main__":
    sys.exit(main(Slow))
