"""What kube-apiserver validates of the objects Schedscope stores, with its field paths and messages.

One validator for every write path (scenarios, the REST API, the simulated Kubernetes API, generated workloads):
object names by kind (DNS-1123 subdomain, DNS-1123 label or DNS-1035 label, as kube's ``Validate*Name``), the
namespace, label keys and values, owner references, annotation keys and total size (apimachinery's
``ValidateObjectMeta``); for pods the node name, node selector, tolerations (``ValidateTolerations``), and the
resources of containers, init containers and overhead (kube's resource names, non-negative, integer where kube
wants integers, requests not above limits); for nodes the taints and the capacity and allocatable quantities. Quantities must also fit the
scheduler's int64 counting (``quantity.py``). Node-affinity terms are not checked here (kube-apiserver accepts
label syntax there that selectors do not match).
"""
from __future__ import annotations

import re

from ..dra.validation import CLUSTER_SCOPED as DRA_CLUSTER_SCOPED, VALIDATORS as DRA_VALIDATORS
from .errors import ParseError
from .field import duplicate, forbidden, go_quote, invalid, not_supported, required, too_long
from .identifiers import (is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_extended_resource_name,
                          is_qualified_name, is_valid_label_value)
from .pod import is_supported_pod_level_resource
from .workload import VALIDATORS as WORKLOAD_VALIDATORS
from .quantity import (QuantityError, canonical, format_quantity, parse_quantity, quantity_format,
                       resource_amount)

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
NEGATIVE = "must be greater than or equal to 0"
NOT_INTEGER = "must be an integer"
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
INTEGER_RESOURCES = ("pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
                     "persistentvolumeclaims", "services.nodeports", "services.loadbalancers")
# Name rules by kind (ValidatePodName, ValidateNodeName, ValidateNamespaceName, ValidateServiceName, ...):
# every other kind Schedscope stores is a DNS-1123 subdomain.
NAME_RULES = {"Namespace": "label", "Service": "dns1035"}
_NAME_CHECKS = {"label": is_dns1123_label, "subdomain": is_dns1123_subdomain, "dns1035": is_dns1035_label}
CLUSTER_SCOPED = ("Node", "Namespace", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver", "PriorityClass",
                  "VolumeAttachment", *DRA_CLUSTER_SCOPED)


class ValidationError(ParseError):
    """An object kube-apiserver would refuse; ``causes`` is every FieldError (the ParseError is the first)."""

    def __init__(self, causes: list):
        super().__init__(causes[0].path, causes[0].body())
        self.causes = causes

    def __str__(self):
        return "; ".join(str(c) for c in self.causes)


# -- metadata ---------------------------------------------------------------------------------------
def _string_map(raw, path: str, errs: list) -> dict:
    """A map of strings (labels, annotations, node selectors); values of other types are field errors."""
    if not isinstance(raw, dict):
        return {}   # absent, or a shape the parser reports
    out = {}
    for k, v in raw.items():
        if isinstance(v, str):
            out[k] = v
        else:
            errs.append(invalid(path, v, f"the value of {k!r} must be a string"))
    return out


def validate_labels(labels, path: str, errs: list) -> None:
    """ValidateLabels: every key a qualified name, every value a label value (errors on ``path`` itself)."""
    for k, v in _string_map(labels, path, errs).items():
        errs.extend(invalid(path, k, m) for m in is_qualified_name(k))
        errs.extend(invalid(path, v, m) for m in is_valid_label_value(v))


def validate_name(value: str, rule: str, path: str, errs: list) -> None:
    errs.extend(invalid(path, value, m) for m in _NAME_CHECKS[rule](value))


