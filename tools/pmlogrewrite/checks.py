"""What happens once every rules file is read: specs linked to each other, checked
against the archive as a whole, and (-v) summarised.

An instance domain's changes reach every metric (and help text) of that domain; a
metric's new PMID reaches its help text.  Then: a metric's new domain must exist in
the output, renumbered instances must stay unique, and an OUTPUT clause's instance
is looked up (PCP's link_entries, check_indoms, check_output, reportconfig).
"""

from __future__ import annotations

import time

from purepcp.pmapi.ids import pmID_cluster, pmID_domain, pmIDStr, pmInDomStr
from purepcp.pmapi.types import pmTypeStr
from purepcp.pmapi.units import pmUnitsStr

from .errors import Where
from .source import Source
from .specs import (
    PM_IN_NULL,
    PM_INDOM_NULL,
    GlobalFlag,
    InstFlag,
    MetricFlag,
    MetricSpec,
    Output,
    Rules,
    TextFlag,
    TextSpec,
)
from .words import inst_name_eq, sem_str

PM_TEXT_ONELINE, PM_TEXT_HELP, PM_TEXT_PMID, PM_TEXT_INDOM = 1, 2, 4, 8


def start_metric(rules: Rules, source: Source, pmid: int) -> MetricSpec | None:
    found = rules.metric(pmid)
    if found is not None:
        return found
    name, desc = source.name_of(pmid), source.desc(pmid)
    if name is None or desc is None:
        return None
    spec = MetricSpec(name, desc, desc)
    rules.metrics.insert(0, spec)
    return spec


def start_text(rules: Rules, source: Source, type_: int, ident: int) -> TextSpec | None:
    for spec in rules.texts:
        if spec.old_type == type_ and spec.old_id == ident:
            return spec
    text = source.text(type_, ident)
    if text is None:
        return None
    spec = TextSpec(type_, ident, text, type_, ident)
    rules.texts.insert(0, spec)
    return spec


def link_entries(rules: Rules, source: Source, where: Where) -> None:
    """Carry instance domain changes to their metrics and help text, and PMID changes
    to help text (PCP's link_entries)."""
    for ip in rules.indoms:
        change = ip.changes_instances
        if not change and ip.new_indom == ip.old_indom:
            continue
        for pmid in source.descs:
            mp = start_metric(rules, source, pmid)
            if mp is None or mp.old_desc.indom != ip.old_indom:
                continue
            if change:
                mp.ip = ip
            if ip.new_indom == ip.old_indom:
                continue
            if mp.flags & MetricFlag.INDOM:
                if mp.new_desc.indom != ip.new_indom:
                    raise where.semantic(
                        f"Conflicting indom change for metric {mp.old_name}"
                        f" ({pmInDomStr(mp.new_desc.indom)} from metric clause,"
                        f" {pmInDomStr(ip.new_indom)} from indom clause)"
                    )
            else:
                mp.flags |= MetricFlag.INDOM
                mp.change(indom=ip.new_indom)
    for ip in rules.indoms:
        change = ip.changes_instances
        if not change and ip.new_indom == ip.old_indom:
            continue
        for type_, inner in source.texts.items():
            if not type_ & PM_TEXT_INDOM:
                continue
            for ident in inner:
                if ident != ip.old_indom:
                    continue
                tp = start_text(rules, source, type_, ident)
                if tp is None:
                    continue
                if change:
                    tp.ip = ip
                if ip.new_indom != ip.old_indom:
                    if tp.flags & TextFlag.ID:
                        if tp.new_id != ip.new_indom:
                            raise where.semantic(
                                "Conflicting indom change for help text"
                                f" ({pmInDomStr(tp.new_id)} from text clause,"
                                f" {pmInDomStr(ip.new_indom)} from indom clause)"
                            )
                    else:
                        tp.flags |= TextFlag.ID
                        tp.new_id = ip.new_indom
    for mp in list(rules.metrics):
        if mp.new_desc.pmid == mp.old_desc.pmid:
            continue
        for type_, inner in source.texts.items():
            if not type_ & PM_TEXT_PMID:
                continue
            for ident in inner:
                if ident != mp.old_desc.pmid:
                    continue
                tp = start_text(rules, source, type_, ident)
                if tp is None:
                    continue
                if tp.flags & TextFlag.ID:
                    if tp.new_id != mp.new_desc.pmid:
                        raise where.semantic(
                            "Conflicting pmid change for help text"
                            f" ({pmIDStr(tp.new_id)} from text clause,"
                            f" {pmIDStr(mp.new_desc.pmid)} from pmid clause)"
                        )
                else:
                    tp.flags |= TextFlag.ID
                    tp.new_id = mp.new_desc.pmid


