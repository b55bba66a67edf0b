"""pmdumplog -l and -L: the archive label (-L adds the zone, features and pmlogger's pid)."""

from __future__ import annotations

from purepcp.pmapi.cnumbers import uint64
from purepcp.pmapi.values import Timestamp

from .source import Source


def label_text(src: Source) -> str:
    """dumpLabel: version, host, start and end; -L adds zone, features and pid."""
    lab = src.archive.label
    lines = [f"Log Label (Log Format Version {src.archive.version})"]
    lines.append(f"Performance metrics from host {lab.hostname}")
    lines.append(f"    commencing {_label_time(src, lab.start)}")
    if src.end is None:
        lines.append("    ending     UNKNOWN")
    else:
        lines.append(f"    ending     {_label_time(src, src.end.stamp)}")
    if "L" in src.o.flags:
        if lab.timezone:
            lines.append(f"Archive timezone: {lab.timezone}")
        if lab.zoneinfo:
            lines.append(f"Archive zoneinfo: {lab.zoneinfo}")
        if lab.features:
            lines.append(f"Archive features: 0x{lab.features:x}{_unknown_features(lab.features)}")
        lines.append(f"PID for pmlogger: {lab.pid}")
    return "".join(line + "\n" for line in lines)


def _label_time(src: Source, t: Timestamp) -> str:
    ctime = src.clock.ctime(t.sec)
    text = f"{ctime[:10]} {src.clock.hms(t)} {ctime[20:24]}"
    if src.o.xflag >= 3:
        text += f" {uint64(t.sec)}"
    return text


def _unknown_features(features: int) -> str:
    """The " [unknown: bit_NN ...]" note for feature bits PCP 6 does not know."""
    unknown = features & ~(1 << 31)
    if not unknown:
        return ""
    bits = [f"bit_{pos:02d}" for pos in range(31, -1, -1) if unknown >> pos & 1]
    return f" [unknown: {' '.join(bits)}]"
