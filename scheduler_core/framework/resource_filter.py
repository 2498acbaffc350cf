"""Filtering a node as it would be with some pods added or removed, without building that node: what
preemption's dry run and RunFilterPluginsWithNominatedPods need, node after node, in most cycles."""
from __future__ import annotations

import numpy as np

from .node_table import EXACT_LIMIT
from .status import Code, Status

RESOURCES = ("cpu", "memory", "ephemeral-storage")   # the requests nominated_requests sums
NOMINATED_REQUESTS_KEY = "schedscope/NominatedRequests"


def nominated_pods_to_add(pod, node_name: str, nominated_pods_for_node) -> list:
    """The pods nominated to a node that RunFilterPluginsWithNominatedPods adds for ``pod``: priority >= the
    pod's, not the pod itself. Empty when there are none (then that Filter is the plain one)."""
    if nominated_pods_for_node is None:
        return []
    prio, uid = pod.priority, pod.uid
    return [p for p in nominated_pods_for_node(node_name) if p.priority >= prio and p.uid != uid]


def nominated_requests(state, nominated, names, pod, table):
    """Per NodeTable row, the summed cpu, memory and ephemeral-storage requests (an array of rows x RESOURCES)
    and the number of the nominated pods RunFilterPluginsWithNominatedPods adds for ``pod``; None when there are
    none, False when that cannot be told (``names``, the nominated nodes' names, not given; huge values).
    ``nominated``: the nominator's pods of a node, ``names``: () -> the names of the nodes with nominated pods.
    Made once per cycle (kept in ``state``: the nominations do not change during a cycle's Filter and PostFilter)."""
    kept = state.get(NOMINATED_REQUESTS_KEY)
    if kept is not None and kept[0] is table:
        return kept[1]
    found = _nominated_requests(nominated, names, pod, table)
    state.write(NOMINATED_REQUESTS_KEY, (table, found))
    return found


def _nominated_requests(nominated, names, pod, table):
    if nominated is None:
        return None
    if names is None:
        return False
    rows, values = [], []
    prio, uid = pod.priority, pod.uid
    for name in list(names()):
        row = -1
        for p in nominated(name):   # nominated_pods_to_add, inline: this runs on every nominated node
            if p.priority < prio or p.uid == uid:
                continue
            if row < 0:
                row = table.row_of(name)
                if row < 0:   # a node that is gone
                    break
            rows.append(row)
            get = p.requests.get
            values.append((get("cpu", 0), get("memory", 0), get("ephemeral-storage", 0)))
    if not rows:
        return None
    if max(max(v) for v in values) >= EXACT_LIMIT:
        return False
    extra, extra_pods = np.zeros((table.n, len(RESOURCES)), np.int64), np.zeros(table.n, np.int64)
    np.add.at(extra, rows, np.array(values, np.int64))
    np.add.at(extra_pods, rows, 1)
    return extra, extra_pods


def add_requests(total: dict, requests: dict) -> None:
    """``total`` += a pod's requests (as NodeInfo.add_pod sums them)."""
    get = total.get
    for k, v in requests.items():
        total[k] = get(k, 0) + v


def remove_requests(total: dict, requests: dict) -> None:
    """``total`` -= a pod's requests (as NodeInfo.remove_pod)."""
    get = total.get
    for k, v in requests.items():
        total[k] = get(k, 0) - v


