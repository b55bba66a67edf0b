"""pmlogger.optfetch: the fetch groups PCP's pmlogger makes of a task, as libpcp's optfetch.c.

The expected groups are what PCP 6.0.3's pmlogger did with the same requests (seen in
the order of its archives' records and metadata; test_pmlogger.py compares whole
archives with it).
"""

from __future__ import annotations

import re

from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmIDStr, pmInDom_build
from purepcp.pmlogger.optfetch import OptFetch, Request, describe_order, fetch_groups

CPU = pmInDom_build(60, 0)
USER, NICE, SYS, IDLE = (pmID_build(60, 0, item) for item in range(4))
NCPU = pmID_build(60, 0, 32)
LOAD, COLOR = pmID_build(60, 2, 0), pmID_build(253, 0, 1)


def _groups(requests: list[Request]) -> list[list[str]]:
    return [[pmIDStr(p) for p in group] for group in fetch_groups(requests)]


def test_one_group_highest_pmid_first():
    requests = [
        Request(NCPU, PM_INDOM_NULL),
        Request(LOAD, pmInDom_build(60, 2)),
        Request(COLOR, pmInDom_build(253, 0), (0,)),
    ]
    assert _groups(requests) == [["253.0.1", "60.2.0", "60.0.32"]]


def test_instance_lists_beside_all_of_the_indom_make_a_second_group():
    """Three metrics asking for cpu0, then one asking for every CPU: fetching all of them
    for the first three would cost 3 x 9 unasked instances (x 2), more than a new group
    (15 + 4 + 1), so the fourth starts a group, placed first; hinv.ncpu then joins the
    first group in the list that it costs least to join."""
    requests = [
        Request(IDLE, CPU, (0,)), Request(SYS, CPU, (0,)), Request(NICE, CPU, (0,)),
        Request(USER, CPU), Request(NCPU, PM_INDOM_NULL),
    ]  # fmt: skip
    assert _groups(requests) == [["60.0.32", "60.0.0"], ["60.0.3", "60.0.2", "60.0.1"]]
    requests[0], requests[3] = Request(USER, CPU, (0,)), Request(IDLE, CPU)
    assert _groups(requests) == [["60.0.32", "60.0.3"], ["60.0.2", "60.0.1", "60.0.0"]]


def test_a_metric_asked_for_again_widens_or_is_dropped():
    again = [Request(USER, CPU, (0,)), Request(USER, CPU, (0,)), Request(NCPU, PM_INDOM_NULL)]
    assert _groups(again) == [["60.0.32", "60.0.0"]]
    widened = [Request(IDLE, CPU, (0,)), Request(SYS, CPU, (0,)), Request(NICE, CPU, (0,)),
               Request(IDLE, CPU), Request(USER, CPU, (1,))]  # fmt: skip
    # (the widened InDom makes the group's cost 59: cpu1 alone is cheaper in a new one)
    assert _groups(widened) == [["60.0.0"], ["60.0.3", "60.0.2", "60.0.1"]]


def test_describe_order_takes_tasks_in_turn():
    once = [Request(pmID_build(60, 1, 9), PM_INDOM_NULL)]
    slow = [Request(NCPU, PM_INDOM_NULL)]
    fast = [Request(LOAD, pmInDom_build(60, 2)), Request(COLOR, pmInDom_build(253, 0))]
    order = describe_order([once, slow, fast, [Request(NCPU, PM_INDOM_NULL)]])
    assert [pmIDStr(p) for p in order] == ["60.1.9", "60.0.32", "253.0.1", "60.2.0"]
    assert list(order.values()) == [0, 1, 2, 3]


# QA 1273's tasks: sample.bin, simple's five metrics, disk.dev.read, sampledso.long's seven
BIN, BIN_INDOM = pmID_build(29, 0, 6), pmInDom_build(29, 2)
SIMPLE = [Request(pmID_build(253, 0, 0), PM_INDOM_NULL),
          Request(pmID_build(253, 0, 1), pmInDom_build(253, 0)),
          Request(pmID_build(253, 1, 2), PM_INDOM_NULL),
          Request(pmID_build(253, 1, 3), PM_INDOM_NULL),
          Request(pmID_build(253, 2, 4), pmInDom_build(253, 1))]  # fmt: skip