def validate_object_meta(kind: str, raw, errs: list) -> None:
    """ValidateObjectMeta: name (by kind), namespace, labels, annotations."""
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    if not isinstance(meta, dict):
        errs.append(required("metadata.name", "name or generateName is required"))
        return
    name = meta.get("name")
    if not name:
        errs.append(required("metadata.name", "name or generateName is required"))
    elif not isinstance(name, str):
        errs.append(invalid("metadata.name", name, "expected a string"))
    else:
        validate_name(name, NAME_RULES.get(kind, "subdomain"), "metadata.name", errs)
    namespace = meta.get("namespace")
    if kind in CLUSTER_SCOPED:
        if namespace:
            errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    elif namespace is not None and namespace != "":   # an absent namespace is defaulted ("default")
        if not isinstance(namespace, str):
            errs.append(invalid("metadata.namespace", namespace, "expected a string"))
        else:
            validate_name(namespace, "label", "metadata.namespace", errs)
    validate_labels(meta.get("labels"), "metadata.labels", errs)
    _validate_owner_references(meta.get("ownerReferences"), errs)
    annotations = _string_map(meta.get("annotations"), "metadata.annotations", errs)
    for k in annotations:
        errs.extend(invalid("metadata.annotations", k, m) for m in is_qualified_name(k.lower()))
    if sum(len(k) + len(v) for k, v in annotations.items()) > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long("metadata.annotations", f"must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"))


def _validate_owner_references(refs, errs: list) -> None:
    """ValidateOwnerReferences' checks of each reference (the path has no index, as kube's)."""
    path = "metadata.ownerReferences"
    for ref in refs if isinstance(refs, list) else ():
        if not isinstance(ref, dict):
            continue
        api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
        parts = api_version.split("/") if isinstance(api_version, str) else []
        version = parts[-1] if len(parts) <= 2 else ""   # schema.ParseGroupVersion; more than one "/" is no version
        if not version:
            errs.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        if not kind:
            errs.append(invalid(f"{path}.kind", kind, "must not be empty"))
        for field in ("name", "uid"):
            if not ref.get(field):
                errs.append(invalid(f"{path}.{field}", ref.get(field) or "", "must not be empty"))


# -- resources --------------------------------------------------------------------------------------
def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_integer_resource(name: str) -> bool:
    return name in INTEGER_RESOURCES or is_extended_resource_name(name)


_VALID_NAMES = set()   # container resource names that validated (a few names repeat over every pod)
_VALID_QUANTITIES = {}  # (resource name, quantity text) -> value, of quantities that validated
_MEMO_LIMIT = 4096


def _container_resource_name(name: str, path: str, errs: list) -> bool:
    """validateContainerResourceName; False when the name is invalid."""
    if name in _VALID_NAMES:
        return True
    before = len(errs)
    errs.extend(invalid(path, name, m) for m in is_qualified_name(name))
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not is_extended_resource_name(name):
        errs.append(invalid(path, name, "doesn't follow extended resource name standard"))
    if len(errs) == before and len(_VALID_NAMES) < _MEMO_LIMIT:
        _VALID_NAMES.add(name)
    return len(errs) == before


def _quantity(name: str, q, path: str, errs: list):
    """ValidateResourceQuantityValue, plus the scheduler's int64 bound; the value (None when invalid)."""
    memo = (name, q) if type(q) is str else None
    value = _VALID_QUANTITIES.get(memo) if memo else None
    if value is not None:
        return value
    before = len(errs)
    value = _checked_quantity(name, q, path, errs)
    if memo and len(errs) == before and value is not None and len(_VALID_QUANTITIES) < _MEMO_LIMIT:
        _VALID_QUANTITIES[memo] = value
    return value


def _checked_quantity(name: str, q, path: str, errs: list):
    try:
        resource_amount(name, q)
        value = parse_quantity(q)
    except QuantityError as err:
        errs.append(invalid(path, q, err.detail))
        return None
    if value < 0:
        errs.append(invalid(path, canonical(q), NEGATIVE))
    elif _is_integer_resource(name) and (value * 1000) % 1000:
        errs.append(invalid(path, canonical(q), NOT_INTEGER))
    return value


