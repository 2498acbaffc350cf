"""A recorded cycle's Filter and Score matrices over every node, recomputed on demand.

On big clusters kube stops filtering once it has found numFeasibleNodesToFind nodes
(percentageOfNodesToScore) and scores only those. Cycles are recorded with every Filter plugin's verdict on
every node (the full trace), but cycles recorded before that cover only the nodes kube visited, and no cycle
has scores beyond the nodes kube scored. The pod page offers this for the former; the API for any cycle. This
re-runs that pod's cycle with the profile version that made it and percentageOfNodesToScore 100, on the
cluster as of that cycle: today's nodes and objects, the pods bound before the cycle started (``Pod.bound_at``;
pods bound when the cluster was loaded have none), without the pods bound after it. Pods deleted since are
gone from the database, so they are missing here; the result says what it was built from.
"""
from __future__ import annotations

import copy

from django.core.cache import cache
from django.db.models import Q

from scheduler_core import versions
from scheduler_core.config import ConfigError
from scheduler_core.scenario import ARRAYS, ScenarioError, scenario_from_data
from scheduler_core.simulate import Simulation

from ..models import Node, Pod, SchedulingCycle
from ..profiles.services import span_of_cycle
from . import kubeversions, objectstore
from .tracecodec import trace_fields

CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1"
CACHE_SECONDS = 600


class FullMatrixError(Exception):
    """The cycle cannot be recomputed (its pod is gone, or its profile no longer loads)."""


def visited(cycle: SchedulingCycle) -> int:
    """How many nodes kube's search visited in the cycle (rows recorded before ``visited`` existed: all)."""
    m = cycle.matrix
    return m.get("visited", len(m.get("nodes") or ()))


def _every_node(doc: dict | None) -> dict:
    """The configuration document with percentageOfNodesToScore 100, globally and in every profile."""
    doc = copy.deepcopy(doc) if doc else {"apiVersion": CONFIG_API_VERSION, "kind": "KubeSchedulerConfiguration"}
    doc["percentageOfNodesToScore"] = 100
    for prof in doc.get("profiles") or ():
        if isinstance(prof, dict) and prof.get("percentageOfNodesToScore") is not None:
            prof["percentageOfNodesToScore"] = 100
    return doc


def _profile_document(cycle: SchedulingCycle) -> tuple[dict | None, versions.Features, str]:
    """(document, Kubernetes version and feature gates, where they came from) of the profile that made the cycle:
    the version span it was made in, else the cluster's current ones."""
    span = span_of_cycle(cycle.cluster, cycle.seq)
    features = (versions.features(span.kube_version, span.feature_gates or None) if span is not None
                else kubeversions.cluster_features(cycle.cluster))
    at = f" at Kubernetes {features.name}"
    if span is not None and span.version is not None:
        return span.version.document, features, f"profile version {span.version}{at}"
    profile = cycle.cluster.profile
    if profile is not None and profile.document:
        return profile.document, features, f"profile {profile.name} (current document){at}"
    return None, features, f"kube's default configuration{at}"


def recompute(cycle: SchedulingCycle) -> dict:
    """{"matrix", "node", "message", "nodes", "bound_pods", "profile"} of the cycle over every node."""
    key = f"schedscope:fullmatrix:{cycle.pk}"
    found = cache.get(key)
    if found is not None:
        return found
    cluster = cycle.cluster
    pod = Pod.objects.filter(cluster=cluster, uid=cycle.pod_uid).first()
    if pod is None:
        raise FullMatrixError(f"pod {cycle.pod_key} no longer exists, so its cycle cannot be recomputed")
    data = {k: v for k, v in objectstore.scenario_objects(cluster.pk).items() if k in ARRAYS[3:]}
    data["nodes"] = [raw for raw in Node.objects.filter(cluster=cluster).order_by("id").values_list("raw", flat=True)]
    bound = []
    rows = (Pod.objects.filter(cluster=cluster).exclude(node_name="").exclude(pk=pod.pk)
            .filter(Q(bound_at__isnull=True) | Q(bound_at__lt=cycle.started)).order_by("created", "id")
            .values_list("raw", "node_name"))
    for raw, node_name in rows.iterator(chunk_size=2000):
        bound.append(dict(raw, spec=dict(raw.get("spec") or {}, nodeName=node_name)))
    data["pods"] = bound
    data["pending"] = [dict(pod.raw, spec={k: v for k, v in (pod.raw.get("spec") or {}).items() if k != "nodeName"})]
    doc, features, source = _profile_document(cycle)
    try:
        sim = Simulation(scenario_from_data(data, label=f"cluster {cluster.name} at cycle {cycle.seq}"),
                         config_doc=_every_node(doc), tie_break="name", trace_all_filters=True,
                         kube_version=features)
        traces = list(sim.run())
    except (ConfigError, ScenarioError) as err:
        raise FullMatrixError(f"cycle {cycle.seq} cannot be recomputed: {err}") from err
    if not traces:
        raise FullMatrixError(f"no profile of cycle {cycle.seq}'s configuration schedules {cycle.pod_key} "
                              f"(schedulerName {pod.scheduler_name})")
    fields = trace_fields(traces[0])
    out = {"matrix": fields["matrix"], "node": fields["node"], "message": fields["message"],
           "nodes": len(data["nodes"]), "bound_pods": len(bound), "profile": source}
    cache.set(key, out, CACHE_SECONDS)
    return out
