"""Manual bindings: a Binding (as kubectl or a custom controller POSTs it) from the pod page or the REST API.

The cluster's scheduler loop makes the binding (``Engine.bind``), so it never races the loop's own bindings; a
cluster that no loop drives gets a short-lived one, as a single step does. The loop accepts what kube-apiserver
accepts (pod not bound yet, node exists), records a ManualBinding event naming the user (a Warning, with the
Filter plugins that reject the node, when it does not fit) and answers; the binding is then audit-logged.
"""
from __future__ import annotations

from redis.exceptions import RedisError

from ..models import Cluster, Node
from . import clusters, control, loops

BIND_TIMEOUT_SECONDS = 15.0


class BindFailed(Exception):
    """A refused or failed manual binding: the HTTP ``status``, the ``field`` path at fault ('' if none), why."""

    def __init__(self, status: int, message: str, field: str = ""):
        super().__init__(message)
        self.status, self.field, self.message = status, field, message


def bind_pod(cluster: Cluster, pod, node_name: str, user, uid: str = "", dry_run: bool = False) -> dict:
    """Bind the pending pod (a Pod row) to ``node_name`` for ``user``; ``uid``, if given, must be the pod's;
    ``dry_run`` (kube's dryRun=All) makes every check and binds nothing.

    Returns the loop's answer: ``node``, ``rejections`` ({Filter plugin: reason} the binding ignored),
    ``message`` (the event's text), ``stored`` (False if the database had not confirmed it yet; None for a dry
    run). Raises
    BindFailed (400 unknown node or not a simulated cluster, 404, 409 already bound, 503 no loop answered)."""
    if cluster.kind != Cluster.SIMULATED:
        raise BindFailed(400, "manual bindings are for simulated clusters: bind a real cluster's pods through its "
                              "API server (kubectl create -f binding.yaml)")
    if uid and uid != pod.uid:
        raise BindFailed(409, f"Precondition failed: UID in precondition: {uid}, UID in object meta: {pod.uid}",
                         "metadata.uid")
    if pod.node_name:
        raise BindFailed(409, f'pod {pod.name} is already assigned to node "{pod.node_name}"')
    if not Node.objects.filter(cluster=cluster, name=node_name).exists():
        raise BindFailed(400, f'nodes "{node_name}" not found', "target.name")
    try:
        answer = loops.request(cluster.id, "bind", BIND_TIMEOUT_SECONDS, key=pod.key, uid=pod.uid,
                                 node=node_name, by=user.get_username(), dry_run=dry_run)
    except (control.NoAnswer, RedisError):
        raise BindFailed(503, "the cluster's scheduler loop did not answer in time; nothing was bound, try "
                              "again") from None
    if answer["status"] != 201:
        raise BindFailed(answer["status"], answer["message"], answer.get("field", ""))
    if dry_run:
        return dict(answer, stored=None)
    clusters.audit(user, "pod.bind", cluster, pod=pod.key, uid=pod.uid, node=node_name,
                   rejections=answer["rejections"])
    return answer


def bind_unless_rejected(cluster: Cluster, pod, node_name: str, user, uid: str = "", confirmed: bool = False) -> dict:
    """``bind_pod``, unless the node fails a PreFilter or Filter plugin and the user has not ``confirmed``: then
    nothing is bound and the dry run's answer comes back. ``asked`` in the answer says which happened."""
    if not confirmed:
        check = bind_pod(cluster, pod, node_name, user, uid=uid, dry_run=True)
        if check["rejections"]:
            return dict(check, asked=True)
    return dict(bind_pod(cluster, pod, node_name, user, uid=uid), asked=False)