class ResourceFilter:
    """RunFilterPlugins for one pod on nodes whose pods differ from their NodeInfo's, given as the summed
    requests and the number of pods. It exists (``for_cycle``) only when that is all the Filter reads: every
    Filter plugin that runs reads the Node object alone (``filter_depends_on`` "node": its verdict is taken
    once per node) or the Node with those sums ("resources": ``filter_resources``), and no PreFilter extension
    would see the pods come and go. Its Status is then run_filter's on such a node, plugin by plugin."""

    __slots__ = ("state", "pod", "plugins", "_by_node")

    def __init__(self, state, pod, plugins):
        self.state = state
        self.pod = pod
        self.plugins = plugins
        self._by_node = {}   # node name -> (the "resources" plugins before its first failing "node" one, that Status)

    @classmethod
    def for_cycle(cls, fwk, state, pod) -> "ResourceFilter | None":
        if fwk.has_pre_filter_extensions(state):
            return None
        skip = state.skip_filter_plugins
        plugins = [pl for pl in fwk.filter if pl.name not in skip]
        for pl in plugins:
            if getattr(pl, "filter_depends_on", None) not in ("node", "resources"):
                return None
        return cls(state, pod, plugins)

    def _node_verdict(self, node_info) -> tuple:
        """The "node" plugins' part of run_filter on this node, taken once: the "resources" plugins that run
        before the first "node" plugin that rejects it, and that plugin's Status (None: none rejects it)."""
        before = []
        for pl in self.plugins:
            if pl.filter_depends_on == "resources":
                before.append(pl)
                continue
            st = pl.filter(self.state, self.pod, node_info)
            if st is not None and st.code != Code.SUCCESS:
                return before, _tagged(pl, st)
        return before, None

    def status(self, node_info, requested: dict, num_pods: int):
        """run_filter's Status on ``node_info``'s node holding ``num_pods`` pods that request ``requested``."""
        verdict = self._by_node.get(node_info.name)
        if verdict is None:
            verdict = self._by_node[node_info.name] = self._node_verdict(node_info)
        node = node_info.node
        for pl in verdict[0]:
            st = pl.filter_resources(self.state, self.pod, node, requested, num_pods)
            if st is not None and st.code != Code.SUCCESS:
                return _tagged(pl, st)
        return verdict[1]

    def nominated_codes(self, ft, table, rows, extra, extra_pods):
        """RunFilterPluginsWithNominatedPods' first pass on NodeTable rows of a trace-mode FilterTable ``ft``, with
        ``nominated_requests``' (extra, extra_pods) added: per row the code in ``ft`` of the Status it fails with
        (0: it passes). The "node" plugins' verdicts are their columns; None when a "resources" plugin has no
        ``filter_batch_statuses`` for the pod or a "node" plugin gave an error (its wrapping is run_filter's)."""
        column_of = {name: p for p, name in enumerate(ft.plugins)}
        codes = np.zeros(len(rows), np.int64)
        undecided = np.ones(len(rows), bool)
        sums = None
        for pl in self.plugins:
            if pl.filter_depends_on == "resources":
                if sums is None:
                    more = extra[rows]
                    sums = (table.req_cpu[rows] + more[:, 0], table.req_memory[rows] + more[:, 1],
                            table.req_ephemeral[rows] + more[:, 2], table.pod_count[rows] + extra_pods[rows])
                batch = getattr(pl, "filter_batch_statuses", None)
                res = batch(self.state, self.pod, table, rows, sums) if batch is not None else None
                if res is None:
                    return None
                kinds, kind_statuses = res
                for k in np.unique(kinds[undecided & (kinds >= 0)]).tolist():
                    fail = undecided & (kinds == k)
                    code, reasons = kind_statuses[k]
                    codes[fail] = ft.add(Status(code, *reasons, plugin=pl.name))
                    undecided &= ~fail
                continue
            column = ft.column(column_of[pl.name])[rows]
            fail = undecided & (column != 0)
            if fail.any():
                if any(ft.status(c).code == Code.ERROR for c in np.unique(column[fail]).tolist()):
                    return None
                codes[fail] = column[fail]
                undecided &= ~fail
        return codes

    def status_with_pods(self, node_info, pods):
        """run_filter's Status on ``node_info`` with ``pods`` added (RunFilterPluginsWithNominatedPods' first
        pass)."""
        requested = dict(node_info.requested)
        for p in pods:
            add_requests(requested, p.requests)
        return self.status(node_info, requested, len(node_info.pods) + len(pods))


def _tagged(pl, st):
    """A plugin's non-Success Filter status as run_filter returns it: named after the plugin, an error wrapped."""
    st.plugin = pl.name
    if not st.is_rejected():
        return Status.error(f'running "{pl.name}" filter plugin: {st.as_error()}', plugin=pl.name)
    return st
