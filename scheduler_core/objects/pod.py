"""Pod: parsed once from v1.Pod JSON, with requests computed by kube's rules."""
from __future__ import annotations

import copy
from operator import attrgetter

from .errors import ParseError, expect, object_meta
from .field import aggregate
from .node import parse_resource_list
from .selectors import LabelSelector, NodeSelector, PreferredTerm

DEFAULT_MILLI_CPU_REQUEST = 100          # 0.1 core, schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # 200 MiB, schedutil.DefaultMemoryRequest


class Toleration:
    __slots__ = ("key", "operator", "value", "effect", "toleration_seconds")

    def __init__(self, raw: dict, path: str):
        expect(raw, dict, path, "object")
        self.key = raw.get("key", "") or ""
        self.operator = raw.get("operator", "") or ""
        if self.operator not in ("", "Equal", "Exists"):
            raise ParseError(f"{path}.operator", f'unknown operator "{self.operator}", supported: Equal, Exists')
        self.value = raw.get("value", "") or ""
        self.effect = raw.get("effect", "") or ""
        self.toleration_seconds = raw.get("tolerationSeconds")

    def tolerates(self, taint) -> bool:
        """v1.Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


def tolerates_taint(tolerations, taint) -> bool:
    for t in tolerations:
        if t.tolerates(taint):
            return True
    return False


class AffinityTerm:
    """A pod (anti-)affinity term, with kube's namespace defaulting applied.

    ``parse_error``: newAffinityTerm's error (the labelSelector's, else the namespaceSelector's), or None.
    """

    __slots__ = ("selector", "namespaces", "namespace_selector", "topology_key", "weight", "key", "parse_error")

    def __init__(self, raw: dict, pod_namespace: str, path: str, weight: int = 0):
        expect(raw, dict, path, "object")
        self.weight = weight
        self.topology_key = raw.get("topologyKey", "") or ""
        self.selector = LabelSelector(raw.get("labelSelector"), f"{path}.labelSelector")
        namespaces = expect(raw.get("namespaces"), list, f"{path}.namespaces", "list") or []
        ns_sel = raw.get("namespaceSelector")
        if not namespaces and ns_sel is None:
            namespaces = [pod_namespace]
        self.namespaces = frozenset(namespaces)
        # A nil namespaceSelector matches no namespace; {} matches all of them.
        self.namespace_selector = LabelSelector(ns_sel, f"{path}.namespaceSelector")
        self.parse_error = self.selector.parse_error or self.namespace_selector.parse_error
        # Terms with equal keys match the same pods in the same topology (the weight is not part of it).
        self.key = (self.selector.key, self.namespaces, self.namespace_selector.key, self.topology_key)

    def matches(self, pod: "Pod", namespace_labels) -> bool:
        """AffinityTerm.Matches: namespace (by list or selector) and label selector."""
        if pod.namespace in self.namespaces or (
                not self.namespace_selector.nothing
                and self.namespace_selector.matches(namespace_labels.get(pod.namespace, {}))):
            return self.selector.matches(pod.labels)
        return False


class TopologySpreadConstraint:
    __slots__ = ("max_skew", "topology_key", "when_unsatisfiable", "selector", "min_domains",
                 "node_affinity_policy", "node_taints_policy", "match_label_keys", "raw")

    def __init__(self, raw: dict, path: str):
        expect(raw, dict, path, "object")
        self.raw = raw
        self.max_skew = raw.get("maxSkew", 0)
        if not isinstance(self.max_skew, int) or isinstance(self.max_skew, bool):
            raise ParseError(f"{path}.maxSkew", "expected integer")
        self.topology_key = raw.get("topologyKey", "") or ""
        self.when_unsatisfiable = raw.get("whenUnsatisfiable", "") or ""
        if self.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            raise ParseError(f"{path}.whenUnsatisfiable",
                             f'unsupported value "{self.when_unsatisfiable}": supported values: '
                             '"DoNotSchedule", "ScheduleAnyway"')
        self.selector = LabelSelector(raw.get("labelSelector"), f"{path}.labelSelector")
        self.min_domains = raw.get("minDomains")
        self.node_affinity_policy = raw.get("nodeAffinityPolicy") or "Honor"
        self.node_taints_policy = raw.get("nodeTaintsPolicy") or "Ignore"
        self.match_label_keys = tuple(raw.get("matchLabelKeys") or ())


def _add(into: dict, other: dict):
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max_into(into: dict, other: dict):
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _max(first: dict | None, *others) -> dict:
    """component-helpers' max: per resource, the largest of the lists (a nil list adds nothing)."""
    out = dict(first or {})
    for other in others:
        _max_into(out, other or {})
    return out


