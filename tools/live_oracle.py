#!/usr/bin/env python3
"""Differential harness: the real kube-scheduler against Schedscope, scenario by scenario.

For each scenario (the golden format: ``nodes``, bound ``pods``, ``pending``, the other arrays of
``scheduler_core.scenario.ARRAYS``, an optional ``config``; DRA kinds as ../shared/golden-v136/README.md keys them)
the harness loads the cluster into a real kube-apiserver (one control plane for every scenario: the objects of the
previous scenario are deleted first), starts the real kube-scheduler at ``-v=10`` (with the scenario's
``config``), and creates the pending pods one at a time in the golden queue order. For each pod it records the
cluster just before the pod was created (a derived scenario ``NAME-K.scenario.json``) and what kube-scheduler did
with it (``NAME-K.expected.json``: the binding, the PodScheduled condition's message and the FailedScheduling
event, every plugin's weighted score per node from the "Plugin scored node for pod" log lines, preemption), in the
format of ../shared/golden-v136, then runs Schedscope at 1.36 on every derived scenario
(tests/conformance/golden_v136.py: chosen node within ties, every plugin's score per node, the exact message).

    python tools/live_oracle.py [--out DIR] [--report FILE] [--no-compare] [--max-pending N] [--score-all-nodes]
                                SCENARIO.json|DIR ...

The binaries come from ``$KUBEBUILDER_ASSETS`` or ../shared/envtest (tests/envtest.py). What the harness does in
place of the controllers that do not run (kubelet, resourceclaim controller, garbage collector) is said where it
does it; the README of ../shared/golden-v136 describes the same semantics.
"""
from __future__ import annotations

import argparse
import ast
import copy
import json
import lzma
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kubernetes import config as kconfig  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from scheduler_core.objects.validation import object_errors  # noqa: E402
from scheduler_core.scenario import ARRAY_TO_KIND  # noqa: E402
from tests.conformance.golden_v136 import check_scenario, simulate  # noqa: E402
from tests.envtest import ControlPlane  # noqa: E402

KUBERNETES_VERSION = "v1.36.2"
OUTCOME_TIMEOUT = 20.0      # seconds a pod may take to be bound or refused
GATED_SETTLE = 2.0          # seconds a PreEnqueue refusal must last (a claim may reach the informer late)
BATCH_GAP = 0.6             # seconds between two pods: opportunistic batching only reuses a hint within 500 ms
CLAIM_GATE = "schedscope.io/claims-pending"   # held while the claims of a pod's templates are made
CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink",
                 "deletionTimestamp", "deletionGracePeriodSeconds")
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease")
BUILTIN_PRIORITY_CLASSES = {name: {"value": value, "preemptionPolicy": "PreemptLowerPriority"}
                            for name, value in (("system-cluster-critical", 2000000000),
                                                ("system-node-critical", 2000001000))}


