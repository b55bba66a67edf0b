"""The identifiers of pmseries: SHA-1 digests of small JSON-like texts (libpcp_web's
pmwebapi_*_hash), hex40 in key names and answers, the raw 20 bytes in set members,
hash fields and values.  The inserted parts are not escaped, as in PCP."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from purepcp.pmapi.desc import Desc
from purepcp.pmapi.labels import PM_LABEL_OPTIONAL, Label, LabelSet, pmMergeLabelSets
from purepcp.pmapi.types import pmSemStr, pmTypeStr
from purepcp.pmapi.units import pmUnitsStr

#: the source of a query expression's descriptor: twenty zero bytes
NULL_ID = bytes(20)


def sha1_text(text: str) -> str:
    """The hex40 digest of TEXT (UTF-8)."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def sha1_raw(text: str) -> bytes:
    """The bin20 digest of TEXT (UTF-8)."""
    return hashlib.sha1(text.encode("utf-8")).digest()


def _identifying(label: Label, json: bytes) -> bool:
    """pmproxy's filter for identifying labels: every label that is not optional."""
    return not label.flags & PM_LABEL_OPTIONAL


def merged_json(sets: Sequence[LabelSet | None], identifying: bool = True) -> str | None:
    """The sets merged as pmMergeLabelSets writes them; None when there is nothing."""
    present = [s for s in sets if s is not None]
    if not present:
        return None
    merged = pmMergeLabelSets(present, _identifying if identifying else None)
    return merged.json.decode("utf-8", "replace") if merged.json else None


def string_text(value: str) -> str:
    return '{"series":"string","value":"' + value + '"}'


def string_id(value: str) -> bytes:
    """S(value): the id of a name in the string maps (metric, instance, label, source)."""
    return sha1_raw(string_text(value))


def source_text(labels_json: str | None) -> str:
    return '{"series":"source","labels":' + (labels_json or "null") + "}"


def source_id(labels_json: str | None) -> bytes:
    """A source's id, from its context labels' JSON."""
    return sha1_raw(source_text(labels_json))


def metric_text(name: str, labels_json: str | None, desc: Desc) -> str:
    return (
        f'{{"series":"metric","name":"{name}","labels":{labels_json or "null"},'
        f'"semantics":"{pmSemStr(desc.sem)}","type":"{pmTypeStr(desc.type)}",'
        f'"units":"{pmUnitsStr(desc.units)}"}}'
    )


def metric_id(name: str, labels_json: str | None, desc: Desc) -> bytes:
    """A metric's series id under NAME (one per PMNS name), from its identifying labels
    (context, domain, indom, cluster, item) and descriptor."""
    return sha1_raw(metric_text(name, labels_json, desc))


def instance_id(name: str, labels_json: str | None) -> bytes:
    """An instance's series id: its name and labels (context, domain, indom, instance);
    shared by every metric on that instance domain of one source."""
    labels = labels_json or "null"
    return sha1_raw('{"series":"instance","name":"' + name + '","labels":' + labels + "}")


def expr_id(canonical: str) -> bytes:
    """A query expression's series id, from its canonical text."""
    return sha1_raw('{"series":"expr","expr":"' + canonical + '"}')
