"""pmrep -m: each column's PCP labels as pmrep prints them: every level's labels in
turn (context, domain, instance domain, cluster, item), then the instance's, nested maps
flattened to their leaves, as "{'name':'value',...}"."""

from __future__ import annotations

import json
from typing import Any

from purepcp.pmapi.errors import PMError
from purepcp.pmapi.ids import PM_ID_NULL, PM_INDOM_NULL, pmID_domain
from purepcp.pmapi.labels import (
    PM_LABEL_CLUSTER,
    PM_LABEL_CONTEXT,
    PM_LABEL_DOMAIN,
    PM_LABEL_INDOM,
    PM_LABEL_INSTANCES,
    PM_LABEL_ITEM,
)


def _flat(mapping: dict[str, Any]) -> list[tuple[str, Any]]:
    pairs: list[tuple[str, Any]] = []
    for key, value in mapping.items():
        pairs.extend(_flat(value) if isinstance(value, dict) else [(key, value)])
    return pairs


def _sets(ctx, ident: int, kind: int):
    try:
        return ctx.labels(ident, kind)
    except PMError:
        return ()


def _level(ctx, ident: int, kind: int) -> dict[str, Any]:
    sets = _sets(ctx, ident, kind)
    if not sets or not sets[0].json:
        return {}
    return json.loads(sets[0].json)


def column_labels(ctx, pmid: int, indom: int, insts) -> list[str]:
    """Per instance of INSTS (PM_IN_NULL alone when singular), its label string."""
    levels = [(PM_ID_NULL, PM_LABEL_CONTEXT), (pmID_domain(pmid), PM_LABEL_DOMAIN)]
    if indom != PM_INDOM_NULL:
        levels.append((indom, PM_LABEL_INDOM))
    levels += [(pmid & ~0x3FF, PM_LABEL_CLUSTER), (pmid, PM_LABEL_ITEM)]
    metric: list[tuple[str, Any]] = []
    for ident, kind in levels:
        found = _level(ctx, ident, kind)
        if kind == PM_LABEL_CONTEXT and not found:  # (libpcp's context labels, at least)
            found = {"hostname": ctx.hostname}
        metric += _flat(found)
    own: dict[int, dict[str, Any]] = {}
    if indom != PM_INDOM_NULL:
        for lset in _sets(ctx, indom, PM_LABEL_INSTANCES):
            if lset.json:
                own[lset.inst] = json.loads(lset.json)
    texts = []
    for inst in insts:
        pairs = metric + _flat(own.get(inst, {}))
        texts.append("{" + ",".join(f"'{k}':'{v}'" for k, v in pairs) + "}")
    return texts
