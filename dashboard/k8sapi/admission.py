"""What kube-apiserver does to an object before storing it: defaulting, the admission plugins that matter for
scheduling (Priority, DefaultTolerationSeconds), validation the scheduler relies on, and Event conversion."""
from __future__ import annotations

from scheduler_core.objects import Node, ParseError, Pod
from scheduler_core.objects.validation import object_errors, pod_update_errors

from .errors import ApiError

SYSTEM_PRIORITY_CLASSES = (("system-node-critical", 2000001000,
                            "Used for system critical pods that must not be moved from their current node."),
                           ("system-cluster-critical", 2000000000,
                            "Used for system critical pods that must run in the cluster, but can be moved to "
                            "another node if necessary."))
DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
NOTE_LIMIT = 1024


def validate(res, obj: dict) -> None:
    """kube-apiserver's validation of the kind (``scheduler_core.objects.validation``): 422 Invalid with every
    cause."""
    errs = object_errors(res.kind, obj)
    if errs:
        name = (obj.get("metadata") or {}).get("name") or ""
        raise ApiError.invalid(res, name if isinstance(name, str) else "", [(e.path, e.reason, e.body()) for e in errs])


def parse_error(res, name: str, err: ParseError) -> ApiError:
    return ApiError.invalid(res, name, [(err.path, "FieldValueInvalid", f"Invalid value: {err.message}")])


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


def _qos_class(spec: dict) -> str:
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


def admit_pod(res, pod: dict, priority_classes: dict) -> dict:
    """Defaults (SetDefaults_Pod), Priority and DefaultTolerationSeconds admission, then validation."""
    name = pod["metadata"]["name"]
    spec = dict(pod.get("spec") or {})
    containers = spec.get("containers")
    if not containers:
        raise ApiError.invalid(res, name, [("spec.containers", "FieldValueRequired", "Required value")])
    causes = []
    for i, c in enumerate(containers):
        if not isinstance(c, dict):
            raise ApiError.invalid(res, name, [(f"spec.containers[{i}]", "FieldValueInvalid", "Invalid value")])
        if not c.get("name"):
            causes.append((f"spec.containers[{i}].name", "FieldValueRequired", "Required value"))
        if not c.get("image"):
            causes.append((f"spec.containers[{i}].image", "FieldValueRequired", "Required value"))
    if causes:
        raise ApiError.invalid(res, name, causes)
    spec["containers"] = [_default_container(c) for c in containers]
    if spec.get("initContainers"):
        spec["initContainers"] = [_default_container(c) for c in spec["initContainers"]]
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    _admit_priority(res, name, spec, priority_classes)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = list(spec.get("tolerations") or [])
    for key in DEFAULT_TOLERATIONS:
        if not any(t.get("key") == key and t.get("effect", "") in ("", "NoExecute") for t in tolerations
                   if isinstance(t, dict)):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    spec["tolerations"] = tolerations
    status = dict(pod.get("status") or {})
    status.setdefault("phase", "Pending")
    status["qosClass"] = _qos_class(spec)
    out = dict(pod, spec=spec, status=status)
    try:
        Pod(out)
    except ParseError as err:
        raise parse_error(res, name, err) from None
    return out


def _admit_priority(res, name: str, spec: dict, priority_classes: dict) -> None:
    pc_name = spec.get("priorityClassName") or ""
    if pc_name:
        pc = priority_classes.get(pc_name)
        if pc is None:
            raise ApiError.forbidden(res, name, f"no PriorityClass with name {pc_name} was found")
    else:
        defaults = sorted((p for p in priority_classes.values() if p.get("globalDefault")),
                          key=lambda p: p.get("value", 0))
        pc = defaults[0] if defaults else None
        if pc is not None:
            spec["priorityClassName"] = pc["metadata"]["name"]
    priority = pc.get("value", 0) if pc is not None else 0
    if spec.get("priority") is not None and spec["priority"] != priority:
        raise ApiError.forbidden(res, name, f"the integer value of priority ({spec['priority']}) must not be provided "
                                            f"in pod spec; priority admission controller computed {priority} from "
                                            f"the given PriorityClass name")
    spec["priority"] = priority
    policy = pc.get("preemptionPolicy") if pc is not None else None
    if policy:
        if spec.get("preemptionPolicy") and spec["preemptionPolicy"] != policy:
            raise ApiError.forbidden(res, name, f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) "
                                                f"must not be provided in pod spec; priority admission controller "
                                                f"computed {policy} from the given PriorityClass name")
        spec["preemptionPolicy"] = policy


