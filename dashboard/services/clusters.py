"""Changing a simulated cluster: load a scenario, add or remove nodes and pods, start/stop/step.

Every change is validated, then written to the database in one transaction, then sent to the loop
that drives the cluster (if any). Invalid input raises ScenarioError or ValidationFailed and writes nothing.
"""
from __future__ import annotations

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F

from scheduler_core.config import ConfigError, load_config
from scheduler_core.framework.profile import FrameworkError
from scheduler_core.objects import Node as CoreNode
from scheduler_core.objects import ParseError
from scheduler_core.objects import Pod as CorePod
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scenario import ScenarioError, scenario_from_data

from ..models import Cluster, ClusterState, Node, Pod, SchedulerProfile
from ..profiles.models import AuditLog
from ..profiles.validate import extender_problems
from . import control

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


class ValidationFailed(ValueError):
    """Bad input: ``errors`` maps a field path to messages (DRF's 400 shape)."""

    def __init__(self, errors: dict):
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


def require_simulated(cluster, change: str) -> None:
    """Nodes, pods and scenarios of a real cluster are its API server's: refuse to ``change`` them here."""
    if cluster.kind != Cluster.SIMULATED:
        raise ValidationFailed({"kind": [f"cluster {cluster.name} is a real cluster: {change} is for simulated "
                                         f"clusters; change a real cluster through its API server (kubectl)"]})


def check_size(cluster, nodes: int = 0, pods: int = 0, replace: bool = False) -> None:
    """Refuse growing a simulated cluster past SCHEDSCOPE MAX_NODES / MAX_PODS (adds ``nodes`` and ``pods``
    to what it holds, or replaces it when ``replace``)."""
    limits = settings.SCHEDSCOPE
    errors = {}
    for field, adding, model, limit in (("nodes", nodes, Node, limits["MAX_NODES"]),
                                        ("pods", pods, Pod, limits["MAX_PODS"])):
        if not adding:
            continue
        total = adding if replace else adding + model.objects.filter(cluster=cluster).count()
        if total > limit:
            errors[field] = [f"a simulated cluster holds at most {limit} {field}; this would make {total}"]
    if errors:
        raise ValidationFailed(errors)


def node_row(cluster, node: CoreNode) -> Node:
    zone = next((node.labels[k] for k in ZONE_LABELS if k in node.labels), "")
    return Node(cluster=cluster, name=node.name, zone=zone, labels=node.labels,
                taints=[t.to_dict() for t in node.taints], unschedulable=node.unschedulable,
                allocatable=node.allocatable, raw=node.raw)


def pod_row(cluster, pod: CorePod) -> Pod:
    if pod.node_name:
        queue = Pod.BOUND
    else:
        queue = Pod.GATED if pod.scheduling_gates else Pod.ACTIVE
    return Pod(cluster=cluster, uid=pod.uid, namespace=pod.namespace, name=pod.name, labels=pod.labels,
               priority=pod.priority, scheduler_name=pod.scheduler_name, cpu_m=pod.requests.get("cpu", 0),
               memory=pod.requests.get("memory", 0), node_name=pod.node_name, queue=queue, raw=pod.raw)


def validate_config(doc, user=None) -> None:
    """A profile document ``user`` saves (None: an operator's command): kube's loader, then the deployment's
    extender rules (profiles.validate.extender_problems)."""
    if not doc:
        return
    try:
        load_config(doc, in_tree_registry())
    except (ConfigError, FrameworkError) as err:
        raise ValidationFailed({"config": [str(err)]}) from None
    problems = extender_problems(doc, user)
    if problems:
        raise ValidationFailed({"config": [p.message for p in problems]})


def insert_pods(cluster, raws) -> list:
    """Create pod rows (already valid v1.Pod dicts); raises ValidationFailed on duplicate names."""
    check_size(cluster, pods=len(raws))
    rows = [pod_row(cluster, CorePod(raw)) for raw in raws]
    try:
        with transaction.atomic():
            Pod.objects.bulk_create(rows)
    except IntegrityError:
        raise ValidationFailed({"metadata.name": ["a pod with this name or uid already exists"]}) from None
    return rows


def audit(user, action: str, cluster: Cluster, **detail) -> None:
    """An AuditLog entry for a change a user made to a cluster (None: a command or the system)."""
    AuditLog.objects.create(user=user if user is not None and user.is_authenticated else None, action=action,
                            cluster=cluster, detail=detail)


