"""Changing a simulated cluster: load a scenario, add or remove nodes and pods, start/stop/step.

Every change is validated, then written to the cluster's store (``objectstore``) in one transaction; the loop
that drives the cluster follows the store's change log (a scenario load bumps the cluster's version and tells the
loop to rebuild). Invalid input raises ScenarioError or ValidationFailed and writes nothing.
"""
from __future__ import annotations

import time

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F

from scheduler_core import versions
from scheduler_core.config import ConfigError, load_config
from scheduler_core.framework.profile import FrameworkError
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.scenario import Scenario, ScenarioError, scenario_from_data

from ..models import Cluster, ClusterState, Node, Pod
from ..profiles import services as profiles
from ..profiles.models import AuditLog
from ..profiles.validate import extender_problems
from . import admitted, control, kubeversions, loops, nodeipam, objectstore
from .admitted import ValidationFailed
from .objectstore import check_size, insert_pods, node_row, pod_row



def require_simulated(cluster, change: str) -> None:
    """Nodes, pods and scenarios of a real cluster are its API server's: refuse to ``change`` them here."""
    if cluster.kind != Cluster.SIMULATED:
        raise ValidationFailed({"kind": [f"cluster {cluster.name} is a real cluster: {change} is for simulated "
                                         f"clusters; change a real cluster through its API server (kubectl)"]})


def validate_config(doc, user=None, kube_version=None) -> None:
    """A profile document ``user`` saves (None: an operator's command): kube's loader at ``kube_version``, then the
    deployment's extender rules (profiles.validate.extender_problems)."""
    if not doc:
        return
    try:
        load_config(doc, in_tree_registry(), kube_version=kube_version)
    except (ConfigError, FrameworkError) as err:
        raise ValidationFailed({"config": [str(err)]}) from None
    problems = extender_problems(doc, user)
    if problems:
        raise ValidationFailed({"config": [p.message for p in problems]})


def audit(user, action: str, cluster: Cluster, **detail) -> None:
    """An AuditLog entry for a change a user made to a cluster (None: a command or the system)."""
    audit_row(user, action, cluster, **detail).save()


def audit_row(user, action: str, cluster: Cluster, **detail) -> AuditLog:
    """The AuditLog entry ``audit`` stores, not saved yet."""
    return AuditLog(user=user if user is not None and user.is_authenticated else None, action=action,
                    cluster=cluster, detail=detail)


def load_scenario(cluster: Cluster, data, source: str = "upload", user=None) -> dict:
    """Replace the cluster's nodes, pods and objects with a scenario (golden format or a List)."""
    require_simulated(cluster, "loading a scenario")
    scen = scenario_from_data(data, label=source)
    check_size(cluster, nodes=len(scen.nodes), pods=len(scen.bound_pods) + len(scen.pending_pods), replace=True)
    # the scenario's kubeVersion becomes the cluster's; its configuration replaces the cluster's profile
    changes = {"kube_version": scen.extra["kubeVersion"]} if "kubeVersion" in scen.extra else {}
    kube = kubeversions.check_change(cluster, **changes, **({"profile": None} if scen.config else {}))
    features = versions.features(kube["kube_version"], kube["feature_gates"] or None)
    scen = restored(scen, features)
    check_bytes(scen)
    validate_config(scen.config, user, features)
    seen = set()
    for pod in scen.bound_pods + scen.pending_pods:
        for key in (("name", pod.key), ("uid", pod.uid)):
            if key in seen:
                raise ScenarioError(f"{source}: pod {pod.key}: duplicate {key[0]} {key[1]}")
            seen.add(key)
    now = time.time()
    with objectstore.writing(cluster.pk) as w:
        Node.objects.filter(cluster=cluster).delete()
        Pod.objects.filter(cluster=cluster).delete()
        nodes = [node_row(cluster, n, now) for n in scen.nodes]
        cidrs = nodeipam.CidrSet(c for n in scen.nodes for c in nodeipam.pod_cidrs(n.raw))
        for row in nodes:
            row.raw = cidrs.with_pod_cidr(row.raw)
        pods = [pod_row(cluster, p, now) for p in scen.bound_pods + scen.pending_pods]
        if cluster.kubelet:   # each node's kubelet reports the pods it runs: their IPs in its pod CIDR
            by_name = {row.name: row.raw for row in nodes}
            for row in pods:
                status = row.raw.get("status") or {}
                if row.node_name and not status.get("podIP") and status.get("phase") in (None, "Pending", "Running"):
                    status = dict(status, qosClass=status.get("qosClass") or admitted.qos_class(row.raw["spec"]))
                    row.raw = dict(row.raw, status=objectstore.running_status(
                        dict(row.raw, status=status), by_name.get(row.node_name), row.node_name, now))
        for row in nodes + pods:   # no change logged: the version bump makes every follower rebuild
            row.rv = w.next_rv()
            row.raw = objectstore.with_rv(row.raw, row.rv)
        Node.objects.bulk_create(nodes, batch_size=1000)
        Pod.objects.bulk_create(pods, batch_size=1000)
        objectstore.replace_objects(w, scen.objects, now)
        ClusterState.objects.update_or_create(cluster=cluster, defaults={"source": source})
        Cluster.objects.filter(pk=cluster.pk).update(version=F("version") + 1, kube_version=kube["kube_version"])
        cluster.kube_version = kube["kube_version"]
        if scen.config:
            try:
                cluster.profile = profiles.save_and_apply(profiles.scenario_profile_name(cluster, scen.name),
                                                          scen.config, user, cluster, f"scenario {source}"[:500])
            except profiles.Invalid as err:
                raise ValidationFailed({"config": [p.message for p in err.problems]}) from None
    counts = {"nodes": len(scen.nodes), "bound": len(scen.bound_pods), "pending": len(scen.pending_pods)}
    audit(user, "scenario.load", cluster, source=source, **counts)
    notify(cluster, "reload")
    return counts


