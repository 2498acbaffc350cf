"""Server-rendered pages (thin: the data comes from services.queries and services.traceview)."""
from __future__ import annotations

from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from prometheus_client import generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .models import Cluster, Node, Pod, SchedulingCycle, SchedulingEvent
from .services import clusters as svc
from .services import metrics, queries, traceview


def index(request):
    clusters = list(Cluster.objects.order_by("name"))
    if len(clusters) == 1:
        return redirect("overview", name=clusters[0].name)
    return render(request, "dashboard/index.html", {"clusters": clusters})


def overview(request, name):
    cluster = get_object_or_404(Cluster, name=name)
    return render(request, "dashboard/overview.html", {
        "cluster": cluster, "live": queries.live_state(cluster),
        "plugins": queries.blocking_plugins(cluster), "reasons": queries.blocking_reasons(cluster),
        "nodes": queries.node_usage(cluster)[:15],
        "events": SchedulingEvent.objects.filter(cluster=cluster).order_by("-time", "-id")[:15],
        "snapshot_data": [{"t": s.time.isoformat(), "active": s.active, "backoff": s.backoff,
                           "unschedulable": s.unschedulable, "rate": s.cycles_per_second}
                          for s in reversed(cluster.queue_snapshots.order_by("-time")[:120])],
    })


@require_POST
def control(request, name, op):
    cluster = get_object_or_404(Cluster, name=name)
    states = {"start": Cluster.RUNNING, "pause": Cluster.PAUSED, "stop": Cluster.STOPPED}
    if op in states:
        svc.set_state(cluster, states[op])
    elif op == "step":
        svc.step(cluster, 1)
    else:
        raise Http404(op)
    return redirect(request.POST.get("next") or reverse("overview", args=[name]))


def pending(request, name):
    cluster = get_object_or_404(Cluster, name=name)
    p = request.GET
    page = queries.pending_pods(cluster, q=p.get("q", ""), queue=p.get("queue", ""), plugin=p.get("plugin", ""),
                                reason=p.get("reason", ""), sort=p.get("sort", "age"), page=p.get("page", 1))
    params = p.copy()
    params.pop("page", None)
    return render(request, "dashboard/pending.html", {
        "cluster": cluster, "page": page, "params": params.urlencode(), "f": p,
        "queues": queries.PENDING_QUEUES, "plugins": queries.blocking_plugins(cluster, 30),
        "reasons": queries.blocking_reasons(cluster, 8), "counts": queries.queue_counts(cluster)})


def pod(request, name, namespace, pod_name):
    cluster = get_object_or_404(Cluster, name=name)
    pod_row = Pod.objects.filter(cluster=cluster, namespace=namespace, name=pod_name).first()
    cycles = queries.cycles_of_pod(cluster, namespace, pod_name)
    if pod_row is None and not cycles:
        raise Http404(f"{namespace}/{pod_name}")
    seq = request.GET.get("cycle")
    chosen = None
    if seq and seq.isdigit():
        chosen = SchedulingCycle.objects.filter(cluster=cluster, seq=int(seq), pod_namespace=namespace,
                                                pod_name=pod_name).first()
    elif cycles:
        chosen = SchedulingCycle.objects.get(pk=cycles[0].pk)
    ctx = {"cluster": cluster, "pod": pod_row, "key": f"{namespace}/{pod_name}", "cycles": cycles, "cycle": chosen,
           "events": SchedulingEvent.objects.filter(cluster=cluster, pod_namespace=namespace,
                                                    pod_name=pod_name).order_by("-time", "-id")[:50]}
    if chosen is not None:
        ctx["filter"] = traceview.filter_matrix(chosen.matrix, group=request.GET.get("group", "1") != "0")
        ctx["score"] = traceview.score_table(chosen.matrix, chosen.node)
        ctx["durations"] = traceview.durations(chosen.durations)
        ctx["prefilter"] = (chosen.matrix.get("prefilter") or {}).get("plugins") or {}
    return render(request, "dashboard/pod.html", ctx)


def nodes(request, name):
    cluster = get_object_or_404(Cluster, name=name)
    rows = queries.node_usage(cluster, order=request.GET.get("sort", "util"), q=request.GET.get("q", ""))
    return render(request, "dashboard/nodes.html", {"cluster": cluster, "rows": rows, "f": request.GET})


def node(request, name, node_name):
    cluster = get_object_or_404(Cluster, name=name)
    node_row = get_object_or_404(Node, cluster=cluster, name=node_name)
    usage = next(r for r in queries.node_usage(cluster, q=node_name) if r["node"].pk == node_row.pk)
    pods = Pod.objects.filter(cluster=cluster, node_name=node_name).order_by("namespace", "name")[:500]
    rejects = (SchedulingCycle.objects.filter(cluster=cluster, result="unschedulable")
               .order_by("-seq").defer("durations")[:200])
    rejected = []
    for c in rejects:
        m = c.matrix
        if node_name in (m.get("nodes") or ()):
            i = m["nodes"].index(node_name)
            fi = m["final"][i]
            if fi > 0:
                st = m["statuses"][fi - 1]
                stop = m["stop_plugins"][m["stopped"][i]] if m["stopped"][i] >= 0 else ""
                rejected.append({"cycle": c, "plugin": stop, "reason": ", ".join(st["reasons"])})
    by_plugin = {}
    for r in rejected:
        by_plugin[r["plugin"]] = by_plugin.get(r["plugin"], 0) + 1
    return render(request, "dashboard/node.html", {
        "cluster": cluster, "n": node_row, "usage": usage, "pods": pods, "rejected": rejected[:50],
        "by_plugin": sorted(by_plugin.items(), key=lambda x: -x[1])})


def metrics_view(request):
    """Prometheus text format: kube-scheduler's metrics of this process, plus pending pods from the database."""
    for cluster in Cluster.objects.all():
        counts = {r["queue"]: r["n"] for r in Pod.objects.filter(cluster=cluster, node_name="")
                  .values("queue").annotate(n=Count("id"))}
        for q in queries.PENDING_QUEUES:
            metrics.PENDING_PODS.labels(cluster.name, q).set(counts.get(q, 0))
    return HttpResponse(generate_latest(metrics.REGISTRY), content_type=CONTENT_TYPE_LATEST)
