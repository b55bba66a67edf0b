"""pmlogger.optfetch: the fetch groups PCP's pmlogger makes of a task, as libpcp's optfetch.c.

The expected groups are what PCP 6.0.3's pmlogger did with the same requests (seen in
the order of its archives' records and metadata; test_pmlogger.py compares whole
archives with it).
"""

from __future__ import annotations

from purepcp.pmapi.ids import PM_INDOM_NULL, pmID_build, pmIDStr, pmInDom_build
from purepcp.pmlogger.optfetch import Request, describe_order, fetch_groups

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
    assert _groups(widened) == [["60.0.3", "60.0.2", "60.0.1", "60.0.0"]]


def test_describe_order_takes_tasks_in_turn():
    once = [Request(pmID_build(60, 1, 9), PM_INDOM_NULL)]
    slow = [Request(NCPU, PM_INDOM_NULL)]
    fast = [Request(LOAD, pmInDom_build(60, 2)), Request(COLOR, pmInDom_build(253, 0))]
    order = describe_order([once, slow, fast, [Request(NCPU, PM_INDOM_NULL)]])
    assert [pmIDStr(p) for p in order] == ["60.1.9", "60.0.32", "253.0.1", "60.2.0"]
    assert list(order.values()) == [0, 1, 2, 3]
