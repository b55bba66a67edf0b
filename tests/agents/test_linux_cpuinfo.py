"""The linux agent's cpuinfo, interrupts and pressure families: hinv.cpu.*, hinv.machine,
hinv.map.{cpu_node,scsi,scsi_id}, interrupts and softirqs per row and per CPU (with their
labels), pressure stall figures, utmp root and session counts and /proc/sys/kernel values:
parsers on samples of our own, pmdalinux's rules and quirks, and the agent on a fake tree.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from purepcp.agents.linux import Linux, catalog, cpuinfo, interrupts, pressure, system
from purepcp.pmda.testing import AgentHarness

# Samples written for these tests.
CPUINFO = b"""processor\t: 0
vendor_id\t: GenuineTest
cpu family\t: 6
model\t\t: 85
model name\t: Test CPU @ 2.00GHz
stepping\t: 7
cpu MHz\t\t: 1999.998
cache size\t: 16384 KB
flags\t\t: fpu vme de
bogomips\t: 3999.99
cache_alignment\t: 64
power management:

processor\t: 1
vendor_id\t: GenuineTest
model\t\t: 85
model name\t: Test CPU @ 2.00GHz
stepping\t: 7
cpu MHz\t\t: 2100.5
flags\t\t: fpu
bogomips\t: 3999.99

processor\t: 2
vendor_id\t: GenuineTest
"""

# aarch64's layout: processor lines first, then the shared details
CPUINFO_ARM = b"""processor\t: 0
processor\t: 1
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm\x20\x20\x20
CPU implementer\t: 0x41
CPU variant\t: 0x3
CPU revision\t: 1
"""

INTERRUPTS = b"""           CPU0       CPU1
  0:         10          2   IO-APIC   2-edge      timer
  1:          0          7   IO-APIC   1-edge      i8042
NMI:          3          4   Non-maskable interrupts
LOC:       1000       2000   Local timer interrupts
ERR:          5
MIS:          6
"""

SOFTIRQS = b"""                    CPU0       CPU1
          HI:          1          0
       TIMER:        100        200
      NET_RX:          7          8
"""

PRESSURE_IO = (
    b"some avg10=1.50 avg60=0.25 avg300=0.00 total=123456\n"
    b"full avg10=0.75 avg60=0.10 avg300=0.00 total=65432\n"
)


def _utmp(kind: int, user: bytes) -> bytes:
    """One utmp record of KIND for USER."""
    record = bytearray(system.UTMP_SIZE)
    struct.pack_into("=h", record, 0, kind)
    record[44 : 44 + len(user)] = user
    return bytes(record)


# --- the table ---------------------------------------------------------------------------


def test_metrics_table() -> None:
    """46 metrics with pmdalinux's clusters, items and instance domains."""
    metrics = (*cpuinfo.METRICS, *interrupts.METRICS, *pressure.METRICS)
    by_name = {m.name: m for m in metrics}
    assert len(by_name) == len(metrics) == 46
    assert set(by_name) <= set(catalog.BY_NAME)
    assert len({(m.cluster, m.item) for m in metrics}) == 46
    assert by_name["kernel.percpu.interrupts"].indom == 40
    assert by_name["kernel.percpu.softirqs"].indom == 41
    assert by_name["hinv.map.scsi_id"].cluster == 0
    assert by_name["hinv.cpu.thermal_throttle.package.time"].units == cpuinfo.COUNT  # PCP's


# --- parsers and rules ---------------------------------------------------------------------


def test_parse_cpuinfo_blocks() -> None:
    """Each processor block by its position; a field once set is kept, the clock is the last;
    lines of CPUs beyond the count are ignored."""
    cpus, shared = cpuinfo.parse_cpuinfo(CPUINFO, 2)
    assert shared is None
    assert set(cpus) == {0, 1}
    first = cpus[0]
    assert (first.vendor, first.model, first.model_name) == (
        "GenuineTest",
        "85",
        "Test CPU @ 2.00GHz",
    )
    assert (first.stepping, first.flags, first.cache, first.cache_align) == (
        "7",
        "fpu vme de",
        16384,
        64,
    )
    assert first.clock == pytest.approx(1999.998)
    assert cpus[1].cache == 0 and cpus[1].clock == pytest.approx(2100.5)


def test_parse_cpuinfo_shared_layout() -> None:
    """Two processor lines in a row: every CPU takes the details outside the blocks;
    "Features" is trimmed, "CPU variant" is the model, "CPU revision" the stepping."""
    cpus, shared = cpuinfo.parse_cpuinfo(CPUINFO_ARM, 2)
    assert shared is not None and not cpus
    assert shared.flags == "fp asimd evtstrm"
    assert (shared.vendor, shared.model, shared.stepping) == ("0x41", "0x3", "1")
    assert shared.bogomips == 50.0


