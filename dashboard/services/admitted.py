"""One admission path for every object, whoever writes it: the Kubernetes API (``k8sapi.store``, which adds
its wire handling), the REST API and the pages (``services.clusters``), scenario loads and the workload generator
(``objectstore.insert_pods``) all pass what kube-apiserver of the cluster's version does before it stores an
object, in its words:

- decoding (``scheduler_core.objects.apifields``): the fields the version does not know are dropped (the
  Kubernetes API also refuses or warns of them, as its ``fieldValidation`` asks), and a pod's fields whose gate
  is off are cleared unless the stored pod uses them (the pod strategy's dropDisabledFields);
- the size limit: an object above 3 MiB is refused as kube-apiserver refuses such a request (413);
- on create, the fields the server owns: a new uid and creationTimestamp, no deletionTimestamp or resourceVersion;
  a pod's status is Pending with its QoS class (PodStrategy.PrepareForCreate), its ``spec.nodeName`` kept as kube
  keeps it (a pod created bound), later changed only by a binding;
- SetDefaults_Pod, the Priority admission plugin (``spec.priority`` from the PriorityClass: a caller's value that
  differs is refused) and DefaultTolerationSeconds;
- validation (``scheduler_core.objects.validation``: ValidateObjectMeta with owner references, ValidatePod,
  ValidateNode); on update ValidatePodUpdate (the spec mostly immutable, tolerations only added), with uid,
  creationTimestamp and the status kept from the stored object unless the write is a status write; on a node
  update ValidateNodeUpdate's rule that pod CIDRs, once set, stay;
- the cluster's quota of object counts and bytes, on every write that grows what it holds (create, update, patch,
  status).

Scenario loads replace a cluster's state whole, uids, bindings and statuses included, as restoring a snapshot of
etcd does: they pass decoding (``restored``), validation, the size limit and the quota, not the create rules; a
kind whose group version the cluster's version does not serve is refused.
"""
from __future__ import annotations

import json
import uuid

import orjson

from scheduler_core.dra.defaults import with_defaults
from scheduler_core.dra.validation import admin_access_errors
from scheduler_core.objects import Node, ParseError, Pod, apifields, field
from scheduler_core.objects.protoschema import ROOTS
from scheduler_core.objects.validation import node_update_errors, object_errors, pod_update_errors

MAX_OBJECT_BYTES = 3 * 1024 * 1024   # kube-apiserver's request body limit (3 MiB)
SYSTEM_PRIORITY_CLASSES = (("system-node-critical", 2000001000,
                            "Used for system critical pods that must not be moved from their current node."),
                           ("system-cluster-critical", 2000000000,
                            "Used for system critical pods that must run in the cluster, but can be moved to "
                            "another node if necessary."))
DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
NODE_INFO_FIELDS = ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
                    "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture")
QUOTA_NAME = "schedscope-cluster-quota"
QUOTA_RESOURCES = {"pods": "pods", "nodes": "count/nodes", "Event": "count/events"}   # ResourceQuota's names
PLURALS = {"Pod": "pods", "Node": "nodes"}
# a body without apiVersion is read as its kind's first group version (core Events as v1, not events.k8s.io/v1)
DEFAULT_API_VERSIONS = {kind: api_version for api_version, kind in reversed(ROOTS)}


class ValidationFailed(ValueError):
    """Bad input: ``errors`` maps a field path to messages (DRF's 400 shape; "" for the object as a whole)."""

    def __init__(self, errors: dict):
        super().__init__("; ".join(f"{k}: {' '.join(v)}" if k else " ".join(v) for k, v in errors.items()))
        self.errors = errors


class Refused(ValidationFailed):
    """A write kube-apiserver refuses, as its Status says: ``code`` and ``reason`` (422 Invalid with ``causes``,
    [(field, cause reason, message)]; 403 Forbidden; 413 RequestEntityTooLarge), ``why`` in its words."""

    def __init__(self, code: int, reason: str, why: str, name: str = "", plural: str = "", causes=()):
        self.code, self.reason, self.why, self.name, self.plural = code, reason, why, name, plural
        self.causes = list(causes)
        errors = {}
        for field, _cause, message in self.causes:
            errors.setdefault(field, []).append(message)
        super().__init__(errors or {"": [self.message]})

    @property
    def message(self) -> str:
        """The Status message (a Forbidden one names the object as kube names it)."""
        if self.code == 403:
            return f'{self.plural} "{self.name}" is forbidden: {self.why}'
        return self.why


