"""Heavy questions (what-ifs, dry runs) cannot slow another team: at most 3 per asker and 6 per cluster wait or
run at once, with a clear answer beyond; they run on a queue and worker of their own (embedded: a niced thread
pool), and a flood of them leaves another cluster's bind latency within 20% of idle."""
from __future__ import annotations

import os
import signal
import statistics
import threading
import time
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from dashboard.models import Cluster, Pod, WhatIfRun
from dashboard.profiles.models import DryRun
from dashboard.services import background, whatif
from dashboard.services import clusters as svc

from .conftest import api_client, load_cluster, make_user, page_client, small_scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

WEB = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "c:1",
                               "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def _running(cluster, user, n):
    """``n`` questions of ``user`` about ``cluster`` admitted and running (no task started)."""
    for _ in range(n):
        run = whatif.create(cluster, "drain", {"nodes": ["n-0"]}, user)
        WhatIfRun.objects.filter(pk=run.pk).update(state=WhatIfRun.RUNNING)


def test_three_questions_per_asker_and_six_per_cluster(api):
    cluster = load_cluster(api, small_scenario(2))
    ed, other, third = make_user("ed", "editor"), make_user("other", "editor"), make_user("third", "editor")
    _running(cluster, ed, 3)
    refused = api_client(ed).post(f"/api/clusters/{cluster.name}/whatif/", {"kind": "drain", "nodes": ["n-0"]},
                                  format="json")
    assert refused.status_code == 429
    assert refused.json()["detail"].startswith("3 questions of yours are running (at most 3 at a time)")
    page = page_client(ed).post(f"/clusters/{cluster.name}/whatif/", {"kind": "drain", "nodes": "n-0"})
    assert page.status_code == 200 and "3 questions of yours are running" in page.content.decode()
    assert WhatIfRun.objects.count() == 3
    # another asker still may, until the cluster has 6
    _running(cluster, other, 3)
    refused = api_client(third).post(f"/api/clusters/{cluster.name}/whatif/", {"kind": "drain", "nodes": ["n-0"]},
                                     format="json")
    assert refused.status_code == 429
    assert refused.json()["detail"].startswith("6 questions about cluster small are running (at most 6 at a time)")
    # dry runs count with what-ifs
    from dashboard.profiles import services as profiles
    from dashboard.models import SchedulerProfile
    profile = SchedulerProfile.objects.create(name="p", document={})
    version = profiles.ensure_versions(profile)
    resp = page_client(third).post(f"/profiles/p/v/{version.number}/dry-run/", {"cluster": cluster.name},
                                   follow=True)
    assert "6 questions about cluster small are running" in resp.content.decode()
    assert not DryRun.objects.exists()
    # one finished, one forgotten by a dead worker long ago: room again
    WhatIfRun.objects.filter(pk=WhatIfRun.objects.filter(author=ed).earliest("pk").pk).update(state=WhatIfRun.DONE)
    WhatIfRun.objects.filter(pk=WhatIfRun.objects.filter(author=other).earliest("pk").pk).update(
        created=timezone.now() - timedelta(hours=2))
    assert whatif.create(cluster, "drain", {"nodes": ["n-0"]}, ed).state == WhatIfRun.QUEUED
    with pytest.raises(background.Busy, match="3 questions of yours"):
        whatif.create(cluster, "drain", {"nodes": ["n-0"]}, ed)
    assert whatif.create(cluster, "drain", {"nodes": ["n-0"]}, third).state == WhatIfRun.QUEUED


def test_questions_asked_at_once_do_not_pass_the_limit_together(api):
    cluster = load_cluster(api, small_scenario(2))
    ed = make_user("ed", "editor")
    barrier, outcomes = threading.Barrier(8), []

    def ask():
        from django.db import connection
        try:
            barrier.wait()
            whatif.create(cluster, "drain", {"nodes": ["n-0"]}, ed)
            outcomes.append("admitted")
        except background.Busy:
            outcomes.append("busy")
        finally:
            connection.close()
    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["admitted"] * 3 + ["busy"] * 5
    assert WhatIfRun.objects.filter(author=ed).count() == 3


def test_embedded_questions_run_in_a_niced_pool():
    seen = []
    done = threading.Event()

    def execute(pk):
        seen.append((pk, threading.current_thread().name, os.getpriority(os.PRIO_PROCESS, 0),
                     os.sched_getscheduler(0)))
        done.set()
    with override_settings(SCHEDULER_MODE="thread"):
        background.start("unused", execute, 7)
    assert done.wait(10)
    pk, name, nice, policy = seen[0]
    assert pk == 7 and name.startswith("question") and policy == os.SCHED_IDLE
    assert nice >= os.getpriority(os.PRIO_PROCESS, 0) + 10 or nice == 19


