"""pmwebapi(3)'s REST calls, ``/pmapi/*``, and the OpenMetrics endpoint ``/metrics``.

Each call checks its parameters as PCP 6's pmproxy does, runs on a web context
(groups.py), and answers with the JSON pmproxy writes: the same keys in the same
order, the same HTTP statuses and the same error texts, which clients such as
grafana-pcp match on.  ``/pmapi/_name`` is the pre-PCP-5 form of a call (numeric
PMIDs and instance domains, fewer keys).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from purepcp.pmapi.cnumbers import cstring
from purepcp.pmapi.errors import PM_ERR_PERMISSION, PM_ERR_TOOSMALL, PMError, pmErrStr
from purepcp.pmapi.ids import PM_INDOM_NULL, pmIDStr, pmInDomStr
from purepcp.pmapi.types import pmSemStr

from .access import WriteAccess
from .groups import WebGroups
from .openmetrics import scrape_text
from .webgroup import WebContext
from .webrecords import WebError
from .webtext import check_match, name_matcher, parse_indom, parse_pmid, type_name, units_text

JSON = "application/json"
TEXT = "text/plain"
HTML = "text/html"
log = logging.getLogger("pmproxy")
#: pmproxy's scrape asks for metrics this many names at a time
BATCH = 256

#: The /pmapi/ calls in the order pmproxy tries them (a prefix match, as PCP's):
#: each with the HTTP methods a CORS preflight may ask for.
COMMANDS = (
    ("context", "GET"),
    ("profile", "GET"),
    ("metrics", "GET"),
    ("metric", "GET"),
    ("derive", "GET, POST"),
    ("fetch", "GET"),
    ("indom", "GET"),
    ("store", "GET, POST"),
    ("children", "GET"),
)


@dataclass(frozen=True)
class Request:
    """An HTTP request as the API sees it: method, path, first value of each parameter."""

    method: str
    path: str
    params: Mapping[str, str]
    body: bytes = b""
    headers: Mapping[str, str] = None  # type: ignore[assignment]
    #: the client's address without its port ("" on a unix socket: this host)
    peer: str = ""


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str
    body: bytes
    allow: str | None = None  # methods a CORS preflight may use


def html_error(status: int, servlet: str, text: str) -> Reply:
    """pmproxy's HTML page for a request it cannot route or whose parameters are missing."""
    reason = {400: "Bad Request", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
              413: "Payload Too Large", 414: "URI Too Long",
              431: "Request Header Fields Too Large",
              503: "Service Unavailable"}.get(status, "Error")  # fmt: skip
    from . import __version__

    page = (
        f"<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n"
        f"<h1>{status} {reason}</h1>\r\n<p><b>{servlet} servlet</b>: {text}</p><hr>\r\n"
        f"<p><small><i>pmproxy/{__version__}</i></small></p>\r\n</body>\r\n</html>\r\n"
    )
    return Reply(status, HTML, page.encode())


def _context_key(ident: int | str | None) -> str:
    if ident is None:
        return ""
    if isinstance(ident, int) or ident.isdigit():
        return f'"context":{int(ident)},'
    return f'"context":{json.dumps(ident)},'


def json_error(ident: int | str | None, message: str, status: int = 400) -> Reply:
    body = f'{{{_context_key(ident)}"message":{json.dumps(message)},"success":false}}\r\n'
    return Reply(status, JSON, body.encode())


def json_success(ident: int) -> Reply:
    return Reply(200, JSON, f'{{"context":{ident},"success":true}}\r\n'.encode())


def _split(text: str | None) -> list[str]:
    """sdssplitlen on ",": empty pieces stay."""
    return [] if text is None else text.split(",")


def _labels(text: str | None) -> str:
    return text if text else "null"