def check_pod_update(res, old: dict, new: dict) -> None:
    """ValidatePodUpdate (``pod_update_errors``), then the scheduler's parse of the new pod."""
    name = new["metadata"]["name"]
    errs = pod_update_errors(old, new)
    if errs:
        raise ApiError.invalid(res, name, [(errs[0].path, errs[0].reason, errs[0].body())])
    try:
        Pod(new)
    except ParseError as err:
        raise parse_error(res, name, err) from None


NODE_INFO_FIELDS = ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
                    "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture")


def node_defaults(node: dict) -> dict:
    """status.nodeInfo always has every field (a Go struct without omitempty; typed clients require them)."""
    status = dict(node.get("status") or {})
    status["nodeInfo"] = {**{f: "" for f in NODE_INFO_FIELDS}, **(status.get("nodeInfo") or {})}
    return dict(node, status=status)


def check_node(res, node: dict) -> dict:
    """The node with its defaults; 422 when the scheduler could not read it."""
    node = node_defaults(node)
    try:
        Node(node)
    except ParseError as err:
        raise parse_error(res, node["metadata"]["name"], err) from None
    return node


def admit_priority_class(res, pc: dict) -> None:
    value = pc.get("value")
    if not isinstance(value, int) or isinstance(value, bool):
        raise ApiError.invalid(res, pc["metadata"]["name"], [("value", "FieldValueRequired", "Required value")])


def admit_events_v1(res, ev: dict) -> None:
    """ValidateEventCreate for events.k8s.io/v1 requests."""
    name = ev["metadata"]["name"]
    causes = []
    if not ev.get("eventTime"):
        causes.append(("eventTime", "FieldValueRequired", "Required value"))
    if ev.get("type") not in ("Normal", "Warning"):
        causes.append(("type", "FieldValueInvalid", f'Invalid value: "": has invalid value: {ev.get("type", "")}'))
    for field in ("reportingController", "reportingInstance", "action", "reason"):
        if not ev.get(field):
            causes.append((field, "FieldValueRequired", "Required value"))
    if len((ev.get("note") or "").encode()) > NOTE_LIMIT:
        causes.append(("note", "FieldValueTooLong", f"Too long: may not be more than {NOTE_LIMIT} bytes"))
    if causes:
        raise ApiError.invalid(res, name, causes)


_EVENT_FIELDS = (("regarding", "involvedObject"), ("note", "message"), ("deprecatedSource", "source"),
                 ("deprecatedFirstTimestamp", "firstTimestamp"), ("deprecatedLastTimestamp", "lastTimestamp"),
                 ("deprecatedCount", "count"), ("reportingController", "reportingComponent"))
_EVENT_SAME = ("reason", "type", "eventTime", "series", "action", "related", "reportingInstance")


def event_to_core(ev: dict) -> dict:
    """events.k8s.io/v1 Event -> core v1 Event (the stored form, as kube converts)."""
    out = {"apiVersion": "v1", "kind": "Event", "metadata": ev.get("metadata") or {}}
    for v1_name, core_name in _EVENT_FIELDS:
        if ev.get(v1_name) not in (None, "", {}, 0):
            out[core_name] = ev[v1_name]
    for k in _EVENT_SAME:
        if ev.get(k) not in (None, "", {}):
            out[k] = ev[k]
    out.setdefault("involvedObject", {})
    out.setdefault("source", {})
    for k in ("eventTime", "firstTimestamp", "lastTimestamp"):   # zero times: JSON null, never left out
        out.setdefault(k, None)
    return out


def event_from_core(ev: dict) -> dict:
    """The events.k8s.io/v1 view of a stored core v1 Event."""
    out = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": ev.get("metadata") or {}}
    for v1_name, core_name in _EVENT_FIELDS:
        if ev.get(core_name) not in (None, "", {}, 0):
            out[v1_name] = ev[core_name]
    for k in _EVENT_SAME:
        if ev.get(k) not in (None, "", {}):
            out[k] = ev[k]
    out.setdefault("regarding", {})
    return out