def link_labels(rules: Rules, source: Source, where: Where) -> None:
    """Carry instance domain and PMID changes to the label sets that name them."""
    from .labelrules import (
        CLUSTER,
        DOMAIN,
        INDOM,
        INSTANCES,
        ITEM,
        LabelFlag,
        start_label,
    )
    from .parser import Parser

    helper = Parser(source, rules, where, wflag=False, sflag=False, out_version=3)
    for ip in rules.indoms:
        change = ip.changes_instances
        if not change and ip.new_indom == ip.old_indom:
            continue
        for type_, inner in source.labels.items():
            if not type_ & (INDOM | INSTANCES):
                continue
            for ident, chain in inner.items():
                if ident != ip.old_indom:
                    continue
                for lset in chain[0].sets:
                    inst = lset.inst - (1 << 32) if lset.inst & 0x80000000 else lset.inst
                    lp = start_label(helper, type_, ident, inst, None, None, None)
                    if lp is None:
                        continue
                    if change:
                        lp.ip = ip
                    if ip.new_indom == ip.old_indom:
                        continue
                    if lp.flags & LabelFlag.ID:
                        if lp.new_id != ip.new_indom:
                            raise where.semantic(
                                "Conflicting indom change for label set"
                                f" ({pmInDomStr(lp.new_id)} from text clause,"
                                f" {pmInDomStr(ip.new_indom)} from indom clause)"
                            )
                    else:
                        lp.flags |= LabelFlag.ID
                        lp.new_id = ip.new_indom
    for mp in list(rules.metrics):
        old, new = mp.old_desc.pmid, mp.new_desc.pmid
        if old == new:
            continue
        for type_, inner in source.labels.items():
            if not type_ & (DOMAIN | CLUSTER | ITEM):
                continue
            for ident in inner:
                if type_ & DOMAIN:
                    old_id, new_id = pmID_domain(old), pmID_domain(new)
                elif type_ & CLUSTER:  # (PCP's own arithmetic: domain | cluster)
                    old_id = pmID_domain(old) | pmID_cluster(old)
                    new_id = pmID_domain(new) | pmID_cluster(new)
                else:
                    old_id, new_id = old, new
                if ident != old_id:
                    continue
                lp = start_label(helper, type_, old_id, 0, None, None, None)
                if lp is None or old_id == new_id:
                    continue
                if lp.flags & LabelFlag.ID:
                    if lp.new_id != new_id:
                        raise where.semantic(
                            "Conflicting pmid change for help label"
                            f" ({pmIDStr(lp.new_id)} from label clause,"
                            f" {pmIDStr(new)} from pmid clause)"
                        )
                else:
                    lp.flags |= LabelFlag.ID
                    lp.new_id = new_id


