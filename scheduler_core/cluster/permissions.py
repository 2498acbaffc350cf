"""What a mode needs of the API server, checked at connect (one SelfSubjectAccessReview per permission), so that
credentials that lack something are refused at once with every missing permission named, instead of failing one
request at a time later.

Every mode lists and watches what its informers follow (``KubeCluster.informers``). The scheduler mode also
writes what kube-scheduler writes: bindings, pod status patches, victim deletions, events, PV/PVC updates, claim
updates (at versions that follow ResourceClaims; creations and deletions with DRAExtendedResource), and (with
leader election) its Lease. A review is not a write
to the cluster: it stores nothing.

Right after an API server restarts, before its RBAC is loaded, every request is refused (for a second or
several on a loaded machine): a refusal is a verdict only once the server says it is ready (``/readyz``).
"""
from __future__ import annotations

import time
from typing import NamedTuple

from kubernetes.client.rest import ApiException

from .kube import api_message

REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SCHEDULER_WRITES = (
    ("create", "", "pods", "binding"), ("patch", "", "pods", "status"), ("delete", "", "pods", ""),
    ("create", "events.k8s.io", "events", ""), ("patch", "events.k8s.io", "events", ""),
    ("update", "", "persistentvolumes", ""), ("update", "", "persistentvolumeclaims", ""),
)
# DynamicResources' PreBind, where the informers follow ResourceClaims: the finalizer, then the allocation and the
# reservation through the status subresource; with DRAExtendedResource it creates the claim of a pod's extended
# resources backed by devices, and deletes one left behind.
CLAIM_WRITES = (("update", "resource.k8s.io", "resourceclaims", ""),
                ("update", "resource.k8s.io", "resourceclaims", "status"))
EXTENDED_RESOURCE_CLAIM_WRITES = (("create", "resource.k8s.io", "resourceclaims", ""),
                                  ("delete", "resource.k8s.io", "resourceclaims", ""))


class Permission(NamedTuple):
    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def target(self) -> str:
        """kubectl's spelling: ``pods/binding``, ``priorityclasses.scheduling.k8s.io``, then `` "NAME"`` and
        `` in NAMESPACE``."""
        text = self.resource + (f".{self.group}" if self.group else "")
        text += f"/{self.subresource}" if self.subresource else ""
        return text + (f' "{self.name}"' if self.name else "") + (f" in {self.namespace}" if self.namespace else "")

    def __str__(self) -> str:
        return f"{self.verb} {self.target}"


class _NoReviews(Exception):
    """The server does not serve SelfSubjectAccessReviews (a Kubernetes-compatible API without authorization)."""


class CredentialsRejected(Exception):
    """401: the API server does not know these credentials (a wrong or expired token, an unknown certificate)."""


def _group_resource(path: str) -> tuple[str, str]:
    """``/api/v1/nodes`` -> ("", "nodes"); ``/apis/apps/v1/replicasets`` -> ("apps", "replicasets")."""
    parts = path.strip("/").split("/")
    return ("", parts[2]) if parts[0] == "api" else (parts[1], parts[3])


def required(kube, writes: bool, lease: tuple[str, str] | None = None) -> list[Permission]:
    """The permissions of a mode: list and watch of every informer of ``kube``; with ``writes`` the scheduler's
    writes; with ``lease`` (namespace, name) its Lease (created, then read and updated by name, as kube's own
    role grants it)."""
    out = []
    for inf in kube.informers:
        group, resource = _group_resource(inf.path)
        out += [Permission("list", group, resource), Permission("watch", group, resource)]
    if writes:
        out += [Permission(*w) for w in SCHEDULER_WRITES]
        if any(inf.kind == "ResourceClaim" for inf in kube.informers):
            out += [Permission(*w) for w in CLAIM_WRITES]
            if kube.features.gates.get("DRAExtendedResource"):
                out += [Permission(*w) for w in EXTENDED_RESOURCE_CLAIM_WRITES]
    if lease is not None:
        out += [Permission("create", "coordination.k8s.io", "leases", "", lease[0])]
        out += [Permission(v, "coordination.k8s.io", "leases", "", *lease) for v in ("get", "update")]
    return out


def _allowed(kube, perm: Permission) -> bool:
    attrs = {"verb": perm.verb, "group": perm.group, "resource": perm.resource}
    if perm.subresource:
        attrs["subresource"] = perm.subresource
    if perm.namespace:
        attrs["namespace"] = perm.namespace
    if perm.name:
        attrs["name"] = perm.name
    try:
        answer = kube.request("POST", REVIEWS, body={"apiVersion": "authorization.k8s.io/v1",
                                                     "kind": "SelfSubjectAccessReview",
                                                     "spec": {"resourceAttributes": attrs}})
    except ApiException as err:
        if err.status == 401:
            raise CredentialsRejected(f"401 Unauthorized: {api_message(err)}") from None
        if err.status == 403:   # the review itself refused: RBAC not loaded yet (or no basic-user role)
            return False
        if err.status == 404:
            raise _NoReviews() from None
        raise
    return bool((answer or {}).get("status", {}).get("allowed"))


def _ready(kube) -> bool:
    """Whether the API server says it is ready (``/readyz``; RBAC loaded). Refused or failing: not ready."""
    try:
        resp = kube.request("GET", "/readyz", stream=True)
    except ApiException as err:
        if err.status == 401:
            raise CredentialsRejected(f"401 Unauthorized: {api_message(err)}") from None
        return False
    body = resp.data
    resp.release_conn()
    return body.strip() == b"ok"


def missing(kube, perms: list[Permission], settle: float = 3.0, ready_wait: float = 30.0,
            interval: float = 0.5) -> list[Permission]:
    """The permissions of ``perms`` the credentials lack (empty: all granted, or a server that serves no reviews
    and answers each request on its own). A refusal is a verdict once it has lasted ``settle`` seconds and the
    server says it is ready (its RBAC loaded), or has lasted ``ready_wait`` seconds. Raises CredentialsRejected
    on a 401, and the request's error when the API server cannot be reached or fails."""
    start = time.monotonic()
    while True:
        try:
            lacking = [p for p in perms if not _allowed(kube, p)]
        except _NoReviews:
            return []
        waited = time.monotonic() - start
        if not lacking or waited >= ready_wait or (waited >= settle and _ready(kube)):
            return lacking
        perms = lacking
        time.sleep(interval)


def describe(lacking: list[Permission]) -> str:
    """``list, watch priorityclasses.scheduling.k8s.io; create pods/binding``: verbs grouped by resource."""
    by_target = {}
    for p in lacking:
        by_target.setdefault(p.target, []).append(p.verb)
    return "; ".join(f"{', '.join(verbs)} {target}" for target, verbs in by_target.items())


def lacking_sentence(lacking: list[Permission], mode: str) -> str:
    """The one line that refuses credentials: how many permissions ``mode`` lacks, and every one."""
    return f"the credentials lack {len(lacking)} permission(s) that {mode} mode needs: {describe(lacking)}"
