"""Read-side queries behind the pages, the API and the websocket hello (all bounded, all indexed)."""
from __future__ import annotations

from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

from django.conf import settings
from django.core.paginator import Paginator
from django.db import connection
from django.utils import timezone
from django.db.models import BigIntegerField, Count, Func, Q, Sum
from django.db.models.fields.json import KeyTextTransform
from django.db.models.lookups import Exact

from ..models import Cluster, Node, Pod, QueueSnapshot, SchedulingCycle, SchedulingEvent
from . import rejections
from . import timewindow

PENDING_QUEUES = (Pod.ACTIVE, Pod.BACKOFF, Pod.UNSCHEDULABLE, Pod.GATED)
SORTS = {"age": ("created", "id"), "-age": ("-created", "-id"), "priority": ("-priority", "created"),
         "attempts": ("-attempts", "created"), "name": ("namespace", "name")}


def served_scheduler_names(cluster: Cluster) -> frozenset:
    """The schedulerNames the cluster's profile serves (kube's default profile: default-scheduler). A pod of
    another name is never tried: no scheduler of this cluster takes it."""
    doc = (cluster.profile.document if cluster.profile_id else None) or {}
    return frozenset((p or {}).get("schedulerName") or "default-scheduler" for p in doc.get("profiles") or [{}])


def queue_counts(cluster: Cluster | int) -> dict:
    """Pods per queue, bound ones and ``unserved``: pending pods of a schedulerName no profile serves, in no queue
    (their rows keep the queue they were created in)."""
    if not isinstance(cluster, Cluster):
        cluster = Cluster.objects.select_related("profile").get(pk=cluster)
    counts = {q: 0 for q in PENDING_QUEUES + (Pod.BOUND,)}
    for row in Pod.objects.filter(cluster=cluster).values("queue").annotate(n=Count("id")):
        counts[row["queue"]] = row["n"]
    counts["unserved"] = 0
    unserved = Pod.objects.filter(cluster=cluster, node_name="").exclude(
        scheduler_name__in=served_scheduler_names(cluster))
    for row in unserved.values("queue").annotate(n=Count("id")):
        counts[row["queue"]] -= row["n"]
        counts["unserved"] += row["n"]
    return counts


def live_counts(cluster: Cluster | int) -> dict:
    """The live numbers of a cluster (or its id): queue counts, the last snapshot's rate, the latest cycle seq."""
    snap = QueueSnapshot.objects.filter(cluster=cluster).order_by("-time").values_list("cycles_per_second",
                                                                                      flat=True).first()
    return {"queue": queue_counts(cluster), "rate": snap or 0.0, "last_cycle": latest_cycle_seq(cluster)}


def latest_cycle_seq(cluster: Cluster | int):
    """The seq of the cluster's latest recorded cycle (None if none)."""
    return SchedulingCycle.objects.filter(cluster=cluster).order_by("-seq").values_list("seq", flat=True).first()


def live_state(cluster: Cluster) -> dict:
    """What a page and a websocket's hello start from: the cluster's name and state, and its live counts."""
    return {"cluster": cluster.name, "state": cluster.desired_state, **live_counts(cluster)}


def queue_history(cluster: Cluster, limit: int = 120) -> list:
    """The latest ``limit`` queue snapshots, oldest first, for the overview's charts ({t, active, backoff,
    unschedulable, rate, p50, p99}). The loop takes one every QUEUE_SNAPSHOT_SECONDS while it runs; where two are
    more than three periods apart (the loop was stopped or down), an entry of nulls between them breaks
    the charts' lines instead of drawing one across the time nothing was measured."""
    gap = timedelta(seconds=3 * settings.SCHEDSCOPE["QUEUE_SNAPSHOT_SECONDS"])
    out, previous = [], None
    for s in reversed(cluster.queue_snapshots.order_by("-time")[:limit]):
        if previous is not None and s.time - previous > gap:
            out.append({"t": (previous + (s.time - previous) / 2).isoformat(), "active": None, "backoff": None,
                        "unschedulable": None, "rate": None, "p50": None, "p99": None})
        out.append({"t": s.time.isoformat(), "active": s.active, "backoff": s.backoff,
                    "unschedulable": s.unschedulable, "rate": s.cycles_per_second, "p50": s.p50_ms,
                    "p99": s.p99_ms})
        previous = s.time
    return out