def _name(obj) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def invalid(kind: str, obj, causes: list) -> Refused:
    return Refused(422, "Invalid", "", _name(obj), PLURALS.get(kind, ""), causes)


def forbidden(kind: str, obj, why: str) -> Refused:
    return Refused(403, "Forbidden", why, _name(obj), PLURALS.get(kind, kind), ())


# -- every kind ----
def check_kind(kind: str, raw):
    """A body for a ``kind`` (v1): an ``apiVersion`` or ``kind`` that is given must be ``v1`` and ``kind``, as
    kube-apiserver decodes a create's body (its messages); the body."""
    if isinstance(raw, dict):
        version, given = raw.get("apiVersion"), raw.get("kind")
        if version not in (None, "", "v1"):
            raise ValidationFailed({"apiVersion": [
                f"the API version in the data ({version}) does not match the expected API version (v1)"]})
        if given not in (None, "", kind):
            raise ValidationFailed({"kind": [f'{given} in version "v1" cannot be handled as a {kind}']})
        return raw
    raise ValidationFailed({kind.lower(): ["expected an object"]})


def object_size(obj) -> int:
    """An object's size as stored (its JSON), for the size limit and the bytes quota."""
    try:
        return len(orjson.dumps(obj))
    except TypeError:   # integers over 64 bits or keys that are not strings: the standard encoder's
        return len(json.dumps(obj, separators=(",", ":")))


def check_size(obj, size: int | None = None) -> int:
    """413 above MAX_OBJECT_BYTES; the object's size."""
    size = object_size(obj) if size is None else size
    if size > MAX_OBJECT_BYTES:
        raise Refused(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_OBJECT_BYTES}")
    return size


def decoded(kind: str, obj, features, duplicates: dict | None = None) -> apifields.Decoded:
    """``obj`` as the kube-apiserver of ``features`` (the cluster's versions.Features) decodes a write of it: the
    fields its version does not know dropped, their strict decoding errors in ``errors`` (``apifields.decode``;
    ``duplicates``: a body's, ``apifields.load_with_duplicates``)."""
    api_version = (obj.get("apiVersion") if isinstance(obj, dict) else None) or DEFAULT_API_VERSIONS.get(kind, "")
    return apifields.decode(features.version, api_version, kind, obj, duplicates)


def _cleared(obj, path: list):
    """``obj`` without the field at ``path`` (names; "[]" for every item of a list), copied where it changes."""
    if not isinstance(obj, dict) or path[0] not in obj:
        return obj
    if len(path) == 1:
        return {k: v for k, v in obj.items() if k != path[0]}
    value = obj[path[0]]
    if path[1] == "[]":
        if not isinstance(value, list):
            return obj
        new = [_cleared(item, path[2:]) if len(path) > 2 else item for item in value]
        changed = any(a is not b for a, b in zip(new, value))
    else:
        new = _cleared(value, path[1:])
        changed = new is not value
    return dict(obj, **{path[0]: new}) if changed else obj


def _path(text: str) -> list:
    return [part for name in text.split(".") for part in ((name[:-2], "[]") if name.endswith("[]") else (name,))]


def without_disabled_fields(pod: dict, features, old: dict | None = None) -> dict:
    """A pod without the fields of gates that are off at ``features`` (``KubeVersion.pod_gated_fields``, the pod
    strategy's dropDisabledFields), unless ``old`` (the stored pod of an update) uses one of that gate's fields."""
    for gate, paths in features.version.pod_gated_fields.items():
        if features.gates.get(gate):
            continue
        if old is not None and any(_cleared(old, _path(p)) is not old for p in paths):
            continue
        for p in paths:
            pod = _cleared(pod, _path(p))
    return pod


def restored(kind: str, obj, features):
    """An object of a scenario (a restored snapshot) as the kube-apiserver of ``features`` serves it: decoded, a pod
    without the fields of gates that are off; ValidationFailed for a kind whose group version it does not serve."""
    api_version = DEFAULT_API_VERSIONS.get(kind)   # the kind's storage version
    if api_version and not apifields.served(features.version, api_version):
        raise ValidationFailed({"scenario": [f"{kind} {_name(obj)}: {api_version} is not served at Kubernetes "
                                             f"{features.name}"]})
    obj = decoded(kind, obj, features).obj
    return without_disabled_fields(obj, features) if kind == "Pod" else obj


