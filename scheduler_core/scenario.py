"""Scenario files: the golden scenario format or a `kubectl get ... -o json` List, JSON or YAML."""
from __future__ import annotations

import lzma
import os

import yaml

from .documents import load_json, safe_yaml_load_all
from .dra.claims import claims_from_templates
from .objects import Node, ParseError, Pod
from .objects.validation import validate_object

# Golden-format array -> kind, and List item kind -> golden-format array.
ARRAYS = ("nodes", "pods", "pending", "services", "replicasets", "statefulsets", "replicationcontrollers",
          "namespaces", "persistentvolumes", "persistentvolumeclaims", "storageclasses", "csinodes",
          "csidrivers", "poddisruptionbudgets", "deviceclasses", "resourceslices", "resourceclaims",
          "resourceclaimtemplates", "volumeattachments", "podgroups", "workloads")
KIND_TO_ARRAY = {"Node": "nodes", "Service": "services", "ReplicaSet": "replicasets",
                 "StatefulSet": "statefulsets", "ReplicationController": "replicationcontrollers",
                 "Namespace": "namespaces", "PersistentVolume": "persistentvolumes",
                 "PersistentVolumeClaim": "persistentvolumeclaims", "StorageClass": "storageclasses",
                 "CSINode": "csinodes", "CSIDriver": "csidrivers", "PodDisruptionBudget": "poddisruptionbudgets",
                 "DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "ResourceClaim": "resourceclaims",
                 "ResourceClaimTemplate": "resourceclaimtemplates", "VolumeAttachment": "volumeattachments",
                 "PodGroup": "podgroups", "Workload": "workloads"}
ARRAY_TO_KIND = {array: kind for kind, array in KIND_TO_ARRAY.items()}
PROGRESS_EVERY = 2000   # nodes and pods parsed between two progress calls of scenario_from_data


class ScenarioError(ValueError):
    """Bad input, with one line naming the file, the object and the field path."""


def load_documents(text: str, label: str):
    """Parse JSON, or YAML (one or several documents). Returns a list of documents."""
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        try:
            return [load_json(text)]
        except ValueError as err:
            raise ScenarioError(f"{label}: invalid JSON: {err}") from None
    try:
        return [d for d in safe_yaml_load_all(text) if d is not None]
    except yaml.YAMLError as err:
        raise ScenarioError(f"{label}: invalid YAML: {str(err).splitlines()[0]}") from None


def _obj_label(obj) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return ""
    name = meta.get("name") or "?"
    ns = meta.get("namespace")
    return f" ({ns}/{name})" if ns else f" ({name})"


def _with_class_priority(raw, priority_classes):
    """Admission's Priority plugin: a pod without spec.priority gets its PriorityClass's value (or the global
    default's) and, unless set, its preemptionPolicy. Pods are returned unchanged otherwise."""
    spec = raw.get("spec") if isinstance(raw, dict) else None
    if not isinstance(spec, dict) or "priority" in spec or not priority_classes:
        return raw
    wanted = spec.get("priorityClassName")
    for pc in priority_classes:
        meta = pc.get("metadata") or {}
        if (wanted and meta.get("name") == wanted) or (not wanted and pc.get("globalDefault")):
            spec = dict(spec, priority=int(pc.get("value", 0)))
            if "preemptionPolicy" not in spec and pc.get("preemptionPolicy"):
                spec["preemptionPolicy"] = pc["preemptionPolicy"]
            return dict(raw, spec=spec)
    return raw


def _key(obj) -> str | None:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        return None
    return f'{meta.get("namespace") or "default"}/{meta["name"]}'


def _claims_from_templates(arrays) -> None:
    """The resourceclaim controller: claims ``P-C`` for the pods' template entries (dra.claims)."""
    templates = {k: t for t in arrays["resourceclaimtemplates"] if (k := _key(t))}
    claims = {k: c for c in arrays["resourceclaims"] if (k := _key(c))}
    new_claims = []
    for arr in ("pods", "pending"):
        out = []
        for raw in arrays[arr]:
            if isinstance(raw, dict) and isinstance(raw.get("spec"), dict) and raw["spec"].get("resourceClaims"):
                raw, made = claims_from_templates(raw, templates, claims)
                for c in made:
                    claims[_key(c)] = c
                new_claims.extend(made)
            out.append(raw)
        arrays[arr] = out
    arrays["resourceclaims"] = list(arrays["resourceclaims"]) + new_claims


class Scenario:
    """Parsed scenario: Node and Pod objects plus the other objects as raw dicts, and optional config."""

    def __init__(self, name: str, nodes, bound_pods, pending_pods, objects: dict, config=None, extra=None):
        self.name = name
        self.nodes = nodes
        self.bound_pods = bound_pods
        self.pending_pods = pending_pods
        self.objects = objects
        self.config = config
        self.extra = extra or {}

    def kube_version(self, override=None):
        """The Kubernetes version a run of this scenario is at: ``override`` when given (a command line's
        ``--kube-version`` wins), else the file's ``kubeVersion``, else None (the default version)."""
        return override if override is not None else self.extra.get("kubeVersion")

    def feature_gates(self, override=None):
        """The feature gates a run of this scenario has: ``override`` when given (a command line's
        ``--feature-gates`` wins), else the file's ``featureGates`` (kube's ``--feature-gates`` text or a
        {gate: bool} mapping), else None (the version's defaults)."""
        return override if override is not None else self.extra.get("featureGates")

    def read_by(self, features) -> "Scenario":
        """The scenario as a version's kube-scheduler reads its pods (``Features.pod_as_read``); itself when
        that changes none."""
        bound = [features.pod_as_read(p) for p in self.bound_pods]
        pending = [features.pod_as_read(p) for p in self.pending_pods]
        if all(a is b for a, b in zip(bound + pending, list(self.bound_pods) + list(self.pending_pods))):
            return self
        return Scenario(self.name, self.nodes, bound, pending, self.objects, self.config, self.extra)


