"""Two workers for the same cluster: one schedules, the other stands by; kill the first and time the takeover."""
from __future__ import annotations

import re
import time
from datetime import datetime

import pytest

from dashboard.models import Cluster, Pod, SchedulingCycle
from dashboard.services import clusters as svc

from .conftest import check_invariants, scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)
TTL = 3.0
STAMP = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): \w+/MainProcess\] "
                   r"cluster failover: scheduler loop (started|stopped)")


def _loops(text):
    return [(datetime.strptime(t, "%Y-%m-%d %H:%M:%S,%f").timestamp(), what) for t, what in STAMP.findall(text)]


def test_two_workers_one_leader(workers):
    cluster = Cluster.objects.create(name="failover", tie_break="random")
    svc.load_scenario(cluster, scenario(100, 2500), "faults")
    a = workers(lock_ttl=TTL)
    b = workers(lock_ttl=TTL)
    svc.set_state(cluster, Cluster.RUNNING)
    wait_for(lambda: Pod.objects.filter(cluster=cluster, queue=Pod.BOUND).count() >= 300, 120, 0.1,
             "the first bindings")
    leader, standby = (a, b) if "loop started" in a.text() else (b, a)
    assert "loop started" not in standby.text(), "both workers drive the cluster"
    killed_at_wall = time.time()
    cycles = SchedulingCycle.objects.filter(cluster=cluster).count()
    leader.kill()
    t0 = time.monotonic()
    wait_for(lambda: "loop started" in standby.text(), 60, 0.05, "the standby to take over")
    took_over = time.monotonic() - t0
    wait_for(lambda: SchedulingCycle.objects.filter(cluster=cluster).count() > cycles, 60, 0.05, "new cycles")
    first_cycle = time.monotonic() - t0
    wait_for(lambda: Pod.objects.filter(cluster=cluster, queue=Pod.BOUND).count() == 2500, 300, 0.3, "every pod bound")
    starts = [t for t, what in _loops(standby.text()) if what == "started"]
    inv = check_invariants(cluster)
    print(f"\nFAULT failover: ttl={TTL}s standby_started_loop_after={took_over:.1f}s "
          f"first_new_cycle_after={first_cycle:.1f}s overlap={'yes' if starts[0] < killed_at_wall else 'no'} "
          f"bound_twice={inv['bound_twice']} over_allocatable={inv['over_allocatable']} "
          f"bindings_without_cycle={inv['bindings_without_cycle']}")
    assert starts[0] >= killed_at_wall, "the standby started scheduling while the leader was alive"
    assert inv["bound_twice"] == inv["over_allocatable"] == inv["bindings_without_cycle"] == 0
    svc.set_state(cluster, Cluster.STOPPED)