def blocking_plugins(cluster: Cluster, limit: int = 10) -> list:
    """[(plugin, pending pods it rejected last time)] most first (aggregated in SQL on PostgreSQL)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT p, count(*) AS n FROM {Pod._meta.db_table}, "
                "unnest(string_to_array(trim(both ',' from plugins), ',')) AS p "
                "WHERE cluster_id = %s AND node_name = '' AND plugins <> '' "
                "GROUP BY p ORDER BY n DESC, p LIMIT %s", [cluster.id, limit])
            return [(p, n) for p, n in cur.fetchall()]
    counts = {}
    for plugins in (Pod.objects.filter(cluster=cluster, node_name="").exclude(plugins="")
                    .values_list("plugins", flat=True)):
        for p in plugins.split(","):
            if p:
                counts[p] = counts.get(p, 0) + 1
    return sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:limit]


def _usage_rows(cluster: Cluster, order: str, q: str) -> list:
    """Every node (whose name contains ``q``) with requested vs allocatable cpu/memory/pods, by utilisation
    (highest first) or in node order; computed from a few columns, without the Node rows."""
    used = {r["node_name"]: r for r in Pod.objects.filter(cluster=cluster).exclude(node_name="")
            .values("node_name").annotate(cpu=Sum("cpu_m"), mem=Sum("memory"), pods=Count("id"))}
    nodes = Node.objects.filter(cluster=cluster)
    if q:
        nodes = nodes.filter(name__icontains=q)
    out = []
    for pk, name, alloc in nodes.order_by("id").values_list("id", "name", "allocatable"):
        u = used.get(name, {})
        alloc = alloc or {}
        row = {"pk": pk, "name": name, "cpu": u.get("cpu") or 0, "mem": u.get("mem") or 0, "pods": u.get("pods") or 0,
               "cpu_alloc": alloc.get("cpu", 0), "mem_alloc": alloc.get("memory", 0),
               "pods_alloc": alloc.get("pods", 0)}
        row["cpu_pct"] = round(100 * row["cpu"] / row["cpu_alloc"]) if row["cpu_alloc"] else 0
        row["mem_pct"] = round(100 * row["mem"] / row["mem_alloc"]) if row["mem_alloc"] else 0
        row["pods_pct"] = round(100 * row["pods"] / row["pods_alloc"]) if row["pods_alloc"] else 0
        row["util"] = max(row["cpu_pct"], row["mem_pct"])
        out.append(row)
    if order == "util":
        out.sort(key=lambda r: (-r["util"], r["name"]))
    return out


def _with_nodes(rows: list) -> list:
    """``rows`` with their full Node rows (labels, taints) as ``node`` and their labels but the hostname (which
    repeats the name) as sorted (key, value) pairs, ``labels``; a node deleted since ``rows`` were read is dropped
    from them (in place)."""
    full = Node.objects.defer("raw").in_bulk([r["pk"] for r in rows])
    rows[:] = [r for r in rows if r["pk"] in full]
    for r in rows:
        r["node"] = full[r["pk"]]
        r["labels"] = sorted((k, v) for k, v in (r["node"].labels or {}).items() if k != "kubernetes.io/hostname")
    return rows


def node_usage(cluster: Cluster, order: str = "util", q: str = "", limit=None) -> list:
    """The first ``limit`` (all if None) rows of ``_usage_rows``, each with its Node row as ``node``."""
    rows = _usage_rows(cluster, order, q)
    return _with_nodes(rows[:limit] if limit is not None else rows)


def node_page(cluster: Cluster, order: str, q: str, page, per_page: int):
    """One page (a Django Page; past the last: the last) of ``_usage_rows``, each with its Node row."""
    found = Paginator(_usage_rows(cluster, order, q), per_page).get_page(page)
    _with_nodes(found.object_list)
    return found


def node_rejections(cluster: Cluster, node_name: str, limit: int = 100) -> dict:
    """Which pending pods this node rejected in their latest attempt, and why (kube's stopping plugin and
    reason): {"rows": [{"pod", "cycle", "plugin", "reason"}], "by_plugin": [(plugin, pods)], "checked": n}.

    Reads the latest cycles of the ``limit`` most recently tried pending pods.
    """
    seqs = list(Pod.objects.filter(cluster=cluster, node_name="", last_cycle__isnull=False)
                .order_by("-last_cycle").values_list("last_cycle", flat=True)[:limit])
    rows, by_plugin = [], {}
    for c in (SchedulingCycle.objects.filter(cluster=cluster, seq__in=seqs, result="unschedulable")
              .order_by("-seq").only("seq", "pod_namespace", "pod_name", "matrix")):
        m = c.matrix
        nodes = m.get("nodes") or ()
        try:
            i = nodes.index(node_name)
        except ValueError:
            continue
        fi = m["final"][i]
        if fi > 0:
            st = m["statuses"][fi - 1]
            stop = m["stop_plugins"][m["stopped"][i]] if m["stopped"][i] >= 0 else ""
            rows.append({"pod": c.pod_key, "cycle": c, "plugin": stop, "reason": ", ".join(st["reasons"])})
            by_plugin[stop] = by_plugin.get(stop, 0) + 1
    return {"rows": rows, "by_plugin": sorted(by_plugin.items(), key=lambda x: -x[1]), "checked": len(seqs)}


def label_filter(selector: dict) -> Q:
    """Pods whose labels include every ``key: value`` of ``selector``: JSON containment on PostgreSQL (the GIN
    index), one JSON key extraction per key elsewhere (SQLite has no containment lookup)."""
    if connection.vendor == "postgresql":
        return Q(labels__contains=selector)
    q = Q()
    for key, value in selector.items():
        q &= Q(Exact(KeyTextTransform(key, "labels"), value))
    return q


def pending_pods(cluster: Cluster, q: str = "", queue: str = "", plugin: str = "", reason: str = "",
                 sort: str = "age", page: int = 1, per_page: int = 50, namespace: str = "", labels=None,
                 attempts: int | None = None, priority: int | None = None, age: int | None = None, group=None):
    """A page of pending pods (server-side search, filters and sorting; counts use the indexes).

    ``labels``: {key: value} that every pod's labels include; ``attempts``, ``priority``: at least; ``age``:
    older than this many seconds; ``group``: (plugin, reason) pairs, the exact set of the pods' latest rejection
    (services.rejections). The values come checked (dashboard.queryforms.PendingQuery).
    """
    qs = Pod.objects.filter(cluster=cluster, node_name="")
    if q:
        ns, _, name = q.partition("/")
        qs = qs.filter(Q(namespace=ns, name__icontains=name) if name else
                       Q(name__icontains=q) | Q(namespace__icontains=q))
    if namespace:
        qs = qs.filter(namespace=namespace)
    if queue in PENDING_QUEUES:
        qs = qs.filter(queue=queue)
    if plugin:
        qs = qs.filter(plugins__contains=f",{plugin},")
    if reason:
        qs = qs.filter(reason=reason)
    if group:
        qs = qs.filter(rejections.in_group(cluster, group))
    if labels:
        qs = qs.filter(label_filter(labels))
    if attempts is not None:
        qs = qs.filter(attempts__gte=attempts)
    if priority is not None:
        qs = qs.filter(priority__gte=priority)
    if age:
        qs = qs.filter(created__lte=timezone.now() - timedelta(seconds=age))
    qs = qs.order_by(*SORTS.get(sort, SORTS["age"])).only(
        "uid", "namespace", "name", "priority", "queue", "attempts", "reason", "plugins", "created",
        "cpu_m", "memory", "last_cycle", "labels")
    return Paginator(qs, per_page).get_page(page)


def pending_namespaces(cluster: Cluster, limit: int = 200) -> list:
    return list(Pod.objects.filter(cluster=cluster, node_name="").values_list("namespace", flat=True)
                .distinct().order_by("namespace")[:limit])


def cycles_of_pod(cluster: Cluster, namespace: str, name: str) -> list:
    """Every recorded cycle of the pods of that name, newest first, with the columns of the attempt timeline."""
    return list(SchedulingCycle.objects.filter(cluster=cluster, pod_namespace=namespace, pod_name=name)
                .order_by("-seq").only("seq", "pod_uid", "attempt", "started", "result", "node", "message",
                                       "duration_ms", "failing_plugins"))


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


class EpochBucket(Func):
    """The bucket number of a time: whole ``width``-second intervals since the Unix epoch (PostgreSQL, SQLite)."""

    output_field = BigIntegerField()

    def __init__(self, expression, width: int):
        super().__init__(expression)
        self.width = int(width)

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"FLOOR(EXTRACT(EPOCH FROM {sql}) / %s)::bigint", (*params, self.width)

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(CAST(strftime('%%s', {sql}) AS INTEGER) / %s)", (*params, self.width)


def filter_events(cluster: Cluster, params, start, end):
    """The cluster's events in [start, end] by the events page's filters: pod (namespace/name prefix, or a name
    prefix), namespace, node, reason."""
    qs = SchedulingEvent.objects.filter(cluster=cluster, time__gte=start, time__lte=end)
    pod = params.get("pod", "")
    if pod:
        ns, _, name = pod.partition("/")
        qs = qs.filter(pod_namespace=ns, pod_name__startswith=name) if name else qs.filter(pod_name__startswith=pod)
    if params.get("namespace"):
        qs = qs.filter(pod_namespace=params["namespace"])
    if params.get("node"):
        qs = qs.filter(node=params["node"])
    if params.get("reason"):
        qs = qs.filter(reason=params["reason"])
    return qs


def event_histogram(qs, start, end, width: int) -> dict:
    """Events of ``qs`` per ``width``-second bucket by reason, every bucket of [start, end] present (empty ones
    as zeros): {"buckets": [ISO start of each], "reasons": [...], "series": {reason: [count per bucket]},
    "bucket_seconds": width}."""
    first, last = int(start.timestamp()) // width, int(end.timestamp()) // width
    counts, reasons = {}, set()
    for row in qs.annotate(b=EpochBucket("time", width)).values("b", "reason").annotate(n=Count("id")):
        reasons.add(row["reason"])
        counts[(row["b"], row["reason"])] = row["n"]
    numbers = range(first, last + 1)
    return {"buckets": [datetime.fromtimestamp(b * width, dt_timezone.utc).isoformat().replace("+00:00", "Z")
                        for b in numbers],
            "reasons": sorted(reasons), "series": {r: [counts.get((b, r), 0) for b in numbers] for r in sorted(reasons)},
            "bucket_seconds": width}


def default_window(cluster: Cluster, now: datetime) -> timedelta:
    """The events page's and timeline's window when none is asked: one that fits a young cluster's history."""
    oldest = SchedulingEvent.objects.filter(cluster=cluster).order_by("time").values_list("time", flat=True).first()
    return timewindow.default_window(oldest, now)


def events_page(cluster: Cluster, params, per_page: int = 100) -> dict:
    """Stored events in a time window, filtered by pod, node, namespace and reason, newest first, paged; with the
    histogram by reason (services.timewindow chooses the bucket width). ``params``: checked values
    (dashboard.queryforms.EventsQuery): window (a timedelta; default ``default_window``), until (an aware
    datetime; default now), pod, node, namespace, reason, page."""
    now = timezone.now()
    window = params.get("window") or default_window(cluster, now)
    start, end = timewindow.bounds(window, params.get("until"), now)
    qs = filter_events(cluster, params, start, end)
    page = Paginator(qs.order_by("-time", "-id"), per_page).get_page(params.get("page", 1))
    return {"page": page, "start": start, "end": end, "window": timewindow.format_window(window),
            "chart": event_histogram(qs, start, end, timewindow.bucket_seconds(window)),
            "all_reasons": list(SchedulingEvent.objects.filter(cluster=cluster).values_list("reason", flat=True)
                                .distinct().order_by("reason")[:50])}
