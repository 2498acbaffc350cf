"""Filtering a node as it would be with some pods added or removed, without building that node: what
preemption's dry run and RunFilterPluginsWithNominatedPods need, node after node, in most cycles."""
from __future__ import annotations

from .status import Code, Status


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