class WebAPI:
    """The REST API over a set of web contexts: ``await api.handle(request)``."""

    def __init__(self, groups: WebGroups, writers: WriteAccess | None = None) -> None:
        self.groups = groups
        self.writers = writers if writers is not None else WriteAccess()

    async def handle(self, request: Request) -> Reply:
        path = request.path
        route = self._route(path)
        if route is None:
            return html_error(400, "unknown", "no handler for URL")
        command, ident, compat = route
        params = dict(request.params)
        if request.method == "POST" and command in ("derive", "store"):
            params.setdefault("expr" if command == "derive" else "value", request.body.decode())
        if "context" in params:
            ident = params["context"]
        if not self._has_required(command, request.method, params):
            return html_error(400, "webapi", "failed to process URL")
        if request.method in ("OPTIONS", "HEAD"):
            allow = dict(COMMANDS).get(command, "GET")
            return Reply(200, JSON, b"", allow=allow)
        client = params.get("client")
        if command == "store" and not self.writers.allows(request.peer):
            what = params.get("name", params.get("pmid", ""))
            log.warning("pmproxy: refused a store to %s from %s: not in [pmwebapi] allow.store",
                        what, request.peer)  # fmt: skip
            message = f"failed to store value to metric {what}: {pmErrStr(PM_ERR_PERMISSION)}"
            return json_error(ident, message, 403)
        handler = getattr(self, "_" + command)
        try:
            return await handler(ident, params, compat, client)
        except WebError as exc:
            where = exc.context if exc.context is not None else ident
            return json_error(where, exc.message, exc.status)

    @staticmethod
    def _route(path: str) -> tuple[str, str | None, bool] | None:
        """(command, context number from the path or None, compat) for PATH."""
        if path.startswith("/pmapi/"):
            rest = path[len("/pmapi/") :]
            ident = None
            digits = len(rest) - len(rest.lstrip("0123456789"))
            if digits:
                if rest[digits : digits + 1] != "/":
                    return None
                ident, rest = rest[:digits], rest[digits + 1 :]
            compat = rest.startswith("_")
            rest = rest.removeprefix("_")
            for name, _ in COMMANDS:
                if rest.startswith(name):
                    return name, ident, compat
        if path.startswith("/metrics"):
            return "metrics", None, False
        return None

    @staticmethod
    def _has_required(command: str, method: str, params: Mapping[str, str]) -> bool:
        """pmwebapi_setup_request_parameters' checks, failing with "failed to process URL"."""
        post = method == "POST"
        if command == "fetch":
            return any(k in params for k in ("name", "names", "pmid", "pmids"))
        if command == "indom":
            return "indom" in params or "name" in params
        if command == "profile":
            return "expr" in params
        if command == "store":
            if not params and not post:
                return False
            if "name" not in params and "pmid" not in params:
                return False
            return post or "value" in params
        if command == "derive":
            if not params and not post:
                return False
            return post or "name" in params or "expr" in params
        return True

    async def _run(
        self, ident: str | None, params: Mapping[str, str], work: Callable[[WebContext], Any]
    ) -> tuple[int, Any]:
        return await self.groups.call(ident, params, work)

    # -- the calls ----------------------------------------------------------------------

    async def _context(self, ident, params, compat, client) -> Reply:
        number, web = await self._run(ident, params, lambda web: web)
        out = [f'{{"context":{number}']
        if not compat:
            if client is not None:
                out.append(f',"client":{json.dumps(client)}')
            out.append(
                f',"source":"{web.source}","hostspec":{json.dumps(web.host)},'
                f'"labels":{web.labels_json}'
            )
        out.append("}\r\n")
        return Reply(200, JSON, "".join(out).encode())

    async def _metric(self, ident, params, compat, client) -> Reply:
        text = params.get("prefix") or params.get("names") or params.get("name")
        names = _split(text) if text else []

        def work(web: WebContext) -> list[str]:
            entries: list[str] = []
            if not names:
                for leaf in web.walk(""):
                    entries.append(_metric_entry(web, leaf, compat))
                return entries
            for name in names:
                try:
                    leaves = list(web.walk(name))
                except PMError as exc:
                    if len(names) == 1:
                        raise WebError(f"{name} traversal failed - {pmErrStr(exc.code)}") from None
                    entries.append(_bad_name(name, pmErrStr(exc.code)))
                    continue
                entries.extend(_metric_entry(web, leaf, compat) for leaf in leaves)
            return entries

        number, entries = await self._run(ident, params, work)
        head = f'{{"context":{number}' + _client(client)
        body = head + ',"metrics":[' + ",".join(entries) + "]}\r\n"
        return Reply(200, JSON, body.encode())

    async def _fetch(self, ident, params, compat, client) -> Reply:
        names = params.get("names")
        single = False
        by_pmid = False
        if names is None and "name" in params:
            names, single = params["name"], True
        if names is None:
            by_pmid = True
            names = params.get("pmids")
            if names is None:
                names, single = params.get("pmid"), True
        empty = names is not None and not cstring(names)  # (C splits "" into no names)
        wanted = _split(names)

        def work(web: WebContext):
            if empty:  # (the context is made first: PCP's answer names it)
                raise WebError(pmErrStr(PM_ERR_TOOSMALL))
            if by_pmid:
                metrics = [web.metric_by_pmid(parse_pmid(p)) for p in wanted]
            else:
                metrics = web.metrics_by_names(wanted)
            if single and None in metrics:
                raise WebError("bad parameters passed")
            return web.fetch(metrics)

        def fast(web: WebContext):
            metrics = None if by_pmid or empty else web.known_for_fetch(wanted)
            return None if metrics is None else web.fetch_async(metrics)

        number, (stamp, values) = await self.groups.call_fast(ident, params, fast, work)
        out = []
        if compat:
            out.append(f'{{"timestamp":{{"s":{stamp.sec},"us":{stamp.nsec // 1000}}},"values":[')
        else:
            out.append(
                f'{{"context":{number}{_client(client)},'
                f'"timestamp":{stamp.sec}.{stamp.nsec:09d},"values":['
            )
        sets = []
        for fm in values:
            pmid = str(fm.pmid) if compat else f'"{pmIDStr(fm.pmid)}"'
            null = "-1" if compat else "null"
            insts = ",".join(
                f'{{"instance":{null if inst is None else inst},"value":{value}}}'
                for inst, value in fm.values
            )
            sets.append(f'{{"pmid":{pmid},"name":{json.dumps(fm.name)},"instances":[{insts}]}}')
        out.append(",".join(sets))
        out.append("]}\r\n")
        return Reply(200, JSON, "".join(out).encode())

    async def _indom(self, ident, params, compat, client) -> Reply:
        match = params.get("match")
        check_match(match)
        metric_name = params.get("name")
        indom_text = params.get("indom")
        inames = params.get("iname")
        insts = params.get("instance")

        def work(web: WebContext):
            if metric_name is None and indom_text is None:
                raise WebError("bad indom parameters")
            indom = _indom_of(web, metric_name, indom_text, f"failed to lookup indom {indom_text}")
            ip = web.indom(indom, refresh=True)
            web.indom_labels(ip)
            oneline, helptext = web.indom_text(ip)
            if inames is not None:
                test = name_matcher(match, _split(inames))
                chosen = [(i, n) for i, n in ip.names.items() if test(n)]
            elif insts is not None:
                ids = {int(x) for x in _split(insts) if x.strip().lstrip("-").isdigit()}
                chosen = [(i, n) for i, n in ip.names.items() if i in ids]
            else:
                chosen = list(ip.names.items())
            entries = [
                f'{{"instance":{i},"name":{json.dumps(n)},'
                f'"labels":{_labels(web.instance_labels_json(ip, i))}}}'
                for i, n in chosen
            ]
            labels = _labels(web.instance_labels_json(ip, None))
            return indom, labels, oneline, helptext, entries

        number, (indom, labels, oneline, helptext, entries) = await self._run(ident, params, work)
        if compat:
            out = [f'{{"indom":{indom}']
        else:
            out = [f'{{"context":{number}{_client(client)},"indom":"{pmInDomStr(indom)}"']
        out.append(f',"labels":{labels}')
        out.append(_texts(oneline, helptext))
        out.append(',"instances":[' + ",".join(entries) + "]}\r\n")
        return Reply(200, JSON, "".join(out).encode())

    async def _children(self, ident, params, compat, client) -> Reply:
        prefix = params.get("prefix")
        if prefix is None:
            prefix = params.get("name")
        prefix = prefix or ""

        def work(web: WebContext):
            try:
                return web.ctx.children(prefix)
            except PMError as exc:
                raise WebError(f"child traversal failed - {pmErrStr(exc.code)}") from None

        number, kids = await self._run(ident, params, work)
        leaf = ",".join(json.dumps(n) for n, is_leaf in kids if is_leaf)
        nonleaf = ",".join(json.dumps(n) for n, is_leaf in kids if not is_leaf)
        body = (
            f'{{"context":{number}{_client(client)},"name":{json.dumps(prefix)},'
            f'"leaf":[{leaf}],"nonleaf":[{nonleaf}]}}\r\n'
        )
        return Reply(200, JSON, body.encode())

    async def _profile(self, ident, params, compat, client) -> Reply:
        expr = params.get("expr")
        if expr not in ("add", "del"):
            raise WebError(f"{expr} - invalid 'expr' parameter value")
        match = params.get("match")
        check_match(match)
        metric_name = params.get("name")
        indom_text = params.get("indom")

        def work(web: WebContext) -> None:
            if metric_name is None and indom_text is None:
                indom = PM_INDOM_NULL
            else:
                indom = _indom_of(web, metric_name, indom_text, "invalid profile parameters")
            iname, inst = params.get("iname"), params.get("instance")
            try:
                web.profile(
                    indom,
                    expr == "add",
                    match,
                    _split(iname) if iname is not None else None,
                    _split(inst) if iname is None and inst is not None else None,
                )
            except PMError as exc:
                raise WebError(f"{expr} - {pmErrStr(exc.code)}") from None

        number, _ = await self._run(ident, params, work)
        return json_success(number)

    async def _store(self, ident, params, compat, client) -> Reply:
        name = params.get("name")
        pmid_text = params.get("pmid")
        value = params.get("value", "")
        inames = params.get("iname")
        insts = params.get("instance") if inames is None else None

        def work(web: WebContext) -> None:
            if name is not None:
                metric = web.metric_by_name(name)
                if metric is None:
                    raise WebError(f"{name} - failed to lookup metric")
            elif pmid_text is not None:
                metric = web.metric_by_pmid(parse_pmid(pmid_text))
                if metric is None:
                    raise WebError(f"{pmid_text} - failed to lookup PMID")
            else:
                raise WebError("bad parameters passed")
            try:
                web.store(
                    metric,
                    value,
                    _split(inames) if inames is not None else None,
                    _split(insts) if insts is not None else None,
                )
            except PMError as exc:
                raise WebError(
                    f"failed to store value to metric {name if name is not None else pmid_text}:"
                    f" {pmErrStr(exc.code)}"
                ) from None

        number, _ = await self._run(ident, params, work)
        return json_success(number)

    async def _derive(self, ident, params, compat, client) -> Reply:
        name = params.get("name")
        expr = params.get("expr")

        def work(web: WebContext) -> None:
            if expr is not None and name is None:
                web.derive_config(expr)
            elif expr is not None and name is not None:
                web.derive(name, expr)
            else:
                raise WebError("invalid derive parameters")

        number, _ = await self._run(ident, params, work)
        return json_success(number)

    async def _metrics(self, ident, params, compat, client) -> Reply:
        text = params.get("names") or params.get("name") or params.get("prefix")
        text = text or params.get("target")
        prefixes = _split(text) if text else [""]
        match = params.get("match") or "glob"
        if match not in ("exact", "glob", "regex"):
            raise WebError(f"{match} - invalid 'match' parameter value")
        filters = _split(params.get("filter")) if params.get("filter") else []
        excluded = name_matcher(match, filters) if filters else None
        times = params.get("times") == "true"

        def work(web: WebContext) -> list[str]:
            chunks: list[str] = []
            for prefix in prefixes:
                try:
                    leaves = list(web.walk(prefix))
                except PMError as exc:
                    raise WebError(f"'{prefix}' - {pmErrStr(exc.code)}") from None
                if excluded is not None:
                    leaves = [n for n in leaves if not excluded(n)]
                for start in range(0, len(leaves), BATCH):
                    batch = leaves[start : start + BATCH]
                    chunks.append(scrape_text(web, batch, times, compat))
            return chunks

        chunks = await self.groups.scrape(ident, params, work)
        return Reply(200, TEXT, "".join(chunks).encode())