DISK = [Request(pmID_build(60, 0, 4), pmInDom_build(60, 1))]
LONG = [Request(pmID_build(30, 0, i), PM_INDOM_NULL) for i in (10, 11, 12, 13, 14)] + [
    Request(pmID_build(30, 0, i), pmInDom_build(30, 2)) for i in (103, 104)
]


def _bin(*insts: int) -> list[Request]:
    return [Request(BIN, BIN_INDOM, insts or None)]


def _dumped(requests: list[Request]) -> list[list[str]]:
    """The PMIDs of each "Fetch Control" of the last dump, in the dump's order."""
    plan = OptFetch()
    for request in requests:
        plan.request(request)
    groups: list[list[str]] = []
    for line in plan.dump().splitlines():
        if line.startswith("Fetch Control "):
            groups.append([])
        elif line.split()[:1] == ["PMID"]:
            groups[-1].append(line.split()[1])
    return groups


def test_pmloggers_global_scope_as_qa_1273_sees_it():
    """PCP's pmlogger sets optfetch's "global" scope: a metric goes where the whole group
    costs least (a new one on a tie), so sampledso.long starts a group of its own after
    sample.bin, simple and disk.dev.read (the incremental cost put it with them)."""
    assert _dumped(_bin() + SIMPLE + DISK + LONG + _bin()) == [
        ["30.0.104", "30.0.103", "30.0.14", "30.0.13", "30.0.12", "30.0.11", "30.0.10"],
        ["60.0.4", "253.2.4", "253.0.1", "253.1.3", "253.1.2", "253.0.0", "29.0.6"],
    ]
    assert _dumped(LONG + _bin() + SIMPLE + DISK + _bin()) == [
        ["60.0.4"],
        ["253.2.4", "253.0.1", "29.0.6", "30.0.104", "30.0.103", "253.1.3", "253.1.2",
         "253.0.0", "30.0.14", "30.0.13", "30.0.12", "30.0.11", "30.0.10"],
    ]  # fmt: skip
    disjoint = _bin(100, 300, 500) + LONG + SIMPLE + DISK + _bin(200, 400, 600)
    assert _dumped(disjoint)[0] == ["29.0.6", "60.0.4"]
    plan = OptFetch()
    for request in disjoint:
        plan.request(request)
    assert [g.profile() for g in plan.groups] == [
        ((BIN_INDOM, (200, 400, 600)),),
        ((BIN_INDOM, (100, 300, 500)),),
    ]


def test_the_dump_is_libpcps():
    """__pmOptFetchDump's lines (pointers aside), as PCP's pmlogger -D optfetch,desperate
    printed them for this task; a widened request's list is dumped as C leaves it."""
    plan = OptFetch()
    requests = [Request(IDLE, CPU, (0,)), Request(SYS, CPU, (0,)), Request(NICE, CPU, (0,)),
                Request(IDLE, CPU), Request(USER, CPU, (1,))]  # fmt: skip
    for request in requests:
        plan.request(request)
    dump = re.sub(r"0x[0-9a-f]+", "P", plan.dump())
    assert dump.startswith(
        "Dump optfetch structures from P next=P\n"
        "Fetch Control @ P: cost=20 state=NEW PMID PROFILE \n"
        "PMIDs: [1] 60.0.0\n  InDom 60.0 Control @ P:\n  instances: [1] 1\n"
    )
    assert dump.endswith(
        "    PMID 60.0.3 Control @ P:\n    instances: [0] (nil)\n"
        "      Request @ P:\n      instances: [0]\n\n"
    )
    assert "Dump optfetch structures from P next=(nil)\nFetch Control @ P: cost=59 " in dump
