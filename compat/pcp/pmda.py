"""PCP's Python agent API (``pcp.pmda``) on purepcp's agent framework.

A script written for PCP's binding (``from pcp.pmda import PMDA, pmdaMetric,
pmdaIndom, pmdaInstid``) builds its tables in ``__init__`` and calls ``run()``;
here ``run()`` hands them to a purepcp Agent (pcp.pmda_agent) and serves pmcd
or dbpmda on stdin/stdout, or, under an Install script, writes the domain
(PCP_PYTHON_DOMAIN) or namespace (PCP_PYTHON_PMNS) instead, as PCP's does.
As in PCP, the command line is not parsed: the domain is the constructor's.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import sys
from ctypes import Structure, addressof, c_char_p, c_int, c_void_p
from typing import Any

import cpmapi
from pcp.pmapi import pmDesc, pmErr, pmInDom, pmUnits

from . import pmda_cpmda as cpmda
from .pmda_agent import CALLBACKS, BridgeAgent, Dispatch
from .pmda_cache import cache_for, find_cache
from .pmda_cpmda import PMDA_FLAG_AUTHORIZE, PMDA_FLAG_CONTAINER
from .pmda_cpmda import state as _state


def _dispatch() -> Dispatch:
    dispatch = _state.get("dispatch")
    if dispatch is None:
        dispatch = _state["dispatch"] = Dispatch(0, "pmda")
    return dispatch


def pmdaGetContext() -> int:
    """The pmcd context of the request being answered."""
    agent = _state.get("agent")
    return agent.context if agent is not None else -1


def pmdaAddLabels(label: str) -> str:
    """Check LABEL (JSON text) as pmdaAddLabels does; the text back, for a label callback."""
    return _checked_labels(label)


def pmdaAddNotes(label: str) -> str:
    """Check LABEL (JSON text) as pmdaAddNotes does; the text back, for a notes callback."""
    return _checked_labels(label)


def _checked_labels(label: Any) -> str:
    from purepcp.pmapi.errors import PMError
    from purepcp.pmapi.labels import LabelSet

    text = label.decode() if isinstance(label, bytes) else str(label)
    try:
        LabelSet.from_json(text)
    except PMError as exc:
        raise pmErr(exc.code) from None
    return text


class pmdaMetric(Structure):
    """A metric of the agent's table: its descriptor (and libpcp_pmda's user pointer)."""

    _fields_ = [("m_user", c_void_p), ("m_desc", pmDesc)]

    def __init__(self, pmid: int, typeof: int, indom: int, sem: int, units: Any) -> None:
        super().__init__()
        self.m_user = None
        self.m_desc.pmid = pmid
        self.m_desc.type = typeof
        self.m_desc.indom = indom
        self.m_desc.sem = sem
        self.m_desc.units = units

    def __str__(self) -> str:
        return f"pmdaMetric@{addressof(self):#x} pmid={self.m_desc.pmid:#x} type={self.m_desc.type}"


class pmdaInstid(Structure):
    """One instance of a table instance domain: number and name."""

    _fields_ = [("i_inst", c_int), ("i_name", c_char_p)]

    def __init__(self, instid: int, name: str) -> None:
        super().__init__()
        self.i_inst = instid
        self.i_name = name.encode("utf-8")

    def __str__(self) -> str:
        return f"pmdaInstid@{addressof(self):#x} index={self.i_inst} name={self.i_name}"


class pmdaIndom(Structure):
    """An instance domain: a table (a list of pmdaInstid) or a cache (a dict
    {name: ctypes value}); it_numinst is the table's size, -1 for a cache."""

    _fields_ = [("it_indom", pmInDom), ("it_numinst", c_int), ("it_set", c_void_p)]

    def __init__(self, indom: int, insts: Any) -> None:
        super().__init__()
        self.it_indom = indom
        self.it_numinst = 0
        self._insts: list[tuple[int, str]] = []
        self.set_instances(indom, insts)

    def instance_pairs(self) -> list[tuple[int, str]]:
        """The current (inst, name) pairs."""
        if self.it_numinst > 0:
            return list(self._insts)
        cache = find_cache(self.it_indom)
        return [] if cache is None else [(e.inst, e.name) for e in cache.active()]

    def __iter__(self) -> Any:
        return iter(self.instance_pairs())

    def inst_name_lookup(self, instance: int) -> str | None:
        """The name of INSTANCE, or None."""
        for inst, name in self.instance_pairs():
            if inst == instance:
                return name
        return None

    def load_indom(self, indom: int, insts: Any) -> None:
        """PCP loads a dict domain's saved cache here; ours keeps none between runs."""

    def load(self) -> None:
        """As load_indom: nothing is kept between runs."""

    def set_list_instances(self, insts: Any) -> None:
        self._insts = [(int(i.i_inst), i.i_name.decode()) for i in insts]
        self.it_numinst = len(self._insts)
        cpmda.set_need_refresh()

    def set_dict_instances(self, indom: int, insts: Any) -> None:
        cache = cache_for(indom)
        cache.mark(False)
        for name, value in insts.items():
            cache.add(str(name), value)
        self.it_numinst = -1

    def set_instances(self, indom: int, insts: Any) -> None:
        """A list makes a table, a dict a cache, None leaves it unknown."""
        if insts is None:
            self.it_numinst = 0
        elif isinstance(insts, dict):
            self.it_numinst = -1
            self.set_dict_instances(indom, insts)
        else:
            self.set_list_instances(insts)

    def __str__(self) -> str:
        return f"pmdaIndom@{addressof(self):#x} indom={self.it_indom:#x} num={self.it_numinst}"

    def _cache_only(self) -> Any:
        if self.it_numinst > 0:
            raise pmErr(cpmapi.PM_ERR_NYI)
        return cache_for(self.it_indom)

    def cache_load(self) -> None:
        """Load the saved cache (none is saved here: nothing to load)."""
        self._cache_only()

    def cache_mark_active(self) -> None:
        self._cache_only().mark(True)

    def cache_mark_inactive(self) -> None:
        self._cache_only().mark(False)

    def cache_resize(self, maximum: int) -> None:
        if maximum < 0:
            raise pmErr(cpmapi.PM_ERR_SIGN)
        self._cache_only().maximum = maximum


