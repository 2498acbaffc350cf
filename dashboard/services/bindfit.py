"""The pod page's manual-binding choices: nodes of the cluster as stored now, each with whether the pending pod
passes the profile's PreFilter and Filter plugins there and, if not, the plugins that reject it
(``scheduler_core.explain.node_rejections``, the check the loop makes when it binds). The work is capped: one
snapshot of the cluster and the Filter plugins on at most ``SHOWN`` nodes (those whose name contains a search
text), computed only when the page asks for them."""
from __future__ import annotations

from scheduler_core.config import ConfigError
from scheduler_core.explain import node_rejections
from scheduler_core.scenario import ScenarioError
from scheduler_core.simulate import Simulation

from ..models import Node
from . import kubeversions, state

SHOWN = 50


def node_choices(cluster, pod_row, q: str = "", chosen: str = "") -> dict:
    """{"nodes": [{"name", "fits", "rejections": {plugin: reason}}], "q": q, "matching": nodes whose name contains
    ``q``, "shown": how many are checked, "error": why none could be checked ('' if they were), "chosen": the
    entry of the node ``chosen`` (None if it does not exist), which is always among them."""
    names = Node.objects.filter(cluster=cluster).order_by("name").values_list("name", flat=True)
    if q:
        names = names.filter(name__icontains=q)
    matching = names.count()
    checked = list(names[:SHOWN])
    if chosen and chosen not in checked and Node.objects.filter(cluster=cluster, name=chosen).exists():
        checked.insert(0, chosen)
    out = {"nodes": [], "q": q, "matching": matching, "shown": len(checked), "error": ""}
    doc = cluster.profile.document if cluster.profile_id else None
    try:
        sim = Simulation(state.cluster_scenario(cluster, pending_uid=pod_row.uid), config_doc=doc or None,
                         kube_version=kubeversions.cluster_features(cluster))
    except (ConfigError, ScenarioError) as err:
        out["error"] = f"the Filter plugins cannot be run on the stored cluster: {err}"
        out["nodes"] = [{"name": n, "fits": None, "rejections": {}} for n in checked]
        return _with_chosen(out, chosen)
    pods = sim.scenario.pending_pods
    if not pods or not sim.frameworks:
        out["error"] = "the pod is no longer pending" if not pods else "the configuration has no profile"
        out["nodes"] = [{"name": n, "fits": None, "rejections": {}} for n in checked]
        return _with_chosen(out, chosen)
    pod = pods[0]
    # as the loop checks a binding: the pod's profile, else the first one
    fwk = sim.frameworks.get(pod.scheduler_name) or next(iter(sim.frameworks.values()))
    for name in checked:
        rejections = node_rejections(fwk, sim.snapshot, pod, name)
        out["nodes"].append({"name": name, "fits": not rejections, "rejections": rejections})
    return _with_chosen(out, chosen)


def _with_chosen(out: dict, chosen: str) -> dict:
    out["chosen"] = next((n for n in out["nodes"] if n["name"] == chosen), None)
    return out