def validate_resource_list(raw, path: str, errs: list, key_style: bool = False, container: bool = False) -> dict:
    """Each quantity of a ResourceList at ``path.<name>`` (``path[<name>]`` when ``key_style``); the valid
    values by name."""
    out = {}
    for name, q in (raw if isinstance(raw, dict) else {}).items():
        at = f"{path}[{name}]" if key_style else f"{path}.{name}"
        if container and not _container_resource_name(name, at, errs):
            continue
        value = _quantity(name, q, at, errs)
        if value is not None:
            out[name] = value
    return out


def _validate_container(c, path: str, errs: list) -> None:
    """ValidateResourceRequirements: names, quantities, requests not above limits."""
    if not isinstance(c, dict):
        return
    res = c.get("resources")
    if not isinstance(res, dict):
        return
    limits = validate_resource_list(res.get("limits"), f"{path}.resources.limits", errs, True, True)
    requests = validate_resource_list(res.get("requests"), f"{path}.resources.requests", errs, True, True)
    for name, value in requests.items():
        if name in limits and value > limits[name]:
            errs.append(invalid(f"{path}.resources.requests", canonical(res["requests"][name]),
                                           f"must be less than or equal to {name} limit of "
                                           f"{canonical(res['limits'][name])}"))


# helper.IsStandardResourceName's names without a "/" (hugepages-* aside)
STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
                      "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
                      "quota", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
                      "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
                      "services.loadbalancers")
SUPPORTED_POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")   # sets.List(SupportedPodLevelResources())


