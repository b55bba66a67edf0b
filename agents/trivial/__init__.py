"""The trivial agent of seed 004: one metric, trivial.time, the time of day."""

import time

from purepcp.pmda import U32, Agent, metric


class Trivial(Agent):
    name, domain = "trivial", 250

    @metric("trivial.time", U32, units="sec")
    def now(self):
        return int(time.time())