class Kind:
    """One API resource the harness loads, lists and deletes."""

    def __init__(self, array: str, prefix: str, plural: str, namespaced: bool, status: bool = False):
        self.array, self.prefix, self.plural, self.namespaced, self.status = array, prefix, plural, namespaced, status

    def path(self, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
        out = self.prefix + (f"/namespaces/{namespace}" if self.namespaced and namespace else "") + "/" + self.plural
        return out + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")


# In the order they are created (what a pod refers to exists before it); deleted in the reverse order.
KINDS = [Kind("priorityclasses", "/apis/scheduling.k8s.io/v1", "priorityclasses", False),
         Kind("runtimeclasses", "/apis/node.k8s.io/v1", "runtimeclasses", False),
         Kind("storageclasses", "/apis/storage.k8s.io/v1", "storageclasses", False),
         Kind("csidrivers", "/apis/storage.k8s.io/v1", "csidrivers", False),
         Kind("csinodes", "/apis/storage.k8s.io/v1", "csinodes", False),
         Kind("persistentvolumes", "/api/v1", "persistentvolumes", False, status=True),
         Kind("persistentvolumeclaims", "/api/v1", "persistentvolumeclaims", True, status=True),
         Kind("volumeattachments", "/apis/storage.k8s.io/v1", "volumeattachments", False),
         Kind("services", "/api/v1", "services", True),
         Kind("replicasets", "/apis/apps/v1", "replicasets", True),
         Kind("statefulsets", "/apis/apps/v1", "statefulsets", True),
         Kind("replicationcontrollers", "/api/v1", "replicationcontrollers", True),
         Kind("poddisruptionbudgets", "/apis/policy/v1", "poddisruptionbudgets", True, status=True),
         Kind("deviceclasses", "/apis/resource.k8s.io/v1", "deviceclasses", False),
         Kind("resourceslices", "/apis/resource.k8s.io/v1", "resourceslices", False),
         Kind("resourceclaimtemplates", "/apis/resource.k8s.io/v1", "resourceclaimtemplates", True),
         Kind("nodes", "/api/v1", "nodes", False, status=True),
         Kind("pods", "/api/v1", "pods", True, status=True),
         Kind("resourceclaims", "/apis/resource.k8s.io/v1", "resourceclaims", True, status=True)]
KIND = {k.array: k for k in KINDS}
NAMESPACES = Kind("namespaces", "/api/v1", "namespaces", False)
EVENTS = Kind("events", "/api/v1", "events", True)
SERVICEACCOUNTS = Kind("serviceaccounts", "/api/v1", "serviceaccounts", True)
# the arrays a derived scenario holds besides nodes and pods (the kinds Schedscope reads)
STATE_ARRAYS = ("services", "replicasets", "statefulsets", "replicationcontrollers", "persistentvolumes",
                "persistentvolumeclaims", "storageclasses", "csinodes", "csidrivers", "poddisruptionbudgets",
                "deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates", "volumeattachments")
SCENARIO_ALIASES = {"pdbs": "poddisruptionbudgets"}   # the loop vectors' name for PodDisruptionBudgets


# -- the kube-scheduler log ---------------------------------------------------------------------------------------

_LINE = re.compile(r'^[IWEF]\d{4} [\d:.]+\s+\d+ [^\]]+\] "((?:[^"\\]|\\.)*)"(.*)$')
_PAIR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s"]+)')


def _unquote(raw: str) -> str:
    """A value Go quoted with %q (its escapes are Python's too: \\x, \\u, \\U, \\n ...)."""
    return ast.literal_eval(raw) if raw.startswith('"') else raw


def parse_log_line(line: str, wanted=None):
    """(message, {key: value}) of one structured klog line, or None; with ``wanted`` (a set of messages) the
    fields of other lines are not decoded."""
    m = _LINE.match(line)
    if not m:
        return None
    msg = _unquote(f'"{m.group(1)}"')
    if wanted is not None and msg not in wanted:
        return msg, {}
    return msg, {key: _unquote(raw) for key, raw in _PAIR.findall(m.group(2))}


class SchedulerLog:
    """What kube-scheduler's ``-v=10`` log says about one run: the order its cache added nodes, and per pod its
    scheduling attempts (each with the plugins' weighted scores per node and the final scores), its binding
    (evaluated and feasible node counts), the victims of its preemptions and the PreEnqueue plugin that keeps it
    out of the queue."""

    MESSAGES = {"Add event for node", "Attempting to schedule pod", "Plugin scored node for pod",
                "Calculated node's final score for pod", "Successfully bound pod to node",
                "Preemptor Pod preempted victim Pod", "Async Preemption finished completely",
                "Status after running PreEnqueue plugin"}

    def __init__(self, text: str = ""):
        self.node_order = []
        self.attempts = {}       # pod -> [ {"scores": {node: {plugin: n}}, "totals": {node: n}} ]
        self.bound = {}          # pod -> {"node", "evaluated", "feasible", "attempt"}
        self.victims = {}        # preemptor -> [victim]
        self.preemption_done = set()
        self.pre_enqueue = {}    # pod -> {"plugin", "message"}: the PreEnqueue refusal since its last attempt
        self.feed(text)

    def feed(self, text: str) -> None:
        for line in text.splitlines():
            parsed = parse_log_line(line, self.MESSAGES) if '"' in line else None
            if parsed and parsed[0] in self.MESSAGES:
                self._take(*parsed)

    def _take(self, msg: str, f: dict) -> None:
        pod = f.get("pod")
        if msg == "Add event for node":
            if f["node"] not in self.node_order:
                self.node_order.append(f["node"])
        elif msg == "Attempting to schedule pod":
            self.attempts.setdefault(pod, []).append({"scores": {}, "totals": {}})
            self.pre_enqueue.pop(pod, None)
        elif msg == "Status after running PreEnqueue plugin":
            self.pre_enqueue[pod] = {"plugin": f["plugin"], "message": f["status"]}
        elif msg == "Plugin scored node for pod" and self.attempts.get(pod):
            self.attempts[pod][-1]["scores"].setdefault(f["node"], {})[f["plugin"]] = int(f["score"])
        elif msg == "Calculated node's final score for pod" and self.attempts.get(pod):
            self.attempts[pod][-1]["totals"][f["node"]] = int(f["score"])
        elif msg == "Successfully bound pod to node":
            self.bound[pod] = {"node": f["node"], "evaluated": int(f["evaluatedNodes"]),
                               "feasible": int(f["feasibleNodes"]), "attempt": len(self.attempts.get(pod, ()))}
        elif msg == "Preemptor Pod preempted victim Pod":
            self.victims.setdefault(f["preemptor"], []).append(f["victim"])
        elif msg == "Async Preemption finished completely":
            self.preemption_done.add(f["preemptor"])


def command_error(log_text: str) -> str | None:
    """The error kube-scheduler exited with (its "command failed" line), heap addresses written ``0xADDR`` as the
    golden vectors write them."""
    for line in reversed(log_text.splitlines()):
        parsed = parse_log_line(line) if '"command failed"' in line else None
        if parsed and "err" in parsed[1]:
            return re.sub(r"\(0x[0-9a-f]+\)", "(0xADDR)", parsed[1]["err"])
    return None


def scored_decision(attempt: dict) -> dict:
    """The golden fields of one attempt that scored: feasible nodes, top nodes and score, scores per node."""
    scores = {}
    for node in sorted(attempt["totals"]):
        per = {plugin: {"weighted": n} for plugin, n in attempt["scores"].get(node, {}).items()}
        per["_total"] = attempt["totals"][node]
        scores[node] = per
    top = max(attempt["totals"].values())
    return {"scoring_run_by_scheduler": True, "feasible_nodes": sorted(scores),
            "top_nodes": sorted(n for n, t in attempt["totals"].items() if t == top), "top_score": top,
            "scores": scores}


# -- the API ------------------------------------------------------------------------------------------------------

class ApiError(RuntimeError):
    """A refusal of the apiserver: its HTTP status and its Status message."""

    def __init__(self, status: int, body: str):
        super().__init__(f"{status}: {body}")
        self.status = status
        try:
            self.message = json.loads(body).get("message", body)
        except ValueError:
            self.message = body


class Api:
    """JSON requests to the apiserver through the ``kubernetes`` client's connection and credentials."""

    def __init__(self, kubeconfig: Path):
        self.client = kconfig.new_client_from_config(str(kubeconfig))

    def request(self, method: str, path: str, body=None, query=None, patch: bool = False):
        headers = {"Accept": "application/json",
                   "Content-Type": "application/merge-patch+json" if patch else "application/json"}
        try:
            resp = self.client.call_api(path, method, query_params=list((query or {}).items()),
                                        header_params=headers, body=body, auth_settings=["BearerToken"],
                                        _preload_content=False, _request_timeout=60)
        except ApiException as err:
            raise ApiError(err.status, err.body.decode() if isinstance(err.body, bytes) else str(err.body)) from None
        data = resp.data
        return json.loads(data) if data else None

    def get(self, path, **query):
        return self.request("GET", path, query=query)

    def items(self, kind: Kind) -> list:
        return self.get(kind.path()).get("items") or []

    def create(self, kind: Kind, obj: dict, dry_run: bool = False) -> dict:
        ns = obj["metadata"].get("namespace") if kind.namespaced else None
        return self.request("POST", kind.path(ns), obj, {"dryRun": "All"} if dry_run else None)

    def patch(self, kind: Kind, namespace, name: str, body: dict, sub: str | None = None) -> dict:
        return self.request("PATCH", kind.path(namespace, name, sub), body, patch=True)

    def delete(self, kind: Kind, namespace, name: str) -> None:
        try:
            self.request("DELETE", kind.path(namespace, name), query={"gracePeriodSeconds": "0"})
        except ApiError as err:
            if err.status != 404:
                raise


def stored(obj: dict) -> dict:
    """An object as a scenario holds it: what the server keeps, without the fields only the server uses."""
    out = copy.deepcopy(obj)
    meta = out.get("metadata") or {}
    for key in ("managedFields", "resourceVersion", "selfLink", "generation"):
        meta.pop(key, None)
    return out


def for_create(obj: dict) -> dict:
    """A scenario object as a client creates it (no server fields, no status: the apiserver ignores it)."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    for key in SERVER_FIELDS:
        meta.pop(key, None)
    out.pop("status", None)
    return out


# -- what the missing controllers would have made ------------------------------------------------------------------

def queue_order(pending: list) -> list:
    """(golden index, pod) in the golden queue order: ``spec.priority`` descending, stable."""
    keyed = sorted(enumerate(pending), key=lambda ip: -int((ip[1].get("spec") or {}).get("priority") or 0))
    return [(k, pod) for k, (_i, pod) in enumerate(keyed)]


def admission_classes(scenario: dict) -> tuple:
    """(PriorityClasses, RuntimeClasses) the scenario's pods need to pass admission: a PriorityClass for each pod
    whose priority is not 0 or whose preemptionPolicy is Never (the class the pod names, else ``golden-<value>``
    or ``golden-<value>-never``; ``<class>-<value>`` when pods give one class several values; the built-in
    ``system-`` classes exist already), a RuntimeClass for each pod with an overhead or a runtimeClassName whose
    overhead is the pod's (its ``runtimeClassName``, else ``golden-overhead-<cpu>-<memory>``; suffixed with the
    overhead when pods give one class several). Returns the classes and sets the pods' class names in place."""
    priority, runtime = dict(BUILTIN_PRIORITY_CLASSES), {}
    for pc in scenario.get("priorityclasses") or ():
        priority[pc["metadata"]["name"]] = for_create(pc)
    for pod in list(scenario.get("pods") or ()) + list(scenario.get("pending") or ()):
        spec = pod.setdefault("spec", {})
        value = int(spec.get("priority") or 0)
        policy = spec.get("preemptionPolicy") or "PreemptLowerPriority"
        base = spec.get("priorityClassName")
        if not base and (value != 0 or policy == "Never"):
            base = f"golden-{value}" + ("-never" if policy == "Never" else "")
        if base:
            for name in (base, f"{base}-{value}", f"{base}-{value}-{policy.lower()}"):
                pc = priority.get(name)
                if pc is None:
                    priority[name] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                      "metadata": {"name": name}, "value": value, "preemptionPolicy": policy}
                    break
                if pc["value"] == value and (pc.get("preemptionPolicy") or "PreemptLowerPriority") == policy:
                    break
            spec["priorityClassName"] = name
        overhead = spec.get("overhead")
        if overhead or spec.get("runtimeClassName"):
            suffix = "-".join(re.sub(r"[^a-z0-9]", "", str(overhead[k]).lower()) for k in sorted(overhead or {}))
            base = spec.get("runtimeClassName") or f"golden-overhead-{suffix}"
            for rc in (base, f"{base}-{suffix or 'none'}"):
                if rc not in runtime or (runtime[rc].get("overhead") or {}).get("podFixed") == overhead:
                    break
            spec["runtimeClassName"] = rc
            body = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": rc},
                    "handler": "runc"}
            if overhead:
                body["overhead"] = {"podFixed": overhead}
            runtime.setdefault(rc, body)
    return [pc for name, pc in priority.items() if name not in BUILTIN_PRIORITY_CLASSES], list(runtime.values())


