"""kill -9 the Celery worker at random moments of a long run; each time a new worker takes over."""
from __future__ import annotations

import os
import random
import time

import pytest

from dashboard.models import Cluster, Pod, SchedulingCycle
from dashboard.services import clusters as svc
from dashboard.services import objectstore

from .conftest import check_invariants, scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

PODS = int(os.environ.get("FAULT_KILL_PODS", "5000"))
NODES = int(os.environ.get("FAULT_KILL_NODES", "100"))
KILLS = 10


def test_kill_worker_ten_times(workers):
    """The pods come in KILLS + 1 waves. Each kill falls while the worker is at a wave (between 3 % and 90 % of it
    bound and committed, plus up to 0.1 s); the next wave is created after the kill, so the new worker always has
    pods to schedule, however far the old one's scheduler ran ahead of its commits."""
    rng = random.Random(int(os.environ.get("FAULT_SEED", "0")) or None)
    cluster = Cluster.objects.create(name="kills", tie_break="random")
    full = scenario(NODES, PODS)
    size = -(-PODS // (KILLS + 1))
    waves = [full["pending"][i:i + size] for i in range(0, PODS, size)]
    assert len(waves) == KILLS + 1
    svc.load_scenario(cluster, {**full, "pending": waves[0]}, "faults")
    t0 = time.monotonic()
    worker = workers()
    svc.set_state(cluster, Cluster.RUNNING)
    bound = lambda: Pod.objects.filter(cluster=cluster, queue=Pod.BOUND).count()  # noqa: E731
    kills, takeovers, lost_work, loaded, mid_wave = 0, [], 0, 0, 0
    for wave, following in zip(waves, waves[1:]):
        mark = loaded + rng.randint(max(1, int(len(wave) * 0.03)), int(len(wave) * 0.9))
        loaded += len(wave)
        wait_for(lambda: bound() >= mark, 240, 0.05, f"{mark} pods bound")
        time.sleep(rng.uniform(0, 0.1))        # a random moment within the cycle/commit pipeline
        before = bound()
        worker.kill()
        mid_wave += before < loaded   # the worker had pods of this wave left, or uncommitted
        kills += 1
        at_kill = time.monotonic()
        cycles_at_kill = SchedulingCycle.objects.filter(cluster=cluster).count()
        worker = workers()
        objectstore.insert_pods(cluster, following)
        wait_for(lambda: SchedulingCycle.objects.filter(cluster=cluster).count() > cycles_at_kill, 120, 0.05,
                 "the new worker to schedule")
        takeovers.append(time.monotonic() - at_kill)
        lost_work += max(0, before - bound())
    wait_for(lambda: bound() == PODS, 600, 0.2, "every pod bound")
    elapsed = time.monotonic() - t0
    inv = check_invariants(cluster)
    cycles = SchedulingCycle.objects.filter(cluster=cluster).count()
    print(f"\nFAULT kill-worker: pods={PODS} nodes={NODES} kills={kills} run={elapsed:.1f}s cycles={cycles} "
          f"bound={inv['bound']} bound_twice={inv['bound_twice']} over_allocatable={inv['over_allocatable']} "
          f"bindings_without_cycle={inv['bindings_without_cycle']} kills_mid_wave={mid_wave} "
          f"takeover_s(min/median/max)={min(takeovers):.1f}/{sorted(takeovers)[len(takeovers) // 2]:.1f}/"
          f"{max(takeovers):.1f}")
    assert kills == KILLS
    assert inv == {"bound": PODS, "bound_twice": 0, "over_allocatable": 0, "bindings_without_cycle": 0}
    assert lost_work == 0, "committed bindings disappeared"
    svc.set_state(cluster, Cluster.STOPPED)