# --------------------------------------------------------------------- JSON pieces


def _indom_of(web: WebContext, metric_name: str | None, indom_text: str | None, bad: str) -> int:
    """The instance domain of metric METRIC_NAME, else the one INDOM_TEXT names; WebError
    with pmproxy's words when there is none (BAD for an indom that does not parse)."""
    if metric_name is not None:
        metric = web.metric_by_name(metric_name)
        if metric is None:
            raise WebError(f"{metric_name} - failed to lookup metric")
        if metric.desc.indom == PM_INDOM_NULL:
            raise WebError(f"{metric_name} - metric has null indom")
        return metric.desc.indom
    indom = parse_indom(indom_text or "")
    if indom == PM_INDOM_NULL:
        raise WebError(bad)
    return indom


def _client(client: str | None) -> str:
    return "" if client is None else f',"client":{json.dumps(client)}'


def _texts(oneline: str | None, helptext: str | None) -> str:
    out = ""
    if oneline is not None:
        out += f',"text-oneline":{json.dumps(oneline)}'
    help_text = helptext if helptext else oneline
    if help_text is not None:
        out += f',"text-help":{json.dumps(help_text)}'
    return out


def _bad_name(name: str, message: str) -> str:
    return f'{{"name":{json.dumps(name)},"message":{json.dumps(message)},"success":false}}'


