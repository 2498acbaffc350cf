"""Filtering a node as it would be with some pods added or removed, without building that node: what
preemption's dry run and RunFilterPluginsWithNominatedPods need, node after node, in most cycles."""
from __future__ import annotations

import numpy as np

from .filter_table import distinct_codes
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


def nominated_requests(state, nominated, names, pod, table, sums=None):
    """Per NodeTable row, the summed cpu, memory and ephemeral-storage requests (an array of rows x RESOURCES)
    and the number of the nominated pods RunFilterPluginsWithNominatedPods adds for ``pod``; None when there are
    none, False when that cannot be told (``names``, the nominated nodes' names, not given; huge values).
    ``nominated``: the nominator's pods of a node, ``names``: () -> the names of the nodes with nominated pods,
    ``sums``: the nominator's NominatedSums when it keeps them (then neither is walked). Made once per cycle
    (kept in ``state``: the nominations do not change during a cycle's Filter and PostFilter)."""
    kept = state.get(NOMINATED_REQUESTS_KEY)
    if kept is not None and kept[0] is table:
        return kept[1]
    if sums is not None:
        found = sums.for_pod(table, pod)
    else:
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
            values.append(_summed(p))
    if not rows:
        return None
    if max(max(v) for v in values) >= EXACT_LIMIT:
        return False
    extra, extra_pods = np.zeros((table.n, len(RESOURCES)), np.int64), np.zeros(table.n, np.int64)
    np.add.at(extra, rows, np.array(values, np.int64))
    np.add.at(extra_pods, rows, 1)
    return extra, extra_pods


def _summed(pod) -> tuple:
    """A pod's requests of RESOURCES."""
    get = pod.requests.get
    return get("cpu", 0), get("memory", 0), get("ephemeral-storage", 0)


class NominatedSums:
    """The nominated pods' summed requests per NodeTable row, for each preemptor priority asked about: those of
    the pods of that priority or higher. They follow the nominator's changes (``changed``, one row updated per
    change) instead of being summed over every nominated node at each cycle, which preemption makes a walk of
    hundreds of nodes per cycle. ``for_pod`` gives ``nominated_requests``' answer."""

    KEPT_PRIORITIES = 8

    def __init__(self, nominated_pods_for_node, nominated_node_names, nominated_node_of):
        self._pods, self._names, self._node_of = nominated_pods_for_node, nominated_node_names, nominated_node_of
        # priority -> [table, requests (rows x RESOURCES), pods per row, huge pods, pods counted in all]
        self._by_priority = {}

    def changed(self, sign: int, node_name: str, pod) -> None:
        """A nomination of ``pod`` to ``node_name`` added (sign 1) or removed (-1): the nominator's listener."""
        if not self._by_priority:
            return
        values = _summed(pod)
        huge = max(values) >= EXACT_LIMIT
        for prio, kept in self._by_priority.items():
            if pod.priority < prio:
                continue
            row = kept[0].row_of(node_name)
            if row < 0:
                continue
            kept[4] += sign
            if huge:
                kept[3] += sign
                continue
            kept[1][row] += values if sign > 0 else tuple(-v for v in values)
            kept[2][row] += sign

    def for_pod(self, table, pod):
        """As ``nominated_requests``: (requests, pods) per row for ``pod`` (its own nomination left out), None
        when no nominated pod is added for it, False when a huge value keeps the sums from being exact."""
        if not self._names():
            return None   # no nomination at all: nothing to copy or look up
        kept = self._by_priority.get(pod.priority)
        if kept is None or kept[0] is not table:
            kept = self._build(table, pod.priority)
        if not kept[4]:
            return None
        extra, extra_pods, huge = kept[1].copy(), kept[2].copy(), kept[3]
        node = self._node_of(pod)
        if node is not None:
            row = table.row_of(node)
            own = next((p for p in self._pods(node) if p.uid == pod.uid), None)
            if row >= 0 and own is not None and own.priority >= pod.priority:
                values = _summed(own)
                if max(values) >= EXACT_LIMIT:
                    huge -= 1
                else:
                    extra[row] -= values
                    extra_pods[row] -= 1
        if huge:
            return False
        if not np.count_nonzero(extra_pods):
            return None
        return extra, extra_pods

    def _build(self, table, prio: int) -> list:
        rows, values, huge = [], [], 0
        for name in list(self._names()):
            row = table.row_of(name)
            if row < 0:
                continue
            for p in self._pods(name):
                if p.priority >= prio:
                    v = _summed(p)
                    if max(v) >= EXACT_LIMIT:
                        huge += 1
                    else:
                        rows.append(row)
                        values.append(v)
        extra, extra_pods = np.zeros((table.n, len(RESOURCES)), np.int64), np.zeros(table.n, np.int64)
        if rows:
            np.add.at(extra, rows, np.array(values, np.int64))
            np.add.at(extra_pods, rows, 1)
        if len(self._by_priority) >= self.KEPT_PRIORITIES:
            del self._by_priority[next(iter(self._by_priority))]
        kept = self._by_priority[prio] = [table, extra, extra_pods, huge, len(rows) + huge]
        return kept


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
                for k in distinct_codes(kinds[undecided & (kinds >= 0)]):
                    fail = undecided & (kinds == k)
                    code, reasons = kind_statuses[k]
                    codes[fail] = ft.add(Status(code, *reasons, plugin=pl.name))
                    undecided &= ~fail
                continue
            column = ft.column(column_of[pl.name])[rows]
            fail = undecided & (column != 0)
            if np.count_nonzero(fail):
                if any(ft.status(c).code == Code.ERROR for c in distinct_codes(column[fail])):
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
