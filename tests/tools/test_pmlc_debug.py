"""pmlc -D appl0: each logging statement's metrics and instances, as PCP's dumpmetrics
prints them (QA 1292 compares them)."""

from __future__ import annotations

from purepcp.tools.pmlc.metrics import InDom, Metric, MetricList


def test_dump_lists_named_instances_all_instances_and_singular_metrics():
    metrics = MetricList(None, None)  # type: ignore[arg-type]
    metrics.indoms = [InDom(1, [0, 1, 2], ["red", "green", "blue"]), InDom(2, [100], ["bin-100"])]
    metrics.metrics = [
        Metric("sample.bin", 1, 1, insts=[100], has_insts=True),
        Metric("sample.colour", 2, 0, insts=[0, 1, 2]),
        Metric("sample.long.ten", 3, -1),
        Metric("sample.colour.odd", 4, 0, insts=[7], has_insts=True),
    ]
    assert metrics.dump() == (
        "     Inst  Inst Name\n"
        "    ====== =========\n"
        "sample.bin\n"
        "       100 bin-100\n"
        "\n"
        "sample.colour\n"
        "         0 red\n"
        "         1 green\n"
        "         2 blue\n"
        "\n"
        "sample.long.ten\n"
        "           singular instance\n"
        "\n"
        "sample.colour.odd\n"
        "    KAPOWIE! inst 7 not found\n"
        "\n"
    )
