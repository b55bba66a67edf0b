"""Small Python agents written against PCP's agent API (pcp.pmda), and the dbpmda
requests that exercise them: run by PCP's binding and by ours, they must answer alike."""

from __future__ import annotations

#: Tables, help text from add_metric/add_indom, a failing fetch callback, no store
#: callback and the default domain labels.
DEMO_AGENT = """
import cpmapi as c
from pcp.pmda import PMDA, pmdaMetric, pmdaIndom, pmdaInstid
from pcp.pmapi import pmUnits

class Demo(PMDA):
    def __init__(self):
        PMDA.__init__(self, 'demo', 300, helpfile='/nonexistent')
        self.add_indom(pmdaIndom(self.indom(0), [pmdaInstid(0, 'a'), pmdaInstid(5, 'b c')]),
                       'the things', 'All the things.')
        self.add_metric('demo.count', pmdaMetric(self.pmid(0, 0), c.PM_TYPE_U32,
                        c.PM_INDOM_NULL, c.PM_SEM_COUNTER, pmUnits(0, 0, 1, 0, 0, 0)),
                        'a count', 'A count of things.')
        self.add_metric('demo.things', pmdaMetric(self.pmid(0, 1), c.PM_TYPE_STRING,
                        self.indom(0), c.PM_SEM_INSTANT, pmUnits()))
        self.add_metric('other.thing', pmdaMetric(self.pmid(1, 0), c.PM_TYPE_DOUBLE,
                        c.PM_INDOM_NULL, c.PM_SEM_INSTANT, pmUnits()))
        self.set_fetch_callback(self.fetch_cb)

    def fetch_cb(self, cluster, item, inst):
        if cluster == 1:
            raise RuntimeError('a failing source')
        if item == 0:
            return [42, 1]
        return ['thing %d' % inst, 1] if inst == 0 else [c.PM_ERR_INST, 0]

Demo().run()
"""

DEMO_REQUESTS = """\
traverse demo
traverse other
desc demo.count
desc demo.things
fetch demo.count demo.things other.thing
instance 300.0
instance 300.0 b
text demo.count
text indom 300.0
text demo.things
label domain
label instances 300.0
store demo.count "1"
"""

#: Callbacks: refresh, refresh_all, instance, store, label, notes, instance labels; a
#: cache instance domain re-made by replace_indom (inst_lookup of its c_int values),
#: remove_metric, pmid_name_lookup, the fetch callback's no-value and U64 answers.
CALLBACKS_AGENT = """
import sys
from ctypes import c_int, c_double, cast, POINTER
import cpmapi as c
from pcp.pmda import PMDA, pmdaMetric, pmdaIndom, pmdaInstid
from pcp.pmapi import pmUnits

class Demo2(PMDA):
    def __init__(self):
        PMDA.__init__(self, 'demo2', 301, logfile='-', helpfile='/nonexistent')
        self.connect_pmcd()
        self.cache = pmdaIndom(self.indom(1), {})
        self.add_indom(self.cache)
        self.values = {}
        self.calls = []
        self.add_metric('demo2.cached', pmdaMetric(self.pmid(0, 0), c.PM_TYPE_64,
                        self.indom(1), c.PM_SEM_INSTANT, pmUnits(1, 0, 0, c.PM_SPACE_KBYTE, 0, 0)),
                        'cached', 'Values of the cached things.')
        self.add_metric('demo2.calls', pmdaMetric(self.pmid(1, 0), c.PM_TYPE_STRING,
                        c.PM_INDOM_NULL, c.PM_SEM_DISCRETE, pmUnits()))
        self.add_metric('demo2.gone', pmdaMetric(self.pmid(1, 1), c.PM_TYPE_FLOAT,
                        c.PM_INDOM_NULL, c.PM_SEM_INSTANT, pmUnits()))
        self.add_metric('demo2.sub.u64', pmdaMetric(self.pmid(2, 0), c.PM_TYPE_U64,
                        c.PM_INDOM_NULL, c.PM_SEM_COUNTER, pmUnits(0, 1, 0, 0, c.PM_TIME_MSEC, 0)))
        self.add_metric('demo2.sub.novalue', pmdaMetric(self.pmid(2, 1), c.PM_TYPE_32,
                        c.PM_INDOM_NULL, c.PM_SEM_INSTANT, pmUnits()))
        self.add_metric('demo2.sub.bad', pmdaMetric(self.pmid(2, 2), c.PM_TYPE_32,
                        c.PM_INDOM_NULL, c.PM_SEM_INSTANT, pmUnits()))
        self.remove_metric('demo2.gone', self._metrics[self.pmid(1, 1)])
        self.set_refresh(self.refresh)
        self.set_refresh_all(self.refresh_all)
        self.set_instance(self.instance)
        self.set_fetch_callback(self.fetch_cb)
        self.set_store_callback(self.store_cb)
        self.set_label(self.label)
        self.set_notes(self.notes)
        self.set_label_callback(self.label_cb)
        self.set_notes_callback(self.notes_cb)
        self.grow(['alpha', 'beta'])

    def grow(self, names):
        self.values = {n: c_int(10 * (i + 1)) for i, n in enumerate(names)}
        self.replace_indom(self.indom(1), self.values)

    def refresh(self, cluster):
        self.calls.append('r%d' % cluster)

    def refresh_all(self, clusters):
        self.calls.append('a' + ','.join(map(str, clusters)))

    def instance(self, serial):
        self.calls.append('i%d' % serial)
        if len(self.calls) > 3:
            self.grow(['beta', 'gamma', 'delta'])

    def fetch_cb(self, cluster, item, inst):
        if cluster == 0:
            p = self.inst_lookup(self.indom(1), inst)
            if p is None:
                return [c.PM_ERR_INST, 0]
            return [cast(p, POINTER(c_int)).contents.value * 1024, 1]
        if cluster == 1:
            return [' '.join(self.calls) + ' ' + str(self.pmid_name_lookup(2, 0)), 1]
        if item == 0:
            return [2**64 - 1, 1]
        if item == 1:
            return None
        return ['not a number', 1]

    def store_cb(self, cluster, item, inst, val):
        self.calls.append('s%d.%d[%d]=%s' % (cluster, item, inst, val))
        if cluster == 0:
            return c.PM_ERR_PERMISSION if inst == 0 else 0
        return c.PM_ERR_BADSTORE

    def label(self, ident, type):
        if type == c.PM_LABEL_CLUSTER:
            return '{"cluster":%d}' % ident
        if type == c.PM_LABEL_ITEM:
            return '{"item":true}'
        return '{}'

    def notes(self, ident, type):
        return '{"note":"n%d"}' % type if type == c.PM_LABEL_ITEM else '{}'

    def label_cb(self, indom, inst):
        return '{"name":"%s"}' % self.inst_name_lookup(indom, inst)

    def notes_cb(self, indom, inst):
        return '{}'

Demo2().run()
"""

CALLBACKS_REQUESTS = """\
traverse demo2
desc demo2.cached
desc demo2.sub.u64
desc demo2.gone
instance 301.1
fetch demo2.cached demo2.calls
fetch demo2.sub.u64 demo2.sub.novalue
instance 301.1
instance 301.1
fetch demo2.cached demo2.calls
store demo2.cached "7"
store demo2.sub.u64 "5"
fetch demo2.calls
label cluster demo2.calls
label item demo2.sub.u64
label instances 301.1
label indom 301.1
label domain
text demo2.cached
text demo2.calls
text indom 301.1
"""