class pmdaUnits(pmUnits):
    """pmUnits, under the name PCP's agents import it by."""

    def __init__(
        self, dimS: int, dimT: int, dimC: int, scaleS: int, scaleT: int, scaleC: int
    ) -> None:
        super().__init__(dimS, dimT, dimC, scaleS, scaleT, scaleC)


class MetricDispatch:
    """The agent's metric and instance-domain tables, names and help text."""

    def __init__(self, domain: int, name: str, logfile: str, helpfile: str) -> None:
        dispatch = Dispatch(domain, name)
        _state["dispatch"] = dispatch
        self._dispatch = dispatch
        self._indomtable = dispatch.indom_table
        self._indoms = dispatch.indoms
        self._metrics = dispatch.metrics
        self._metric_names = dispatch.names
        self._metric_names_map: dict[str, int] = {}
        self._metrictable: list[pmdaMetric] = []
        self._metric_oneline: dict[int, str] = {}
        self._metric_helptext: dict[int, str] = {}
        self._indom_oneline: dict[int, str] = {}
        self._indom_helptext: dict[int, str] = {}
        dispatch.texts.update(
            {
                (cpmapi.PM_TEXT_PMID, 0): self._metric_oneline,
                (cpmapi.PM_TEXT_PMID, cpmapi.PM_TEXT_HELP): self._metric_helptext,
                (cpmapi.PM_TEXT_INDOM, 0): self._indom_oneline,
                (cpmapi.PM_TEXT_INDOM, cpmapi.PM_TEXT_HELP): self._indom_helptext,
            }
        )
        if os.access(helpfile, os.R_OK):
            dispatch.helpfile = helpfile
        self._log = _open_log(name, logfile)

    def clear_indoms(self) -> None:
        del self._indomtable[:]
        for table in (self._indoms, self._indom_oneline, self._indom_helptext):
            table.clear()

    def clear_metrics(self) -> None:
        del self._metrictable[:]
        for table in (
            self._metrics,
            self._metric_names,
            self._metric_names_map,
            self._metric_oneline,
            self._metric_helptext,
        ):
            table.clear()

    def reset_metrics(self) -> None:
        self.clear_metrics()
        self._dispatch.need_refresh = True

    def pmns_refresh(self) -> None:
        """Rebuild the namespace from the metric names, before the next request."""
        self._dispatch.need_refresh = True

    def connect_pmcd(self) -> None:
        """Announce the agent to pmcd (the CREDS PDU on stdout) now, before a slow start-up
        makes pmcd give up on it; run() does it if the agent has not.  Nothing while an
        Install script asks for the domain or namespace."""
        if _installing() or _state.get("connected"):
            return
        from purepcp.pmapi.pdu.codec import encode
        from purepcp.pmapi.pdu.records import Cred, CredsPDU
        from purepcp.pmda.clients import CREDENTIAL_FLAGS
        from purepcp.pmda.serve import AGENT_PDU_VERSION

        flags = CREDENTIAL_FLAGS if self._dispatch.wants_credentials else 0
        _write(encode(CredsPDU((Cred.version(flags, AGENT_PDU_VERSION),), os.getpid())))
        _state["connected"] = True

    def add_metric(self, name: str, metric: pmdaMetric, oneline: str = "", text: str = "") -> None:
        pmid = metric.m_desc.pmid
        if name in self._metric_names_map:
            raise KeyError(f"attempt to add_metric with an existing name={name}")
        if pmid in self._metrics:
            raise KeyError("attempt to add_metric with an existing PMID")
        self._metrictable.append(metric)
        self._metrics[pmid] = metric
        self._metric_names[pmid] = name
        self._metric_names_map[name] = pmid
        self._metric_oneline[pmid] = oneline
        self._metric_helptext[pmid] = text
        self._dispatch.need_refresh = True

    def remove_metric(self, name: str, metric: pmdaMetric) -> None:
        pmid = metric.m_desc.pmid
        if name not in self._metric_names_map:
            raise KeyError(f"attempt to remove non-existant metric name={name}")
        if pmid not in self._metrics:
            raise KeyError("attempt to remove_metric with non-existant PMID")
        self._metrictable.remove(metric)
        for table in (self._metrics, self._metric_names, self._metric_oneline):
            table.pop(pmid)
        self._metric_helptext.pop(pmid)
        self._metric_names_map.pop(name)
        self._dispatch.need_refresh = True

    def add_indom(self, indom: pmdaIndom, oneline: str = "", text: str = "") -> None:
        indomid = indom.it_indom
        if any(entry.it_indom == indomid for entry in self._indomtable):
            raise KeyError("attempt to add_indom with an existing ID")
        self._indomtable.append(indom)
        self._indoms[indomid] = indom
        self._indom_oneline[indomid] = oneline
        self._indom_helptext[indomid] = text

    def replace_indom(self, indom: Any, insts: Any) -> None:
        """New instances for INDOM (a pmInDom, or a pmdaIndom that replaces it)."""
        if isinstance(indom, pmdaIndom):
            it_indom, replacement = indom.it_indom, indom
        else:
            it_indom, replacement = indom, pmdaIndom(indom, insts)
        if isinstance(insts, list):
            for i, entry in enumerate(self._indomtable):
                if entry.it_indom == it_indom:
                    self._indomtable[i] = replacement
                    break
        self._indoms[it_indom] = replacement

    def inst_lookup(self, indom: int, instance: int) -> c_void_p | None:
        """The value a cache domain keeps for INSTANCE (a void pointer to it), or None."""
        entry = self._indoms[indom]
        if entry.it_numinst >= 0:
            return None
        cache = find_cache(indom)
        found = None if cache is None else cache.lookup(instance)
        if found is None or found.private is None:
            return None
        return c_void_p(addressof(found.private))

    def inst_name_lookup(self, indom: int, instance: int) -> str | None:
        return self._indoms[indom].inst_name_lookup(instance)

    def pmid_name_lookup(self, cluster: int, item: int) -> str | None:
        return self._metric_names.get(PMDA.pmid(cluster, item))


