"""Read-side queries behind the pages, the API and the websocket hello (all bounded, all indexed)."""
from __future__ import annotations

from django.core.paginator import Paginator
from django.db.models import Count, Q, Sum

from ..models import Cluster, Node, Pod, QueueSnapshot, SchedulingCycle

PENDING_QUEUES = (Pod.ACTIVE, Pod.BACKOFF, Pod.UNSCHEDULABLE, Pod.GATED)
SORTS = {"age": ("created", "id"), "-age": ("-created", "-id"), "priority": ("-priority", "created"),
         "attempts": ("-attempts", "created"), "name": ("namespace", "name")}


def queue_counts(cluster: Cluster) -> dict:
    counts = {q: 0 for q in PENDING_QUEUES + (Pod.BOUND,)}
    for row in Pod.objects.filter(cluster=cluster).values("queue").annotate(n=Count("id")):
        counts[row["queue"]] = row["n"]
    return counts


def live_state(cluster: Cluster) -> dict:
    """What a websocket client gets first: counts, the last queue snapshot and the latest cycle seq."""
    snap = QueueSnapshot.objects.filter(cluster=cluster).order_by("-time").first()
    last = SchedulingCycle.objects.filter(cluster=cluster).order_by("-seq").values_list("seq", flat=True).first()
    return {"cluster": cluster.name, "state": cluster.desired_state, "queue": queue_counts(cluster),
            "rate": snap.cycles_per_second if snap else 0.0, "last_cycle": last}


def blocking_plugins(cluster: Cluster, limit: int = 10) -> list:
    """[(plugin, pending pods it rejected last time)] most first."""
    counts = {}
    for plugins in (Pod.objects.filter(cluster=cluster, node_name="").exclude(plugins="")
                    .values_list("plugins", flat=True)):
        for p in plugins.split(","):
            if p:
                counts[p] = counts.get(p, 0) + 1
    return sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:limit]


def blocking_reasons(cluster: Cluster, limit: int = 10) -> list:
    """[{"reason", "n"}]: pending pods grouped by their latest FitError message."""
    return list(Pod.objects.filter(cluster=cluster, node_name="").exclude(reason="")
                .values("reason").annotate(n=Count("id")).order_by("-n", "reason")[:limit])


def node_usage(cluster: Cluster, order: str = "util", q: str = "") -> list:
    """Nodes with requested vs allocatable cpu/memory/pods, by utilisation (highest first)."""
    used = {r["node_name"]: r for r in Pod.objects.filter(cluster=cluster).exclude(node_name="")
            .values("node_name").annotate(cpu=Sum("cpu_m"), mem=Sum("memory"), pods=Count("id"))}
    nodes = Node.objects.filter(cluster=cluster)
    if q:
        nodes = nodes.filter(name__icontains=q)
    out = []
    for n in nodes.order_by("id"):
        u = used.get(n.name, {})
        alloc = n.allocatable or {}
        row = {"node": n, "cpu": u.get("cpu") or 0, "mem": u.get("mem") or 0, "pods": u.get("pods") or 0,
               "cpu_alloc": alloc.get("cpu", 0), "mem_alloc": alloc.get("memory", 0),
               "pods_alloc": alloc.get("pods", 0)}
        row["cpu_pct"] = round(100 * row["cpu"] / row["cpu_alloc"]) if row["cpu_alloc"] else 0
        row["mem_pct"] = round(100 * row["mem"] / row["mem_alloc"]) if row["mem_alloc"] else 0
        row["util"] = max(row["cpu_pct"], row["mem_pct"])
        out.append(row)
    if order == "util":
        out.sort(key=lambda r: (-r["util"], r["node"].name))
    return out


def pending_pods(cluster: Cluster, q: str = "", queue: str = "", plugin: str = "", reason: str = "",
                 sort: str = "age", page: int = 1, per_page: int = 50):
    """A page of pending pods (server-side search, filters and sorting)."""
    qs = Pod.objects.filter(cluster=cluster, node_name="")
    if q:
        ns, _, name = q.partition("/")
        qs = qs.filter(Q(namespace=ns, name__icontains=name) if name else
                       Q(name__icontains=q) | Q(namespace__icontains=q))
    if queue in PENDING_QUEUES:
        qs = qs.filter(queue=queue)
    if plugin:
        qs = qs.filter(plugins__contains=f",{plugin},")
    if reason:
        qs = qs.filter(reason=reason)
    qs = qs.order_by(*SORTS.get(sort, SORTS["age"])).only(
        "uid", "namespace", "name", "priority", "queue", "attempts", "reason", "plugins", "created",
        "cpu_m", "memory", "last_cycle")
    return Paginator(qs, per_page).get_page(page)


def cycles_of_pod(cluster: Cluster, namespace: str, name: str, limit: int = 200) -> list:
    return list(SchedulingCycle.objects.filter(cluster=cluster, pod_namespace=namespace, pod_name=name)
                .order_by("-seq").defer("matrix", "durations")[:limit])


def filter_cycles(qs, params):
    """Cycle filters shared by the API and pages: pod (ns/name or uid), node, plugin, result, since, until."""
    pod = params.get("pod")
    if pod:
        ns, _, name = pod.partition("/")
        qs = qs.filter(pod_namespace=ns, pod_name=name) if name else qs.filter(pod_uid=pod)
    if params.get("node"):
        qs = qs.filter(node=params["node"])
    if params.get("plugin"):
        qs = qs.filter(failing_plugins__has_key=params["plugin"])
    if params.get("result"):
        qs = qs.filter(result=params["result"])
    if params.get("since"):
        qs = qs.filter(started__gte=params["since"])
    if params.get("until"):
        qs = qs.filter(started__lt=params["until"])
    return qs