def check_indoms(rules: Rules, source: Source, where: Where) -> None:
    """New instance domains must be in the output; instances must stay unique."""
    for mp in rules.metrics:
        if mp.ip is not None:
            continue
        if not mp.flags & MetricFlag.INDOM or mp.new_desc.indom == PM_INDOM_NULL:
            continue
        ok = False
        for key in source.indoms:
            ip = next(
                (i for i in rules.indoms
                 if i.old_indom == mp.old_desc.indom or i.new_indom == mp.new_desc.indom),
                None,
            )  # fmt: skip
            if ip is None:
                ok = key == mp.new_desc.indom
            else:
                ok = ip.new_indom != ip.old_indom and ip.new_indom == mp.new_desc.indom
            if ok:
                break
        if not ok:
            raise where.semantic(
                f"New indom ({pmInDomStr(mp.new_desc.indom)}) for metric {mp.old_name}"
                " is not in the output archive"
            )
    for ip in rules.indoms:
        n = len(ip.old_inst)
        insts = [ip.new_inst[i] if ip.inst_flags[i] & InstFlag.INST else ip.old_inst[i]
                 for i in range(n)]  # fmt: skip
        names = [ip.new_iname[i] if ip.inst_flags[i] & InstFlag.INAME else ip.old_iname[i]
                 for i in range(n)]  # fmt: skip
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                if insts[i] == insts[j]:
                    raise where.semantic(
                        f'Duplicate instance id {insts[i]} ("{names[i]}" and "{names[j]}")'
                        f" for indom {pmInDomStr(ip.old_indom)}"
                    )
                if inst_name_eq(names[i], names[j]) > 0:
                    raise where.semantic(
                        f'Duplicate instance name "{names[i]}" ({insts[i]}) and "{names[j]}"'
                        f" ({insts[j]}) for indom {pmInDomStr(ip.old_indom)}"
                    )


def check_output(rules: Rules, source: Source, where: Where, wflag: bool) -> None:
    """Resolve OUTPUT INST/INAME against the old (and new) instance domain."""
    from .parser import Parser  # (start_indom's rules)

    helper = Parser(source, rules, where, wflag=wflag, sflag=False, out_version=3)
    for mp in rules.metrics:
        if not mp.flags & MetricFlag.INDOM or mp.output not in (Output.ONE, Output.FIRST):
            continue
        for label, indom, applies in (
            ("old", mp.old_desc.indom,
             mp.old_desc.indom != PM_INDOM_NULL and mp.output == Output.ONE),
            ("new", mp.new_desc.indom, mp.new_desc.indom != PM_INDOM_NULL),
        ):  # fmt: skip
            if not applies:
                continue
            ip = helper.start_indom(indom)
            found = False
            for inst, name in zip(ip.old_inst if ip else [], ip.old_iname if ip else [],
                                  strict=True):  # fmt: skip
                if mp.one_name is not None:
                    if inst_name_eq(name, mp.one_name) > 0:
                        mp.one_name, mp.one_inst = None, inst
                        found = True
                        break
                elif inst == mp.one_inst:
                    found = True
                    break
            if not found and wflag:
                what = f'"{mp.one_name}"' if mp.one_name is not None else str(mp.one_inst)
                where.warn(
                    f"Instance {what} from OUTPUT clause not found in {label} indom"
                    f" {pmInDomStr(indom)}"
                )
            if label == "new" and mp.old_desc.indom == PM_INDOM_NULL and mp.one_inst == PM_IN_NULL:
                mp.one_inst = 0


def any_change(rules: Rules) -> bool:
    return bool(
        rules.glob.flags
        or any(ip.new_indom != ip.old_indom or ip.changes_instances for ip in rules.indoms)
        or any(mp.flags or mp.ip is not None for mp in rules.metrics)
        or any(tp.flags or tp.ip is not None for tp in rules.texts)
        or any(lp.flags or getattr(lp, "ip", None) is not None for lp in rules.labels)
    )