def defaulted(kind: str, obj, now: str):
    """The object with kube-apiserver's defaults for its kind (resource.k8s.io's: ``scheduler_core.dra.defaults``;
    a ReplicaSet's spec.replicas 1, SetDefaults_ReplicaSet; pods and nodes get theirs in ``admit_pod`` /
    ``admit_node``); ``now``: the write's RFC 3339 time."""
    if kind == "ReplicaSet" and isinstance(obj, dict) and isinstance(obj.get("spec"), dict):
        if obj["spec"].get("replicas") is None:
            obj = dict(obj, spec=dict(obj["spec"], replicas=1))
    return with_defaults(kind, obj, now)


def admit_object(kind: str, obj, now: str, features):
    """A write of a kind other than Pod and Node as the kube-apiserver of ``features`` stores it: decoding, the
    kind's defaults (``now``: the write's RFC 3339 time), the size limit, validation; the object."""
    obj = defaulted(kind, decoded(kind, obj, features).obj, now)
    check_size(obj)
    validate(kind, obj)
    return obj


def validate(kind: str, obj) -> None:
    """kube-apiserver's validation of the kind (``scheduler_core.objects.validation``): 422 with every cause."""
    errs = object_errors(kind, obj)
    if errs:
        raise invalid(kind, obj, [(e.path, e.reason, e.body()) for e in errs])


def check_admin_access(kind: str, obj, namespace_labels: dict, old: dict | None = None) -> None:
    """A ResourceClaim or ResourceClaimTemplate asking admin access to devices, or a claim status granting it
    (``old``: the stored claim), in a namespace without the admin-access label: 422 (``dra.validation``)."""
    errs = admin_access_errors(kind, obj, namespace_labels, old)
    if errs:
        raise invalid(kind, obj, [(e.path, e.reason, e.body()) for e in errs])


def parsed(kind: str, obj):
    """The scheduler's reading of a valid pod or node (422 for what it cannot read)."""
    try:
        return (Pod if kind == "Pod" else Node)(obj)
    except ParseError as err:
        raise invalid(kind, obj, [(err.path, "FieldValueInvalid", f"Invalid value: {err.message}")]) from None


def server_metadata(meta: dict, created: str) -> dict:
    """A created object's metadata with the fields the server owns (FillObjectMetaSystemFields; a deletion cannot
    be created, a resourceVersion is the store's)."""
    meta = dict(meta)
    for field in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(field, None)
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = created
    return meta