def _non_missing(reqs: dict, defaults: dict) -> dict:
    """applyNonMissing: ``defaults`` added for each resource the container does not request (an explicit zero
    is kept)."""
    out = dict(reqs)
    for k, v in defaults.items():
        if k not in reqs:
            out[k] = v
    return out


NON_MISSING_DEFAULTS = {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}


def is_supported_pod_level_resource(name: str) -> bool:
    """resource.IsSupportedPodLevelResource: cpu, memory and hugepages-*."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


class ResizeState:
    """What a pod's status says of its resources while it is (or was) resized in place: each container's
    actuated requests (``status.containerStatuses[].resources.requests``; None when the status has no
    ``resources``) and allocated ones (``allocatedResources``), the pod level's, and whether the PodResizePending
    condition says Infeasible (resource.IsPodResizeInfeasible)."""

    __slots__ = ("containers", "pod_actuated", "pod_allocated", "infeasible")

    def __init__(self, containers: dict, pod_actuated, pod_allocated, infeasible: bool):
        self.containers = containers   # name -> (actuated or None, allocated)
        self.pod_actuated = pod_actuated
        self.pod_allocated = pod_allocated
        self.infeasible = infeasible

    def effective(self, spec: dict, actuated: dict, allocated) -> dict:
        """determineEffectiveRequests: max(actuated, allocated) when the resize is infeasible, else
        max(spec, actuated, allocated)."""
        if self.infeasible:
            return _max(actuated, allocated)
        return _max(spec, actuated, allocated)

    def container(self, c) -> dict:
        """A container's effective requests: its spec's unless its status reports ``resources``."""
        found = self.containers.get(c.name)
        if found is None or found[0] is None:
            return c.requests
        return self.effective(c.requests, found[0], found[1])


def _resize_state(status: dict, conditions) -> ResizeState | None:
    """The ResizeState of a pod's status, None when it reports no resources (nothing to read)."""
    containers = {}
    for field in ("containerStatuses", "initContainerStatuses"):
        for i, cs in enumerate(expect(status.get(field), list, f"status.{field}", "list") or []):
            path = f"status.{field}[{i}]"
            expect(cs, dict, path, "object")
            res = expect(cs.get("resources"), dict, f"{path}.resources", "object")
            actuated = (parse_resource_list(res.get("requests"), f"{path}.resources.requests")
                        if res is not None else None)
            allocated = parse_resource_list(cs.get("allocatedResources"), f"{path}.allocatedResources")
            containers[cs.get("name", "")] = (actuated, allocated)   # a later status of a name wins, as in Go
    pod_res = expect(status.get("resources"), dict, "status.resources", "object")
    pod_actuated = (parse_resource_list(pod_res.get("requests"), "status.resources.requests")
                    if pod_res is not None else None)
    pod_allocated = parse_resource_list(status.get("allocatedResources"), "status.allocatedResources")
    if not any(a is not None for a, _ in containers.values()) and pod_actuated is None:
        return None
    infeasible = False
    for cond in conditions:
        if isinstance(cond, dict) and cond.get("type") == "PodResizePending":
            infeasible = cond.get("reason") == "Infeasible"
            break
    return ResizeState(containers, pod_actuated, pod_allocated, infeasible)


