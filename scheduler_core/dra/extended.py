"""Extended resources backed by DRA (DRAExtendedResource): a DeviceClass answers for a resource name given in
``spec.extendedResourceName`` or implicitly as ``deviceclass.resource.kubernetes.io/<class>``. On a node whose
allocatable lacks such a resource, NodeResourcesFit leaves it to DynamicResources, which asks for the devices with
a claim of its own (kube's extendedresourcecache and extendeddynamicresources.go)."""
from __future__ import annotations

from ..objects.identifiers import is_extended_resource_name
from ..objects.quantity import QuantityError, parse_quantity

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
SPECIAL_CLAIM_NAME = "<extended-resources>"   # the in-memory claim before PreBind creates the real one


def is_dra_extended_resource_name(name: str) -> bool:
    """schedutil.IsDRAExtendedResourceName."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


def class_for_resource(classes: dict, name: str):
    """DeviceClassResolver.GetDeviceClass: the implicit class, else the newest class naming the resource
    (the lower name among equally new ones), else None."""
    if name.startswith(DEVICE_CLASS_PREFIX):
        return classes.get(name[len(DEVICE_CLASS_PREFIX):])
    best = None
    for cls in classes.values():
        if (cls.get("spec") or {}).get("extendedResourceName") != name:
            continue
        if best is None:
            best = cls
            continue
        new, old = (cls.get("metadata") or {}), (best.get("metadata") or {})
        ts_new, ts_old = new.get("creationTimestamp") or "", old.get("creationTimestamp") or ""
        if ts_new > ts_old or (ts_new == ts_old and new.get("name", "") < old.get("name", "")):
            best = cls
    return best


def delegated_to_dra(name: str, allocatable: dict, classes: dict) -> bool:
    """shouldDelegateResourceToDRA: the node does not offer the resource itself and a class backs it."""
    if allocatable.get(name, 0) > 0:
        return False
    return class_for_resource(classes, name) is not None


def _count(value) -> int | None:
    try:
        q = parse_quantity(value)
    except QuantityError:
        return None
    return int(q) if q.denominator == 1 else None


def _container_request(index, container, name, class_name, reusable):
    """createResourceRequestAndMappings."""
    requests = (container.get("resources") or {}).get("requests") or {}
    if name not in requests:
        return None, []
    want = _count(requests[name])
    if not want:
        return None, []
    mappings, total = [], 0
    for r in reusable:
        if r is not None:
            total += r["exactly"]["count"]
            mappings.append({"containerName": container.get("name", ""), "resourceName": name,
                             "requestName": r["name"]})
            if total >= want:
                return None, mappings
    position = sorted(requests).index(name)
    request_name = f"container-{index}-request-{position}"
    request = {"name": request_name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                                 "count": want - total}}
    mappings.append({"containerName": container.get("name", ""), "resourceName": name, "requestName": request_name})
    return request, mappings


def requests_and_mappings(pod_raw: dict, resources, classes: dict):
    """createRequestsAndMappings: the device requests for the resources the node leaves to DRA (sorted by name)
    and the containers' request mappings."""
    spec = pod_raw.get("spec") or {}
    inits = list(spec.get("initContainers") or ())
    containers = inits + list(spec.get("containers") or ())
    long_lived = [i for i, c in enumerate(containers) if i >= len(inits) or c.get("restartPolicy") == "Always"]
    short_lived = [i for i, c in enumerate(containers) if i < len(inits) and c.get("restartPolicy") != "Always"]
    requests, mappings = [], []
    for name in sorted(resources):
        cls = class_for_resource(classes, name)
        if cls is None:
            continue
        class_name = cls["metadata"]["name"]
        long_requests = [None] * len(containers)
        long_mappings, short_mappings = [], []
        for i in long_lived:
            req, m = _container_request(i, containers[i], name, class_name, [])
            long_requests[i] = req
            long_mappings.extend(m)
        biggest, short_names = None, set()
        for i in short_lived:
            req, m = _container_request(i, containers[i], name, class_name, long_requests[i:])
            if req is not None:
                short_names.add(req["name"])
                if biggest is None or biggest["exactly"]["count"] < req["exactly"]["count"]:
                    biggest = req
            short_mappings.extend(m)
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest["name"])
            for m in short_mappings:
                if m["requestName"] in short_names:
                    m["requestName"] = biggest["name"]
        if biggest is not None:
            requests.append(biggest)
        requests.extend(r for r in long_requests if r is not None)
        mappings.extend(long_mappings + short_mappings)
    requests.sort(key=lambda r: r["name"])
    return requests, mappings