def restored(scen: Scenario, features) -> Scenario:
    """The scenario as the cluster's kube-apiserver (``features``) serves it once loaded (``admitted.restored``)."""
    def parsed(kind: str, items) -> list:
        out = []
        for item in items:
            raw = admitted.restored(kind, item.raw, features)
            out.append(item if raw is item.raw else admitted.parsed(kind, raw))
        return out

    objects = {array: [admitted.restored(objectstore.ARRAYS[array], raw, features) for raw in items]
               for array, items in (scen.objects or {}).items()}
    return Scenario(scen.name, parsed("Node", scen.nodes), parsed("Pod", scen.bound_pods),
                    parsed("Pod", scen.pending_pods), objects, scen.config, scen.extra)


def check_bytes(scen) -> None:
    """A scenario's objects each within the size limit and together within the cluster's bytes quota (it replaces
    everything the cluster holds)."""
    total = sum(admitted.check_size(o.raw) for o in scen.nodes + scen.bound_pods + scen.pending_pods)
    total += sum(admitted.check_size(raw) for items in (scen.objects or {}).values() for raw in items)
    limit = settings.SCHEDSCOPE["MAX_STORE_BYTES"]
    if total > limit:
        raise ValidationFailed({"scenario": [f"exceeded quota: {admitted.QUOTA_NAME}, requested: storage={total}, "
                                             f"used: storage=0, limited: storage={limit}"]})


def add_node(cluster: Cluster, raw: dict, user=None) -> Node:
    require_simulated(cluster, "adding a node")
    node = admitted.admit_node(admitted.check_kind("Node", raw), objectstore.rfc3339(time.time()),
                               kubeversions.cluster_features(cluster))
    check_size(cluster, nodes=1)
    try:
        with objectstore.writing(cluster.pk) as w:
            row = node_row(cluster, node)
            held = Node.objects.filter(cluster=cluster).values_list("raw__spec__podCIDRs", "raw__spec__podCIDR")
            cidrs = nodeipam.CidrSet(c for many, one in held for c in (many or [one]))
            row.raw = cidrs.with_pod_cidr(row.raw)
            objectstore.within_quota(w, row.raw)
            objectstore.put_node(w, row)
            row.save()
    except IntegrityError:
        raise ValidationFailed({"metadata.name": [f'node "{node.name}" already exists']}) from None
    audit(user, "node.create", cluster, node=node.name)
    return row


def replacement(old: dict, raw: dict, kept: tuple) -> dict:
    """A PUT's new object: ``raw`` with the ``kept`` parts of ``old`` (metadata uid, creation time, namespace are
    always kept); refused when it renames the object or its resourceVersion is not the stored one (kube-apiserver's
    messages)."""
    old_meta, meta = old.get("metadata") or {}, dict(raw.get("metadata") or {})
    if meta.get("name") not in (None, old_meta.get("name")):
        raise ValidationFailed({"metadata.name": [f'the name of the object ({meta["name"]}) does not match the name '
                                                  f'on the URL ({old_meta.get("name")})']})
    if meta.get("resourceVersion") not in (None, "", old_meta.get("resourceVersion")):
        raise ValidationFailed({"metadata.resourceVersion": [
            "the object has been modified; please apply your changes to the latest version and try again"]})
    for field in ("name", "uid", "creationTimestamp", "namespace"):
        if field in old_meta:
            meta[field] = old_meta[field]
    new = dict(raw, metadata=meta)
    for part in kept:
        new.pop(part, None)
        if part in old:
            new[part] = old[part]
    return new


