"""pmstat's lines: the two heading lines and one line per sample and source, laid out
as PCP's pmstat lays them out (columns, "?" for a value missing, large values scaled).
Pure functions over the values a FetchGroup holds."""

from __future__ import annotations

from collections.abc import Mapping

_MASK32 = (1 << 32) - 1
_MASK64 = (1 << 64) - 1
#: the CPU times added into the total, in pmstat's order
_CPU = ("cpu_nice", "cpu_user", "cpu_intr", "cpu_sys", "cpu_idle", "cpu_wait", "cpu_steal")
_MANDATORY = ("cpu_user", "cpu_sys", "cpu_idle")


def heading(multi: bool, xcpu: bool, swap_op: str) -> str:
    """The two lines under the "@ date" line: group titles, then column names."""
    cpu_width = 20 if xcpu else 12
    cpu_cols = ("us", "sy", "id", "wa", "st") if xcpu else ("us", "sy", "id")
    tail = (f"   {swap_op}i   {swap_op}o{'bi':>5}{'bo':>5}{'in':>5}{'cs':>5}"
            + "".join(f"{c:>4}" for c in cpu_cols))  # fmt: skip
    if multi:
        titles = f"{'node':<7}{'loadavg':>8}{'memory':>21}{'swap':>10}{'io':>10}{'system':>10}"
        names = f"{'':>8}{'1 min':>7} {'swpd':>6} {'buff':>6} {'cache':>6}"
    else:
        titles = f"{'loadavg':>8}{'memory':>28}{'swap':>10}{'io':>10}{'system':>10}"
        names = f" {'1 min':>7} {'swpd':>6} {'free':>6} {'buff':>6} {'cache':>6}"
    return f"{titles}{'cpu':>{cpu_width}}\n{names}{tail}\n"


def scaled(value: int | None) -> str:
    """A count in 5 columns: as is below 10000, then in thousands (K), then millions (M)."""
    if value is None:
        return f" {'?':>4}"
    value &= _MASK32
    if value < 10000:
        return f" {value:4d}"
    value //= 1000
    if value < 1000:
        return f" {value:3d}K"
    return f" {value // 1000:3d}M"


def scaled_k(value: int | None) -> str:
    """Kbytes in 7 columns: as is below a million, then in Mbytes (m), then Gbytes (g)."""
    if value is None:
        return f" {'?':>6}"
    value &= _MASK32
    if value < 1000000:
        return f" {value:6d}"
    value //= 1024
    if value < 100000:
        return f" {value:5d}m"
    return f" {value // 1024:5d}g"


def row(values: Mapping[str, int | float | None], multi: bool, xcpu: bool) -> str:
    """A sample's columns (without the node name), VALUES None where there is none."""
    load = values.get("load_avg")
    parts = [f" {'?':>7}" if load is None else f" {load:7.2f}"]
    parts.append(scaled_k(_int(values, "swap_used")))
    parts.append(scaled_k(_int(values, "mem_free")))
    if not multi:  # (the buffers are shown for a single source only)
        parts.append(scaled_k(_int(values, "mem_buf")))
    parts.append(scaled_k(_int(values, "mem_cached")))
    for key in ("swap_in", "swap_out", "blk_read", "blk_write", "interrupts", "pswitch"):
        parts.append(scaled(_int(values, key)))
    parts.append(cpu(values, xcpu))
    return "".join(parts)


def cpu(values: Mapping[str, int | float | None], xcpu: bool) -> str:
    """The CPU columns: each share of the total time, in percent (rounded to nearest)."""
    if any(values.get(k) is None for k in _MANDATORY):
        return " ".join(["", *("  ?" for _ in range(5 if xcpu else 3))])
    t = {k: int(values.get(k) or 0) for k in _CPU}  # (optional times missing count as 0)
    total = sum(t.values()) & _MASK64
    if xcpu:
        shares = (t["cpu_nice"] + t["cpu_user"], t["cpu_intr"] + t["cpu_sys"], t["cpu_idle"],
                  t["cpu_wait"], t["cpu_steal"])  # fmt: skip
    else:
        shares = (t["cpu_nice"] + t["cpu_user"], t["cpu_intr"] + t["cpu_sys"] + t["cpu_steal"],
                  t["cpu_idle"] + t["cpu_wait"])  # fmt: skip
    if total == 0:  # (PCP's pmstat would divide by zero here)
        return " ".join(["", *("  ?" for _ in shares)])
    fill = total // 2
    return "".join(f" {(((100 * s) & _MASK64) + fill) // total & _MASK32:3d}" for s in shares)


def _int(values: Mapping[str, int | float | None], key: str) -> int | None:
    value = values.get(key)
    return None if value is None else int(value)


def node_name(name: str, suffix: bool) -> str:
    """A source's name in the 7 columns of a several-source report: its first 7
    characters, or with -l its last 7."""
    if suffix:
        return f"{name if len(name) <= 7 else name[-7:]:<7}"
    return f"{name[:7]:<7}"