def _metric_entry(web: WebContext, name: str, compat: bool) -> str:
    """webmetric_lookup: one metric's entry in a /pmapi/metric answer."""
    metric = web.metric_by_name(name)
    if metric is None:
        return _bad_name(name, "failed to lookup metric name")
    web.read_domain_cluster_labels(metric)
    desc = metric.desc
    if desc.indom != PM_INDOM_NULL:
        ip = web.indom(desc.indom, refresh=True)
        web.indom_labels(ip)
    oneline, helptext = web.metric_text(metric)
    series_name = name if name in metric.names else metric.names[0]
    out = [f'{{"name":{json.dumps(name)},"series":"{web.series(metric, series_name)}"']
    out.append(f',"pmid":{desc.pmid}' if compat else f',"pmid":"{pmIDStr(desc.pmid)}"')
    if desc.indom != PM_INDOM_NULL:
        out.append(f',"indom":{desc.indom}' if compat else f',"indom":"{pmInDomStr(desc.indom)}"')
    out.append(
        f',"type":"{type_name(desc.type)}","sem":"{pmSemStr(desc.sem)}",'
        f'"units":"{units_text(desc)}","labels":{_labels(web.metric_labels_json(metric))}'
    )
    out.append(_texts(oneline, helptext))
    out.append("}")
    return "".join(out)
