"""The resources the Kubernetes-compatible API serves, as kube-apiserver's discovery documents describe them."""
from __future__ import annotations

from dataclasses import dataclass

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SUBRESOURCE_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class Resource:
    """One REST resource: where it lives in the URL space, its kind, and what it supports."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    store: str                      # the ApiCluster store that holds it (see store.py)
    short_names: tuple = ()
    categories: tuple = ()
    status: bool = False            # has a status subresource
    fields: tuple = ()              # supported field selector labels besides metadata.name/namespace

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """The group-qualified resource name kube's error messages use: ``pods``, ``leases.coordination.k8s.io``."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def field_labels(self) -> tuple:
        """Field selector labels: metadata.name (and metadata.namespace when namespaced), then the kind's own."""
        meta = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        return meta + self.fields


POD_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
              "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName")
EVENT_FIELDS = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                              "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                              "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type")
# events.k8s.io/v1 names the same selectable fields its own way (AddFieldLabelConversionsForEvent)
EVENTS_V1_LABELS = {"regarding." + f.split(".", 1)[1]: f for f in EVENT_FIELDS if f.startswith("involvedObject.")}
EVENTS_V1_LABELS.update({"reportingController": "reportingComponent", "reason": "reason", "source": "source",
                         "type": "type"})

RESOURCES = (
    Resource("", "v1", "pods", "Pod", True, "pods", ("po",), ("all",), status=True, fields=POD_FIELDS),
    Resource("", "v1", "nodes", "Node", False, "nodes", ("no",), status=True,
             fields=("spec.unschedulable",)),
    Resource("", "v1", "namespaces", "Namespace", False, "Namespace", ("ns",), status=True,
             fields=("status.phase", "name")),
    Resource("", "v1", "events", "Event", True, "Event", ("ev",), fields=EVENT_FIELDS),
    Resource("", "v1", "persistentvolumes", "PersistentVolume", False, "PersistentVolume", ("pv",), status=True),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, "PersistentVolumeClaim", ("pvc",),
             status=True),
    Resource("", "v1", "services", "Service", True, "Service", ("svc",), ("all",), status=True),
    Resource("", "v1", "replicationcontrollers", "ReplicationController", True, "ReplicationController", ("rc",),
             ("all",), status=True),
    Resource("apps", "v1", "replicasets", "ReplicaSet", True, "ReplicaSet", ("rs",), ("all",), status=True),
    Resource("apps", "v1", "statefulsets", "StatefulSet", True, "StatefulSet", ("sts",), ("all",), status=True),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True, "Lease"),
    Resource("events.k8s.io", "v1", "events", "Event", True, "Event", ("ev",), fields=tuple(EVENTS_V1_LABELS)),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, "PodDisruptionBudget", ("pdb",),
             status=True),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, "PriorityClass", ("pc",)),
    Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, "StorageClass", ("sc",)),
    Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False, "CSINode"),
    Resource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, "CSIDriver"),
    Resource("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True, "CSIStorageCapacity"),
    Resource("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, "VolumeAttachment",
             status=True),
    Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False, "DeviceClass"),
    Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, "ResourceClaim", status=True),
    Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True,
             "ResourceClaimTemplate"),
    Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False, "ResourceSlice",
             fields=("spec.nodeName", "spec.driver")),
)

BY_PATH = {(r.group, r.version, r.plural): r for r in RESOURCES}
BY_STORE = {}
for _r in RESOURCES:
    BY_STORE.setdefault(_r.store, _r)   # the first (core) resource of a store is its storage version
GROUPS = {}
for _r in RESOURCES:
    if _r.group:
        GROUPS.setdefault(_r.group, [])
        if _r.version not in GROUPS[_r.group]:
            GROUPS[_r.group].append(_r.version)


def api_resource_list(group: str, version: str, served_versions) -> dict | None:
    """The APIResourceList of /api/v1 or /apis/<group>/<version>, or None when the version is not served
    (``served_versions``: the group versions the cluster's version serves, ``KubeVersion.api_group_versions``)."""
    served = [r for r in RESOURCES if r.group == group and r.version == version
              and r.group_version in served_versions]
    if not served:
        return None
    items = []
    for r in served:
        entry = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
                 "verbs": list(ALL_VERBS)}
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        items.append(entry)
        if r.status:
            items.append({"name": f"{r.plural}/status", "singularName": "", "namespaced": r.namespaced,
                          "kind": r.kind, "verbs": list(SUBRESOURCE_VERBS)})
        if r.plural == "pods" and not r.group:
            items.append({"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
                          "verbs": ["create"]})
            items.append({"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
                          "version": "v1", "kind": "Eviction", "verbs": ["create"]})
    if not group:
        items.append({"name": "bindings", "singularName": "binding", "namespaced": True, "kind": "Binding",
                      "verbs": ["create"]})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}" if group else version,
            "resources": items}


def api_group(group: str, served_versions) -> dict | None:
    versions = [v for v in GROUPS.get(group, ()) if f"{group}/{v}" in served_versions]
    if not versions:
        return None
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(served_versions) -> dict:
    groups = []
    for name in GROUPS:
        g = api_group(name, served_versions)
        if g is None:
            continue
        del g["kind"], g["apiVersion"]
        groups.append(g)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