def scenario_from_data(data, label: str = "scenario", name: str | None = None, progress=None) -> Scenario:
    """Build a Scenario from a decoded document (golden dict, List, or list of objects); ``progress(parsed,
    total)`` every PROGRESS_EVERY nodes and pods parsed."""
    if isinstance(data, list):
        data = {"kind": "List", "items": data}
    if not isinstance(data, dict):
        raise ScenarioError(f"{label}: expected an object with nodes/pods, or a List")
    arrays = {k: [] for k in ARRAYS}
    where = {}
    priority_classes = list(data.get("priorityclasses") or []) if isinstance(data.get("priorityclasses"), list) else []
    if data.get("kind") == "List" or ("items" in data and "nodes" not in data):
        items = data.get("items")
        if not isinstance(items, list):
            raise ScenarioError(f"{label}: items: expected a list")
        for i, obj in enumerate(items):
            if not isinstance(obj, dict):
                raise ScenarioError(f"{label}: items[{i}]: expected an object")
            kind = obj.get("kind")
            if kind is not None and not isinstance(kind, str):
                raise ScenarioError(f"{label}: items[{i}].kind: expected a string")
            if kind == "PriorityClass":
                priority_classes.append(obj)
                continue
            if kind == "Pod":
                spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
                arr = "pods" if spec.get("nodeName") else "pending"
            elif kind in KIND_TO_ARRAY:
                arr = KIND_TO_ARRAY[kind]
            else:
                continue  # kinds the scheduler does not read (Deployments, ConfigMaps, ...)
            where[(arr, len(arrays[arr]))] = f"items[{i}]"
            arrays[arr].append(obj)
        scen_name = name or data.get("name") or "list"
        config = data.get("config")
    else:
        for k in ARRAYS:
            v = data.get(k)
            if v is None:
                continue
            if not isinstance(v, list):
                raise ScenarioError(f"{label}: {k}: expected a list")
            arrays[k] = v
        scen_name = name or data.get("name") or "scenario"
        config = data.get("config")

    for arr in ("pods", "pending"):
        arrays[arr] = [_with_class_priority(raw, priority_classes) for raw in arrays[arr]]
    if arrays["resourceclaimtemplates"]:
        _claims_from_templates(arrays)

    total = sum(len(arrays[arr]) for arr in ("nodes", "pods", "pending"))
    parsed = [0]

    def parse(arr, cls):
        out = []
        for i, raw in enumerate(arrays[arr]):
            try:
                validate_object(cls.__name__, raw)
                out.append(cls(raw))
            except ParseError as err:
                at = where.get((arr, i), f"{arr}[{i}]")
                raise ScenarioError(f"{label}: {at}{_obj_label(raw)}: {err}") from None
            parsed[0] += 1
            if progress and parsed[0] % PROGRESS_EVERY == 0:
                progress(parsed[0], total)
        return out

    nodes = parse("nodes", Node)
    seen = set()
    for i, n in enumerate(nodes):
        if n.name in seen:
            raise ScenarioError(f"{label}: {where.get(('nodes', i), f'nodes[{i}]')} ({n.name}): "
                                f"metadata.name: duplicate node name")
        seen.add(n.name)
    bound = parse("pods", Pod)
    pending = parse("pending", Pod)
    for arr in ARRAYS[3:]:
        for i, raw in enumerate(arrays[arr]):
            try:
                validate_object(ARRAY_TO_KIND[arr], raw)
            except ParseError as err:
                at = where.get((arr, i), f"{arr}[{i}]")
                raise ScenarioError(f"{label}: {at}{_obj_label(raw)}: {err}") from None
    objects = {k: arrays[k] for k in ARRAYS[3:]}
    extra = {k: v for k, v in data.items() if k not in ARRAYS and k not in ("config", "items", "kind")}
    if "kubeVersion" in extra and not isinstance(extra["kubeVersion"], str):
        raise ScenarioError(f"{label}: kubeVersion: expected a string such as \"1.36\"")
    if "featureGates" in extra and not isinstance(extra["featureGates"], (str, dict)):
        raise ScenarioError(f"{label}: featureGates: expected kube's --feature-gates text such as "
                            f"\"GenericWorkload=true\" or a mapping of gates to true/false")
    return Scenario(scen_name, nodes, bound, pending, objects, config, extra)


def load_scenario(path: str) -> Scenario:
    """Read and parse a scenario file (``.xz``-compressed too); raises ScenarioError with a one-line message."""
    label = os.path.basename(path)
    try:
        if path.endswith(".xz"):
            with lzma.open(path, "rt", encoding="utf-8") as f:
                text = f.read()
            label = label[:-3]
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
    except OSError as err:
        raise ScenarioError(f"{label}: {err.strerror}") from None
    except (lzma.LZMAError, EOFError) as err:
        raise ScenarioError(f"{label}: not a valid xz file: {err}") from None
    docs = load_documents(text, label)
    if not docs:
        raise ScenarioError(f"{label}: empty document")
    data = docs[0] if len(docs) == 1 else docs
    base = label
    for suffix in (".scenario.json", ".json", ".yaml", ".yml"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    scen = scenario_from_data(data, label)
    if scen.name in ("scenario", "list"):
        scen.name = base
    return scen