def test_numbers_read_as_atoi_atof() -> None:
    """C's conversions: leading space, a number prefix, 0 when none (atoi kept to an int)."""
    text = b"processor\t: 0\ncache size\t:  512 KB\nbogomips\t: 2596.129 \ncpu MHz\t: x\n"
    cpus, _ = cpuinfo.parse_cpuinfo(text, 1)
    assert (cpus[0].cache, cpus[0].clock) == (512, 0.0)
    assert cpus[0].bogomips == pytest.approx(2596.129)
    cpus, _ = cpuinfo.parse_cpuinfo(b"processor: 0\ncache size: 99999999999999999999 KB\n", 1)
    assert cpus[0].cache == -1  # strtol's LONG_MAX, then (int)


def test_time_in_state_sums() -> None:
    """count is the sum of MHz * residency, time the residencies; max and min in MHz."""
    assert cpuinfo.time_in_state(b"2000000 10\n1000000 5\n800000 0\n") == (
        2000 * 10 + 1000 * 5,
        15,
        2000,
        800,
    )
    assert cpuinfo.time_in_state(b"") == (0, 0, 0, 0)


def test_scsi_id_rules() -> None:
    """The last byte dropped, prefixes made digits, "unknown" for nothing."""
    assert cpuinfo.scsi_id(b"naa.5000c500a1b2c3d4\n") == "35000c500a1b2c3d4"
    assert cpuinfo.scsi_id(b"t10.ATA     disk\n") == "1ATA     disk"
    assert cpuinfo.scsi_id(b"eui.0011\n") == "20011"
    assert cpuinfo.scsi_id(b"abc") == "ab"  # no newline: the last byte still goes
    assert cpuinfo.scsi_id(None) == "unknown"
    assert cpuinfo.scsi_id(b"") == "unknown"


def test_parse_scsi() -> None:
    """Host lines with the following Type: line give the instance names."""
    data = (
        b"Attached devices:\n"
        b"Host: scsi0 Channel: 00 Id: 00 Lun: 00\n"
        b"  Vendor: ATA      Model: Disk             Rev: 1.0\n"
        b"  Type:   Direct-Access                    ANSI  SCSI revision: 05\n"
        b"Host: scsi2 Channel: 00 Id: 01 Lun: 03\n"
        b"  Type:   CD-ROM                           ANSI  SCSI revision: 05\n"
    )
    assert cpuinfo.parse_scsi(data) == [
        ("scsi0:0:0:0 Direct-Access", (0, 0, 0, 0)),
        ("scsi2:0:1:3 CD-ROM", (2, 0, 1, 3)),
    ]


def test_parse_pressure() -> None:
    """Lines read in order; a missing line ends the reading; the averages are C floats."""
    found = pressure.parse_pressure(PRESSURE_IO, ("some", "full"))
    tenth = struct.unpack("f", struct.pack("f", 0.1))[0]
    assert found == {"some": ((1.5, 0.25, 0.0), 123456), "full": ((0.75, tenth, 0.0), 65432)}
    assert pressure.parse_pressure(PRESSURE_IO, ("full",)) == {}  # the first line is "some"
    assert pressure.parse_pressure(b"", ("some",)) == {}


def test_irq_table_rows_labels_and_special_lines() -> None:
    """Rows, cells and text (spaces squashed); ERR and MIS taken aside for interrupts,
    while softirq names lose their ':'."""
    table = system.parse_irq_table(INTERRUPTS, 2)
    assert table is not None
    assert [r.name for r in table.rows] == ["0", "1", "NMI", "LOC"]
    assert table.rows[0].cells == [(0, 10), (1, 2)] and table.rows[0].total == 12
    assert table.rows[0].label == "IO-APIC 2-edge timer"
    assert table.rows[2].label == "Non-maskable interrupts"
    assert (table.errors, table.misses) == (5, 6)
    assert table.counts == [10 + 0 + 3 + 1000, 2 + 7 + 4 + 2000]
    sirq = system.parse_irq_table(SOFTIRQS, 2, special=False)
    assert sirq is not None
    assert [r.name for r in sirq.rows] == ["HI", "TIMER", "NET_RX"]
    assert sirq.counts == [108, 208]