def kept_metadata(old: dict, new: dict) -> dict:
    """An update's metadata: uid, creationTimestamp, namespace and deletion fields stay the stored object's."""
    old_meta, meta = old.get("metadata") or {}, dict(new.get("metadata") or {})
    for field in ("uid", "creationTimestamp", "namespace", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if field in old_meta:
            meta[field] = old_meta[field]
        else:
            meta.pop(field, None)
    return meta


def check_quota(limits: dict, store: str, held: int, used_bytes: int, obj: dict, old: dict | None = None) -> int:
    """403 as kube-apiserver answers an exceeded ResourceQuota: one more object of ``store`` (a create, when
    ``old`` is None) past its count, or the cluster's objects past their bytes; returns the bytes the write adds."""
    kind = obj.get("kind") or store
    name = _name(obj)
    limit = limits.get(store)
    if old is None and limit is not None and store in QUOTA_RESOURCES and held + 1 > limit:
        what = QUOTA_RESOURCES[store]
        raise forbidden(kind, obj, f"exceeded quota: {QUOTA_NAME}, requested: {what}=1, used: {what}={held}, "
                                   f"limited: {what}={limit}")
    size = object_size(obj)
    grown = size - (object_size(old) if old is not None else 0)
    limit = limits.get("bytes")
    if limit is not None and grown > 0 and used_bytes + grown > limit:
        raise forbidden(kind, obj, f"exceeded quota: {QUOTA_NAME}, requested: storage={grown}, used: "
                                   f"storage={used_bytes}, limited: storage={limit}")
    return grown


# -- pods -------------------------------------------------------------------------------------------
def with_system_priority_classes(stored: dict, created: str = "") -> dict:
    """PriorityClasses by name: ``stored`` and the two system ones kube-apiserver always has."""
    out = dict(stored)
    for name, value, desc in SYSTEM_PRIORITY_CLASSES:
        out.setdefault(name, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                              "metadata": {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": created},
                              "value": value, "description": desc, "preemptionPolicy": "PreemptLowerPriority"})
    return out


def _image_pull_policy(image: str) -> str:
    ref = image.rsplit("/", 1)[-1]
    if "@" in ref:
        return "IfNotPresent"
    return "Always" if ":" not in ref or ref.endswith(":latest") else "IfNotPresent"


def _default_container(c: dict) -> dict:
    c = dict(c)
    res = dict(c.get("resources") or {})
    limits = res.get("limits") or {}
    if limits:
        res["requests"] = {**limits, **(res.get("requests") or {})}   # requests default to limits
    if res:
        c["resources"] = res
    else:
        c.setdefault("resources", {})
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if c.get("image"):
        c.setdefault("imagePullPolicy", _image_pull_policy(c["image"]))
    return c


def qos_class(spec: dict) -> str:
    """The pod's QoS class (GetPodQOS) from its containers' cpu and memory requests and limits."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    requests, limits = {}, {}
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req = {k: v for k, v in (res.get("requests") or {}).items() if k in ("cpu", "memory")}
        lim = {k: v for k, v in (res.get("limits") or {}).items() if k in ("cpu", "memory")}
        requests.update(req)
        limits.update(lim)
        if set(lim) != {"cpu", "memory"} or any(req.get(k, lim[k]) != lim[k] for k in lim):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _require_containers(pod: dict) -> None:
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    containers = spec.get("containers")
    if not containers or not isinstance(containers, list):
        raise invalid("Pod", pod, [("spec.containers", "FieldValueRequired", "Required value")])
    causes = []
    for i, c in enumerate(containers):
        if not isinstance(c, dict):
            raise invalid("Pod", pod, [(f"spec.containers[{i}]", "FieldValueInvalid", "Invalid value")])
        if not c.get("name"):
            causes.append((f"spec.containers[{i}].name", "FieldValueRequired", "Required value"))
        if not c.get("image"):
            causes.append((f"spec.containers[{i}].image", "FieldValueRequired", "Required value"))
    if causes:
        raise invalid("Pod", pod, causes)


def admit_pod(pod: dict, priority_classes: dict, created: str, features) -> Pod:
    """A pod to create as the kube-apiserver of ``features`` (the cluster's versions.Features) stores it (parsed;
    its ``raw`` is stored): decoding, the size limit, validation, the server's metadata and status,
    SetDefaults_Pod, the Priority and DefaultTolerationSeconds admission plugins (``priority_classes``: by name,
    ``with_system_priority_classes``); ``created``: the RFC 3339 time of the create."""
    pod = without_disabled_fields(decoded("Pod", pod, features).obj, features)
    check_size(pod)
    validate("Pod", pod)
    parsed("Pod", pod)   # a field the scheduler cannot read (a priority that is not an integer) before admission
    _require_containers(pod)
    spec = dict(pod["spec"])
    spec["containers"] = [_default_container(c) for c in spec["containers"]]
    if spec.get("initContainers"):
        spec["initContainers"] = [_default_container(c) for c in spec["initContainers"]]
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    _admit_priority(pod, spec, priority_classes)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = list(spec.get("tolerations") or [])
    for key in DEFAULT_TOLERATIONS:
        if not any(t.get("key") == key and t.get("effect", "") in ("", "NoExecute") for t in tolerations
                   if isinstance(t, dict)):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    spec["tolerations"] = tolerations
    status = {"phase": "Pending", "qosClass": qos_class(spec)}
    if spec.get("schedulingGates"):   # applySchedulingGatedCondition
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                 "lastTransitionTime": None, "reason": "SchedulingGated",
                                 "message": "Scheduling is blocked due to non-empty scheduling gates"}]
    meta = server_metadata(pod.get("metadata") or {}, created)
    meta.setdefault("namespace", "default")
    out = dict(pod, apiVersion="v1", kind="Pod", metadata=meta, spec=spec, status=status)
    check_size(out)
    return parsed("Pod", out)


def _admit_priority(pod: dict, spec: dict, priority_classes: dict) -> None:
    """The Priority admission plugin: the pod's priority (and preemption policy) from its PriorityClass, or the
    global default one; 403 for a class that does not exist or a caller's value that differs."""
    pc_name = spec.get("priorityClassName") or ""
    if pc_name:
        pc = priority_classes.get(pc_name)
        if pc is None:
            raise forbidden("Pod", pod, f"no PriorityClass with name {pc_name} was found")
    else:
        defaults = sorted((p for p in priority_classes.values() if p.get("globalDefault")),
                          key=lambda p: p.get("value", 0))
        pc = defaults[0] if defaults else None
        if pc is not None:
            spec["priorityClassName"] = pc["metadata"]["name"]
    priority = pc.get("value", 0) if pc is not None else 0
    if spec.get("priority") is not None and spec["priority"] != priority:
        raise forbidden("Pod", pod, f"the integer value of priority ({spec['priority']}) must not be provided in pod "
                                    f"spec; priority admission controller computed {priority} from the given "
                                    f"PriorityClass name")
    spec["priority"] = priority
    policy = pc.get("preemptionPolicy") if pc is not None else None
    if policy:
        if spec.get("preemptionPolicy") and spec["preemptionPolicy"] != policy:
            raise forbidden("Pod", pod, f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) must not "
                                        f"be provided in pod spec; priority admission controller computed {policy} "
                                        f"from the given PriorityClass name")
        spec["preemptionPolicy"] = policy