def load_scenario(cluster: Cluster, data, source: str = "upload", user=None) -> dict:
    """Replace the cluster's nodes, pods and objects with a scenario (golden format or a List)."""
    require_simulated(cluster, "loading a scenario")
    scen = scenario_from_data(data, label=source)
    check_size(cluster, nodes=len(scen.nodes), pods=len(scen.bound_pods) + len(scen.pending_pods), replace=True)
    validate_config(scen.config, user)
    seen = set()
    for pod in scen.bound_pods + scen.pending_pods:
        for key in (("name", pod.key), ("uid", pod.uid)):
            if key in seen:
                raise ScenarioError(f"{source}: pod {pod.key}: duplicate {key[0]} {key[1]}")
            seen.add(key)
    with transaction.atomic():
        Node.objects.filter(cluster=cluster).delete()
        Pod.objects.filter(cluster=cluster).delete()
        Node.objects.bulk_create([node_row(cluster, n) for n in scen.nodes], batch_size=1000)
        Pod.objects.bulk_create([pod_row(cluster, p) for p in scen.bound_pods + scen.pending_pods], batch_size=1000)
        ClusterState.objects.update_or_create(cluster=cluster, defaults={"resources": scen.objects, "source": source})
        Cluster.objects.filter(pk=cluster.pk).update(version=F("version") + 1)
        if scen.config:
            profile, _ = SchedulerProfile.objects.update_or_create(name=f"{cluster.name}-{scen.name}"[:200],
                                                                   defaults={"document": scen.config})
            cluster.profile = profile
            cluster.save(update_fields=["profile"])
    counts = {"nodes": len(scen.nodes), "bound": len(scen.bound_pods), "pending": len(scen.pending_pods)}
    audit(user, "scenario.load", cluster, source=source, **counts)
    notify(cluster, "reload")
    return counts


def add_node(cluster: Cluster, raw: dict) -> Node:
    require_simulated(cluster, "adding a node")
    try:
        node = CoreNode(raw)
    except ParseError as err:
        raise ValidationFailed({err.path or "node": [err.message]}) from None
    check_size(cluster, nodes=1)
    try:
        with transaction.atomic():
            row = node_row(cluster, node)
            row.save()
    except IntegrityError:
        raise ValidationFailed({"metadata.name": [f'node "{node.name}" already exists']}) from None
    notify(cluster, "add_node", raw=raw)
    return row


def delete_node(cluster: Cluster, name: str, user=None) -> bool:
    require_simulated(cluster, "deleting a node")
    with transaction.atomic():
        deleted = Node.objects.filter(cluster=cluster, name=name).delete()[0]
        evicted = Pod.objects.filter(cluster=cluster, node_name=name).delete()[0]
    if deleted:
        audit(user, "node.delete", cluster, node=name, pods_deleted=evicted)
        notify(cluster, "delete_node", name=name)
    return bool(deleted)


def add_pod(cluster: Cluster, raw: dict) -> Pod:
    require_simulated(cluster, "adding a pod")
    try:
        CorePod(raw)
    except ParseError as err:
        raise ValidationFailed({err.path or "pod": [err.message]}) from None
    row = insert_pods(cluster, [raw])[0]
    notify(cluster, "add_pod", raw=raw)
    return row


def delete_pod(cluster: Cluster, pod: Pod, user=None) -> None:
    require_simulated(cluster, "deleting a pod")
    pod.delete()
    audit(user, "pod.delete", cluster, pod=pod.key, uid=pod.uid, node=pod.node_name)
    notify(cluster, "delete_pod", key=pod.key)


def set_state(cluster: Cluster, state: str) -> None:
    """running, paused or stopped; starts a loop when needed."""
    Cluster.objects.filter(pk=cluster.pk).update(desired_state=state)
    cluster.desired_state = state
    control.send(cluster.id, "state")
    if state != Cluster.STOPPED:
        control.ensure_runner(cluster.id)


def step(cluster: Cluster, n: int = 1) -> None:
    """Run n cycles: by the running loop if there is one, else by a short-lived one."""
    control.send(cluster.id, "step", n=n)
    control.ensure_runner(cluster.id)


def notify(cluster: Cluster, op: str, **args) -> None:
    """Tell a loop that drives the cluster about a change already stored."""
    if control.is_driven(cluster.id):
        control.send(cluster.id, op, **args)