def pod_requests(containers, init_containers, overhead, non_missing=None, pod_level=None, resize=None) -> dict:
    """resource.PodRequests (v1.36.2): the containers' requests (sidecars summed, the init peak) with
    ``non_missing`` ({resource: amount}) for each container that lacks one, read from the status when
    ``resize`` (a ResizeState: UseStatusResources) says so, then the pod-level requests of the supported
    resources (``pod_level``, already resolved against the status), then the overhead."""
    reqs: dict = {}
    for c in containers:
        creq = resize.container(c) if resize is not None else c.requests
        _add(reqs, _non_missing(creq, non_missing) if non_missing else creq)
    restartable: dict = {}
    init_peak: dict = {}
    for c in init_containers:
        creq = resize.container(c) if resize is not None and c.restart_always else c.requests
        if non_missing:
            creq = _non_missing(creq, non_missing)
        if c.restart_always:
            _add(reqs, creq)
            _add(restartable, creq)
            entry = restartable
        else:
            entry = dict(creq)
            _add(entry, restartable)
        _max_into(init_peak, entry)
    _max_into(reqs, init_peak)
    if pod_level:
        reqs.update(pod_level)
    if overhead:
        _add(reqs, overhead)
    return reqs


class Container:
    __slots__ = ("name", "image", "requests", "ports", "restart_always", "limits")

    def __init__(self, raw: dict, path: str):
        expect(raw, dict, path, "object")
        self.name = raw.get("name", "")
        self.image = raw.get("image", "") or ""
        res = expect(raw.get("resources"), dict, f"{path}.resources", "object") or {}
        self.requests = parse_resource_list(res.get("requests"), f"{path}.resources.requests")
        self.limits = parse_resource_list(res.get("limits"), f"{path}.resources.limits")
        ports = []
        for i, p in enumerate(expect(raw.get("ports"), list, f"{path}.ports", "list") or []):
            expect(p, dict, f"{path}.ports[{i}]", "object")
            hp = p.get("hostPort", 0) or 0
            if not isinstance(hp, int) or isinstance(hp, bool):
                raise ParseError(f"{path}.ports[{i}].hostPort", "expected integer")
            ports.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", hp))
        self.ports = tuple(ports)
        self.restart_always = raw.get("restartPolicy") == "Always"


# PodInfo's term lists in the order NewPodInfo parses them, with the names its errors carry.
_AFFINITY_KINDS = (("affinity_required", "requiredAffinityTerms"),
                   ("anti_affinity_required", "requiredAntiAffinityTerms"),
                   ("affinity_preferred", "preferredAffinityTerms"),
                   ("anti_affinity_preferred", "preferredAntiAffinityTerms"))


