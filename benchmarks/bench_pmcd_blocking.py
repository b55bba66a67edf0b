"""Benchmark: head-of-line blocking in pmcd, ours against the reference PCP 6 pmcd.

Both daemons run the same two pipe agents: our simple agent (fast) and
benchmarks/slow_agent.py, whose one metric takes 200 ms.  One client fetches the
slow metric over and over while 20 clients fetch simple.numfetch every 10 ms; we print the
fast clients' median and p99 latency for each pmcd.  The same client code (a bare
PDU client on trio) talks to both.  Target: ours under 5 ms while the reference's
p99 exceeds 100 ms.

    .venv/bin/python benchmarks/bench_pmcd_blocking.py [--seconds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.reference_pmcd import PMCD, running_pmcd  # noqa: E402
from purepcp.pmapi.pdu.codec import decode, encode  # noqa: E402
from purepcp.pmapi.pdu.framer import PDUFramer  # noqa: E402
from purepcp.pmapi.pdu.records import (  # noqa: E402
    Cred,
    CredsPDU,
    HighResFetchPDU,
    HighResResultPDU,
    PMNSIdsPDU,
    PMNSNamesPDU,
    ProfilePDU,
)

FAST_CLIENTS = 20
#: Seconds each fast client waits between fetches: monitoring clients, not a flood
#: (flat out, PCP's pmcd serves some connections and starves others entirely).
PACE = 0.01


class Client:
    """A bare PCP client: greeting, CREDS, then request and reply."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream, self.framer = stream, PDUFramer()

    @classmethod
    async def connect(cls, port: int) -> Client:
        client = cls(await trio.open_tcp_stream("127.0.0.1", port))
        await client.receive()
        await client.stream.send_all(encode(CredsPDU((Cred(1, 2, 0, 0),), os.getpid())))
        await client.stream.send_all(encode(ProfilePDU(0, 0, ())))
        return client

    async def receive(self):
        while (frame := self.framer.next_frame()) is None:
            self.framer.feed(await self.stream.receive_some(65536))
        return decode(frame)

    async def ask(self, pdu):
        await self.stream.send_all(encode(pdu))
        return await self.receive()

    async def pmid(self, name: str) -> int:
        reply = await self.ask(PMNSNamesPDU((name,)))
        assert isinstance(reply, PMNSIdsPDU), reply
        return reply.pmids[0]


async def measure(port: int, seconds: float) -> list[float]:
    """Fast-client fetch latencies (seconds) while a slow client keeps the slow agent busy."""
    latencies: list[float] = []
    async with trio.open_nursery() as nursery:
        slow = await Client.connect(port)
        slow_pmid = await slow.pmid("slow.value")

        async def keep_slow_busy() -> None:
            while True:
                await slow.ask(HighResFetchPDU(0, (slow_pmid,)))

        nursery.start_soon(keep_slow_busy)
        await trio.sleep(0.1)
        deadline = trio.current_time() + seconds

        async def fast_client() -> None:
            pmid = None
            with trio.move_on_at(deadline + 1):  # a client never let in still ends
                client = await Client.connect(port)
                pmid = await client.pmid("simple.numfetch")
            if pmid is None:
                latencies.append(seconds + 1)  # never served: as long as the whole run
                return
            while trio.current_time() < deadline:
                start = time.perf_counter()
                with trio.move_on_at(deadline + 1):
                    reply = await client.ask(HighResFetchPDU(0, (pmid,)))
                    assert isinstance(reply, HighResResultPDU), reply
                # a fetch still unanswered a second after the end counts as that long
                latencies.append(time.perf_counter() - start)
                await trio.sleep(PACE)

        async with trio.open_nursery() as fast:
            for _ in range(FAST_CLIENTS):
                fast.start_soon(fast_client)
        nursery.cancel_scope.cancel()
    return latencies


def conf_lines() -> list[str]:
    python = sys.executable
    return [
        f"simple\t253\tpipe\tbinary\t{python} -m purepcp.agents.simple -d 253",
        f"slow\t251\tpipe\tbinary\t{python} {ROOT / 'benchmarks' / 'slow_agent.py'} -d 251",
    ]


def namespace(tmp: str) -> str:
    root = Path(tmp, "root")
    root.write_text(
        "#define SIMPLE 253\n#define SLOW 251\nroot {\n    simple\n    slow\n}\n"
        + (ROOT / "pmns" / "simple").read_text()
        + (ROOT / "benchmarks" / "slow_agent.pmns").read_text()
    )
    return str(root)


def report(name: str, latencies: list[float], seconds: float) -> float:
    """Print the fast clients' figures; return the p99 (seconds)."""
    ordered = sorted(latencies)
    long_waits = sum(1 for x in ordered if x >= 1)
    if long_waits:
        print(
            f"{name:10} {long_waits} waits of a second or more (a fetch still unanswered at"
            " the end counts as its wait so far; a client never let in, as the whole run)"
        )
    p99 = ordered[int(len(ordered) * 0.99) - 1]
    median = statistics.median(ordered)
    print(
        f"{name:10} {len(ordered):6d} fast fetches  median {median * 1e3:8.2f} ms"
        f"  p99 {p99 * 1e3:8.2f} ms"
    )
    return p99


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per pmcd")
    args = parser.parse_args()
    print(f"{FAST_CLIENTS} clients fetching simple.numfetch while one fetches a 200 ms metric")
    results = {}
    for ours in (True, False):
        if not ours and not PMCD.exists():
            print("reference: PCP 6 (Debian package pcp) is not installed")
            continue
        with (
            tempfile.TemporaryDirectory(prefix="bench-hol-") as tmp,
            running_pmcd(ours, conf_lines(), tmp, namespace(tmp)) as (port, _),
        ):
            name = "ours" if ours else "reference"
            results[name] = report(name, trio.run(measure, port, args.seconds), args.seconds)
    if "ours" in results:
        verdict = "meets" if results["ours"] < 0.005 else "misses"
        print(f"ours: p99 {results['ours'] * 1e3:.2f} ms ({verdict} the < 5 ms target)")
    if "reference" in results:
        verdict = "as expected" if results["reference"] > 0.1 else "NOT above 100 ms"
        print(f"reference: p99 {results['reference'] * 1e3:.2f} ms ({verdict})")
        if "ours" in results:
            print(f"ratio of p99s, reference / ours: {results['reference'] / results['ours']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
