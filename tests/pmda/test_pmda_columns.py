"""Fetches answered by columns (pmda.columns): once a list of metrics has the same layout
twice running, the agent packs the values straight into the result's bytes.  Every
answer must be exactly what the careful path (one ValueSet per metric) gives, in
objects and in bytes, whatever changes between fetches."""

from __future__ import annotations

import logging

import pytest

from purepcp.pmapi.errors import PM_ERR_AGAIN, PM_ERR_PMID, PM_ERR_TYPE, PMError
from purepcp.pmapi.ids import pmID_build
from purepcp.pmapi.pdu.codec import decode, encode
from purepcp.pmapi.pdu.constants import PM_PROFILE_EXCLUDE
from purepcp.pmapi.pdu.records import FetchPDU, InDomProfile, ProfilePDU, ResultPDU
from purepcp.pmapi.pdu.result_layout import ColumnValueSets
from purepcp.pmapi.values import Result
from purepcp.pmda import (
    AGGREGATE,
    DOUBLE,
    FLOAT,
    I32,
    I64,
    NOSUPPORT,
    STRING,
    U32,
    U64,
    Agent,
    InDom,
    Metric,
    metric,
    refresh,
)

DOMAIN = 250


class Mixed(Agent):
    """Every kind of value a result holds, from a refresh whose answer the test sets."""

    name, domain = "mixed", DOMAIN
    disks = InDom(0, {0: "sda", 1: "sdb", 2: "sdc"})
    metrics = (
        Metric("mixed.u32", U32),
        Metric("mixed.i32", I32),
        Metric("mixed.u64", U64),
        Metric("mixed.i64", I64),
        Metric("mixed.float", FLOAT),
        Metric("mixed.double", DOUBLE),
        Metric("mixed.text", STRING),
        Metric("mixed.disk.reads", U64, indom=disks),
        Metric("mixed.disk.temp", I32, indom=disks),
        Metric("mixed.disk.model", STRING, indom=disks),
        Metric("mixed.gone", U32),
        Metric("mixed.unsupported", NOSUPPORT),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.answer: dict = {}
        self.calls = 0

    @refresh(0)
    def values(self):
        return self.answer

    @metric("mixed.calls", U32)
    def counted(self):  # a fetch method: must run once per fetch, even when the path changes
        self.calls += 1
        return self.calls


NAMES = [
    "u32", "i32", "u64", "i64", "float", "double", "text",
    "disk.reads", "disk.temp", "disk.model", "gone", "unsupported", "calls",
]  # fmt: skip


def answer(step: int) -> dict:
    return {
        "mixed.u32": 7 + step,
        "mixed.i32": -5 - step,
        "mixed.u64": (1 << 40) + step,
        "mixed.i64": -(1 << 40) - step,
        "mixed.float": 0.5 + step,
        "mixed.double": 1.25 * step,
        "mixed.text": f"text {step % 2}",
        "mixed.disk.reads": {0: step, "sdb": 2 * step, 2: 3 * step},
        "mixed.disk.temp": {0: -step, 1: step, 2: 40},
        "mixed.disk.model": {0: "QEMU", 1: "QEMU HARDDISK", 2: "x"},
        "mixed.gone": PMError(PM_ERR_AGAIN),
    }


@pytest.fixture
def mixed(tmp_path):
    top = [f" {name} {DOMAIN}:0:{i}" for i, name in enumerate(NAMES) if "." not in name]
    disk = [f" {name[5:]} {DOMAIN}:0:{i}" for i, name in enumerate(NAMES) if "." in name]
    top[-1] = f" calls {DOMAIN}:1:0\n disk"
    (tmp_path / "pmns").write_text(
        "mixed {\n" + "\n".join(top) + "\n}\nmixed.disk {\n" + "\n".join(disk) + "\n}\n"
    )
    return Mixed(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")


PMIDS = (
    *(pmID_build(DOMAIN, 0, i) for i in range(len(NAMES) - 1)),
    pmID_build(DOMAIN, 1, 0),
    pmID_build(DOMAIN, 9, 9),  # unknown
)


def careful(agent: Agent, pmids=PMIDS) -> tuple:
    """The careful path's value sets from the values the last fetch's refresh left
    (the fetch method is answered from a copy, so it is not run a second time)."""
    plan = agent.fetch_plan(pmids)
    calls = agent.calls
    agent.calls -= 1
    try:
        return agent.value_sets(plan)
    finally:
        agent.calls = calls


def check(agent: Mixed, step: int) -> Result:
    agent.answer = answer(step)
    result = agent.fetch(PMIDS)
    expected = careful(agent)
    assert tuple(result.vsets) == expected
    wire = encode(ResultPDU(result, 0))
    assert wire == encode(ResultPDU(Result(result.timestamp, expected), 0))
    assert tuple(decode(wire).result.vsets) == expected
    return result


def test_the_same_layout_twice_is_then_written_by_columns(mixed):
    kinds = [type(check(mixed, step).vsets) for step in range(6)]
    assert kinds[:2] == [tuple, tuple]  # seen once, then learnt
    assert kinds[2:] == [ColumnValueSets] * 4  # values change, the layout does not
    assert mixed.calls == 6
    vsets = check(mixed, 9).vsets
    assert vsets[1].atoms(I32)[0] == -14 and vsets[8].atoms(I32)[0] == -9
    assert vsets[6].values == ("text 1",) and vsets[10].numval == PM_ERR_AGAIN
    assert vsets[13].numval == PM_ERR_PMID and vsets[11].numval == 0


def test_each_change_of_layout_is_answered_carefully_then_learnt(mixed):
    for step in range(3):
        check(mixed, step)
    changes = [
        lambda a: a["mixed.disk.reads"].pop("sdb"),  # an instance without a value
        lambda a: a.update({"mixed.text": "a longer text"}),  # a string of another length
        lambda a: a.update({"mixed.u32": None}),  # no value now
        lambda a: a.update({"mixed.gone": 3}),  # an error gone
    ]
    for change in changes:
        mixed.answer = answer(4)
        change(mixed.answer)
        for fetch in range(3):
            result = mixed.fetch(PMIDS)
            assert tuple(result.vsets) == careful(mixed)
            assert type(result.vsets) is (ColumnValueSets if fetch == 2 else tuple)
    mixed.set_instances(Mixed.disks, {0: "sda", 5: "sdf"})  # the instances change
    mixed.answer = answer(5)
    mixed.answer["mixed.disk.reads"] = {0: 1, 5: 2}
    assert mixed.fetch(PMIDS).vsets[7].insts.tolist() == [0, 5]
    assert mixed.fetch(PMIDS).vsets[7].insts.tolist() == [0, 5]
    assert type(mixed.fetch(PMIDS).vsets) is ColumnValueSets


def test_a_value_that_does_not_fit_is_the_careful_paths_error(mixed, caplog):
    for step in range(3):
        check(mixed, step)
    for bad in (-1, 1 << 32, 2.5):
        mixed.answer = answer(3)
        mixed.answer["mixed.u32"] = bad
        with caplog.at_level(logging.ERROR):
            result = mixed.fetch(PMIDS)
        assert result.vsets[0].numval == PM_ERR_TYPE
        assert tuple(result.vsets) == careful(mixed)
        assert "mixed.u32" in caplog.text
    assert type(check(mixed, 4).vsets) is ColumnValueSets  # the layout is still learnt


def test_a_profile_that_changes_the_instances_changes_the_layout(mixed):
    for step in range(3):
        check(mixed, step)
    indom = mixed.indom_id(Mixed.disks)
    only_sdb = InDomProfile(indom, PM_PROFILE_EXCLUDE, (1,))  # all excluded but sdb
    mixed.handle(ProfilePDU(0, 0, (only_sdb,)))
    result = check(mixed, 4)
    assert result.vsets[7].insts.tolist() == [1]


def test_the_pipe_loop_sends_the_packed_bytes(mixed):
    mixed.answer = answer(1)
    replies = [mixed.handle(FetchPDU(0, PMIDS, 0)) for _ in range(3)]
    assert type(replies[-1].result.vsets) is ColumnValueSets
    assert tuple(decode(encode(replies[-1])).result.vsets) == careful(mixed)


def test_aggregates_are_never_written_by_columns(tmp_path):
    class Blobs(Agent):
        name, domain = "blobs", DOMAIN
        metrics = (Metric("blobs.one", AGGREGATE),)

        @refresh(0)
        def values(self):
            return {"blobs.one": b"\x01\x02\x03"}

    (tmp_path / "pmns").write_text(f"blobs {{\n one {DOMAIN}:0:0\n}}\n")
    agent = Blobs(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    results = [agent.fetch([pmID_build(DOMAIN, 0, 0)]) for _ in range(3)]
    assert all(type(r.vsets) is tuple for r in results)
    assert results[-1].vsets[0].values == (b"\x01\x02\x03",)


class Fetchers(Agent):
    """Metrics whose values come from their own fetch methods, each called once a fetch."""

    name, domain = "fetchers", DOMAIN

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.step = 0
        self.calls = dict.fromkeys(("u32", "i32", "u64", "double", "text", "none", "fails"), 0)

    def _count(self, name: str) -> int:
        self.calls[name] += 1
        return self.step

    @metric("fetchers.u32", U32)
    def u32(self):
        value = self._count("u32")
        return value if self.step != 4 else -1  # step 4: a value that does not fit

    @metric("fetchers.i32", I32)
    def i32(self):
        return -self._count("i32")

    @metric("fetchers.u64", U64)
    def u64(self):
        return (1 << 40) + self._count("u64")

    @metric("fetchers.double", DOUBLE)
    def double(self):
        return self._count("double") / 4

    @metric("fetchers.text", STRING)
    def text(self):
        return f"step {self._count('text') % 2}"

    @metric("fetchers.none", U32)
    def none(self):
        self._count("none")
        return None

    @metric("fetchers.fails", U32)
    def fails(self):
        self._count("fails")
        raise PMError(PM_ERR_AGAIN)


def test_fetch_methods_run_once_a_fetch_whichever_path_answers(tmp_path, caplog):
    """Values from fetch methods go into the columns without a set each; a fetch that
    falls back to the careful path builds its sets from the values already got."""
    leaves = ("u32", "i32", "u64", "double", "text", "none", "fails")
    (tmp_path / "pmns").write_text(
        "fetchers {\n" + "".join(f" {n} {DOMAIN}:0:{i}\n" for i, n in enumerate(leaves)) + "}\n"
    )
    agent = Fetchers(pmns_path=tmp_path / "pmns", help_path=tmp_path / "nohelp")
    pmids = tuple(agent.pmns.lookup(f"fetchers.{n}") for n in leaves)
    kinds = []
    for step in range(7):
        agent.step = step
        with caplog.at_level(logging.ERROR):
            result = agent.fetch(pmids)
        kinds.append(type(result.vsets))
        assert agent.calls == dict.fromkeys(leaves, step + 1)
        got = {n: vs for n, vs in zip(leaves, result.vsets, strict=True)}
        assert got["u32"].numval == (PM_ERR_TYPE if step == 4 else 1)
        if step != 4:
            assert got["u32"].values[0] == step
        assert got["i32"].atoms(I32)[0] == -step
        assert got["u64"].values[0] == (1 << 40) + step
        assert got["double"].values[0] == step / 4
        assert got["text"].values[0] == f"step {step % 2}"
        assert got["none"].numval == 0 and got["fails"].numval == PM_ERR_AGAIN
        wire = encode(ResultPDU(result, 0))
        assert tuple(decode(wire).result.vsets) == tuple(result.vsets)
    assert kinds[2] is ColumnValueSets and kinds[4] is tuple and kinds[5] is ColumnValueSets
    assert "fetchers.u32" in caplog.text
