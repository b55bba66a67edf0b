"""Benchmark: encode + decode of a RESULT PDU holding 100 values, against one real pmcd fetch.

Our figures: for three layouts of a HIGHRES_RESULT PDU holding 100 values, the time
to decode it and encode it again as pmcd does every fetch (the figure the target
applies to), both as pmcd does it (the decode checks every byte; the values are read
only when asked for, and pmcd never asks) and with every value read into a Python
object; and, for context, the time of a first decode (before the layout is known),
of an agent encoding per-metric value sets, and of a client decoding and building
every per-metric value set.  The reference
figure, measured in the same run: one pmFetch round trip of pmcd.numagents through
PCP's own Python bindings against a private reference pmcd (Debian's pcp package)
on an ephemeral port.  Prints both, and their ratio; the target is a ratio under
0.10.

    .venv/bin/python benchmarks/bench_result_codec.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.reference_pmcd import PMDAS, reference_fetch_seconds
from purepcp.pmapi.pdu.codec import decode, encode
from purepcp.pmapi.pdu.records import HighResResultPDU, ResultPDU
from purepcp.pmapi.pdu.result_layout import LAYOUTS
from purepcp.pmapi.types import PMType
from purepcp.pmapi.values import Result, Timestamp, ValueSet

T = PMType
_VALUES = {
    T.PM_TYPE_32: lambda i: -i * 7,
    T.PM_TYPE_U32: lambda i: i * 1000 + 3,
    T.PM_TYPE_64: lambda i: -(i << 33),
    T.PM_TYPE_U64: lambda i: (i << 40) + 12345,
    T.PM_TYPE_FLOAT: lambda i: i / 4,
    T.PM_TYPE_DOUBLE: lambda i: i / 3,
    T.PM_TYPE_STRING: lambda i: f"sda{i} WDC WD40EFRX-68N32N0",
}

#: name -> [(type, number of metrics, instances per metric)], 100 values each
LAYOUTS_100 = {
    "4 metrics x 25 instances (32-bit, 64-bit, double, string)": [
        (T.PM_TYPE_U32, 1, 25),
        (T.PM_TYPE_U64, 1, 25),
        (T.PM_TYPE_DOUBLE, 1, 25),
        (T.PM_TYPE_STRING, 1, 25),
    ],
    "10 metrics x 10 instances (4 x 32-bit, 3 x 64-bit, 2 x double, 1 x string)": [
        (T.PM_TYPE_U32, 4, 10),
        (T.PM_TYPE_U64, 3, 10),
        (T.PM_TYPE_DOUBLE, 2, 10),
        (T.PM_TYPE_STRING, 1, 10),
    ],
    # the value mix PCP's default pmlogger configuration fetches from the linux agent:
    # 1051 values in 803 value sets, 83% U64; scaled here to 100 values in 74 sets
    "pmlogger default mix (74 sets: 84 U64, 9 32-bit, 3 float, 3 string, 1 64-bit)": [
        (T.PM_TYPE_U64, 60, 1),
        (T.PM_TYPE_U64, 4, 6),
        (T.PM_TYPE_U32, 3, 1),
        (T.PM_TYPE_32, 2, 3),
        (T.PM_TYPE_FLOAT, 1, 3),
        (T.PM_TYPE_STRING, 3, 1),
        (T.PM_TYPE_64, 1, 1),
    ],
}


def build(layout) -> HighResResultPDU:
    vsets, pmid = [], 1
    for vtype, metrics, insts in layout:
        for _ in range(metrics):
            pairs = [(i, _VALUES[vtype](i)) for i in range(insts)]
            vsets.append(ValueSet.of_atoms(pmid, vtype, pairs))
            pmid += 1
    pdu = HighResResultPDU(Result(Timestamp(1_700_000_000, 123_456_789), tuple(vsets)))
    assert sum(len(vs.insts) for vs in pdu.result.vsets) == 100
    assert decode(encode(pdu)) == pdu
    return pdu


def _median(fn, number: int) -> float:
    """Median seconds per call of FN over 7 runs of NUMBER calls."""
    return statistics.median(timeit.repeat(fn, number=number, repeat=7)) / number


def ours(pdu: HighResResultPDU, number: int) -> dict[str, float]:
    """Seconds per operation on PDU's result, for each way the codec gets used."""
    data = encode(pdu)
    agent_data = encode(ResultPDU(pdu.result))
    LAYOUTS.clear()

    def first_sight():
        LAYOUTS.clear()
        decode(agent_data)

    def relay():  # what pmcd does with an agent's answer to a fetch
        return encode(HighResResultPDU(decode(agent_data).result, 7))

    def relay_reading_values():  # the same, with every value read into a Python object
        result = decode(agent_data).result
        assert len(result.vsets.values) == 100
        return encode(HighResResultPDU(result, 7))

    cold = _median(first_sight, max(number // 10, 50))
    decode(agent_data)
    decode(agent_data)  # a layout is learned when it recurs, as in every fetch loop
    decode(data)
    decode(data)
    relayed = decode(relay())
    assert relayed.result.vsets == pdu.result.vsets and relayed.sender == 7
    return {
        "relay": _median(relay, number),
        "relay+v": _median(relay_reading_values, number),
        "cold": cold,
        "agent": _median(lambda: encode(ResultPDU(pdu.result)), number),
        "client": _median(lambda: list(decode(data).result.vsets), number),
    }


#: What each figure measures.
PATHS = {
    "relay": "decode an agent's RESULT + encode the client's HIGHRES_RESULT, as pmcd "
    "does every fetch (steady state; every byte checked, values left unread)",
    "relay+v": "the same, reading every value into a Python object on the way",
    "cold": "decode of an agent's RESULT whose layout is not known yet (first fetch)",
    "agent": "encode from per-metric value sets, as an agent answers a fetch",
    "client": "decode + build a ValueSet object for every metric, as a client reads it",
}


def reference(number: int) -> float | None:
    """Median seconds per real pmFetch round trip of pmcd.numagents, or None without PCP."""
    dso = PMDAS / "pmcd" / "pmda_pmcd.so"
    if not dso.exists():
        return None
    return reference_fetch_seconds([f"pmcd\t2\tdso\tpmcd_init\t{dso}"], ["pmcd.numagents"], number)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    args = parser.parse_args()
    number = 2_000 if args.quick else 20_000
    ref = reference(number)
    if ref is None:
        print(
            "reference: PCP 6 (Debian package pcp, with python3-pcp) is not installed; "
            "printing our figures only"
        )
    else:
        print(
            f"reference: real pmcd fetch round trip (PCP's Python bindings, "
            f"pmcd.numagents): {ref * 1e6:8.2f} us"
        )
    print("ours: a HIGHRES_RESULT PDU holding 100 values")
    for key, what in PATHS.items():
        print(f"  {key:7} {what}")
    worst = {"relay": 0.0, "relay+v": 0.0}
    for name, layout in LAYOUTS_100.items():
        pdu = build(layout)
        figures = ours(pdu, number // 4)
        print(f"  {name} ({len(encode(pdu))} bytes)")
        for key, seconds in figures.items():
            line = f"    {key:7} {seconds * 1e6:8.2f} us"
            if ref is not None:
                ratio = seconds / ref
                line += f"   ratio {ratio:6.3f}"
                if key in worst:
                    worst[key] = max(worst[key], ratio)
                    line += f"  ({'meets' if ratio < 0.10 else 'misses'} the < 0.10 target)"
            print(line)
    if ref is not None:
        print(
            f"encode + decode worst ratio: {worst['relay']:.3f} as pmcd relays, "
            f"{worst['relay+v']:.3f} with every value read"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