def admit_pod_update(old: dict, new: dict, features) -> Pod:
    """A pod update as kube-apiserver stores it (``new`` with the status the write may set: the stored one unless
    it is a status write): the stored uid and creation time, the size limit, validation and ValidatePodUpdate (its
    first error, as the API answers), after decoding at ``features`` (the cluster's versions.Features); with
    ClearingNominatedNodeNameAfterBinding, ValidatePodStatusUpdate's refusal of a nominatedNodeName newly given to
    a bound pod."""
    new = without_disabled_fields(decoded("Pod", new, features).obj, features, old)
    out = dict(new, metadata=kept_metadata(old, new))
    check_size(out)
    validate("Pod", out)
    errs = pod_update_errors(old, out)
    if errs:
        raise invalid("Pod", out, [(errs[0].path, errs[0].reason, errs[0].body())])
    nominated = (out.get("status") or {}).get("nominatedNodeName") or ""
    if (binding_clears_nominated_node_name(features) and (old.get("spec") or {}).get("nodeName") and nominated
            and nominated != ((old.get("status") or {}).get("nominatedNodeName") or "")):
        err = field.forbidden("status.nominatedNodeName", "may not be set on pods that are already bound to a node")
        raise invalid("Pod", out, [(err.path, err.reason, err.body())])
    return parsed("Pod", out)


def binding_clears_nominated_node_name(features) -> bool:
    """Whether a binding clears the pod's status.nominatedNodeName at ``features`` (versions.Features): kube-apiserver's
    ClearingNominatedNodeNameAfterBinding gate (v1.36, on by default; v1.30 has no such gate and keeps it)."""
    return features.gates.get("ClearingNominatedNodeNameAfterBinding", False)


# -- nodes ------------------------------------------------------------------------------------------
def node_defaults(node: dict) -> dict:
    """status.nodeInfo always has every field (a Go struct without omitempty; typed clients require them);
    spec.podCIDR and spec.podCIDRs say the same (kube's v1 conversion fills one from the other)."""
    status = dict(node.get("status") or {})
    status["nodeInfo"] = {**{f: "" for f in NODE_INFO_FIELDS}, **(status.get("nodeInfo") or {})}
    spec = node.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("podCIDRs"), list) and spec["podCIDRs"]:
        spec = dict(spec, podCIDR=spec["podCIDRs"][0])
    elif isinstance(spec, dict) and spec.get("podCIDR"):
        spec = dict(spec, podCIDRs=[spec["podCIDR"]])
    return dict(node, status=status, **({"spec": spec} if spec is not None else {}))


def admit_node(node: dict, created: str, features) -> Node:
    """A node to create as the kube-apiserver of ``features`` stores it (a node's status may be given: its kubelet
    registers it so)."""
    node = decoded("Node", node, features).obj
    check_size(node)
    validate("Node", node)
    out = node_defaults(dict(node, apiVersion="v1", kind="Node",
                             metadata=server_metadata(node.get("metadata") or {}, created)))
    return parsed("Node", out)


def admit_node_update(old: dict, new: dict, features) -> Node:
    """A node update (``new`` with the status the write may set) at ``features``: decoding, the stored uid and
    creation time, defaults, the size limit, validation and ValidateNodeUpdate's rule on pod CIDRs."""
    new = decoded("Node", new, features).obj
    out = node_defaults(dict(new, metadata=kept_metadata(old, new)))
    check_size(out)
    validate("Node", out)
    errs = node_update_errors(old, out)
    if errs:
        raise invalid("Node", out, [(e.path, e.reason, e.body()) for e in errs])
    return parsed("Node", out)
