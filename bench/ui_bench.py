"""Server time of the UI's pages and API at scale: 5,000 nodes, 50,000 pending pods with a cycle and an
event each, and one pod whose cycles carry the full 5,000-node x 13-plugin Filter matrix and Score table
(stored in the column form of a full trace, read back through its node list).

Rows are generated directly in their stored form (COPY for the cycles), into a scratch PostgreSQL
database (default postgres://postgres@127.0.0.1:5432/schedscope_uibench, created if missing); each URL is
requested --repeat times through Django's test client (full view + template rendering, no network) and
the median and worst milliseconds are printed as one JSON object.

    python bench/ui_bench.py --nodes 5000 --pods 50000
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.recorder_bench import django_on  # noqa: E402

FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
           "VolumeRestrictions", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding", "VolumeZone",
           "PodTopologySpread", "InterPodAffinity"]
SCORES = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("PodTopologySpread", 2),
          ("InterPodAffinity", 2), ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)]
REASONS = [("NodeResourcesFit", "Insufficient cpu"), ("TaintToleration", "node(s) had untolerated taint {gpu: true}"),
           ("NodeAffinity", "node(s) didn't match Pod's node affinity/selector"),
           ("PodTopologySpread", "node(s) didn't match pod topology spread constraints")]


def big_matrix(nodes: list, rng, scheduled: bool) -> dict:
    """A stored (tracecodec) matrix of one cycle over every node."""
    statuses = [{"code": "Unschedulable", "reasons": [r]} for _p, r in REASONS]
    stop_plugins = [p for p, _r in REASONS]
    cells, final, stopped, feasible = [], [], [], []
    for i, _n in enumerate(nodes):
        k = i % 7
        row = [0] * len(FILTERS)
        if k < 4 or not scheduled:
            j = k % 4
            row[FILTERS.index(REASONS[j][0])] = j + 1
            final.append(j + 1)
            stopped.append(j)
        else:
            final.append(0)
            stopped.append(-1)
            feasible.append(nodes[i])
        cells.append(row)
    m = {"nodes": nodes, "filter_plugins": FILTERS, "statuses": statuses, "filter": cells, "final": final,
         "stop_plugins": stop_plugins, "stopped": stopped, "prefilter": None, "feasible": feasible,
         "top_nodes": feasible[:1], "prescore_skip": [], "unschedulable_plugins": stop_plugins}
    if feasible:
        raw = [[rng.randrange(0, 100) for _ in feasible] for _ in SCORES]
        m["score"] = {"nodes": feasible, "plugins": [p for p, _w in SCORES], "weights": [w for _p, w in SCORES],
                      "raw": raw, "normalized": raw,
                      "totals": [sum(raw[j][i] * SCORES[j][1] for j in range(len(SCORES))) for i in range(len(feasible))]}
    else:
        m["suggestions"] = [{"kind": "resources", "text": "node n-00012 lacks 300m cpu; freeing it would fit",
                             "nodes": ["n-00012"], "change": {}, "fits": ["n-00012"], "adds_node": False,
                             "num_fits": 1, "still_blocked": {}}]
    return m


def as_columns(m: dict) -> tuple:
    """(the column form, its NodeList) of a row-form matrix whose nodes are in row order and all visited: what
    the recorder stores for a full trace (tracecodec)."""
    from dashboard.models import NodeList
    from dashboard.services.tracecodec import COLUMNS, NodeLists, _ranges
    nodes = m["nodes"]
    row = {name: r for r, name in enumerate(nodes)}
    lists = NodeLists()
    key, _rows = lists.get(nodes)
    out = {k: v for k, v in m.items() if k not in ("nodes", "filter", "final", "stopped", "feasible", "score")}
    out.update(format=COLUMNS, node_list=key, evaluated=[[0, len(nodes)]],
               columns=[[cells[j] for cells in m["filter"]] for j in range(len(m["filter_plugins"]))],
               final=m["final"], stopped=m["stopped"], feasible=_ranges(sorted(row[x] for x in m["feasible"])))
    if "score" in m:
        score = dict(m["score"])
        score["rows"] = _ranges([row[x] for x in score.pop("nodes")])
        out["score"] = score
    return out, NodeList(key=key, names=lists.take_used()[key], last_used=datetime.now(timezone.utc))


def seed(cluster, n_nodes: int, n_pods: int, rng) -> None:
    from dashboard.models import Node, NodeList, Pod, SchedulingEvent
    from dashboard.services.recorder import insert_cycles
    from django.db import connection, transaction
    now = datetime.now(timezone.utc)
    names = [f"n-{i:05d}" for i in range(n_nodes)]
    Node.objects.bulk_create([Node(cluster=cluster, name=n, zone=f"zone-{i % 3}", labels={"zone": f"zone-{i % 3}"},
                                   allocatable={"cpu": 16000, "memory": 64 << 30, "pods": 110}, raw={})
                              for i, n in enumerate(names)], batch_size=5000)
    queues = ["unschedulable"] * 6 + ["backoff"] * 2 + ["active", "gated"]
    pods, cycles, events = [], [], []
    for i in range(n_pods):
        p, reason = REASONS[i % len(REASONS)]
        ns = f"team-{i % 40}"
        msg = f"0/{n_nodes} nodes are available: {n_nodes} {reason}. preemption: 0/{n_nodes} nodes are available."
        pods.append(Pod(cluster=cluster, uid=f"uid-{i}", namespace=ns, name=f"pod-{i}",
                        labels={"app": f"app-{i % 200}", "tier": ["web", "db", "batch"][i % 3]},
                        priority=rng.choice([0, 0, 100, 1000]), queue=queues[i % len(queues)],
                        attempts=rng.randrange(1, 30), reason=msg, plugins=f",{p},", last_cycle=i + 1, raw={},
                        cpu_m=500, memory=1 << 30))
        started = now - timedelta(seconds=rng.randrange(0, 3600))
        cycles.append({"cluster_id": cluster.id, "seq": i + 1, "pod_uid": f"uid-{i}", "pod_namespace": ns,
                       "pod_name": f"pod-{i}", "profile": "default-scheduler", "attempt": 1, "started": started,
                       "result": "unschedulable", "node": "", "message": msg, "num_nodes": n_nodes,
                       "num_feasible": 0, "duration_ms": 3.0, "durations": {"total": 3.0, "Filter": 2.0},
                       "failing_plugins": {p: n_nodes}, "failing_reasons": {reason: n_nodes},
                       "matrix": {"nodes": [], "statuses": []}, "preemption": None})
        events.append(SchedulingEvent(cluster=cluster, time=started, type="Warning", reason="FailedScheduling",
                                      pod_uid=f"uid-{i}", pod_namespace=ns, pod_name=f"pod-{i}", message=msg,
                                      cycle_seq=i + 1))
    with transaction.atomic():
        Pod.objects.bulk_create(pods, batch_size=5000)
        for k in range(0, len(cycles), 5000):
            insert_cycles(cycles[k:k + 5000])
        SchedulingEvent.objects.bulk_create(events, batch_size=5000)
        with connection.cursor() as cur:  # created is auto_now_add: spread the ages over a day afterwards
            cur.execute("UPDATE dashboard_pod SET created = now() - (id %% 86400) * interval '1 second' "
                        "WHERE cluster_id = %s", [cluster.id])
    # the pod under the microscope: two full-size attempts (failed, then scheduled)
    base = {"cluster_id": cluster.id, "pod_uid": "uid-0", "pod_namespace": "team-0", "pod_name": "pod-0",
            "profile": "default-scheduler", "num_nodes": n_nodes, "duration_ms": 40.0,
            "durations": {"total": 40.0, "Filter": 30.0, "Score": 8.0, "Filter/NodeResourcesFit": 9.0},
            "failing_plugins": {p: n_nodes // 4 for p, _r in REASONS}, "failing_reasons": {}, "preemption": None}
    failed, node_list = as_columns(big_matrix(names, rng, scheduled=False))
    ok, _same = as_columns(big_matrix(names, rng, scheduled=True))
    NodeList.objects.filter(key=node_list.key).delete()
    node_list.save()
    with transaction.atomic():  # insert_cycles' COPY table lives until the commit
        insert_cycles([dict(base, seq=n_pods + 1, attempt=2, started=now - timedelta(seconds=5), result="unschedulable",
                            node="", message=f"0/{n_nodes} nodes are available", num_feasible=0, matrix=failed),
                       dict(base, seq=n_pods + 2, attempt=3, started=now, result="scheduled", node=ok["top_nodes"][0],
                            message="", num_feasible=n_nodes * 3 // 7, matrix=ok)])


def timed(client, url: str, repeat: int, expect: str = "") -> dict:
    """Median and worst server time of ``url``; ``expect`` must be in the page (it rendered what we time)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = client.get(url, HTTP_HOST="127.0.0.1")
        times.append((time.perf_counter() - t0) * 1000)
        assert r.status_code == 200, (url, r.status_code)
        assert expect in r.content.decode(), (url, expect)
    return {"median_ms": round(statistics.median(times), 1), "max_ms": round(max(times), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL",
                                                             "postgres://postgres@127.0.0.1:5432/schedscope_uibench"))
    args = ap.parse_args()
    django_on(args.database_url)
    from django.db import connection
    from django.contrib.auth.models import User
    from django.test import Client

    from dashboard.models import Cluster
    Cluster.objects.filter(name="uibench").delete()
    cluster = Cluster.objects.create(name="uibench")
    t0 = time.perf_counter()
    seed(cluster, args.nodes, args.pods, random.Random(1))
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    seeded = time.perf_counter() - t0
    c = Client()  # every page and API call needs a signed-in user
    c.force_login(User.objects.filter(username="uibench").first() or User.objects.create_user("uibench"))
    s, ok_seq = args.pods + 1, args.pods + 2
    n = args.nodes
    urls = {
        "pending list": ("/clusters/uibench/pending/", "pod-"),
        "pending, page 500": ("/clusters/uibench/pending/?page=500", "page 500 of"),
        "pending, plugin + sort attempts": ("/clusters/uibench/pending/?plugin=TaintToleration&sort=attempts", "untolerated"),
        "pending, labels": ("/clusters/uibench/pending/?labels=app%3Dapp-7,tier%3Ddb", "pod-"),
        "pending, search": ("/clusters/uibench/pending/?q=pod-4999", "pod-4999"),
        "pending, namespace+priority+age": ("/clusters/uibench/pending/?namespace=team-3&priority=100&age=3600", "team-3/"),
        "pod page, 5000-node matrix (failed)": (f"/clusters/uibench/pods/team-0/pod-0/?cycle={s}", f"{n} nodes in 4 rows"),
        "pod page, 5000-node matrix, one row per node": (f"/clusters/uibench/pods/team-0/pod-0/?cycle={s}&group=0", f"{n} nodes in {n} rows"),
        "pod page, scheduled, score table": (f"/clusters/uibench/pods/team-0/pod-0/?cycle={ok_seq}", "ranks page 1 of"),
        "pod page, diff of two 5000-node attempts": (f"/clusters/uibench/pods/team-0/pod-0/?cycle={ok_seq}&diff={s}", "changed)"),
        "API cycle with its 5000-node matrix": (f"/api/clusters/uibench/cycles/{s}/", "filter_plugins"),
        "pod page, small pod": ("/clusters/uibench/pods/team-7/pod-47/", "FailedScheduling"),
        "events page (last hour)": ("/clusters/uibench/events/", "FailedScheduling"),
        "overview": ("/clusters/uibench/", "Top blocking plugins"),
        "API pods": ("/api/clusters/uibench/pods/", "pod-"),
        "API cycles, plugin filter": ("/api/clusters/uibench/cycles/?plugin=NodeAffinity", "NodeAffinity"),
    }
    out = {"bench": "ui", "nodes": args.nodes, "pending_pods": args.pods, "seed_seconds": round(seeded, 1),
           "repeat": args.repeat, "pages": {}}
    for label, (url, expect) in urls.items():
        out["pages"][label] = timed(c, url, args.repeat, expect)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