def test_a_questions_worker_runs_at_the_lowest_priority(worker_factory):
    """A worker of the questions queue alone lowers itself and its pool: SCHED_IDLE, and its session's scheduling
    group (Linux's autogroup, which weighs a session as much as any other whatever its processes' policy) at
    nice 19; a worker that also serves the loops does not."""
    def lowered(pid: int) -> bool:
        if os.path.exists(f"/proc/{pid}/autogroup"):
            with open(f"/proc/{pid}/autogroup") as f:
                if not f.read().strip().endswith("nice 19"):
                    return False
        return os.sched_getscheduler(pid) == os.SCHED_IDLE

    def pool(pid: int) -> list[int]:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    questions = worker_factory(queues="questions", pool="prefork", concurrency=1)
    wait_for(lambda: lowered(questions.proc.pid) and pool(questions.proc.pid), 60, 0.1,
             "the questions worker lowered, with its pool")
    assert all(lowered(child) for child in pool(questions.proc.pid))
    both = worker_factory(queues="celery,questions")
    assert not lowered(both.proc.pid)


def _bind_latencies(cluster, prefix: str, n: int) -> list[float]:
    """Seconds from a pod's creation to its binding by the live loop, for ``n`` pods created one after another."""
    out = []
    for i in range(n):
        name = f"{prefix}-{i}"
        started = time.monotonic()
        svc.add_pod(cluster, {"metadata": {"name": name, "namespace": "default", "uid": name},
                              "spec": WEB["spec"]})
        wait_for(lambda: Pod.objects.filter(cluster=cluster, name=name, queue="bound").exists(), 30, 0.005,
                 f"pod {name} bound")
        out.append(time.monotonic() - started)
    return out


def test_a_flood_of_questions_leaves_another_clusters_bind_latency(api, worker_factory):
    """Cluster "small" of one team gets as many heavy capacity questions as its editors may ask; cluster "quiet"
    of another team binds pods meanwhile. Idle and flooded rounds alternate (the questions' worker stopped with
    SIGSTOP, then let go) pod by pod, so that the machine's other load falls on both alike; the medians are
    compared."""
    worker_factory(queues="celery")
    questions = worker_factory(queues="questions", pool="prefork", concurrency=2, idle=True)  # as docker-compose.yml
    alloc = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    flooded = load_cluster(api, {"name": "flooded", "pods": [], "pending": [], "nodes": [
        {"metadata": {"name": f"n-{i}", "labels": {"topology.kubernetes.io/zone": "abc"[i % 3]}},
         "status": {"capacity": alloc, "allocatable": alloc}} for i in range(200)]})
    quiet_scenario = dict(small_scenario(0), name="quiet")
    quiet = load_cluster(api, quiet_scenario)
    svc.set_state(quiet, Cluster.RUNNING)
    _bind_latencies(quiet, "warm", 5)
    editors = [make_user(f"ed{i}", "editor") for i in range(2)]
    for ed in editors:
        for _ in range(3):
            r = api_client(ed).post(f"/api/clusters/{flooded.name}/whatif/",
                                    {"kind": "capacity", "manifest": WEB, "max_copies": 10000}, format="json")
            assert r.status_code == 202, r.content
    refused = api_client(editors[0]).post(f"/api/clusters/{flooded.name}/whatif/",
                                          {"kind": "capacity", "manifest": WEB, "max_copies": 10000}, format="json")
    assert refused.status_code == 429
    # the questions' worker is at the lowest priority: on a busy machine it takes its time to start them
    wait_for(lambda: WhatIfRun.objects.filter(state=WhatIfRun.RUNNING).count() == 2, 300, 0.1,
             "two questions running")
    idle, flood = [], []
    group = os.getpgid(questions.proc.pid)
    try:
        for i in range(60):
            os.killpg(group, signal.SIGSTOP)
            idle += _bind_latencies(quiet, f"idle{i}", 1)
            os.killpg(group, signal.SIGCONT)
            flood += _bind_latencies(quiet, f"flood{i}", 1)
    finally:
        os.killpg(group, signal.SIGCONT)
    still = WhatIfRun.objects.filter(state=WhatIfRun.RUNNING).count()
    idle_median, flood_median = statistics.median(idle), statistics.median(flood)
    print(f"bind latency: idle median {idle_median * 1000:.1f} ms, during the questions {flood_median * 1000:.1f} ms"
          f" ({len(idle)} and {len(flood)} binds; quartiles {statistics.quantiles(idle)} and "
          f"{statistics.quantiles(flood)}); questions still running at the end: {still}")
    assert still >= 1, "the questions ended before the measurement did: ask heavier ones"
    assert flood_median <= 1.2 * idle_median
    svc.set_state(quiet, Cluster.STOPPED)