def template_claims(pod: dict, templates: dict, existing: set) -> list:
    """The claims the resourceclaim controller makes for ``pod``'s template entries, as
    ../shared/golden-v136/README.md names them: ``<pod>-<entry>`` in the pod's namespace, the template's
    ``spec.spec``, labels and annotations, the pod-claim-name annotation, owned by the pod (its uid filled in when
    the pod exists). Entries whose claim is in ``existing`` ({(namespace, name)}) are left out."""
    meta = pod["metadata"]
    ns = meta.get("namespace") or "default"
    out = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        tname = entry.get("resourceClaimTemplateName")
        if not tname or (ns, tname) not in templates:
            continue
        name = f"{meta['name']}-{entry['name']}"
        if (ns, name) in existing:
            continue
        tmpl = templates[(ns, tname)]
        tmeta = (tmpl.get("spec") or {}).get("metadata") or {}
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": name, "namespace": ns, "labels": dict(tmeta.get("labels") or {}),
                                 "annotations": {**(tmeta.get("annotations") or {}),
                                                 CLAIM_NAME_ANNOTATION: entry["name"]},
                                 "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                                      "uid": meta.get("uid", ""), "controller": True,
                                                      "blockOwnerDeletion": True}]},
                    "spec": copy.deepcopy(tmpl["spec"]["spec"])})
    return out


def claim_statuses(pod: dict) -> list:
    """The pod's ``status.resourceClaimStatuses`` for its template entries (claims named as template_claims)."""
    return [{"name": e["name"], "resourceClaimName": f"{pod['metadata']['name']}-{e['name']}"}
            for e in (pod.get("spec") or {}).get("resourceClaims") or () if e.get("resourceClaimTemplateName")]