def test_irq_table_short_row_counts_zero() -> None:
    """A row with fewer numbers than columns gets 0 for the rest (strtoul stops at the
    white space), so its cells exist for every CPU."""
    table = system.parse_irq_table(b"   CPU0   CPU1\nXYZ:   9   text\n", 2)
    assert table is not None
    assert table.rows[0].cells == [(0, 9), (1, 0)]


def test_login_counts() -> None:
    """Users, roots, sessions: every record but a USER_PROCESS one without a user counts
    as a session."""
    data = _utmp(7, b"root") + _utmp(7, b"alice") + _utmp(7, b"") + _utmp(2, b"reboot")
    assert system.login_counts(data) == (2, 1, 3)
    assert system.login_counts(b"") == (0, 0, 0)


# --- the agent on a fake tree ------------------------------------------------------------------


def _write(root: Path, path: str, data: bytes) -> None:
    """Write DATA at ROOT/PATH."""
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Iterator[tuple[AgentHarness, Path]]:
    """A harness around an agent reading a fake tree with two online CPUs."""
    monkeypatch.setenv("LINUX_STATSPATH", str(tmp_path))
    monkeypatch.delenv("PCP_VAR_DIR", raising=False)
    monkeypatch.setenv("LINUX_NCPUS", "2")
    monkeypatch.setenv("LINUX_HERTZ", "100")
    _write(
        tmp_path,
        "/proc/stat",
        b"cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 1 1 1 1 1 1 1 0 0\n"
        b"cpu1 1 1 1 1 1 1 1 1 0 0\nintr 1\nctxt 1\n",
    )
    _write(tmp_path, "/proc/cpuinfo", CPUINFO)
    _write(tmp_path, "/proc/interrupts", INTERRUPTS)
    _write(tmp_path, "/proc/softirqs", SOFTIRQS)
    _write(tmp_path, "/proc/pressure/io", PRESSURE_IO)
    _write(tmp_path, "/proc/sys/kernel/pid_max", b"99999\n")
    _write(tmp_path, "/proc/sys/kernel/random/entropy_avail", b"256\n")
    _write(tmp_path, "/proc/sys/kernel/random/poolsize", b"4096\n")
    _write(tmp_path, "/sys/devices/system/node/node1/cpu0", b"")
    _write(tmp_path, "/sys/devices/system/node/node1/cpu1", b"")
    _write(tmp_path, "/sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count", b"4\n")
    _write(tmp_path, "/sys/devices/system/cpu/cpu1/cpufreq/cpuinfo_max_freq", b"3000000\n")
    _write(tmp_path, "/sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", b"1500000\n")
    agent = Linux()
    yield AgentHarness(agent), tmp_path
    agent.stop()


def test_fake_cpuinfo_values(tree) -> None:
    """Per-CPU /proc/cpuinfo values; "unknown" strings and no numbers where none are given."""
    h, _ = tree
    assert h.fetch("hinv.cpu.vendor") == {"cpu0": "GenuineTest", "cpu1": "GenuineTest"}
    assert h.fetch("hinv.cpu.cache") == {"cpu0": 16384}  # cpu1 gives no cache size
    assert h.fetch("hinv.cpu.cache_alignment") == {"cpu0": 64}
    assert h.fetch("hinv.cpu.flags") == {"cpu0": "fpu vme de", "cpu1": "fpu"}
    assert h.fetch("hinv.cpu.clock")["cpu1"] == pytest.approx(2100.5)
    assert h.fetch("hinv.map.cpu_node") == {"cpu0": 1, "cpu1": 1}


def test_fake_sysfs_values(tree) -> None:
    """Throttle counts are 0 when absent; cpufreq values only where files exist."""
    h, _ = tree
    assert h.fetch("hinv.cpu.thermal_throttle.core.count") == {"cpu0": 4, "cpu1": 0}
    assert h.fetch("hinv.cpu.frequency_scaling.max") == {"cpu1": 3000}
    assert h.fetch("hinv.cpu.frequency_scaling.count") == {"cpu1": 1500}
    assert h.fetch("hinv.cpu.frequency_scaling.time") == {}


def test_fake_interrupts(tree) -> None:
    """Instances in first-seen order, their labels, ERR and MIS counts."""
    h, _ = tree
    assert h.fetch("kernel.all.interrupts.total") == {"0": 12, "1": 7, "NMI": 7, "LOC": 3000}
    cells = h.fetch("kernel.percpu.interrupts")
    assert cells["LOC::cpu1"] == 2000 and len(cells) == 8
    assert h.instances("kernel.percpu.interrupts")[0] == "0::cpu0"
    assert h.fetch("kernel.all.interrupts.errors") == 5
    assert h.fetch("kernel.all.interrupts.missed") == 6
    agent = h.agent
    line = {"irq": "0", "irqtext": "IO-APIC 2-edge timer"}
    assert agent.instance_labels(agent.irq_intr_indom, 0, "0") == line
    assert agent.instance_labels(agent.irq_intrcpu_indom, 7, "LOC::cpu1") == {
        "cpu": 1,
        "irq": "LOC",
        "irqtext": "Local timer interrupts",
    }


