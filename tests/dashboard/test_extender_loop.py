"""A hanging extender (120 s, ``httpTimeout: 8760h``, capped at 30 s) must not hold the cluster's loop: pause, a
manual binding, an apply and stop each take effect while a call is in flight, long before the call could end (well
under a second on a quiet machine; the bound here leaves room for a loaded one); the attempt in flight fails with the
extender's error and its pod is requeued, as after any extender error."""
from __future__ import annotations

import threading
import time

import pytest

from dashboard.models import Cluster, Pod, SchedulingCycle
from dashboard.profiles import services as profiles
from dashboard.services import clusters as svc
from dashboard.services import control
from dashboard.services.runner import Runner
from scheduler_core import gcpolicy
from tests.core.test_extender import ExtenderServer

from .conftest import small_scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)
API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
# far below the 30 s a held loop would wait for the call (SCHEDSCOPE_EXTENDER_TIMEOUT_MAX)
EFFECT_SECONDS = 8.0


def config(server, verb):
    return dict(API, extenders=[{"urlPrefix": server.url, "filterVerb": verb, "httpTimeout": "8760h"}])


def test_a_hanging_extender_does_not_hold_the_loop(admin_user, monkeypatch):
    # A reload's full collection walks this whole pytest process (~0.5 s here); a worker's is measured with the
    # rest in tests/faults/test_extenders.py.
    monkeypatch.setattr(gcpolicy, "settle", lambda: None)
    server = ExtenderServer()
    server.replies.update({"hang": (200, {"NodeNames": []}, 120), "hang2": (200, {"NodeNames": []}, 120)})
    cluster = Cluster.objects.create(name="hang", tie_break="name")
    scen = small_scenario(4)
    scen["config"] = config(server, "hang")
    svc.load_scenario(cluster, scen, "test")
    Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.RUNNING)
    runner = Runner(cluster.id)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    took = {}

    def calls(verb):
        return sum(v == verb for v, _ in server.requests)

    def in_flight(verb, seen):
        """Wait for a call of ``verb`` after the ``seen`` ones (the loop is inside it), then a little longer."""
        wait_for(lambda: calls(verb) > seen, 20, what=f"a {verb} call")
        time.sleep(0.3)

    def effect(name, action, done):
        """``action``'s time until ``done`` holds."""
        t0 = time.monotonic()
        action()
        wait_for(done, 20, 0.02, what=name)
        took[name] = time.monotonic() - t0

    try:
        in_flight("hang", 0)
        # httpTimeout 8760h is taken as kube takes it, capped by SCHEDSCOPE_EXTENDER_TIMEOUT_MAX (30 s)
        assert [e.timeout for e in runner.engine.scheduler.extenders] == [30.0]
        effect("pause", lambda: svc.set_state(cluster, Cluster.PAUSED), lambda: runner.state == Cluster.PAUSED)
        made = len(server.requests)
        wait_for(lambda: SchedulingCycle.objects.filter(cluster=cluster, result="error").exists(), 5, what="the cycle")
        failed = SchedulingCycle.objects.get(cluster=cluster, result="error")
        assert failed.message == f'Post "{server.url}/hang": context canceled'
        assert Pod.objects.get(cluster=cluster, name=failed.pod_name).queue == Pod.BACKOFF
        time.sleep(0.5)
        assert len(server.requests) == made   # paused: no further attempts

        seen = calls("hang")
        svc.set_state(cluster, Cluster.RUNNING)
        in_flight("hang", seen)
        seen = calls("hang")
        t0 = time.monotonic()
        answer = control.request(cluster.id, "bind", 5, key="default/too-big", node="n-0", by="admin")
        took["manual bind"] = time.monotonic() - t0
        assert answer["status"] == 201, answer

        in_flight("hang", seen)
        version = profiles.save_version(cluster.profile, config(server, "hang2"), admin_user)
        effect("apply", lambda: profiles.apply(version, admin_user),
               lambda: [e.filter_verb for e in runner.engine.scheduler.extenders] == ["hang2"])

        in_flight("hang2", 0)
        effect("stop", lambda: svc.set_state(cluster, Cluster.STOPPED), lambda: not thread.is_alive())
    finally:
        Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.STOPPED)
        control.send(cluster.id, "state")
        thread.join(15)
        server.close()
    print(f"\nhanging extender: took {', '.join(f'{k}={v:.2f}s' for k, v in took.items())}")
    assert all(v < EFFECT_SECONDS for v in took.values()), took


def test_a_loop_keeps_its_lock_through_a_call_longer_than_the_lock_ttl(settings):
    """The lock is renewed while the call is in flight: a slow extender does not hand the cluster to another loop."""
    settings.SCHEDSCOPE = dict(settings.SCHEDSCOPE, LOCK_TTL_SECONDS=1.5)
    server = ExtenderServer()
    server.replies["slow"] = (200, {"NodeNames": []}, 10)
    cluster = Cluster.objects.create(name="slow", tie_break="name")
    scen = small_scenario(1)
    scen["config"] = dict(API, extenders=[{"urlPrefix": server.url, "filterVerb": "slow", "httpTimeout": "4s"}])
    svc.load_scenario(cluster, scen, "test")
    Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.RUNNING)
    runner = Runner(cluster.id)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: SchedulingCycle.objects.filter(cluster=cluster, result="error").exists(), 20,
                 what="the slow call's time-out")
        assert SchedulingCycle.objects.get(cluster=cluster, result="error").message == (
            f'Post "{server.url}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)')
        time.sleep(1.0)   # a few turns of the loop after the call
        assert thread.is_alive() and runner.lock.holder() == runner.lock.token
    finally:
        Cluster.objects.filter(pk=cluster.pk).update(desired_state=Cluster.STOPPED)
        control.send(cluster.id, "state")
        thread.join(15)
        server.close()