def _pod_resource_name(name: str, path: str, errs: list) -> bool:
    """validatePodResourceName: a qualified, standard name that pod-level resources support."""
    before = len(errs)
    errs.extend(invalid(path, name, m) for m in is_qualified_name(name))
    if len(errs) == before and "/" not in name and name not in STANDARD_RESOURCES \
            and not name.startswith("hugepages-"):
        errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    if len(errs) == before and not is_supported_pod_level_resource(name):
        errs.append(not_supported(path, name, SUPPORTED_POD_LEVEL_RESOURCES))
    return len(errs) == before


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: a native resource that is not hugepages."""
    return ("/" not in name or "kubernetes.io/" in name) and not name.startswith("hugepages-")


def _aggregate(containers, init_containers, field: str) -> dict:
    """AggregateContainerRequests / AggregateContainerLimits over the valid quantities of the containers'
    ``field`` ("requests" or "limits"): {name: (value, format of the first quantity counted)}, the format being
    what Quantity.Add keeps."""
    def listed(c):
        res = c.get("resources") if isinstance(c, dict) else None
        raw = res.get(field) if isinstance(res, dict) else None
        return {k: (parse_quantity(q), quantity_format(q)) for k, q in (raw if isinstance(raw, dict) else {}).items()
                if not _invalid_quantity(q)}

    def add(into, other):
        for k, (v, fmt) in other.items():
            into[k] = (into[k][0] + v, into[k][1]) if k in into else (v, fmt)

    def peak(into, other):
        for k, (v, fmt) in other.items():
            if k not in into or v > into[k][0]:
                into[k] = (v, fmt)

    out, sidecars, init_peak = {}, {}, {}
    for c in containers:
        add(out, listed(c))
    for c in init_containers:
        mine = listed(c)
        if isinstance(c, dict) and c.get("restartPolicy") == "Always":
            add(out, mine)
            add(sidecars, mine)
            peak(init_peak, sidecars)
        else:
            entry = dict(mine)
            add(entry, sidecars)
            peak(init_peak, entry)
    peak(out, init_peak)
    return out


def _invalid_quantity(q) -> bool:
    try:
        parse_quantity(q)
    except QuantityError:
        return True
    return False


def _validate_pod_resources(spec: dict, errs: list) -> None:
    """validatePodResources (PodLevelResources): ``spec.resources`` names cpu, memory or hugepages-* with valid
    quantities, requests not above limits (hugepages equal to them), no claims, not on a windows pod, requests
    at least the containers' aggregate, limits at least each container's (and the aggregate's for hugepages)."""
    res = spec.get("resources")
    if res is None:
        return
    path = "spec.resources"
    os_name = (spec.get("os") or {}).get("name") if isinstance(spec.get("os"), dict) else None
    if os_name == "windows":
        errs.append(forbidden(path, "may not be set for a windows pod"))
        return
    if not isinstance(res, dict):
        return
    if res.get("claims") is not None:
        errs.append(forbidden(f"{path}.claims", "claims may not be set for Resources at pod-level"))
    raw_limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
    raw_requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
    cpu_or_memory = hugepages = False
    limits = {}
    for name, q in raw_limits.items():
        at = f"{path}.limits[{name}]"
        _pod_resource_name(name, at, errs)
        value = _quantity(name, q, at, errs)
        if value is not None:
            limits[name] = value
        hugepages = hugepages or name.startswith("hugepages-")
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    requests = {}
    for name, q in raw_requests.items():
        at = f"{path}.requests[{name}]"
        _pod_resource_name(name, at, errs)
        value = _quantity(name, q, at, errs)
        if value is not None:
            requests[name] = value
        if name in raw_limits:
            if value is not None and name in limits:
                if value != limits[name] and not _overcommit_allowed(name):
                    errs.append(invalid(f"{path}.requests", canonical(q), f"must be equal to {name} limit of "
                                                                          f"{canonical(raw_limits[name])}"))
                elif value > limits[name]:
                    errs.append(invalid(f"{path}.requests", canonical(q), f"must be less than or equal to {name} "
                                                                          f"limit of {canonical(raw_limits[name])}"))
        elif not _overcommit_allowed(name):
            errs.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
        hugepages = hugepages or name.startswith("hugepages-")
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    if hugepages and not cpu_or_memory:
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    containers = [c for c in spec.get("containers") or () if isinstance(c, dict)] \
        if isinstance(spec.get("containers"), list) else []
    init = [c for c in spec.get("initContainers") or () if isinstance(c, dict)] \
        if isinstance(spec.get("initContainers"), list) else []
    for name, (value, fmt) in _aggregate(containers, init, "requests").items():
        if name in requests and value > requests[name]:
            errs.append(invalid(f"{path}.requests[{name}]", canonical(raw_requests[name]),
                                f"must be greater than or equal to aggregate container requests of "
                                f"{format_quantity(value, fmt)}"))
    for name, (value, fmt) in _aggregate(containers, init, "limits").items():
        if name.startswith("hugepages-") and name in limits and value > limits[name]:
            errs.append(invalid(f"{path}.limits[{name}]", canonical(raw_limits[name]),
                                f"must be greater than or equal to aggregate container limits of "
                                f"{format_quantity(value, fmt)}"))
    for i, c in enumerate(containers):
        c_limits = (c.get("resources") or {}).get("limits") if isinstance(c.get("resources"), dict) else None
        for name, q in (c_limits if isinstance(c_limits, dict) else {}).items():
            if name in limits and not _invalid_quantity(q) and parse_quantity(q) > limits[name]:
                errs.append(invalid(f"{path}.containers[{i}][{name}].limits", canonical(q),
                                    f"must be less than or equal to pod limits of {canonical(raw_limits[name])}"))


# -- kinds ------------------------------------------------------------------------------------------
def _validate_pod(raw: dict, errs: list) -> None:
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        return
    for field in ("containers", "initContainers"):
        items = spec.get(field)
        for i, c in enumerate(items if isinstance(items, list) else ()):
            _validate_container(c, f"spec.{field}[{i}]", errs)
    _validate_pod_resources(spec, errs)
    validate_resource_list(spec.get("overhead"), "spec.overhead", errs, key_style=True)
    node_name = spec.get("nodeName")
    if isinstance(node_name, str) and node_name:
        validate_name(node_name, "subdomain", "spec.nodeName", errs)
    validate_labels(spec.get("nodeSelector"), "spec.nodeSelector", errs)
    validate_tolerations(spec.get("tolerations"), "spec.tolerations", errs)
    group = spec.get("schedulingGroup")
    if group is not None:
        _validate_scheduling_group(group, "spec.schedulingGroup.podGroupName", errs)


def _validate_scheduling_group(group, path: str, errs: list) -> None:
    """validateSchedulingGroup: a one-of whose only member is podGroupName, a DNS-1123 subdomain."""
    name = group.get("podGroupName") if isinstance(group, dict) else None
    if name is None:
        errs.append(invalid(path, "null", "must specify one of: `podGroupName`"))
    elif not isinstance(name, str):
        errs.append(invalid(path, name, "expected a string"))
    else:
        validate_name(name, "subdomain", path, errs)


TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _validate_effect(effect, allow_empty: bool, path: str, errs: list) -> None:
    """validateTaintEffect."""
    if not effect:
        if not allow_empty:
            errs.append(required(path))
    elif effect not in TAINT_EFFECTS:
        errs.append(not_supported(path, effect, TAINT_EFFECTS))


def validate_tolerations(tolerations, path: str, errs: list) -> None:
    """ValidateTolerations (the Lt and Gt operators behind their feature gate, off)."""
    for i, t in enumerate(tolerations if isinstance(tolerations, list) else ()):
        if not isinstance(t, dict):
            continue
        at = f"{path}[{i}]"
        key, value, operator = t.get("key") or "", t.get("value") or "", t.get("operator") or ""
        effect = t.get("effect") or ""
        if key:
            errs.extend(invalid(f"{at}.key", key, m) for m in is_qualified_name(key))
        elif operator != "Exists":
            errs.append(invalid(f"{at}.operator", operator,
                                'operator must be Exists when `key` is empty, which means "match all values and all '
                                'keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errs.append(invalid(f"{at}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("", "Equal"):
            if is_valid_label_value(value):
                errs.append(invalid(f"{at}.operator", value, ";".join(is_valid_label_value(value))))
        elif operator == "Exists":
            if value:
                errs.append(invalid(f"{at}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{at}.operator", operator, ("Equal", "Exists", "Lt", "Gt")
                                      if operator in ("Lt", "Gt") else ("Equal", "Exists")))
        _validate_effect(effect, True, f"{at}.effect", errs)


def _validate_node(raw: dict, errs: list) -> None:
    spec = raw.get("spec")
    taints = spec.get("taints") if isinstance(spec, dict) else None
    for i, t in enumerate(taints if isinstance(taints, list) else ()):
        if not isinstance(t, dict):
            continue
        key, value = t.get("key") or "", t.get("value") or ""
        errs.extend(invalid(f"spec.taints[{i}].key", key, m) for m in is_qualified_name(key))
        if is_valid_label_value(value):
            errs.append(invalid(f"spec.taints[{i}].value", value, ";".join(is_valid_label_value(value))))
        _validate_effect(t.get("effect") or "", False, f"spec.taints[{i}].effect", errs)
    status = raw.get("status")
    if isinstance(status, dict):
        for field in ("capacity", "allocatable"):
            validate_resource_list(status.get(field), f"status.{field}", errs)
        _validate_declared_features(status.get("declaredFeatures"), errs)


DECLARED_FEATURE = re.compile(r"^[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*$")


def _validate_declared_features(features, errs: list) -> None:
    """validateNodeDeclaredFeatures: names in UpperCamelCase segments, sorted, each once."""
    features = [f for f in features if isinstance(f, str)] if isinstance(features, list) else []
    for i, feature in enumerate(features):
        at = f"status.declaredFeatures[{i}]"
        if len(feature) > 253:
            errs.append(invalid(at, feature, f"invalid feature name {go_quote(feature)}: must be no more than 253 "
                                             "characters"))
        elif not DECLARED_FEATURE.match(feature):
            errs.append(invalid(at, feature, f"invalid feature name {go_quote(feature)}: must start with an "
                                             "UpperCamelCase segment, with subsequent segments separated by '/' (e.g., "
                                             "MyFeature or MyFeature/mySubFeature), and contain only alphanumeric "
                                             "characters and slashes"))
        if i + 1 < len(features):
            following = features[i + 1]
            if feature == following:
                errs.append(duplicate(f"status.declaredFeatures[{i + 1}]", following))
            elif feature > following:
                errs.append(invalid(f"status.declaredFeatures[{i + 1}]", following,
                                    "list must be sorted alphabetically"))


# Pod spec fields an update may change (ValidatePodUpdate), besides images and scheduling gates; the second set
# only while the pod is still gated.
POD_MUTABLE_SPEC = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates")
POD_GATED_MUTABLE_SPEC = ("nodeSelector", "affinity")


def pod_update_errors(old: dict, new: dict) -> list:
    """ValidatePodUpdate: only images, deadlines, added tolerations and removed gates may change (plus node
    selection while the pod is still gated), in kube's order (tolerations, gates, the rest of the spec); metadata
    is checked by ``object_errors``."""
    o, n = dict(old.get("spec") or {}), dict(new.get("spec") or {})
    gated = bool(o.get("schedulingGates"))
    for key in POD_MUTABLE_SPEC + (POD_GATED_MUTABLE_SPEC if gated else ()):
        o.pop(key, None)
        n.pop(key, None)
    for field in ("containers", "initContainers"):
        if field in o and field in n and len(o[field]) == len(n[field]):
            o[field] = [{k: v for k, v in c.items() if k != "image"} for c in o[field]]
            n[field] = [{k: v for k, v in c.items() if k != "image"} for c in n[field]]
    errs = []
    if not _only_added_tolerations((old.get("spec") or {}).get("tolerations"),
                                   (new.get("spec") or {}).get("tolerations")):
        errs.append(forbidden("spec.tolerations", "existing toleration can not be modified except its "
                                                  "tolerationSeconds"))
    old_gates = {g.get("name") for g in (old.get("spec") or {}).get("schedulingGates") or []}
    new_gates = {g.get("name") for g in (new.get("spec") or {}).get("schedulingGates") or []}
    if not new_gates <= old_gates:
        errs.append(forbidden("spec.schedulingGates", "only deletion is allowed, but found new scheduling gate"))
    if o != n:
        errs.append(forbidden("spec", "pod updates may not change fields other than "
                                      "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                                      "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                                      "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it "
                                      "to be set to 1 if it was previously negative)"))
    return errs


def node_update_errors(old: dict, new: dict) -> list:
    """ValidateNodeUpdate's rule on pod CIDRs: once a node has them (the node IPAM controller sets them), an
    update may not change them; the rest of a node may change."""
    def cidrs(raw):
        spec = raw.get("spec") if isinstance(raw, dict) else None
        spec = spec if isinstance(spec, dict) else {}
        return list(spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else []))
    before = cidrs(old)
    if before and cidrs(new) != before:
        return [forbidden("spec.podCIDRs", 'node updates may not change podCIDR except from "" to valid')]
    return []


def _toleration_fields(t) -> tuple:
    t = t if isinstance(t, dict) else {}
    return tuple(t.get(k) or "" for k in ("key", "operator", "value", "effect"))


def _only_added_tolerations(old, new) -> bool:
    """validateOnlyAddedTolerations: every old toleration is still there (its tolerationSeconds may change)."""
    kept = {_toleration_fields(t) for t in new or ()} if isinstance(new, list) else set()
    return all(_toleration_fields(t) in kept for t in (old if isinstance(old, list) else ()))


_BY_KIND = {"Pod": _validate_pod, "Node": _validate_node, **DRA_VALIDATORS, **WORKLOAD_VALIDATORS}


def object_errors(kind: str, raw) -> list:
    """Every FieldError kube-apiserver would report for ``raw`` as a ``kind`` (empty: valid)."""
    errs: list = []
    validate_object_meta(kind, raw, errs)
    check = _BY_KIND.get(kind)
    if check is not None and isinstance(raw, dict):
        check(raw, errs)
    return errs


def validate_object(kind: str, raw) -> None:
    """Raise ValidationError (a ParseError with every cause) unless ``raw`` is a valid ``kind``."""
    errs = object_errors(kind, raw)
    if errs:
        raise ValidationError(errs)
