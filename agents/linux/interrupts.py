"""The linux agent's interrupt and softirq counts: kernel.all.interrupts.*,
kernel.percpu.interrupts, kernel.all.softirqs.total, kernel.percpu.softirqs and
kernel.percpu.sirq, as PCP 6.0.3's pmdalinux computes them (proc_interrupts.c).

/proc/interrupts and /proc/softirqs are parsed by agents/linux/system.py (the
interrupts parse is shared with kernel.percpu.intr).  Each line (row) and each of its
per-CPU cells is an instance, with pmdaCache's ids (saved in $PCP_VAR_DIR/config/pmda/
60.4, .40, .36 and .41); an interrupt line's text and a cell's CPU are its labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

from purepcp.pmda import InDom, refresh

from . import system
from .base import LinuxBase
from .instids import InstanceIds
from .records import COUNT, COUNTER, U32, U64, MetricInfo, records_of

# pmdalinux's instance domain serials (linux.h)
CPU = 0
INTERRUPT = 4
SOFTIRQ = 36
INTERRUPT_CPU = 40
SOFTIRQ_CPU = 41

#: (name, cluster, item, type, indom, semantics, units, source)
_TABLE: tuple[tuple[str, int, int, Any, int | None, Any, Any, str], ...] = (
    ("kernel.all.interrupts.total", 4, 0, U64, INTERRUPT, COUNTER, COUNT, "row sum"),
    ("kernel.percpu.interrupts", 4, 1, U32, INTERRUPT_CPU, COUNTER, COUNT, "one cell"),
    ("kernel.all.interrupts.missed", 4, 2, U32, None, COUNTER, COUNT, "MIS: line"),
    ("kernel.all.interrupts.errors", 4, 3, U32, None, COUNTER, COUNT, "ERR: line"),
    ("kernel.all.softirqs.total", 82, 0, U64, SOFTIRQ, COUNTER, COUNT, "row sum"),
    ("kernel.percpu.softirqs", 63, 0, U32, SOFTIRQ_CPU, COUNTER, COUNT, "one cell"),
    ("kernel.percpu.sirq", 63, 1, U64, CPU, COUNTER, COUNT, "column sum"),
)

#: This family's metrics, as pmdalinux declares them.
METRICS: tuple[MetricInfo, ...] = records_of(_TABLE)

_U32 = 0xFFFFFFFF
_U64 = (1 << 64) - 1


@dataclass
class _IrqState:
    """One parse of /proc/interrupts or /proc/softirqs with its instance ids: row I of the
    table has the id ROW_IDS[I] and its cells the ids CELL_IDS[I]."""

    table: system.IrqTable | None
    row_ids: list[int]
    cell_ids: list[list[int]]
    cell_key: tuple[int, ...]  # every cell id, in order

    def rows(self) -> dict[int, str]:
        """{row id: row name}."""
        return dict(zip(self.row_ids, self.table.names, strict=True)) if self.table else {}

    def totals(self) -> dict[int, int]:
        """{row id: the row's sum, 64-bit}."""
        if self.table is None:
            return {}
        return {i: sum(v) & _U64 for i, v in zip(self.row_ids, self.table.values, strict=True)}

    def cells(self) -> dict[int, int]:
        """{cell id: its count as a 32-bit unsigned}."""
        if self.table is None:
            return {}
        return {
            cell: value & _U32
            for cells, values in zip(self.cell_ids, self.table.values, strict=True)
            for cell, value in zip(cells, values, strict=True)
        }

    def cell_names(self) -> dict[int, str]:
        """{cell id: "ROW::cpuN"}."""
        if self.table is None:
            return {}
        return {
            cell: f"{name}::cpu{slot}"
            for name, slots, cells in zip(
                self.table.names, self.table.slots, self.cell_ids, strict=True
            )
            for slot, cell in zip(slots, cells, strict=True)
        }


class Interrupts(LinuxBase):
    """Interrupt and softirq lines and cells: their instance domains, labels and counts."""

    irq_intr_indom = InDom(INTERRUPT, labels={"device_type": "irq", "indom_name": "per irq"})
    irq_intrcpu_indom = InDom(
        INTERRUPT_CPU, labels={"device_type": ["irq", "cpu"], "indom_name": "per cpu, per irq"}
    )
    irq_sirq_indom = InDom(SOFTIRQ, labels={"indom_name": "per softirq"})
    irq_sirqcpu_indom = InDom(
        SOFTIRQ_CPU, labels={"device_type": "cpu", "indom_name": "per cpu, per softirq"}
    )
    instance_label_rules = {
        INTERRUPT: lambda agent, inst, name: agent._irq_line_label(inst, name),
        INTERRUPT_CPU: lambda agent, inst, name: agent._irq_cell_label(inst, name),
        SOFTIRQ_CPU: lambda agent, inst, name: agent._irq_softirq_cell_label(inst, name),
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Agent's arguments; pmdaCache-style ids for the interrupt and softirq indoms."""
        super().__init__(*args, **kwargs)
        cache = self._cache_file
        self._irq_ids = {
            serial: InstanceIds(cache(indom))
            for serial, indom in (
                (INTERRUPT, self.irq_intr_indom),
                (INTERRUPT_CPU, self.irq_intrcpu_indom),
                (SOFTIRQ, self.irq_sirq_indom),
                (SOFTIRQ_CPU, self.irq_sirqcpu_indom),
            )
        }
        self._irq_labels: dict[str, str] = {}  # irq name -> its text, as first seen
        # per cell indom: row name -> [row id, {CPU slot: cell id}, last slots, their ids]
        self._irq_known: dict[int, dict[str, list[Any]]] = {
            INTERRUPT_CPU: {},
            SOFTIRQ_CPU: {},
        }
        self._irq_last_ids: dict[int, tuple[int, ...]] = {}  # by indom serial
        self._irq_cells: dict[int, dict[int, tuple[str, int]]] = {}  # last parse's cells
        self._irq_cell_keys: dict[int, tuple[int, ...]] = {}  # their ids, in order
        self._irq_errors = 0  # pmdalinux's irq_err_count: kept when the line goes
        self._irq_misses = 0

    # -- reading -------------------------------------------------------------------------

    def _irq_state(self, softirqs: bool) -> _IrqState:
        """/proc/interrupts (or /proc/softirqs) parsed once per fetch, instance ids given."""
        key = "irq.softirqs" if softirqs else "irq.interrupts"
        return self._once(key, lambda: self._irq_read(softirqs))

    def _irq_read(self, softirqs: bool) -> _IrqState:
        """Parse the file (/proc/interrupts's parse is shared with kernel.percpu.intr); new
        rows and cells get ids, saved where pmdaCache saves them."""
        row_serial, cell_serial = (SOFTIRQ, SOFTIRQ_CPU) if softirqs else (INTERRUPT, INTERRUPT_CPU)
        if softirqs:
            data = self._read_once("/proc/softirqs")
            table = (
                None
                if data is None
                else system.parse_irq_table(data, self.ncpus_configured, special=False)
            )
        else:
            table = system.interrupts_table(self)
        row_ids: list[int] = []
        cell_ids: list[list[int]] = []
        if table is not None:
            new_row, new_cell = self._irq_ids[row_serial], self._irq_ids[cell_serial]
            known = self._irq_known[cell_serial]
            labels = self._irq_labels
            for name, slots, label in zip(table.names, table.slots, table.labels, strict=True):
                entry = known.get(name)
                if entry is None:  # first seen: its id, and its text for the labels
                    entry = known[name] = [new_row(name), {}, None, []]
                    if not softirqs:
                        labels.setdefault(name, label)
                if entry[2] is not slots and entry[2] != slots:  # its cells' ids, by slot
                    cell_of = entry[1]
                    for slot in slots:
                        if slot not in cell_of:
                            cell_of[slot] = new_cell(f"{name}::cpu{slot}")
                    entry[2], entry[3] = slots, [cell_of[slot] for slot in slots]
                row_ids.append(entry[0])
                cell_ids.append(entry[3])
            if not softirqs:
                if table.errors is not None:
                    self._irq_errors = table.errors
                if table.misses is not None:
                    self._irq_misses = table.misses
            new_cell.save()
            new_row.save()
        state = _IrqState(table, row_ids, cell_ids, tuple(chain.from_iterable(cell_ids)))
        if self._irq_cell_keys.get(cell_serial) != state.cell_key:
            self._irq_cell_keys[cell_serial] = state.cell_key
            self._irq_cells[cell_serial] = (
                {
                    cell: (name, slot)
                    for name, slots, cells in zip(table.names, table.slots, cell_ids, strict=True)
                    for slot, cell in zip(slots, cells, strict=True)
                }
                if table is not None
                else {}
            )
        return state

    def _irq_changed(self, indom: InDom, key: tuple[int, ...]) -> bool:
        """Whether INDOM's instance ids KEY (in order) differ from those of its last refresh;
        the same ids are the same names, since an id always stands for one name."""
        if self._irq_last_ids.get(indom.serial) == key:
            return False
        self._irq_last_ids[indom.serial] = key
        return True

    # -- instance domains and labels -------------------------------------------------------

    @irq_intr_indom.refresh
    def _irq_intr_instances(self) -> dict[int, str] | None:
        """The rows of /proc/interrupts (ERR and MIS aside)."""
        state = self._irq_state(False)
        if not self._irq_changed(self.irq_intr_indom, tuple(state.row_ids)):
            return None
        return self._current(self.irq_intr_indom, state.rows())

    @irq_intrcpu_indom.refresh
    def _irq_intrcpu_instances(self) -> dict[int, str] | None:
        """Each cell of /proc/interrupts: "ROW::cpuN"."""
        state = self._irq_state(False)
        if not self._irq_changed(self.irq_intrcpu_indom, state.cell_key):
            return None
        names = state.cell_names()
        return self._current(self.irq_intrcpu_indom, names)

    @irq_sirq_indom.refresh
    def _irq_sirq_instances(self) -> dict[int, str] | None:
        """The rows of /proc/softirqs."""
        state = self._irq_state(True)
        if not self._irq_changed(self.irq_sirq_indom, tuple(state.row_ids)):
            return None
        return self._current(self.irq_sirq_indom, state.rows())

    @irq_sirqcpu_indom.refresh
    def _irq_sirqcpu_instances(self) -> dict[int, str] | None:
        """Each cell of /proc/softirqs: "ROW::cpuN"."""
        state = self._irq_state(True)
        if not self._irq_changed(self.irq_sirqcpu_indom, state.cell_key):
            return None
        names = state.cell_names()
        return self._current(self.irq_sirqcpu_indom, names)

    def _irq_line_label(self, inst: int, name: str) -> dict[str, Any] | None:
        """An interrupt line's labels: its name and the text after its counts."""
        label = self._irq_labels.get(name)
        return None if label is None else {"irq": name, "irqtext": label}

    def _irq_cell_label(self, inst: int, name: str) -> dict[str, Any] | None:
        """A per-CPU interrupt cell's labels: its CPU, line name and line text."""
        cell = self._irq_cells.get(INTERRUPT_CPU, {}).get(inst)
        if cell is None:
            return None
        row, slot = cell
        irq = name.split(":", 1)[0]
        return {"cpu": slot, "irq": irq, "irqtext": self._irq_labels.get(row, "")}

    def _irq_softirq_cell_label(self, inst: int, name: str) -> dict[str, Any] | None:
        """A per-CPU softirq cell's labels: its CPU and softirq name."""
        cell = self._irq_cells.get(SOFTIRQ_CPU, {}).get(inst)
        if cell is None:
            return None
        return {"cpu": cell[1], "softirq": name.split(":", 1)[0]}

    # -- clusters ------------------------------------------------------------------------

    @refresh(4)
    def _irq_refresh_interrupts(self) -> dict[str, Any]:
        """Cluster 4: each /proc/interrupts line's total and cells, and its ERR and MIS counts."""
        state = self._irq_state(False)  # even if only kernel.percpu.intr is asked: new
        wanted = self._wanted  # lines get their ids, ERR and MIS are kept, as in pmdalinux
        values: dict[str, Any] = {
            "kernel.all.interrupts.missed": self._irq_misses,
            "kernel.all.interrupts.errors": self._irq_errors,
        }
        if "kernel.all.interrupts.total" in wanted:
            values["kernel.all.interrupts.total"] = state.totals()
        if "kernel.percpu.interrupts" in wanted:
            values["kernel.percpu.interrupts"] = state.cells()
        return values

    @refresh(82)
    def _irq_refresh_softirqs_total(self) -> dict[str, Any]:
        """Cluster 82: each /proc/softirqs line's total."""
        return {"kernel.all.softirqs.total": self._irq_state(True).totals()}

    @refresh(63)
    def _irq_refresh_softirqs(self) -> dict[str, Any]:
        """Cluster 63: /proc/softirqs cells, and each CPU's sum (0s if the file is unreadable,
        as pmdalinux zeroes its sums before reading)."""
        state = self._irq_state(True)
        values: dict[str, Any] = {}
        if "kernel.percpu.softirqs" in self._wanted:
            values["kernel.percpu.softirqs"] = state.cells()
        if "kernel.percpu.sirq" in self._wanted:
            table, ncpus = state.table, self.ncpus_configured
            values["kernel.percpu.sirq"] = {
                n: 0 if table is None else table.counts[table.slot(n)]
                for n in self._cpu_numbers()
                if n < ncpus
            }
        return values