class Pod:
    """The fields of a v1.Pod that scheduling reads; requests are computed once."""

    __slots__ = ("raw", "uid", "name", "namespace", "labels", "annotations", "owner_references",
                 "priority", "preemption_policy", "scheduler_name", "node_name", "nominated_node_name",
                 "phase", "deletion_timestamp", "start_time", "conditions", "containers",
                 "init_containers", "overhead", "pod_level_requests", "resize", "requests",
                 "spec_requests", "score_requests", "summed_nonzero_cpu", "summed_nonzero_memory",
                 "nonzero_cpu", "nonzero_memory", "host_ports", "tolerations", "node_selector",
                 "required_node_affinity", "preferred_node_affinity", "affinity_required",
                 "affinity_preferred", "anti_affinity_required", "anti_affinity_preferred",
                 "affinity_parse_errors", "spread_constraints", "volumes", "scheduling_gates", "pod_group", "key")

    def __init__(self, raw: dict):
        meta, self.name, self.labels, self.annotations = object_meta(raw, "Pod")
        self.raw = raw
        self.namespace = meta.get("namespace") or "default"
        self.key = f"{self.namespace}/{self.name}"
        self.uid = meta.get("uid") or self.key
        self.owner_references = tuple(meta.get("ownerReferences") or ())
        self.deletion_timestamp = meta.get("deletionTimestamp")
        spec = expect(raw.get("spec"), dict, "spec", "object") or {}
        status = expect(raw.get("status"), dict, "status", "object") or {}
        prio = spec.get("priority", 0) or 0
        if not isinstance(prio, int) or isinstance(prio, bool):
            raise ParseError("spec.priority", "expected integer")
        self.priority = prio
        self.preemption_policy = spec.get("preemptionPolicy") or "PreemptLowerPriority"
        self.scheduler_name = spec.get("schedulerName") or "default-scheduler"
        self.node_name = spec.get("nodeName") or ""
        self.nominated_node_name = status.get("nominatedNodeName") or ""
        self.phase = status.get("phase") or ""
        self.start_time = status.get("startTime")
        self.conditions = tuple(status.get("conditions") or ())
        self.containers = tuple(Container(c, f"spec.containers[{i}]")
                                for i, c in enumerate(expect(spec.get("containers"), list,
                                                             "spec.containers", "list") or []))
        self.init_containers = tuple(Container(c, f"spec.initContainers[{i}]")
                                     for i, c in enumerate(expect(spec.get("initContainers"), list,
                                                                  "spec.initContainers", "list") or []))
        self.overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")
        self._count_requests(spec, status)
        self.host_ports = tuple(p for c in self.containers for p in c.ports if p[2] > 0)
        self.tolerations = tuple(Toleration(t, f"spec.tolerations[{i}]")
                                 for i, t in enumerate(expect(spec.get("tolerations"), list,
                                                              "spec.tolerations", "list") or []))
        ns = expect(spec.get("nodeSelector"), dict, "spec.nodeSelector", "object") or {}
        self.node_selector = tuple(ns.items())
        self._parse_affinity(expect(spec.get("affinity"), dict, "spec.affinity", "object") or {})
        self.spread_constraints = tuple(
            TopologySpreadConstraint(c, f"spec.topologySpreadConstraints[{i}]")
            for i, c in enumerate(expect(spec.get("topologySpreadConstraints"), list,
                                         "spec.topologySpreadConstraints", "list") or []))
        self.volumes = tuple(expect(spec.get("volumes"), list, "spec.volumes", "list") or ())
        self.scheduling_gates = tuple(g.get("name", "") for g in spec.get("schedulingGates") or ()
                                      if isinstance(g, dict))
        group = spec.get("schedulingGroup")
        # spec.schedulingGroup.podGroupName: the PodGroup the pod belongs to (GenericWorkload)
        self.pod_group = group.get("podGroupName") if isinstance(group, dict) else None

    def _count_requests(self, spec: dict, status: dict) -> None:
        """The requests kube-scheduler v1.36 counts (pod-level resources and in-place resize included):

        - ``requests``: PodInfo.CalculateResource's (UseStatusResources): a node's Requested, preemption, the
          dashboard's utilisation;
        - ``spec_requests``: NodeResourcesFit's PreFilter (computePodResourceRequest: no status resources);
        - ``score_requests``: NodeResourcesFit's scorer's calculatePodResourceRequest (LeastAllocated,
          MostAllocated, RequestedToCapacityRatio): 100m / 200Mi for each container that requests no cpu / memory,
          and neither pod-level nor status resources (v1.36.2's NewFit leaves its scorer's gates unset);
        - ``summed_nonzero_cpu``/``_memory``: CalculateResource's Non0CPU/Non0Mem (a node's NonZeroRequested);
        - ``nonzero_cpu``/``_memory``: v1.30's NonZeroRequested per pod (see ``_node_info_nonzero``).

        A pod whose spec or status v1.30 does not read is counted by 1.30 through ``without_newer_resources``.
        """
        res = expect(spec.get("resources"), dict, "spec.resources", "object") or {}
        self.pod_level_requests = parse_resource_list(res.get("requests"), "spec.resources.requests")
        self.resize = _resize_state(status, self.conditions)
        parts = (self.containers, self.init_containers, self.overhead)
        spec_level = self._pod_level(None)
        pod_level = self._pod_level(self.resize) if self.resize is not None else spec_level
        self.requests = pod_requests(*parts, pod_level=pod_level, resize=self.resize)
        self.spec_requests = (self.requests if self.resize is None
                              else pod_requests(*parts, pod_level=spec_level))
        self.score_requests = pod_requests(*parts, non_missing=NON_MISSING_DEFAULTS)
        # getNonMissingContainerRequests: with pod-level requests, only the resources requested nowhere
        if pod_level is None and self.resize is None:
            non0 = self.score_requests
        elif pod_level is None:
            non0 = pod_requests(*parts, non_missing=NON_MISSING_DEFAULTS, resize=self.resize)
        else:
            missing = {k: v for k, v in NON_MISSING_DEFAULTS.items() if k not in self.requests}
            non0 = (pod_requests(*parts, non_missing=missing, pod_level=pod_level, resize=self.resize)
                    if missing else self.requests)
        self.summed_nonzero_cpu = non0.get("cpu", 0)
        self.summed_nonzero_memory = non0.get("memory", 0)
        self.nonzero_cpu, self.nonzero_memory = self._node_info_nonzero()

    def _pod_level(self, resize) -> dict | None:
        """PodRequests' pod-level part: the supported resources of ``spec.resources.requests`` (None when it
        names none: IsPodLevelRequestsSet), each resolved against ``status.resources`` when ``resize`` is given
        and the status has them (InPlacePodLevelResourcesVerticalScaling); a resource the resolved list lacks
        counts 0, as Go's map read does."""
        supported = {k: v for k, v in self.pod_level_requests.items() if is_supported_pod_level_resource(k)}
        if not supported:
            return None
        if resize is None or resize.pod_actuated is None:
            return supported
        effective = resize.effective(self.pod_level_requests, resize.pod_actuated, resize.pod_allocated)
        return {k: effective.get(k, 0) for k in supported}

    def without_newer_resources(self) -> "Pod":
        """The pod as kube-scheduler v1.30 reads it: without ``spec.resources`` (a field v1.30's Pod does not
        have) and with the status's resources unread (InPlacePodVerticalScaling off). Itself when it has
        neither."""
        spec = self.raw.get("spec") or {}
        if "resources" not in spec and self.resize is None:
            return self
        raw = dict(self.raw, spec={k: v for k, v in spec.items() if k != "resources"})
        status = self._without_pod_level_status()
        for field in ("containerStatuses", "initContainerStatuses"):
            if isinstance(status.get(field), list):
                status[field] = [{k: v for k, v in cs.items() if k not in ("resources", "allocatedResources")}
                                 if isinstance(cs, dict) else cs for cs in status[field]]
        raw["status"] = status
        return Pod(raw)

    def without_pod_level_status(self) -> "Pod":
        """The pod with its pod-level ``status.resources`` unread (InPlacePodLevelResourcesVerticalScaling off);
        itself when it reports none."""
        if self.resize is None or self.resize.pod_actuated is None:
            return self
        return Pod(dict(self.raw, status=self._without_pod_level_status()))

    def _without_pod_level_status(self) -> dict:
        status = dict(self.raw.get("status") or {})
        status.pop("resources", None)
        status.pop("allocatedResources", None)
        return status

    def _node_info_nonzero(self):
        """NodeInfo.NonZeroRequested per pod (v1.30 calculateResource quirk).

        max(sum of regular containers, each init entry), where a sidecar entry is the cumulative sidecars and a
        regular init container runs beside the sidecars started before it; sidecars are not added to the
        regular sum here (they are in ``requests``). Missing cpu/memory count as 100m / 200Mi per container.
        """
        cpu = mem = 0
        for c in self.containers:
            cpu += c.requests.get("cpu", DEFAULT_MILLI_CPU_REQUEST)
            mem += c.requests.get("memory", DEFAULT_MEMORY_REQUEST)
        sidecar_cpu = sidecar_mem = 0
        for c in self.init_containers:
            ccpu = c.requests.get("cpu", DEFAULT_MILLI_CPU_REQUEST)
            cmem = c.requests.get("memory", DEFAULT_MEMORY_REQUEST)
            if c.restart_always:
                sidecar_cpu += ccpu
                sidecar_mem += cmem
                ccpu, cmem = sidecar_cpu, sidecar_mem
            else:
                ccpu, cmem = ccpu + sidecar_cpu, cmem + sidecar_mem
            cpu, mem = max(cpu, ccpu), max(mem, cmem)
        cpu += self.overhead.get("cpu", 0)
        mem += self.overhead.get("memory", 0)
        return cpu, mem

    def _parse_affinity(self, aff: dict):
        na = expect(aff.get("nodeAffinity"), dict, "spec.affinity.nodeAffinity", "object") or {}
        req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.required_node_affinity = (
            NodeSelector(req, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
            if req is not None else None)
        pref_path = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        self.preferred_node_affinity = tuple(
            PreferredTerm(t, f"{pref_path}[{i}]")
            for i, t in enumerate(expect(na.get("preferredDuringSchedulingIgnoredDuringExecution"), list,
                                         pref_path, "list") or []))
        parsed = {}
        for kind, attr in (("podAffinity", "affinity"), ("podAntiAffinity", "anti_affinity")):
            base = f"spec.affinity.{kind}"
            section = expect(aff.get(kind), dict, base, "object") or {}
            rpath = f"{base}.requiredDuringSchedulingIgnoredDuringExecution"
            parsed[f"{attr}_required"] = tuple(
                AffinityTerm(t, self.namespace, f"{rpath}[{i}]")
                for i, t in enumerate(expect(section.get("requiredDuringSchedulingIgnoredDuringExecution"),
                                             list, rpath, "list") or []))
            ppath = f"{base}.preferredDuringSchedulingIgnoredDuringExecution"
            preferred = []
            for i, t in enumerate(expect(section.get("preferredDuringSchedulingIgnoredDuringExecution"),
                                         list, ppath, "list") or []):
                expect(t, dict, f"{ppath}[{i}]", "object")
                preferred.append(AffinityTerm(t.get("podAffinityTerm") or {}, self.namespace,
                                              f"{ppath}[{i}].podAffinityTerm", weight=t.get("weight", 0)))
            parsed[f"{attr}_preferred"] = tuple(preferred)
        # PodInfo.Update: a kind with a term whose selector does not convert keeps no term at all, and the
        # error is "<kind>: <selector error>" (kube's getAffinityTerms / getWeightedAffinityTerms).
        errors = []
        for attr, kind in _AFFINITY_KINDS:
            terms = parsed[attr]
            err = next((t.parse_error for t in terms if t.parse_error), None)
            if err is not None:
                errors.append((kind, err))
                terms = ()
            setattr(self, attr, terms)
        self.affinity_parse_errors = tuple(errors)

    @property
    def affinity_parse_error(self) -> str | None:
        """NewPodInfo's error (the kinds' errors aggregated), or None when every term converts."""
        if not self.affinity_parse_errors:
            return None
        return aggregate(f"{kind}: {err}" for kind, err in self.affinity_parse_errors)

    @property
    def has_affinity(self) -> bool:
        return bool(self.affinity_required or self.affinity_preferred
                    or self.anti_affinity_required or self.anti_affinity_preferred)

    @property
    def has_required_anti_affinity(self) -> bool:
        return bool(self.anti_affinity_required)

    def __copy__(self) -> "Pod":
        """copy.copy: every field shared (about twice as fast as the generic protocol for slots)."""
        new = object.__new__(type(self))
        for name, value in zip(Pod.__slots__, _slot_values(self)):
            setattr(new, name, value)
        return new

    def renamed(self, name: str, uid: str) -> "Pod":
        """A copy with another name and uid, its parsed fields shared (they are never changed in place)."""
        new = copy.copy(self)
        new.raw = dict(self.raw, metadata=dict(self.raw.get("metadata") or {}, name=name, uid=uid))
        new.name, new.uid, new.key = name, uid, f"{self.namespace}/{name}"
        return new

    def bound_to(self, node_name: str) -> "Pod":
        """A copy assumed onto a node (spec.nodeName set, phase Running), as the cache's assume does."""
        raw = dict(self.raw)
        raw["spec"] = dict(raw.get("spec") or {}, nodeName=node_name)
        raw["status"] = dict(raw.get("status") or {}, phase="Running")
        return Pod(raw)

    def __repr__(self):
        return f"Pod({self.key})"


_slot_values = attrgetter(*Pod.__slots__)