def running_status(pod: dict, now: str) -> dict:
    """The status a kubelet reports for a running pod (the scenario's own status wins where it has one; the QoS
    class is the apiserver's, which it does not let change)."""
    status = {k: v for k, v in (pod.get("status") or {}).items() if k not in ("resourceClaimStatuses", "qosClass")}
    status.setdefault("phase", "Running")
    status.setdefault("startTime", now)
    status.setdefault("conditions", [{"type": t, "status": "True", "lastTransitionTime": now}
                                     for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")])
    return status


def ready_node_status(node: dict, now: str) -> dict:
    """The node's status with a Ready condition (the scenario's conditions otherwise)."""
    status = copy.deepcopy(node.get("status") or {})
    conditions = [c for c in status.get("conditions") or () if c.get("type") != "Ready"]
    conditions.append({"type": "Ready", "status": "True", "reason": "KubeletReady",
                       "message": "kubelet is posting ready status", "lastHeartbeatTime": now,
                       "lastTransitionTime": now})
    status["conditions"] = conditions
    return status


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _key(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


# -- one control plane, many scenarios -------------------------------------------------------------------------

class Oracle:
    """The real control plane, reused: ``run(scenario)`` cleans it, loads the scenario, starts kube-scheduler,
    schedules the pending pods one at a time and returns the derived scenarios and decisions."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.cp = ControlPlane(self.workdir / "cp")
        self.api = None
        self.volumes = False     # the scenario has PersistentVolumes (bind_volumes stands in for their controller)

    def __enter__(self) -> "Oracle":
        started = time.monotonic()
        self.cp.start()
        self.api = Api(self.cp.kubeconfig)
        self.startup_seconds = round(time.monotonic() - started, 2)
        return self

    def __exit__(self, *exc) -> None:
        self.cp.stop_scheduler()
        self.cp.stop()

    # -- cleaning --------------------------------------------------------------------------------------------
    def clean(self) -> None:
        """Delete every object a scenario made (namespaces stay: nothing would finalize their deletion), stripping
        the finalizers no controller would remove, and wait until they are gone."""
        for kind in reversed(KINDS):
            objs = [o for o in self.api.items(kind) if not self._system(kind, o)]
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda o, k=kind: self._delete(k, o), objs))
        for kind in KINDS:
            end = time.monotonic() + 60
            while [o for o in self.api.items(kind) if not self._system(kind, o)]:
                if time.monotonic() > end:
                    raise RuntimeError(f"{kind.plural} not deleted in 60 s")
                time.sleep(0.05)

    @staticmethod
    def _system(kind: Kind, obj: dict) -> bool:
        meta = obj["metadata"]
        if kind.array == "priorityclasses":
            return meta["name"].startswith("system-")
        if kind.array == "services":
            return meta.get("namespace") == "default" and meta["name"] == "kubernetes"
        return False

    def _delete(self, kind: Kind, obj: dict) -> None:
        meta = obj["metadata"]
        ns = meta.get("namespace")
        if meta.get("finalizers"):
            try:
                self.api.patch(kind, ns, meta["name"], {"metadata": {"finalizers": None}})
            except ApiError as err:
                if err.status != 404:
                    raise
        self.api.delete(kind, ns, meta["name"])

    # -- loading ---------------------------------------------------------------------------------------------
    def _namespaces(self, scenario: dict) -> None:
        """Every namespace the scenario uses, with its labels (other namespaces' labels are emptied) and a
        ``default`` ServiceAccount without token automount."""
        wanted = {"default": {}}
        for ns in scenario.get("namespaces") or ():
            wanted[ns["metadata"]["name"]] = dict((ns["metadata"].get("labels") or {}))
        for array, objs in scenario.items():
            if (array == "pending" or array in KIND and KIND[array].namespaced) and isinstance(objs, list):
                for o in objs:
                    wanted.setdefault((o.get("metadata") or {}).get("namespace") or "default", {})
        existing = {n["metadata"]["name"]: n for n in self.api.items(NAMESPACES)}
        for name, ns in existing.items():
            if name in SYSTEM_NAMESPACES or name in wanted:
                continue
            labels = {k: None for k in (ns["metadata"].get("labels") or {}) if k != "kubernetes.io/metadata.name"}
            if labels:
                self.api.patch(NAMESPACES, None, name, {"metadata": {"labels": labels}})
        for name, labels in wanted.items():
            if name in existing:
                old = existing[name]["metadata"].get("labels") or {}
                patch = {**{k: None for k in old if k not in labels and k != "kubernetes.io/metadata.name"},
                         **labels}
                if patch:
                    self.api.patch(NAMESPACES, None, name, {"metadata": {"labels": patch}})
            else:
                self.api.create(NAMESPACES, {"metadata": {"name": name, "labels": labels}})
            try:
                self.api.create(SERVICEACCOUNTS, {"metadata": {"name": "default", "namespace": name},
                                                  "automountServiceAccountToken": False})
            except ApiError as err:
                if err.status != 409:
                    raise
        self.namespaces = sorted(wanted)

    def load(self, scenario: dict, refused: list) -> dict:
        """Create the scenario's cluster; returns {pod key: created pod} for the bound pods."""
        now = _now()
        self._namespaces(scenario)
        priority, runtime = admission_classes(scenario)
        arrays = dict(scenario, priorityclasses=priority, runtimeclasses=runtime)
        made = {}
        for kind in KINDS:
            if kind.array in ("pods", "resourceclaims"):
                continue
            objs = list(arrays.get(kind.array) or ())
            with ThreadPoolExecutor(8) as pool:
                for obj, result in zip(objs, pool.map(lambda o, k=kind: self._create(k, o, now), objs)):
                    if isinstance(result, ApiError):
                        refused.append({"object": f"{kind.array}/{_key(obj)}", "error": result.message})
        self._claim_refs()
        pods = [p for p in scenario.get("pods") or () if (p.get("spec") or {}).get("nodeName")]
        with ThreadPoolExecutor(8) as pool:
            for pod, result in zip(pods, pool.map(lambda p: self._create(KIND["pods"], p, now), pods)):
                if isinstance(result, ApiError):
                    refused.append({"object": f"pods/{_key(pod)}", "error": result.message})
                else:
                    made[_key(pod)] = result
        self._claims(scenario, made, refused)
        return made

    def _create(self, kind: Kind, obj: dict, now: str):
        """Create one object and write what its controller or kubelet would: a node's Ready status and taints
        (without the not-ready taint admission adds), a bound pod's Running status, the statuses of PVs, PVCs
        and PodDisruptionBudgets. Returns the object, or the ApiError that refused it."""
        try:
            created = self.api.create(kind, for_create(obj))
            meta = created["metadata"]
            ns = meta.get("namespace")
            if kind.array == "nodes":
                self.api.patch(kind, None, meta["name"], {"status": ready_node_status(obj, now)}, "status")
                created = self.api.patch(kind, None, meta["name"],
                                         {"spec": {"taints": (obj.get("spec") or {}).get("taints")}})
            elif kind.array == "pods":
                created = self.api.patch(kind, ns, meta["name"], {"status": running_status(obj, now)}, "status")
            elif kind.status and obj.get("status") and kind.array != "resourceclaims":
                created = self.api.patch(kind, ns, meta["name"], {"status": obj["status"]}, "status")
            return created
        except ApiError as err:
            return err

    def _claim_refs(self) -> None:
        """PersistentVolumes bound to a claim name the claim's new uid (``spec.claimRef``), as they would."""
        pvcs = {_key(c): c["metadata"]["uid"] for c in self.api.items(KIND["persistentvolumeclaims"])}
        for pv in self.api.items(KIND["persistentvolumes"]):
            ref = (pv.get("spec") or {}).get("claimRef")
            key = f"{(ref or {}).get('namespace') or 'default'}/{(ref or {}).get('name')}"
            if ref and key in pvcs and ref.get("uid") != pvcs[key]:
                self.api.patch(KIND["persistentvolumes"], None, pv["metadata"]["name"],
                               {"spec": {"claimRef": {"uid": pvcs[key]}}})

    def bind_volumes(self) -> None:
        """What the PersistentVolume controller does after kube-scheduler's VolumeBinding PreBind chose a volume for
        a claim (``spec.claimRef`` on an unbound PV): the claim gets the volume and both become Bound."""
        pvs = KIND["persistentvolumes"]
        for pv in self.api.items(pvs):
            ref = (pv.get("spec") or {}).get("claimRef")
            if not ref or (pv.get("status") or {}).get("phase") == "Bound":
                continue
            ns, name = ref.get("namespace") or "default", ref["name"]
            pvcs = KIND["persistentvolumeclaims"]
            try:
                pvc = self.api.get(pvcs.path(ns, name))
            except ApiError:
                continue
            if pvc["spec"].get("volumeName"):
                continue
            self.api.patch(pvcs, ns, name, {"metadata": {"annotations": {
                "pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}},
                "spec": {"volumeName": pv["metadata"]["name"]}})
            self.api.patch(pvcs, ns, name, {"status": {"phase": "Bound", "accessModes": pv["spec"].get("accessModes"),
                                                       "capacity": pv["spec"].get("capacity")}}, "status")
            self.api.patch(pvs, None, pv["metadata"]["name"], {"status": {"phase": "Bound"}}, "status")

    def _templates(self) -> dict:
        """{(namespace, name): template} of the ResourceClaimTemplates the apiserver holds (one it refused makes
        no claims, as for the resourceclaim controller)."""
        return {(t["metadata"]["namespace"], t["metadata"]["name"]): t
                for t in self.api.items(KIND["resourceclaimtemplates"])}

    def _claims(self, scenario: dict, pods: dict, refused: list) -> None:
        """The scenario's ResourceClaims (their status with the bound pods' new uids in ``reservedFor``), then
        the claims of the bound pods' templates that the scenario does not hold, and the pods' claim statuses."""
        uid = {k: p["metadata"]["uid"] for k, p in pods.items()}
        claims = [copy.deepcopy(c) for c in scenario.get("resourceclaims") or ()]
        templates = self._templates()
        existing = {(c["metadata"].get("namespace") or "default", c["metadata"]["name"]) for c in claims}
        for key, pod in pods.items():
            claims.extend(template_claims(pod, templates, existing))
        kind = KIND["resourceclaims"]
        for claim in claims:
            ns = claim["metadata"].get("namespace") or "default"
            for ref in claim["metadata"].get("ownerReferences") or ():
                if ref.get("kind") == "Pod" and f"{ns}/{ref['name']}" in uid:
                    ref["uid"] = uid[f"{ns}/{ref['name']}"]
            status = claim.get("status") or {}
            reserved = [dict(r, uid=uid[f"{ns}/{r['name']}"]) for r in status.get("reservedFor") or ()
                        if f"{ns}/{r['name']}" in uid]
            try:
                self.api.create(kind, for_create(claim))
                if status.get("allocation"):
                    body = {"status": {"allocation": status["allocation"], "reservedFor": reserved or None}}
                    if status.get("devices"):
                        body["status"]["devices"] = status["devices"]
                    self.api.patch(kind, ns, claim["metadata"]["name"], body, "status")
            except ApiError as err:
                refused.append({"object": f"resourceclaims/{_key(claim)}", "error": err.message})
        for key, pod in pods.items():
            statuses = claim_statuses(pod)
            if statuses:
                ns, name = key.split("/", 1)
                self.api.patch(KIND["pods"], ns, name, {"status": {"resourceClaimStatuses": statuses}}, "status")

    # -- the cluster as kube-scheduler sees it ------------------------------------------------------------------
    def state(self, scenario: dict, node_order: list) -> dict:
        """The derived scenario's cluster: every object now in the apiserver, nodes in the order kube-scheduler's
        cache added them, bound pods only."""
        out = {"name": scenario.get("name"), "description": scenario.get("description", ""), "kubeVersion": "1.36"}
        if scenario.get("config"):
            out["config"] = scenario["config"]
        nodes = {n["metadata"]["name"]: stored(n) for n in self.api.items(KIND["nodes"])}
        order = [n for n in node_order if n in nodes] + sorted(n for n in nodes if n not in node_order)
        out["nodes"] = [nodes[n] for n in order]
        out["pods"] = [stored(p) for p in self.api.items(KIND["pods"]) if (p.get("spec") or {}).get("nodeName")]
        out["pending"] = []
        out["namespaces"] = [stored(n) for n in self.api.items(NAMESPACES) if n["metadata"]["name"] in self.namespaces]
        for array in STATE_ARRAYS:
            objs = [stored(o) for o in self.api.items(KIND[array]) if not self._system(KIND[array], o)]
            if objs:
                out[array] = objs
        return out

    # -- scheduling ----------------------------------------------------------------------------------------------
    def run(self, scenario: dict, max_pending: int | None = None) -> dict:
        """Run one scenario; returns {"derived": [(K, state, expected)], "run": summary}."""
        timings = {}
        t0 = time.monotonic()
        self.cp.stop_scheduler()
        self.clean()
        timings["clean"] = round(time.monotonic() - t0, 2)
        scenario = copy.deepcopy(scenario)
        for alias, array in SCENARIO_ALIASES.items():
            if alias in scenario:
                scenario[array] = scenario.pop(alias)
        refused, preset = [], []
        t1 = time.monotonic()
        self.load(scenario, refused)
        self.volumes = bool(scenario.get("persistentvolumes"))
        timings["load"] = round(time.monotonic() - t1, 2)
        t2 = time.monotonic()
        log_path = self.workdir / f"kube-scheduler-{scenario.get('name', 'scenario')}.log"
        config_path = None
        if scenario.get("config"):
            config_path = self.workdir / "scheduler-config.json"
            config = dict(scenario["config"])
            config["clientConnection"] = dict(config.get("clientConnection") or {},
                                              kubeconfig=str(self.cp.kubeconfig))
            config["leaderElection"] = dict(config.get("leaderElection") or {}, leaderElect=False)
            config_path.write_text(json.dumps(config))
        try:
            self.cp.start_scheduler(log_path, config_path)
        except RuntimeError as err:
            return {"derived": [], "run": {"scenario": scenario.get("name"),
                                           "config_error": command_error(log_path.read_text()) or str(err),
                                           "refused": refused, "seconds": timings}}
        timings["scheduler_start"] = round(time.monotonic() - t2, 2)
        sched_log = SchedulerLog()
        reader = _LogReader(log_path, sched_log)
        nodes = len(self.api.items(KIND["nodes"]))
        self._wait(lambda: reader.read() or len(sched_log.node_order) >= nodes, 30,
                   "kube-scheduler's cache did not add every node")
        derived, decisions = [], []
        templates = self._templates()
        last = 0.0
        order = queue_order(scenario.get("pending") or [])
        for k, pod in order:
            if max_pending is not None and len(derived) >= max_pending:
                break
            if (pod.get("spec") or {}).get("nodeName"):
                preset.append(_key(pod))
                result = self._create(KIND["pods"], pod, _now())
                if isinstance(result, ApiError):
                    refused.append({"object": f"pods/{_key(pod)}", "error": result.message})
                continue
            time.sleep(max(0.0, last + BATCH_GAP - time.monotonic()))
            reader.read()
            state = self.state(scenario, sched_log.node_order)
            try:
                admitted = self.api.create(KIND["pods"], for_create(pod), dry_run=True)
            except ApiError as err:
                refused.append({"object": f"pods/{_key(pod)}", "error": err.message})
                continue
            pending = stored(admitted)
            for key in ("uid", "creationTimestamp"):
                pending["metadata"].pop(key, None)
            state["pending"] = [pending]
            decision = self._schedule(pod, templates, sched_log, reader)
            last = time.monotonic()
            expected = {"scenario": f"{scenario.get('name')}-{k:02d}", "source_scenario": scenario.get("name"),
                        "queue_index": k, "kubernetes_version": KUBERNETES_VERSION, "oracle": "live",
                        "profile": (pod.get("spec") or {}).get("schedulerName") or "default-scheduler",
                        "decisions": [decision]}
            derived.append((k, state, expected))
            decisions.append({"queue_index": k, "pod": decision["pod"],
                              "result": decision.get("bound_node") or ("TIMEOUT" if decision.get("timeout")
                                                                       else "UNSCHEDULABLE"),
                              "seconds": decision["seconds"]})
        self.cp.stop_scheduler()
        timings["total"] = round(time.monotonic() - t0, 2)
        return {"derived": derived,
                "run": {"scenario": scenario.get("name"), "kubernetes_version": KUBERNETES_VERSION,
                        "decisions": decisions, "preset_node_name": preset, "refused": refused,
                        "seconds": timings, "pending_left_out": max(0, len(order) - len(preset) - len(derived))
                        if max_pending is not None else 0}}

    @staticmethod
    def _wait(cond, timeout: float, what: str):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = cond()
            if value:
                return value
            time.sleep(0.02)
        raise RuntimeError(what)

    def _outcome(self, ns: str, name: str, sched_log: SchedulerLog, reader):
        """(pod, None) once the pod is bound or kube-scheduler refused it (PodScheduled False, not for a gate);
        (pod, refusal) when a PreEnqueue plugin other than SchedulingGates keeps it out of the queue for
        GATED_SETTLE seconds without an attempt; (None, None) after OUTCOME_TIMEOUT."""
        end = time.monotonic() + OUTCOME_TIMEOUT
        gated_since = None
        while time.monotonic() < end:
            pod = self.api.get(KIND["pods"].path(ns, name))
            if (pod.get("spec") or {}).get("nodeName"):
                return pod, None
            for c in (pod.get("status") or {}).get("conditions") or ():
                if c.get("type") == "PodScheduled" and c.get("status") == "False" and \
                        c.get("reason") in ("Unschedulable", "SchedulerError"):
                    return pod, None
            reader.read()
            if self.volumes:
                self.bind_volumes()
            refusal = sched_log.pre_enqueue.get(f"{ns}/{name}")
            if refusal and refusal["plugin"] != "SchedulingGates":
                gated_since = gated_since or time.monotonic()
                if time.monotonic() - gated_since > GATED_SETTLE:
                    return pod, refusal
            else:
                gated_since = None
            time.sleep(0.02)
        return None, None

    def _schedule(self, raw_pod: dict, templates: dict, sched_log: SchedulerLog, reader) -> dict:
        """Create one pending pod (its template claims made first, behind a scheduling gate), wait for
        kube-scheduler's outcome and describe it as a golden-v136 decision."""
        pods = KIND["pods"]
        body = for_create(raw_pod)
        meta = body["metadata"]
        ns, name = meta.get("namespace") or "default", meta["name"]
        key = f"{ns}/{name}"
        claims = template_claims(body, templates, set())
        if claims:
            body["spec"]["schedulingGates"] = list(body["spec"].get("schedulingGates") or ()) + [{"name": CLAIM_GATE}]
        started = time.monotonic()
        created = self.api.create(pods, body)
        notes = []
        if claims:
            made = set()
            for claim in claims:
                claim["metadata"]["ownerReferences"][0]["uid"] = created["metadata"]["uid"]
                try:
                    self.api.create(KIND["resourceclaims"], claim)
                    made.add(claim["metadata"]["name"])
                except ApiError as err:   # the controller could not make it either: the pod waits for it
                    notes.append(f"claim {ns}/{claim['metadata']['name']} refused: {err.message}")
            statuses = [s for s in claim_statuses(body) if s["resourceClaimName"] in made]
            if statuses:
                self.api.patch(pods, ns, name, {"status": {"resourceClaimStatuses": statuses}}, "status")
            gates = [g for g in created["spec"].get("schedulingGates") or () if g["name"] != CLAIM_GATE]
            self.api.patch(pods, ns, name, {"spec": {"schedulingGates": gates or None}})
            started = time.monotonic()
        pod, gated = self._outcome(ns, name, sched_log, reader)
        seconds = round(time.monotonic() - started, 3)
        decision = {"pod": key, "priority": int(created["spec"].get("priority") or 0)}
        if notes:
            decision["notes"] = notes
        if pod is None:
            decision.update(bound_node=None, unschedulable=None, timeout=True, seconds=seconds)
            self._remove_pod(ns, name)
            return decision
        if gated:
            decision.update(bound_node=None, unschedulable=False, message=None, gated=gated,
                            scoring_run_by_scheduler=False, feasible_nodes=[], top_nodes=[], scores={},
                            seconds=seconds)
            self._remove_pod(ns, name)
            return decision
        if pod["spec"].get("nodeName"):
            self._wait(lambda: reader.read() or key in sched_log.bound, 10, f"no bind line for {key}")
            bound = sched_log.bound[key]
            attempt = sched_log.attempts[key][0]
            decision.update(bound_node=pod["spec"]["nodeName"], unschedulable=False, message=None)
            if attempt["totals"]:
                decision.update(scored_decision(attempt))
            else:
                decision.update(scoring_run_by_scheduler=False, feasible_nodes=[bound["node"]],
                                top_nodes=[bound["node"]], scores={})
            decision.update(evaluated_nodes=bound["evaluated"], feasible_count=bound["feasible"],
                            attempts=bound["attempt"])
            self._mark_running(pod)
            dra = self._dra(pod)
            if dra:
                decision["dra"] = dra
            decision["seconds"] = seconds
            return decision
        condition = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        decision.update(bound_node=None, unschedulable=True, message=condition.get("message"),
                        condition_reason=condition["reason"],
                        event_message=self._event(ns, pod["metadata"]["uid"]),
                        scoring_run_by_scheduler=False, feasible_nodes=[], top_nodes=[], scores={})
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if nominated:
            decision["preemption"] = self._follow_preemption(pod, nominated, sched_log, reader)
        elif "deallocation of ResourceClaim completed" in (condition.get("message") or ""):
            again = self._bound(ns, name)
            if again:
                decision["bound_after_retry"] = again["spec"]["nodeName"]
                self._mark_running(again)
        if not decision.get("bound_after_retry") and not (decision.get("preemption") or {}).get("bound_node_after"):
            self._remove_pod(ns, name)
        decision["seconds"] = seconds
        return decision

    def _bound(self, ns: str, name: str, timeout: float = OUTCOME_TIMEOUT):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            pod = self.api.get(KIND["pods"].path(ns, name))
            if pod["spec"].get("nodeName"):
                return pod
            time.sleep(0.02)
        return None

    def _follow_preemption(self, pod: dict, nominated: str, sched_log: SchedulerLog, reader) -> dict:
        """kube nominated a node: wait for its asynchronous preemption, delete the victims for good (what their
        kubelet would do once they stopped; their claims released as the resourceclaim controller would) and
        follow the preemptor until it binds."""
        key = _key(pod)
        self._wait(lambda: reader.read() or key in sched_log.preemption_done, 15, f"preemption of {key} unfinished")
        victims = list(sched_log.victims.get(key, ()))
        for victim in victims:
            vns, vname = victim.split("/", 1)
            self._remove_pod(vns, vname)
        out = {"nominated_node": nominated, "victims": sorted(victims)}
        bound = self._bound(*key.split("/", 1))
        reader.read()
        if bound:
            out["bound_node_after"] = bound["spec"]["nodeName"]
            self._wait(lambda: reader.read() or key in sched_log.bound, 10, f"no bind line for {key}")
            out["attempts"] = sched_log.bound[key]["attempt"]
            after = sched_log.attempts[key][out["attempts"] - 1]
            if after["totals"]:
                out["after_scores"] = scored_decision(after)["scores"]
            self._mark_running(bound)
        return out

    def _event(self, ns: str, uid: str, timeout: float = 5.0):
        """The FailedScheduling event's message for the pod (events are written asynchronously)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            items = self.api.get(EVENTS.path(ns), fieldSelector=f"involvedObject.uid={uid},reason=FailedScheduling")
            if items.get("items"):
                return items["items"][0].get("message")
            time.sleep(0.05)
        return None

    def _mark_running(self, pod: dict) -> None:
        meta = pod["metadata"]
        status = running_status({"status": {k: v for k, v in (pod.get("status") or {}).items()
                                            if k not in ("conditions", "phase")}}, _now())
        self.api.patch(KIND["pods"], meta["namespace"], meta["name"], {"status": status}, "status")

    def _remove_pod(self, ns: str, name: str) -> None:
        """Delete a pod at once and release its claims as the resourceclaim controller and the garbage collector
        would: claims it owns are deleted, it leaves the others' ``reservedFor`` (which are deallocated when
        nobody is left)."""
        try:
            pod = self.api.get(KIND["pods"].path(ns, name))
        except ApiError as err:
            if err.status == 404:
                return
            raise
        uid = pod["metadata"]["uid"]
        self.api.delete(KIND["pods"], ns, name)
        self._wait(lambda: not self._exists(KIND["pods"], ns, name, uid), 30, f"pod {ns}/{name} not deleted")
        kind = KIND["resourceclaims"]
        for claim in self.api.get(kind.path(ns)).get("items") or ():
            cmeta = claim["metadata"]
            if any(r.get("uid") == uid for r in cmeta.get("ownerReferences") or ()):
                self._delete(kind, claim)
                continue
            reserved = (claim.get("status") or {}).get("reservedFor") or []
            if any(r.get("uid") == uid for r in reserved):
                left = [r for r in reserved if r.get("uid") != uid]
                status = {"reservedFor": left or None}
                if not left:
                    status["allocation"] = None
                self.api.patch(kind, ns, cmeta["name"], {"status": status}, "status")
                if not left and DELETE_PROTECTION in (cmeta.get("finalizers") or ()):
                    self.api.patch(kind, ns, cmeta["name"], {"metadata": {"finalizers": [
                        f for f in cmeta["finalizers"] if f != DELETE_PROTECTION] or None}})

    def _exists(self, kind: Kind, ns: str, name: str, uid: str) -> bool:
        try:
            return self.api.get(kind.path(ns, name))["metadata"]["uid"] == uid
        except ApiError as err:
            if err.status == 404:
                return False
            raise

    def _dra(self, pod: dict) -> dict:
        """The pod's claims after binding: devices allocated, node selector, reservedFor."""
        ns = pod["metadata"]["namespace"]
        status = pod.get("status") or {}
        names = {s["name"]: s.get("resourceClaimName") for s in status.get("resourceClaimStatuses") or ()}
        for entry in pod["spec"].get("resourceClaims") or ():
            if entry.get("resourceClaimName"):
                names[entry["name"]] = entry["resourceClaimName"]
        extended = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if extended:
            names["extended-resources"] = extended
        out = {}
        for entry, claim_name in sorted(names.items()):
            if not claim_name:
                continue
            try:
                claim = self.api.get(KIND["resourceclaims"].path(ns, claim_name))
            except ApiError:
                continue
            cstatus = claim.get("status") or {}
            allocation = cstatus.get("allocation") or {}
            out[entry] = {"claim": claim_name, "allocated": bool(allocation),
                          "results": (allocation.get("devices") or {}).get("results") or [],
                          "node_selector": allocation.get("nodeSelector"),
                          "reserved_for": [r["name"] for r in cstatus.get("reservedFor") or ()]}
        return out


class _LogReader:
    """Feeds a SchedulerLog with what kube-scheduler appended to its log file since the last read (whole lines)."""

    def __init__(self, path: Path, sched_log: SchedulerLog):
        self.path, self.sched_log, self.offset, self.rest = Path(path), sched_log, 0, ""

    def read(self) -> None:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        text = self.rest + data.decode("utf-8", errors="replace")
        cut = text.rfind("\n") + 1
        self.rest = text[cut:]
        self.sched_log.feed(text[:cut])


# -- files, comparison and report ------------------------------------------------------------------------------

def scenario_paths(paths) -> list:
    """The input scenarios: files, and the ``*.scenario.json`` of directories (sorted)."""
    out = []
    for p in map(Path, paths):
        out.extend(sorted(p.glob("*.scenario.json")) if p.is_dir() else [p])
    return out


def read_scenario(path: Path) -> dict:
    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def write_json(path: Path, doc) -> None:
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def compare_derived(files: list) -> list:
    """[(scenario file, pod, difference or None)] of Schedscope at 1.36 against kube on derived scenarios."""
    out = []
    for path in files:
        for pod, diff in check_scenario(str(path)):
            out.append((path, pod, diff))
    return out


def refusal_differences(scenario: dict, refused: list) -> list:
    """[(object, kube's text, Schedscope's or None)] for the objects kube-apiserver found invalid: Schedscope's
    one validation path (objects.validation) must refuse them with the same causes (the text after
    ``is invalid: ``). Refusals by admission (``is forbidden``) are not validation and are left out."""
    out = []
    for entry in refused:
        array, key = entry["object"].split("/", 1)
        kube = entry["error"].split(" is invalid: ", 1)
        if len(kube) != 2 or array not in ARRAY_TO_KIND:
            continue
        obj = next((o for o in scenario.get(array) or () if _key(o) == key), None)
        if obj is None:
            continue
        texts = [str(e) for e in object_errors(ARRAY_TO_KIND[array], obj)]
        ours = (texts[0] if len(texts) == 1 else f"[{', '.join(texts)}]") if texts else None
        out.append((entry["object"], kube[1], ours))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="tools/live_oracle.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", nargs="+", help="scenario files or directories of *.scenario.json")
    ap.add_argument("--out", type=Path, help="where the derived vectors go (default: a temporary directory)")
    ap.add_argument("--report", type=Path, help="also write the report (JSON) here")
    ap.add_argument("--no-compare", action="store_true", help="only write kube's vectors")
    ap.add_argument("--max-pending", type=int, help="at most N pending pods per scenario (the first in queue order)")
    ap.add_argument("--score-all-nodes", action="store_true",
                    help="percentageOfNodesToScore 100 in the scenario's config (kube's and Schedscope's): a "
                         "derived scenario holds no scheduler state such as the next start node index")
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="live-oracle-"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "_runs").mkdir(exist_ok=True)
    paths = scenario_paths(args.scenarios)
    report = {"kubernetes_version": KUBERNETES_VERSION, "scenarios": [], "decisions": 0, "equal": 0,
              "differences": [], "config_errors": [], "refusals": 0, "refusals_equal": 0,
              "refusal_differences": []}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="live-oracle-cp-") as work, Oracle(Path(work)) as oracle:
        report["control_plane_seconds"] = oracle.startup_seconds
        for path in paths:
            scenario = read_scenario(path)
            scenario["name"] = path.name.split(".scenario.json")[0]
            if args.score_all_nodes:
                scenario["config"] = dict(scenario.get("config") or {
                    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
                    percentageOfNodesToScore=100)
            t = time.monotonic()
            result = oracle.run(scenario, args.max_pending)
            run = result["run"]
            write_json(out / "_runs" / f"{scenario['name']}.json", run)
            files = []
            for k, state, expected in result["derived"]:
                base = out / f"{scenario['name']}-{k:02d}"
                write_json(Path(f"{base}.scenario.json"), state)
                write_json(Path(f"{base}.expected.json"), expected)
                files.append(Path(f"{base}.scenario.json"))
            entry = {"scenario": scenario["name"], "decisions": len(files), "seconds": round(time.monotonic() - t, 2),
                     "refused": len(run.get("refused") or ()), "preset": len(run.get("preset_node_name") or ())}
            for obj, kube, ours in refusal_differences(scenario, run.get("refused") or ()):
                report["refusals"] += 1
                if kube == ours:
                    report["refusals_equal"] += 1
                else:
                    report["refusal_differences"].append({"scenario": scenario["name"], "object": obj,
                                                          "kube": kube, "schedscope": ours})
                    print(f"REFUSAL {scenario['name']} {obj}: kube {kube!r}, Schedscope {ours!r}", flush=True)
            if run.get("config_error"):
                ours = simulate(str(path)).get("error", "(accepted)").removeprefix("error: ")
                report["config_errors"].append({"scenario": scenario["name"], "kube": run["config_error"],
                                                "schedscope": ours, "equal": ours == run["config_error"]})
                print(f"{scenario['name']}: kube-scheduler refused its configuration"
                      f" ({'the same error in Schedscope' if ours == run['config_error'] else 'Schedscope: ' + ours})",
                      flush=True)
            if not args.no_compare:
                results = compare_derived(files)
                entry["equal"] = sum(1 for _p, _pod, diff in results if diff is None)
                report["equal"] += entry["equal"]
                for p, pod, diff in results:
                    if diff is not None:
                        report["differences"].append({"scenario": p.name, "pod": pod, "difference": diff})
                        print(f"DIFF {p.name} {pod}: {diff}", flush=True)
            report["decisions"] += len(files)
            report["scenarios"].append(entry)
            print(f"{scenario['name']}: {len(files)} decisions"
                  + ("" if args.no_compare else f", {entry['equal']} equal") + f", {entry['seconds']} s", flush=True)
    report["seconds"] = round(time.monotonic() - started, 1)
    if args.report:
        write_json(args.report, report)
    tail = "" if args.no_compare else f", {report['equal']}/{report['decisions']} equal in Schedscope at 1.36"
    print(f"live oracle: {len(paths)} scenarios, {report['decisions']} decisions of kube-scheduler "
          f"{KUBERNETES_VERSION}{tail}, {report['seconds']} s (vectors in {out})")
    return 0 if args.no_compare or report["equal"] == report["decisions"] else 1


if __name__ == "__main__":
    sys.exit(main())
