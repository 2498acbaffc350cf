"""Dry run: the cluster's stored state scheduled once with its current document and once with a candidate
version (scheduler_core.simulate.Simulation, one pass in PrioritySort order, tie-break by name so the diff
shows the profiles' effect, not chance), and the difference.

Sources: the current pending pods, or the pods the last N recorded cycles scheduled, taken off their nodes
and scheduled again (what those cycles would have decided under the candidate).
"""
from __future__ import annotations

import time

from django.db.models import Max

from scheduler_core.simulate import Simulation

from ..models import SchedulingCycle
from ..services import background, kubeversions, state
from .models import DryRun

PROGRESS_EVERY = 25


def cluster_scenario(run: DryRun):
    """The cluster's nodes, bound pods and objects, with the pods to try as pending."""
    replay = frozenset()
    if run.source == DryRun.WINDOW:
        last = SchedulingCycle.objects.filter(cluster=run.cluster).aggregate(m=Max("seq"))["m"] or 0
        replay = frozenset(SchedulingCycle.objects.filter(cluster=run.cluster, seq__gt=last - run.window,
                                                          result="scheduled").values_list("pod_uid", flat=True))
    return state.cluster_scenario(run.cluster, unbind=replay, gated=False)


def _run(scenario, doc, features, progress):
    sim = Simulation(scenario, config_doc=doc or None, tie_break="name", trace_all_filters=False,
                     kube_version=features)
    out = {}
    for tr in sim.run():
        chosen = tr.chosen if tr.reserve_status is None else None
        scores = {}
        if chosen:
            for plugin, (weight, per_node) in tr.scores.items():
                if chosen in per_node:
                    scores[plugin] = per_node[chosen][1] * weight
        out[tr.pod.key] = {"node": chosen, "message": tr.message or tr.error or "", "scores": scores,
                           "total": tr.totals.get(chosen) if chosen else None}
        progress()
    return out, sim


def _zones(sim) -> dict:
    """Per zone: allocatable and requested cpu/memory and the pod count after the run."""
    zones = {}
    for ni in sim.snapshot.node_infos:
        node = ni.node
        zone = node.labels.get("topology.kubernetes.io/zone", "") or "(none)"
        z = zones.setdefault(zone, {"cpu": 0, "memory": 0, "cpu_alloc": 0, "memory_alloc": 0, "pods": 0})
        z["cpu"] += int(ni.requested.get("cpu", 0))
        z["memory"] += int(ni.requested.get("memory", 0))
        z["cpu_alloc"] += int(node.allocatable.get("cpu", 0))
        z["memory_alloc"] += int(node.allocatable.get("memory", 0))
        z["pods"] += len(ni.pods)
    return zones


def compare(before: dict, after: dict, zones_before: dict, zones_after: dict) -> dict:
    """The diff of two runs over the same pods; ``nodes_changed``: the nodes that gain or lose a pod."""
    changes, plugin_sums = [], {}
    counts = {"moved": 0, "became_schedulable": 0, "became_unschedulable": 0, "unchanged": 0}
    for key, b in before.items():
        a = after.get(key, {"node": None, "message": "no profile for its schedulerName", "scores": {}})
        if b["node"] == a["node"]:
            counts["unchanged"] += 1
        else:
            kind = ("moved" if b["node"] and a["node"] else "became_schedulable" if a["node"]
                    else "became_unschedulable")
            counts[kind] += 1
            plugins = sorted(set(b["scores"]) | set(a["scores"]))
            changes.append({"pod": key, "kind": kind, "before": b["node"], "after": a["node"],
                            "message_before": b["message"], "message_after": a["message"],
                            "scores": [{"plugin": p, "before": b["scores"].get(p), "after": a["scores"].get(p)}
                                       for p in plugins]})
        for side, r in (("before", b), ("after", a)):
            for p, s in r["scores"].items():
                agg = plugin_sums.setdefault(p, {"before": [0, 0], "after": [0, 0]})[side]
                agg[0] += s
                agg[1] += 1
    plugins = [{"plugin": p, "before": round(v["before"][0] / v["before"][1], 1) if v["before"][1] else None,
                "after": round(v["after"][0] / v["after"][1], 1) if v["after"][1] else None}
               for p, v in sorted(plugin_sums.items())]
    zones = []
    for zone in sorted(set(zones_before) | set(zones_after)):
        zb, za = zones_before.get(zone), zones_after.get(zone)

        def pct(z, r):
            return round(100 * z[r] / z[f"{r}_alloc"], 1) if z and z[f"{r}_alloc"] else 0.0
        zones.append({"zone": zone, "cpu_before": pct(zb, "cpu"), "cpu_after": pct(za, "cpu"),
                      "memory_before": pct(zb, "memory"), "memory_after": pct(za, "memory"),
                      "pods_before": zb["pods"] if zb else 0, "pods_after": za["pods"] if za else 0})
    nodes_changed = {n for c in changes for n in (c["before"], c["after"]) if n}
    return {"pods": len(before), "summary": counts, "nodes_changed": len(nodes_changed), "changes": changes,
            "plugins": plugins, "zones": zones}


def execute(run_id: int) -> None:
    """Run a DryRun row: progress is written as it goes; the result or the error at the end."""
    run = DryRun.objects.select_related("cluster__profile", "version").get(pk=run_id)
    started = time.monotonic()
    DryRun.objects.filter(pk=run_id).update(state=DryRun.RUNNING)
    try:
        scenario = cluster_scenario(run)
        total = 2 * len(scenario.pending_pods)
        DryRun.objects.filter(pk=run_id).update(total=total)
        done = [0]

        def progress():
            done[0] += 1
            if done[0] % PROGRESS_EVERY == 0:
                DryRun.objects.filter(pk=run_id).update(done=done[0])
        current = run.cluster.profile.document if run.cluster.profile_id else None
        features = kubeversions.cluster_features(run.cluster)   # both at the cluster's version and gates
        before, sim_b = _run(scenario, current, features, progress)
        after, sim_a = _run(scenario, run.version.document, features, progress)
        result = compare(before, after, _zones(sim_b), _zones(sim_a))
    except Exception as err:  # shown to the user; the worker goes on
        DryRun.objects.filter(pk=run_id).update(state=DryRun.FAILED, error=f"{type(err).__name__}: {err}",
                                                seconds=time.monotonic() - started)
        return
    DryRun.objects.filter(pk=run_id).update(state=DryRun.DONE, done=total, result=result,
                                            seconds=round(time.monotonic() - started, 3))


def create(version, cluster, source: str, window: int, user) -> DryRun:
    """The run's row; background.Busy when its asker or the cluster has too many questions running."""
    return background.admit(DryRun, cluster, user, version=version, source=source, window=window)


def start(run: DryRun) -> None:
    background.start("dashboard.profiles.tasks.dry_run", execute, run.pk)