def update_node(cluster: Cluster, node: Node, raw: dict, user=None) -> Node:
    """Replace a node (its spec, labels and the status its kubelet reports) as a PUT would."""
    require_simulated(cluster, "changing a node")
    with objectstore.writing(cluster.pk) as w:
        old = Node.objects.select_for_update().filter(pk=node.pk).first()
        if old is None:
            raise ValidationFailed({"metadata.name": [f'node "{node.name}" no longer exists']})
        parsed = admitted.admit_node_update(old.raw, replacement(old.raw, admitted.check_kind("Node", raw), ()),
                                            kubeversions.cluster_features(cluster))
        row = node_row(cluster, parsed)
        row.pk = old.pk
        objectstore.within_quota(w, row.raw, old.raw)
        objectstore.put_node(w, row, objectstore.MODIFIED)
        Node.objects.filter(pk=old.pk).update(raw=row.raw, rv=row.rv, **objectstore.node_columns(parsed))
    audit(user, "node.update", cluster, node=row.name)
    return row


def update_pod(cluster: Cluster, pod: Pod, raw: dict, user=None) -> Pod:
    """Replace a pod's metadata and spec as a PUT would: its status stays, and the spec changes only where kube's
    ValidatePodUpdate allows (``admitted.admit_pod_update``)."""
    require_simulated(cluster, "changing a pod")
    with objectstore.writing(cluster.pk) as w:
        old = Pod.objects.select_for_update().filter(pk=pod.pk).first()
        if old is None:
            raise ValidationFailed({"metadata.name": [f'pod "{pod.key}" no longer exists']})
        new = replacement(old.raw, admitted.check_kind("Pod", raw), ("status",))
        parsed = admitted.admit_pod_update(old.raw, new, kubeversions.cluster_features(cluster))
        row = pod_row(cluster, parsed)
        objectstore.within_quota(w, row.raw, old.raw)
        ungated = old.queue == Pod.GATED and row.queue != Pod.GATED
        row.pk, row.queue = old.pk, row.queue if ungated else old.queue
        objectstore.put_pod(w, row, objectstore.MODIFIED)
        Pod.objects.filter(pk=old.pk).update(raw=row.raw, rv=row.rv, queue=row.queue,
                                             **objectstore.pod_columns(parsed))
    audit(user, "pod.update", cluster, pod=row.key, uid=row.uid)
    return row


def delete_node(cluster: Cluster, name: str, user=None) -> bool:
    require_simulated(cluster, "deleting a node")
    with objectstore.writing(cluster.pk) as w:
        node = Node.objects.filter(cluster=cluster, name=name).first()
        if node is None:
            return False
        pods = list(Pod.objects.filter(cluster=cluster, node_name=name).values_list("raw", flat=True))
        node.delete()
        Pod.objects.filter(cluster=cluster, node_name=name).delete()   # what the pod garbage collector does
        objectstore.deleted(w, "nodes", [node.raw])
        objectstore.deleted(w, "pods", pods)
    audit(user, "node.delete", cluster, node=name, pods_deleted=len(pods))
    return True


def add_pod(cluster: Cluster, raw: dict, user=None) -> Pod:
    require_simulated(cluster, "adding a pod")
    return insert_pods(cluster, [raw],
                       audit=lambda row: audit_row(user, "pod.create", cluster, pod=row.key, uid=row.uid))[0]


def delete_pod(cluster: Cluster, pod: Pod, user=None) -> None:
    require_simulated(cluster, "deleting a pod")
    with objectstore.writing(cluster.pk) as w:
        raw = Pod.objects.filter(pk=pod.pk).values_list("raw", flat=True).first()
        if raw is not None:
            pod.delete()
            objectstore.deleted(w, "pods", [raw])
    audit(user, "pod.delete", cluster, pod=pod.key, uid=pod.uid, node=pod.node_name)


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


def set_kube_version(cluster: Cluster, kube_version: str, feature_gates: str, user=None) -> None:
    """Run the cluster's scheduler at another Kubernetes version or with other feature gates: checked with its
    profile (kubeversions.check_change), stored, audited; a running loop rebuilds its scheduler."""
    kube = kubeversions.check_change(cluster, kube_version=kube_version, feature_gates=feature_gates)
    Cluster.objects.filter(pk=cluster.pk).update(**kube)
    cluster.kube_version, cluster.feature_gates = kube["kube_version"], kube["feature_gates"]
    audit(user, "cluster.kube_version", cluster, **kube)
    notify(cluster, "reload")


def set_state(cluster: Cluster, state: str) -> None:
    """running, paused or stopped; starts a loop when needed."""
    Cluster.objects.filter(pk=cluster.pk).update(desired_state=state)
    cluster.desired_state = state
    control.send(cluster.id, "state")
    if state != Cluster.STOPPED:
        loops.ensure_runner(cluster.id)


def step(cluster: Cluster, n: int = 1) -> None:
    """Run n cycles: by the running loop if there is one, else by a short-lived one."""
    control.send(cluster.id, "step", n=n)
    loops.ensure_runner(cluster.id)


def notify(cluster: Cluster, op: str, **args) -> None:
    """Tell a loop that drives the cluster about a change already stored."""
    if control.is_driven(cluster.id):
        control.send(cluster.id, op, **args)
