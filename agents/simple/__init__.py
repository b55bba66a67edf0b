"""The simple agent of seed 004: a fetch counter, colours, CPU times and the time of day."""

import os
import time
from pathlib import Path

from purepcp.pmapi.errors import PM_ERR_CONV, PM_ERR_SIGN
from purepcp.pmda import COUNTER, DOUBLE, I32, U32, Agent, InDom, PMError, metric, refresh


def conf_path() -> Path:
    """simple.conf: in $PCP_PMDAS_DIR/simple as PCP keeps it, else beside this file."""
    pmdas = os.environ.get("PCP_PMDAS_DIR")
    return (
        Path(pmdas, "simple", "simple.conf") if pmdas else Path(__file__).with_name("simple.conf")
    )


class Simple(Agent):
    name, domain = "simple", 253
    labels = {"role": "testing"}
    colors = InDom(0, ["red", "green", "blue"], labels={"indom_name": "color", "model": "RGB"})
    timenow = InDom(1, labels={"indom_name": "time", "unitsystem": "SI"})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fetches, self.rgb, self.tms = 0, [0, 100, 200], os.times()
        self.conf_stamp, self.slice_ids = None, {}

    def on_fetch(self):
        self.fetches += 1

    @metric("simple.numfetch", U32)
    def numfetch(self):
        return self.fetches

    @numfetch.store
    def numfetch(self, value):
        self.fetches = max(value, 0)
        if value < 0:
            raise PMError(PM_ERR_SIGN)

    @metric("simple.color", I32, indom=colors)
    def color(self, inst):
        self.rgb[inst] = (self.rgb[inst] + 1) % 256
        return self.rgb[inst]

    @color.store
    def color(self, inst, value):
        self.rgb[inst] = min(max(value, 0), 255)
        if not 0 <= value <= 255:
            raise PMError(PM_ERR_SIGN if value < 0 else PM_ERR_CONV)

    @refresh(1)
    def read_times(self):
        self.tms = os.times()

    @metric("simple.time.user", DOUBLE, COUNTER, "sec")
    def user(self):
        return self.tms.user

    @metric("simple.time.sys", DOUBLE, COUNTER, "sec")
    def sys(self):
        return self.tms.system

    @timenow.refresh
    def read_conf(self):
        try:
            stamp = conf_path().stat().st_mtime_ns
            tokens = (
                conf_path().read_text().partition("\n")[0].split(",")
                if stamp != self.conf_stamp
                else None
            )
        except OSError:
            stamp, tokens = None, [] if self.conf_stamp is not None else None
        if tokens is None:
            return None
        self.conf_stamp = stamp
        names = [t for t in tokens if t in ("sec", "min", "hour")]
        return {self.slice_ids.setdefault(t, len(self.slice_ids)): t for t in names}

    @metric("simple.now", U32, indom=timenow)
    def now(self, inst):
        fields = time.localtime()
        return {"sec": fields.tm_sec, "min": fields.tm_min, "hour": fields.tm_hour}[
            self.instances(self.timenow)[inst]
        ]

    def instance_labels(self, indom, inst, name):
        return {"units": name} if indom is self.timenow else None
