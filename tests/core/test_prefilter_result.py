"""PreFilterResults that intersect to no node (v1.30's RunPreFilterPlugins)."""
from scheduler_core.framework.handle import Handle
from scheduler_core.framework.interface import BindPlugin, PreFilterPlugin, QueueSortPlugin
from scheduler_core.framework.node_info import NodeInfo
from scheduler_core.framework.profile import new_framework
from scheduler_core.framework.snapshot import Snapshot
from scheduler_core.framework.status import Code
from scheduler_core.objects import Node, Pod
from scheduler_core.schedule_one import SchedulerContext, schedule_pod


class Sort(QueueSortPlugin):
    name = "Sort"

    def less(self, a, b):
        return False


class Binder(BindPlugin):
    name = "Binder"

    def bind(self, state, pod, node_name):
        return None


def narrowing(name, nodes):
    cls = type(name, (PreFilterPlugin,), {"name": name, "pre_filter": lambda self, state, pod: (set(nodes), None)})
    return cls


def test_empty_prefilter_result_intersection_names_no_rejecting_plugin():
    """v1.30 returns NewStatus(UnschedulableAndUnresolvable, msg) without a plugin, so the diagnosis has no
    unschedulable plugin (kube #122251 added the narrowing plugins only in v1.31)."""
    registry = {"Sort": Sort, "Binder": Binder, "A": narrowing("A", {"n2"}), "B": narrowing("B", {"n1"})}
    infos = [NodeInfo(Node({"metadata": {"name": n}})) for n in ("n1", "n2")]
    snapshot = Snapshot(infos)
    fwk = new_framework("p", {"QueueSort": [("Sort", 0)], "Bind": [("Binder", 0)], "PreFilter": [("A", 0), ("B", 0)]},
                        {}, registry, Handle(snapshot=snapshot))
    pod = Pod({"metadata": {"name": "p", "namespace": "default", "uid": "p"}, "spec": {}})
    tr, _ = schedule_pod(fwk, SchedulerContext(tie_break="name"), pod, snapshot)
    msg = "node(s) didn't satisfy plugin(s) [A B] simultaneously"
    assert {n: (s.code, s.reasons, s.plugin) for n, s in tr.node_statuses.items()} == {
        "n1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [msg], ""), "n2": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [msg], "")}
    assert tr.unschedulable_plugins == []
    assert tr.message == f"0/2 nodes are available: {msg}."