class PMDA(MetricDispatch):
    """A performance metrics domain agent: subclass it, add metrics, set callbacks, run()."""

    def __init__(
        self, name: str, domain: int, logfile: str | None = None, helpfile: str | None = None
    ) -> None:
        self._name = name
        self._domain = domain
        if not logfile:
            logfile = name + ".log"
        if not helpfile:
            from pcp.pmapi import pmContext

            helpfile = f"{pmContext.pmGetConfig('PCP_PMDAS_DIR')}/{name}/help"
        super().__init__(domain, "pmda" + name, logfile, helpfile)

    @property
    def name(self) -> str:
        return self._name

    @property
    def domain(self) -> int:
        return self._domain

    def read_name(self) -> str:
        return self._name

    def read_domain(self) -> int:
        return self._domain

    def domain_write(self) -> None:
        """Print the domain.h line an Install script asks for."""
        print(f"#define {self._name.upper()} {self._domain}")

    def pmns_write(self, root: str) -> None:
        """Print the namespace entries (each top-level prefix, a dynamic subtree)."""
        prefixes = {name.split(".")[0] for name in self._metric_names.values()}
        lead = "\t" if root == "root" else ""
        if lead:
            print("root {")
        for prefix in prefixes:
            print(f"{lead}{prefix}\t{self._domain}:*:*")
        if lead:
            print("}")

    def pmda_notready(self) -> None:
        _send_error(cpmapi.PM_ERR_PMDANOTREADY)

    def pmda_ready(self) -> None:
        _send_error(cpmapi.PM_ERR_PMDAREADY)

    def run(self) -> None:
        """Write the domain or namespace for an Install script, or serve pmcd on stdin/stdout."""
        if "PCP_PYTHON_DOMAIN" in os.environ:
            self.domain_write()
        elif "PCP_PYTHON_PMNS" in os.environ:
            self.pmns_write(os.environ["PCP_PYTHON_PMNS"])
        else:
            self._serve()

    def _serve(self) -> None:
        """Answer pmcd's requests on stdin until it hangs up (pmdaMain)."""
        from purepcp.pmda.serve import answer_requests

        agent = BridgeAgent(self._dispatch, self._log)
        _state["agent"] = agent
        if _state.pop("notify", False):
            agent.changed(labels=True, names=True)
        self.connect_pmcd()
        stdin = sys.stdin.buffer
        read = getattr(stdin, "read1", stdin.read)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, KeyboardInterrupt):
            answer_requests(agent, read, _write)

    # callbacks (set_fetch, set_refresh, ... set_endcontext_callback)
    @staticmethod
    def set_fetch(fetch: Any) -> None:
        _set_callback("fetch", fetch)

    @staticmethod
    def set_label(label: Any) -> None:
        _set_callback("label", label)

    @staticmethod
    def set_notes(notes: Any) -> None:
        _set_callback("notes", notes)

    @staticmethod
    def set_refresh(refresh: Any) -> None:
        _set_callback("refresh", refresh)

    @staticmethod
    def set_instance(instance: Any) -> None:
        _set_callback("instance", instance)

    @staticmethod
    def set_fetch_callback(fetch_callback: Any) -> None:
        _set_callback("fetch_callback", fetch_callback)

    @staticmethod
    def set_label_callback(label_callback: Any) -> None:
        _set_callback("label_callback", label_callback)

    @staticmethod
    def set_notes_callback(notes_callback: Any) -> None:
        _set_callback("notes_callback", notes_callback)

    @staticmethod
    def set_attribute_callback(attribute_callback: Any) -> None:
        _set_callback("attribute_callback", attribute_callback)

    @staticmethod
    def set_store_callback(store_callback: Any) -> None:
        _set_callback("store_callback", store_callback)

    @staticmethod
    def set_endcontext_callback(endcontext_callback: Any) -> None:
        _set_callback("endcontext_callback", endcontext_callback)

    @staticmethod
    def set_refresh_all(refresh_all: Any) -> None:
        _set_callback("refresh_all", refresh_all)

    @staticmethod
    def set_refresh_metrics(refresh_metrics: Any) -> None:
        _set_callback("refresh_metrics", refresh_metrics)

    @staticmethod
    def set_notify_change() -> None:
        cpmda.set_notify_change()

    @staticmethod
    def set_user(username: str) -> None:
        """PCP's binding ignores this too (pmcd has already chosen the user)."""

    @staticmethod
    def pmid(cluster: int, item: int) -> int:
        return cpmda.pmda_pmid(cluster, item)

    @staticmethod
    def pmid_build(domain: int, cluster: int, item: int) -> int:
        return cpmda.pmid_build(domain, cluster, item)

    @staticmethod
    def pmid_cluster(cluster: int) -> int:
        return cpmda.pmid_cluster(cluster)

    @staticmethod
    def indom(serial: int) -> int:
        return cpmda.pmda_indom(serial)

    @staticmethod
    def indom_build(domain: int, serial: int) -> int:
        return cpmda.indom_build(domain, serial)

    @staticmethod
    def units(
        dim_space: int,
        dim_time: int,
        dim_count: int,
        scale_space: int,
        scale_time: int,
        scale_count: int,
    ) -> int:
        """The packed pmUnits word."""
        return cpmda.pmda_units(
            dim_space, dim_time, dim_count, scale_space, scale_time, scale_count
        )

    @staticmethod
    def uptime(now: int) -> str:
        """NOW seconds as pmdaUptime writes them: [Nday[s] ]HH:MM:SS."""
        return cpmda.pmda_uptime(now)

    @staticmethod
    def set_comm_flags(flags: int) -> None:
        if flags & (PMDA_FLAG_AUTHORIZE | PMDA_FLAG_CONTAINER):
            _dispatch().wants_credentials = True

    @staticmethod
    def log(message: str) -> None:
        cpmda.pmda_log(message)

    @staticmethod
    def dbg(message: str) -> None:
        cpmda.pmda_dbg(message)

    @staticmethod
    def err(message: str) -> None:
        cpmda.pmda_err(message)