def _output_line(mp: MetricSpec) -> str | None:
    single = mp.old_desc.indom == PM_INDOM_NULL
    o = mp.output
    if o == Output.ONE:
        if single:
            return f"the only value (output instance {mp.one_inst})"
        text = "value for instance"
        if mp.one_inst != PM_IN_NULL:
            text += f" {mp.one_inst}"
        if mp.one_name is not None:
            text += f' "{mp.one_name}"'
        return text
    if o == Output.FIRST:
        if not single:
            return "first value"
        if mp.one_inst != PM_IN_NULL:
            return f"first and only value (output instance {mp.one_inst})"
        return f'first and only value (output instance "{mp.one_name}")'
    words = {Output.LAST: "last", Output.MIN: "smallest", Output.MAX: "largest"}
    if o in words:
        if not single:
            return f"{words[o]} value"
        return f"{words[o]} and only value (output instance {mp.one_inst})"
    word = "sum" if o == Output.SUM else "average"
    if not single:
        return f"{word} value (output instance {mp.one_inst})"
    return f"{word} and only value (output instance {mp.one_inst})"


def report(rules: Rules, source: Source) -> str:
    """The -v summary of the changes (PCP's reportconfig)."""
    label = source.label
    g = rules.glob
    out = ["PCP Archive Log Rewrite Specifications Summary"]
    change = bool(g.flags)
    if g.flags & GlobalFlag.HOSTNAME:
        out.append(f"Hostname:\t{label.hostname} -> {g.hostname}")
    if g.flags & GlobalFlag.TIMEZONE:
        out.append(f"Timezone:\t{label.timezone} -> {g.timezone}")
    if g.flags & GlobalFlag.ZONEINFO:
        out.append(f"Zoneinfo:\t{label.zoneinfo} -> {g.zoneinfo}")
    if g.flags & GlobalFlag.FEATURES:
        out.append(f"Features:\t{label.features} -> {g.features}")
    if g.flags & GlobalFlag.TIME:
        sign = "-" if g.sec < 0 else ""
        tm = time.gmtime(abs(g.sec))
        hours = tm.tm_hour + 24 * (tm.tm_yday - 1)
        hh = f"{hours:02d}" if hours < 10 else str(hours)
        out.append(f"Delta:\t\t-> {sign}{hh}:{tm.tm_min:02d}:{tm.tm_sec:02d}.{g.nsec:09d}")
    for ip in rules.indoms:
        header = False
        if ip.new_indom != ip.old_indom:
            out += ["", f"Instance Domain: {pmInDomStr(ip.old_indom)}"]
            header = True
            out.append(f"pmInDom:\t-> {pmInDomStr(ip.new_indom)}")
            change = True
        for i, flags in enumerate(ip.inst_flags):
            if not flags:
                continue
            change = True
            if not header:
                out += ["", f"Instance Domain: {pmInDomStr(ip.old_indom)}"]
                header = True
            line = f'Instance:\t[{ip.old_inst[i]}] "{ip.old_iname[i]}" -> '
            if flags & InstFlag.DELETE:
                line += "DELETE"
            else:
                inst = ip.new_inst[i] if flags & InstFlag.INST else ip.old_inst[i]
                name = ip.new_iname[i] if flags & InstFlag.INAME else ip.old_iname[i]
                line += f'[{inst}] "{name}"'
            out.append(line)
    for mp in rules.metrics:
        old, new = mp.old_desc, mp.new_desc
        if mp.flags or mp.ip is not None:
            change = True
            out += ["", f"Metric: {mp.old_name} ({pmIDStr(old.pmid)})"]
        if mp.flags & MetricFlag.PMID:
            out.append(f"pmID:\t\t{pmIDStr(old.pmid)} -> {pmIDStr(new.pmid)}")
        if mp.flags & MetricFlag.NAME:
            out.append(f"Name:\t\t{mp.old_name} -> {mp.new_name}")
        if mp.flags & MetricFlag.TYPE:
            out.append(f"Type:\t\t{pmTypeStr(old.type)} -> {pmTypeStr(new.type)}")
        if mp.flags & MetricFlag.INDOM:
            out.append(f"InDom:\t\t{pmInDomStr(old.indom)} -> {pmInDomStr(new.indom)}")
            if mp.output != Output.ALL:
                out.append(f"Output:\t\t{_output_line(mp)}")
        if mp.ip is not None:
            out.append(f"Inst Changes:\t<- InDom {pmInDomStr(mp.ip.old_indom)}")
        if mp.flags & MetricFlag.SEM:
            out.append(f"Semantics:\t{sem_str(old.sem)} -> {sem_str(new.sem)}")
        if mp.flags & MetricFlag.UNITS:
            line = f"Units:\t\t{pmUnitsStr(old.units)} -> {pmUnitsStr(new.units)}"
            if mp.flags & MetricFlag.RESCALE:
                line += " (rescale)"
            out.append(line)
        if mp.flags & MetricFlag.DELETE:
            out.append("DELETE")
    for tp in rules.texts:
        if not tp.flags:
            continue
        change = True

        def kind(t: int) -> str:
            return f"{'One Line' if t & PM_TEXT_ONELINE else 'full'} " + (
                "pmID" if t & PM_TEXT_PMID else "pmInDom"
            )

        def ident(t: int, i: int) -> str:
            return pmIDStr(i) if t & PM_TEXT_PMID else pmInDomStr(i)

        out += ["", f"Help Text: {kind(tp.old_type)} ({ident(tp.old_type, tp.old_id)})"]
        if tp.flags & TextFlag.TYPE:
            out.append(f"Type:\t\t{kind(tp.old_type)} -> {kind(tp.new_type)}")
        if tp.flags & TextFlag.ID:
            out.append(f"ID:\t\t{ident(tp.old_type, tp.old_id)} -> {ident(tp.new_type, tp.new_id)}")
        if tp.flags & TextFlag.TEXT:
            out += [f'Text:\t\t"{tp.old_text}"', "\t\t->", f'\t\t"{tp.new_text}"']
        if tp.flags & TextFlag.DELETE:
            out.append("DELETE")
    for lp in rules.labels:
        change = _report_label(out, lp) or change
    if not change:
        out.append("No changes")
    return "\n".join(out) + "\n"


