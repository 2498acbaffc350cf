"""One-pass evaluation of a scenario (``simulate``): every pending pod tried once, in PrioritySort order,
assumed onto its chosen node before the next, as ../shared/golden/README.md describes."""
from __future__ import annotations

from . import versions
from .config import build_frameworks, config_for
from .framework.cycle_state import CycleState
from .framework.handle import Handle
from .framework.node_info import NodeInfo
from .framework.podgroup_state import PodGroupStates
from .framework.snapshot import ClusterObjects, Snapshot
from .plugins.registry import build_registry
from .schedule_one import SchedulerContext, schedule_pod
from .trace import CycleTrace

KUBERNETES_VERSION = versions.kube_version().release   # the default version's release



def build_snapshot(scenario, features=None) -> Snapshot:
    """NodeInfos in scenario order with the bound pods added (pods on unknown nodes are ignored), for
    ``features`` (versions.Features; None: the default version's)."""
    infos = [NodeInfo(n) for n in scenario.nodes]
    by_name = {ni.name: ni for ni in infos}
    for pod in scenario.bound_pods:
        ni = by_name.get(pod.node_name)
        if ni is not None:
            ni.add_pod(pod)
    o = scenario.objects
    objects = ClusterObjects(namespaces=o.get("namespaces", ()), services=o.get("services", ()),
                             replicasets=o.get("replicasets", ()), statefulsets=o.get("statefulsets", ()),
                             replication_controllers=o.get("replicationcontrollers", ()),
                             persistent_volumes=o.get("persistentvolumes", ()),
                             persistent_volume_claims=o.get("persistentvolumeclaims", ()),
                             storage_classes=o.get("storageclasses", ()), csi_nodes=o.get("csinodes", ()),
                             csi_drivers=o.get("csidrivers", ()),
                             pod_disruption_budgets=o.get("poddisruptionbudgets", ()),
                             device_classes=o.get("deviceclasses", ()), resource_slices=o.get("resourceslices", ()),
                             resource_claims=o.get("resourceclaims", ()),
                             resource_claim_templates=o.get("resourceclaimtemplates", ()),
                             volume_attachments=o.get("volumeattachments", ()),
                             pod_groups=o.get("podgroups", ()), workloads=o.get("workloads", ()))
    first_image_size = (features or versions.features()).has("image-size-of-first-node")
    return Snapshot(infos, objects, first_image_size=first_image_size)