def test_fake_softirqs(tree) -> None:
    """Rows, cells and each CPU's sum."""
    h, _ = tree
    assert h.fetch("kernel.all.softirqs.total") == {"HI": 1, "TIMER": 300, "NET_RX": 15}
    assert h.fetch("kernel.percpu.softirqs")["TIMER::cpu1"] == 200
    assert h.fetch("kernel.percpu.sirq") == {"cpu0": 108, "cpu1": 208}
    cell = h.agent.instance_labels(h.agent.irq_sirqcpu_indom, 3, "TIMER::cpu1")
    assert cell == {"cpu": 1, "softirq": "TIMER"}


def test_fake_pressure_and_sys_kernel(tree) -> None:
    """Pressure files present give values, missing ones none; pid_max as read, nptys 0."""
    h, _ = tree
    assert h.fetch("kernel.all.pressure.io.full.total") == 65432
    assert h.fetch("kernel.all.pressure.io.some.avg") == {
        "10 second": 1.5,
        "1 minute": 0.25,
        "5 minute": 0.0,
    }
    assert h.fetch("kernel.all.pressure.cpu.some.total") is None
    assert h.fetch("kernel.all.pressure.irq.full.avg") == {}
    assert h.fetch("kernel.all.pid_max") == 99999
    assert h.fetch("kernel.all.nptys") == 0
    assert h.fetch("kernel.all.entropy.poolsize") == 4096


def test_fake_missing_sources(tree) -> None:
    """Without the files: no interrupt instances, pid_max's default, entropy 0, sirq 0."""
    h, root = tree
    for path in (
        "proc/interrupts",
        "proc/softirqs",
        "proc/sys/kernel/pid_max",
        "proc/sys/kernel/random/poolsize",
    ):
        (root / path).unlink()
    assert h.fetch("kernel.all.interrupts.total") == {}
    assert h.fetch("kernel.all.interrupts.errors") == 0
    assert h.fetch("kernel.percpu.sirq") == {"cpu0": 0, "cpu1": 0}
    assert h.fetch("kernel.all.pid_max") == 1 << 22
    assert h.fetch("kernel.all.entropy.avail") == 0
    assert h.fetch("hinv.map.scsi") == {}


def test_irq_table_wide_and_odd_rows() -> None:
    """Counts past 32 bits: cells wrap to 32 bits, totals and CPU sums keep 64; a row of
    another shape (a signed number) is read the general way, and the same."""
    table = system.parse_irq_table(b"  CPU0 CPU1\n 7:  4294967297  3  big\n 8: -1  2  odd\n", 2)
    assert table is not None
    big, odd = table.rows
    assert big.cells == [(0, 1), (1, 3)] and big.total == 4294967300 and big.label == "big"
    assert odd.cells == [(0, 0xFFFFFFFF), (1, 2)] and odd.total == 1
    assert table.counts == [4294967296, 5]


def test_fake_interrupts_parsed_once_per_fetch(tree, monkeypatch) -> None:
    """kernel.percpu.intr and the per-line interrupt metrics share one parse per fetch."""
    h, root = tree
    calls = []
    parse = system.parse_irq_table
    monkeypatch.setattr(
        system, "parse_irq_table", lambda *args, **kw: calls.append(args) or parse(*args, **kw)
    )
    names = ("kernel.percpu.intr", "kernel.all.interrupts.total", "kernel.percpu.interrupts")
    h.agent.fetch([h.agent.pmns.lookup(name) for name in names])
    assert len(calls) == 1
    got = h.fetch_many("kernel.percpu.intr", "kernel.all.interrupts.total")
    assert got == [{"cpu0": 1013, "cpu1": 2013}, {"0": 12, "1": 7, "NMI": 7, "LOC": 3000}]
    _write(root, "/proc/interrupts", INTERRUPTS.replace(b"  1:", b" 42:"))  # a line renamed
    assert h.fetch("kernel.all.interrupts.total") == {"42": 7, "0": 12, "NMI": 7, "LOC": 3000}
    assert h.instances("kernel.percpu.interrupts")[9] == "42::cpu1"  # new ids follow the old