def _label_id(type_: int, ident: int) -> str:
    """How the summary names a label set's identifier (PCP's labelIDStr)."""
    if type_ & 1:
        return ""
    if type_ & 2:
        return f"Domain {ident}"
    if type_ & 8:
        return f"Cluster {pmIDStr(ident)}"
    if type_ & 16:
        return f"PMID {pmIDStr(ident)}"
    if type_ & 4:
        return f"Indom {pmInDomStr(ident)}"
    if type_ & 32:
        return f"Instances {pmInDomStr(ident)}"
    return "Unknown"


def _report_label(out: list[str], lp) -> bool:
    """The summary's lines for one label change; whether it changes anything."""
    from purepcp.pmapi.labels import pmLabelIdentString, pmPrintLabelSets

    from .labelrules import INSTANCES, LabelFlag

    if not lp.flags:
        return False
    line = f"Label: {pmLabelIdentString(lp.old_id, lp.old_type)}"
    if lp.old_type == INSTANCES:
        line += f", Instance: {lp.old_instance}" if lp.old_instance != -1 else ", Instances: ALL"
    if lp.old_label is not None:
        line += f", Label: {lp.old_label}"
    if lp.old_value is not None:
        line += f", Value: {lp.old_value}"
    out += ["", line]
    if lp.flags & LabelFlag.NEW and lp.new_labels is not None:
        out.append("NEW:")
        out.append(pmPrintLabelSets(lp.new_id, lp.new_type, [lp.new_labels]).rstrip("\n"))
    if lp.flags & LabelFlag.ID:
        out.append(
            f"ID:\t\t{_label_id(lp.old_type, lp.old_id)} -> {_label_id(lp.new_type, lp.new_id)}"
        )
    if lp.flags & LabelFlag.LABEL:
        out.append(f"Label:\t\t{lp.old_label or 'ALL'} -> {lp.new_label}")
    if lp.flags & LabelFlag.VALUE:
        out.append(f"Value:\t\t{lp.old_value or 'ALL'} -> {lp.new_value}")
    if lp.flags & LabelFlag.DELETE:
        out.append("DELETE")
    return True
