"""purepcp.agents.linux.catalog: consistent in itself, and identical to PCP 6's own linux agent.

The interop tests start a private reference pmcd (PCP 6's /usr/lib/pcp/bin/pmcd with
the linux agent as a DSO, on an ephemeral port bound to 127.0.0.1, with its run, log
and pmdaCache files in a temp dir), ask it once with `pminfo -m -d -t -f` for every
catalog metric, and compare the PMID, help, type, indom, semantics and units lines
with what pmapi.desc prints for our records, and the instances pminfo lists with what
the catalog says about their names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import psutil
import pytest

from purepcp.agents.linux import catalog
from purepcp.agents.linux.catalog import (
    BY_NAME,
    INDOMS,
    LOAD_INSTANCES,
    METRICS,
    REQUIRED,
    MetricInfo,
)
from purepcp.pmapi.ids import pmIDStr
from purepcp.pmapi.types import PMSem, PMType
from purepcp.pmapi.units import Units
from tests.support.reference_pmcd import reference_pmcd, require_reference

LINUX_DSO = "/var/lib/pcp/pmdas/linux/pmda_linux.so"


# --- the catalog on its own ------------------------------------------------------------


def test_required_metrics_present() -> None:
    assert [name for name in REQUIRED if name not in BY_NAME] == []


def test_names_unique_and_well_formed() -> None:
    names = [m.name for m in METRICS]
    assert len(names) == len(set(names)) == len(BY_NAME)
    for name in names:
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+", name), name


def test_pmids_unique_and_in_range() -> None:
    ids = [(m.cluster, m.item) for m in METRICS]
    assert len(ids) == len(set(ids))
    for m in METRICS:
        assert 0 <= m.cluster < 1 << 12 and 0 <= m.item < 1 << 10, m.name
        assert pmIDStr(m.pmid) == f"60.{m.cluster}.{m.item}"


def test_indoms_declared() -> None:
    """Every indom a metric names is one the agent declares, with instances or a refresh."""
    from purepcp.agents.linux import ALL_INDOMS

    assert catalog.DOMAIN == 60
    for serial, info in INDOMS.items():
        assert info.serial == serial and info.instances
    assert {m.indom for m in METRICS} - {None} == set(ALL_INDOMS)
    for serial, indom in ALL_INDOMS.items():
        assert indom.instances is not None or indom.refresher is not None, serial
    assert [inst for inst, _ in LOAD_INSTANCES] == [1, 5, 15]
    assert BY_NAME["kernel.all.load"].indom == catalog.LOADAVG_INDOM


def test_fields_are_valid() -> None:
    for m in METRICS:
        assert isinstance(m, MetricInfo)
        assert isinstance(m.type, PMType) and m.type >= 0, m.name
        assert isinstance(m.sem, PMSem), m.name
        assert isinstance(m.units, Units), m.name
        # canonical pmUnits, as PMDA_PMUNITS builds them: no scale without a dimension
        u = m.units
        assert u.pad == 0, m.name
        assert u.dimSpace or not u.scaleSpace, m.name
        assert u.dimTime or not u.scaleTime, m.name
        assert u.dimCount or not u.scaleCount, m.name
        assert "\n" not in m.source, m.name


def test_families_complete() -> None:
    """Where the catalog has one of a family, it has the whole family."""
    cpu = {m.name.removeprefix("kernel.all.cpu.") for m in METRICS if ".all.cpu." in m.name}
    percpu = {
        m.name.removeprefix("kernel.percpu.cpu.") for m in METRICS if ".percpu.cpu." in m.name
    }
    assert cpu == percpu and len(cpu) == 13
    dev = {m.name.removeprefix("disk.dev.") for m in METRICS if m.name.startswith("disk.dev.")}
    all_ = {m.name.removeprefix("disk.all.") for m in METRICS if m.name.startswith("disk.all.")}
    assert dev - {"scheduler", "capacity"} == all_  # (per-disk settings, no sum in pmdalinux)


# --- against the reference linux agent -----------------------------------------------


@dataclass
class Block:
    """What pminfo -m -d -t -f printed for one metric."""

    header: str
    desc: list[str] = field(default_factory=list)
    instances: list[tuple[int, str]] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


_INST = re.compile(r'    inst \[(\d+) or "(.*)"\] value .*')


def _parse_pminfo(text: str) -> dict[str, Block]:
    blocks: dict[str, Block] = {}
    current: Block | None = None
    for line in text.splitlines():
        if not line:
            current = None
        elif current is None:
            current = blocks[line.split(" ", 1)[0]] = Block(line)
        elif line.startswith(("    Data Type:", "    Semantics:")):
            current.desc.append(line)
        elif m := _INST.fullmatch(line):
            current.instances.append((int(m[1]), m[2]))
        else:
            current.other.append(line)
    return blocks


@pytest.fixture(scope="module")
def reference() -> Iterator[dict[str, Block]]:
    """pminfo's answer, from a private reference pmcd, for every catalog metric."""
    require_reference("pminfo")
    if not os.path.exists(LINUX_DSO):
        pytest.skip(f"reference PCP 6 is not installed: no linux agent ({LINUX_DSO})")
    with reference_pmcd([f"linux\t60\tdso\tlinux_init\t{LINUX_DSO}"]) as pmcd:
        out = pmcd.run("pminfo", "-m", "-d", "-t", "-f", *BY_NAME)
        assert out.returncode == 0, out.stderr
        yield _parse_pminfo(out.stdout)


def test_descriptors_match_reference(reference: dict[str, Block]) -> None:
    mismatches = []
    for m in METRICS:
        block = reference.get(m.name)
        if block is None:
            mismatches.append(f"{m.name}: not known to the reference agent")
            continue
        ours = [f"{m.name} PMID: {pmIDStr(m.pmid)}", *m.desc().describe().splitlines()]
        theirs = [block.header.split(" [", 1)[0], *block.desc]
        if ours != theirs:
            mismatches.append("\n".join(["ours:", *ours, "reference:", *theirs]))
    assert mismatches == [], "\n\n".join(mismatches)


@pytest.mark.interop
def test_load_instances_match_reference(reference: dict[str, Block]) -> None:
    assert reference["kernel.all.load"].instances == list(LOAD_INSTANCES)


@pytest.mark.interop
def test_cpu_instances_named_by_number(reference: dict[str, Block]) -> None:
    instances = reference["kernel.percpu.cpu.user"].instances
    assert instances, "no CPU instances"
    assert all(name == f"cpu{inst}" for inst, name in instances), instances
    assert len(instances) == os.sysconf("SC_NPROCESSORS_ONLN")


@pytest.mark.interop
def test_network_instances_are_proc_net_dev(reference: dict[str, Block]) -> None:
    names = {name for _, name in reference["network.interface.in.bytes"].instances}
    assert names == set(psutil.net_io_counters(pernic=True))