def _set_callback(name: str, func: Any) -> None:
    if not callable(func):
        raise TypeError(f"set_{name}: parameter must be callable")
    assert name in CALLBACKS
    _dispatch().callbacks[name] = func


def _open_log(name: str, logfile: str) -> logging.Logger:
    """The agent's log, as pmdaOpenLog keeps it: LOGFILE (relative to the working
    directory, which pmcd makes $PCP_LOG_DIR/pmcd; "-" for stderr as it is) becomes
    standard error, so tracebacks land there too, headed and footed as pmOpenLog does;
    none while an Install script asks for the domain or namespace."""
    from purepcp.pmapi import logfile as logfiles
    from purepcp.pmapi.daemonlog import NotifyFormatter

    log = logging.getLogger(f"pcp.pmda.{name}")
    log.handlers.clear()
    log.propagate = False
    log.setLevel(logging.DEBUG)  # (pmNotifyErr writes every level)
    if _installing():
        log.addHandler(logging.NullHandler())
        return log
    if logfile != "-":
        with contextlib.suppress(OSError):  # (as pmOpenLog: stderr stays if it cannot)
            fd = os.open(logfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            sys.stderr.flush()
            os.dup2(fd, 2)
            os.close(fd)
    logfiles.header(sys.stderr, name)
    atexit.register(_log_footer)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(NotifyFormatter(name))
    log.addHandler(handler)
    return log


def _log_footer() -> None:
    from purepcp.pmapi import logfile as logfiles

    with contextlib.suppress(OSError, ValueError):
        logfiles.footer(sys.stderr)


def _installing() -> bool:
    """Whether an Install script runs the agent for its domain or namespace."""
    return "PCP_PYTHON_DOMAIN" in os.environ or "PCP_PYTHON_PMNS" in os.environ


def _write(data: bytes) -> None:
    out = sys.stdout.buffer
    out.write(data)
    out.flush()


def _send_error(code: int) -> None:
    """Tell pmcd, out of turn, that the agent is (not) ready (an ERROR PDU)."""
    from purepcp.pmapi.pdu.codec import encode
    from purepcp.pmapi.pdu.records import ErrorPDU

    _write(encode(ErrorPDU(code)))
