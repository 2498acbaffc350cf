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
from scheduler_core.objects.validation import ValidationError, validate_object
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scenario import ScenarioError, scenario_from_data

from ..models import Cluster, ClusterState, Node, Pod
from ..profiles import services as profiles
from ..profiles.models import AuditLog
from ..profiles.validate import extender_problems
from . import control
from .rowlock import cluster_writes

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


def checked(kind: str, raw):
    """A v1.Node or v1.Pod validated as kube-apiserver does (``scheduler_core.objects.validation``) and parsed;
    ValidationFailed maps each field path to its messages. An ``apiVersion`` or ``kind`` that is given must be
    ``v1`` and ``kind``, as kube-apiserver decodes a create's body (its messages)."""
    if isinstance(raw, dict):
        version, given = raw.get("apiVersion"), raw.get("kind")
        if version not in (None, "", "v1"):
            raise ValidationFailed({"apiVersion": [
                f"the API version in the data ({version}) does not match the expected API version (v1)"]})
        if given not in (None, "", kind):
            raise ValidationFailed({"kind": [f'{given} in version "v1" cannot be handled as a {kind}']})
    try:
        validate_object(kind, raw)
        return (CoreNode if kind == "Node" else CorePod)(raw)
    except ValidationError as err:
        errors = {}
        for cause in err.causes:
            errors.setdefault(cause.path, []).append(cause.body())
        raise ValidationFailed(errors) from None
    except ParseError as err:
        raise ValidationFailed({err.path or kind.lower(): [err.message]}) from None


def insert_pods(cluster, raws) -> list:
    """Create pod rows from v1.Pod dicts (validated first: none is stored unless all are valid); raises
    ValidationFailed on invalid pods and duplicate names."""
    check_size(cluster, pods=len(raws))
    rows = [pod_row(cluster, checked("Pod", raw)) for raw in raws]
    try:
        with cluster_writes(cluster.pk):
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
    with cluster_writes(cluster.pk):
        Node.objects.filter(cluster=cluster).delete()
        Pod.objects.filter(cluster=cluster).delete()
        Node.objects.bulk_create([node_row(cluster, n) for n in scen.nodes], batch_size=1000)
        Pod.objects.bulk_create([pod_row(cluster, p) for p in scen.bound_pods + scen.pending_pods], batch_size=1000)
        ClusterState.objects.update_or_create(cluster=cluster, defaults={"resources": scen.objects, "source": source})
        Cluster.objects.filter(pk=cluster.pk).update(version=F("version") + 1)
        if scen.config:
            try:
                cluster.profile = profiles.save_and_apply(f"{cluster.name}-{scen.name}"[:200], scen.config, user,
                                                          cluster, f"scenario {source}"[:500])
            except profiles.Invalid as err:
                raise ValidationFailed({"config": [p.message for p in err.problems]}) from None
    counts = {"nodes": len(scen.nodes), "bound": len(scen.bound_pods), "pending": len(scen.pending_pods)}
    audit(user, "scenario.load", cluster, source=source, **counts)
    notify(cluster, "reload")
    return counts


def add_node(cluster: Cluster, raw: dict) -> Node:
    require_simulated(cluster, "adding a node")
    node = checked("Node", raw)
    check_size(cluster, nodes=1)
    try:
        with cluster_writes(cluster.pk):
            row = node_row(cluster, node)
            row.save()
    except IntegrityError:
        raise ValidationFailed({"metadata.name": [f'node "{node.name}" already exists']}) from None
    notify(cluster, "add_node", raw=raw)
    return row


def delete_node(cluster: Cluster, name: str, user=None) -> bool:
    require_simulated(cluster, "deleting a node")
    with cluster_writes(cluster.pk):
        deleted = Node.objects.filter(cluster=cluster, name=name).delete()[0]
        evicted = Pod.objects.filter(cluster=cluster, node_name=name).delete()[0]
    if deleted:
        audit(user, "node.delete", cluster, node=name, pods_deleted=evicted)
        notify(cluster, "delete_node", name=name)
    return bool(deleted)


def add_pod(cluster: Cluster, raw: dict) -> Pod:
    require_simulated(cluster, "adding a pod")
    row = insert_pods(cluster, [raw])[0]
    notify(cluster, "add_pod", raw=raw)
    return row


def delete_pod(cluster: Cluster, pod: Pod, user=None) -> None:
    require_simulated(cluster, "deleting a pod")
    with cluster_writes(cluster.pk):
        pod.delete()
    audit(user, "pod.delete", cluster, pod=pod.key, uid=pod.uid, node=pod.node_name)
    notify(cluster, "delete_pod", key=pod.key)


def delete_cluster(cluster: Cluster) -> None:
    """Stop the cluster's loop and delete it with everything it holds (the cluster's row locked first: Django
    deletes the pods before the cluster row)."""
    set_state(cluster, Cluster.STOPPED)
    with transaction.atomic():
        # FOR UPDATE, not the writers' FOR NO KEY UPDATE: rows that reference the cluster (a loop still recording a
        # cycle or a version span) wait for the delete instead of slipping in between Django's collection of
        # related rows and the cluster's own DELETE (a foreign-key violation).
        list(Cluster.objects.select_for_update().filter(pk=cluster.pk).values_list("pk", flat=True))
        cluster.delete()


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