class Simulation:
    """Frameworks for a scenario's config, and the one-pass run over its pending pods, at ``kube_version`` (None:
    the scenario's ``kubeVersion``, else the default version) with ``feature_gates`` (kube's ``--feature-gates``
    text or a {gate: bool} mapping). ``pre_enqueue``: run the PreEnqueue plugins first, as kube's queue does, so
    that a pod they refuse is never attempted (its trace has ``gated``)."""

    def __init__(self, scenario, config_doc=None, tie_break: str = "name", seed=None, registry=None,
                 trace_all_filters: bool = True, *, kube_version=None, feature_gates=None, pre_enqueue=False):
        self.pre_enqueue = pre_enqueue
        self.registry = registry or build_registry()
        doc = config_doc if config_doc is not None else scenario.config
        self.config = config_for(doc, self.registry, kube_version=scenario.kube_version(kube_version),
                                 feature_gates=scenario.feature_gates(feature_gates))
        self.features = self.config.features
        self.scenario = scenario = scenario.read_by(self.features)
        self.snapshot = build_snapshot(scenario, self.features)
        self.ctx = SchedulerContext(tie_break=tie_break, seed=seed,
                                    percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
                                    trace_all_filters=trace_all_filters)
        self.handles = []
        self.pod_group_states = None
        if self.features.gates.get("GenericWorkload"):
            # the members of each pod group (PreEnqueue's count); a one-pass run has no pod-group cycle: its
            # members are tried one by one, without Permit (the scheduling loop, ``run``, has the cycle)
            self.pod_group_states = PodGroupStates()
            for pod in list(scenario.bound_pods) + list(scenario.pending_pods):
                if pod.pod_group is not None:
                    self.pod_group_states.add(pod)

        def handle_factory():
            h = Handle(snapshot=self.snapshot)
            h.pod_group_states = self.pod_group_states
            h.rng = self.ctx.rng
            h.tie_break = tie_break
            self.handles.append(h)
            return h
        self.frameworks = build_frameworks(self.config, self.registry, handle_factory)

    def queue_order(self):
        """PrioritySort over pending pods: higher priority first, stable."""
        return sorted(self.scenario.pending_pods, key=lambda p: -p.priority)

    def run(self):
        """Yield one CycleTrace per pending pod, assuming each scheduled pod before the next."""
        for pod in self.queue_order():
            fwk = self.frameworks.get(pod.scheduler_name)
            if fwk is None:
                continue
            if self.pre_enqueue:
                gated = fwk.run_pre_enqueue(pod)
                if gated is not None:   # kube's queue never lets the pod out: no attempt, no message
                    trace = CycleTrace(pod, fwk.profile_name)
                    trace.gated = gated
                    yield trace
                    continue
            state = CycleState()
            trace, state = schedule_pod(fwk, self.ctx, pod, self.snapshot, state, score_single_node=True)
            if trace.chosen:
                st = fwk.run_reserve(state, pod, trace.chosen)
                if st is not None:
                    trace.reserve_status = st
                    fwk.run_unreserve(state, pod, trace.chosen)
                else:
                    self.bind(fwk, state, trace)
            yield trace

    def bind(self, fwk, state, trace) -> None:
        """The binding cycle's PreBind (claims and volumes written into this run's objects), then the pod assumed
        on its node; a PreBind error unreserves and leaves the pod unbound with the error as its message, as
        kube's failed binding cycle does."""
        st = fwk.run_pre_bind(state, trace.pod, trace.chosen)
        if st is not None:
            fwk.run_unreserve(state, trace.pod, trace.chosen)
            trace.error, trace.chosen = st.as_error(), None
            return
        self.assume(trace.pod, trace.chosen)

    def explain_claims(self, pod) -> dict:
        """dra.explain for a pod's claims on the cluster as this run has it now (allocations assumed so far)."""
        from .dra.explain import explain_claims
        fwk = self.frameworks[pod.scheduler_name]
        plugin = next((p for p in fwk.pre_filter if p.name == "DynamicResources" and p.enabled), None)
        claims = plugin.claims_view() if plugin is not None else None
        return explain_claims(self.snapshot.objects, pod.raw, [ni.node for ni in self.snapshot.node_infos], claims)

    def assume(self, pod, node_name: str):
        ni = self.snapshot.get(node_name)
        ni.add_pod(pod.bound_to(node_name))


def golden_document(sim: Simulation, traces) -> dict:
    """The schema of ../shared/golden expected files."""
    first = sim.queue_order()[0].scheduler_name if sim.scenario.pending_pods else None
    names = list(sim.frameworks)
    main = sim.frameworks.get(first) or sim.frameworks[names[0]]
    doc = {"scenario": sim.scenario.name, "kubernetes_version": sim.features.version.release,
           "profile": main.profile_name, "plugins": main.list_plugins()}
    multi = len(names) > 1
    if multi:
        doc["profiles"] = {n: f.list_plugins() for n, f in sim.frameworks.items()}
    decisions = []
    for tr in traces:
        d = tr.to_golden()
        if tr.error and not tr.chosen:   # kube: PodScheduled=False, reason SchedulerError, the error as message
            d["unschedulable"], d["message"] = True, tr.error
        if d["unschedulable"]:
            d["condition_reason"] = "SchedulerError" if tr.error and not tr.chosen else "Unschedulable"
        if multi:
            d["profile"] = tr.profile
        decisions.append(d)
    doc["decisions"] = decisions
    return doc
