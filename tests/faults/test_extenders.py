"""Extenders that hang, answer 500, answer garbage or are slow, through a real worker: ignorable ones are
skipped, the others fail the cycle with kube's message, and the worker never wedges."""
from __future__ import annotations

import time

import pytest

from dashboard.models import Cluster, Pod, SchedulingCycle
from dashboard.services import clusters as svc
from dashboard.services import control
from tests.core.test_extender import ExtenderServer

from .conftest import scenario, wait_for

pytestmark = pytest.mark.django_db(transaction=True)
PODS = 10


def _config(server, *extenders):
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "extenders": [dict({"urlPrefix": server.url, "httpTimeout": "500ms"}, **e) for e in extenders]}


def test_bad_extenders_through_the_worker(workers):
    server = ExtenderServer()
    ok = lambda body: (200, {"NodeNames": body["NodeNames"]} if body["NodeNames"] is not None  # noqa: E731
                       else {"Nodes": body["Nodes"]}, 0)
    server.replies.update({"hang": (200, {"NodeNames": []}, 30), "e500": (500, b"", 0),
                           "garbage": (200, b"{not json", 0), "slow": lambda body: (ok(body)[0], ok(body)[1], 0.2)})
    cases = {
        "ext-hang": ([{"filterVerb": "hang"}], 'context deadline exceeded'),
        "ext-500": ([{"filterVerb": "e500"}], "code 500"),
        "ext-garbage": ([{"filterVerb": "garbage"}], "decoding garbage response"),
        "ext-ignorable": ([{"filterVerb": "hang", "ignorable": True}, {"filterVerb": "e500", "ignorable": True},
                           {"filterVerb": "garbage", "ignorable": True}, {"filterVerb": "slow"}], None),
    }
    try:
        workers()
        clusters = {}
        for name, (exts, _msg) in cases.items():
            c = Cluster.objects.create(name=name, tie_break="name")
            scen = scenario(3, PODS)
            scen["config"] = _config(server, *exts)
            svc.load_scenario(c, scen, "faults")
            clusters[name] = c
        t0 = time.monotonic()
        for c in clusters.values():
            svc.set_state(c, Cluster.RUNNING)
        ign = clusters["ext-ignorable"]
        wait_for(lambda: Pod.objects.filter(cluster=ign, queue=Pod.BOUND).count() == PODS, 120, 0.2,
                 "the pods behind ignorable extenders to be bound")
        ignorable_s = time.monotonic() - t0
        figures = {}
        for name, (_exts, msg) in cases.items():
            if msg is None:
                continue
            c = clusters[name]
            # every pod tried at least twice (backoff retries): the loop keeps going, never wedged
            wait_for(lambda: SchedulingCycle.objects.filter(cluster=c, result="error").count() >= 2 * PODS, 120, 0.2,
                     f"{name}: retried cycles")
            errs = list(SchedulingCycle.objects.filter(cluster=c, result="error").values_list("message", flat=True))
            assert all(msg in e for e in errs), (name, errs[:2])
            assert not Pod.objects.filter(cluster=c, queue=Pod.BOUND).exists()
            figures[name] = len(errs)
        stop_t = time.monotonic()
        for c in clusters.values():
            svc.set_state(c, Cluster.STOPPED)
        for c in clusters.values():
            wait_for(lambda: not control.is_driven(c.id), 30, 0.1, f"{c.name} to stop")
        stopped_s = time.monotonic() - stop_t
        sample = SchedulingCycle.objects.filter(cluster=clusters["ext-500"], result="error").first().message
    finally:
        server.close()
    print(f"\nFAULT extenders: failed_cycles={figures} ignorable_run={PODS} pods bound in {ignorable_s:.1f}s "
          f"all_loops_stopped_in={stopped_s:.1f}s sample_message={sample[:90]!r}")


def test_a_hanging_extender_does_not_hold_the_worker(workers):
    """An extender that sleeps 120 s with httpTimeout 8760h: pause, a manual binding, an apply and stop each take
    effect within a second while the worker's loop is inside a call (measured from the request to its effect)."""
    from dashboard.profiles import services as profiles
    server = ExtenderServer()
    server.replies.update({"hang": (200, {"NodeNames": []}, 120), "hang2": (200, {"NodeNames": []}, 120)})
    took = {}

    def calls(verb):
        return sum(v == verb for v, _ in server.requests)

    def in_flight(verb, seen):
        """Wait for a call of ``verb`` after the ``seen`` ones (the loop is inside it), then a little longer."""
        wait_for(lambda: calls(verb) > seen, 60, 0.05, f"a {verb} call")
        time.sleep(0.3)

    def effect(name, action, done):
        t0 = time.monotonic()
        action()
        wait_for(done, 30, 0.02, name)
        took[name] = time.monotonic() - t0

    try:
        workers()
        c = Cluster.objects.create(name="ext-hang-loop", tie_break="name")
        scen = scenario(3, PODS)
        scen["config"] = _config(server, {"filterVerb": "hang", "httpTimeout": "8760h"})
        svc.load_scenario(c, scen, "faults")
        svc.set_state(c, Cluster.RUNNING)
        in_flight("hang", 0)
        canceled = SchedulingCycle.objects.filter(cluster=c, result="error", message__endswith="context canceled")
        effect("pause", lambda: svc.set_state(c, Cluster.PAUSED), canceled.exists)
        seen = calls("hang")
        svc.set_state(c, Cluster.RUNNING)
        in_flight("hang", seen)
        seen = calls("hang")
        t0 = time.monotonic()
        answer = control.request(c.id, "bind", 5, key="load/p-00009", node="node-0001", by="faults")
        took["manual bind"] = time.monotonic() - t0
        assert answer["status"] == 201, answer
        in_flight("hang", seen)
        version = profiles.save_version(Cluster.objects.get(pk=c.pk).profile,
                                        _config(server, {"filterVerb": "hang2", "httpTimeout": "8760h"}), None)
        effect("apply", lambda: profiles.apply(version, None), lambda: calls("hang2") > 0)
        time.sleep(0.3)
        effect("stop", lambda: svc.set_state(c, Cluster.STOPPED), lambda: not control.is_driven(c.id))
    finally:
        server.close()
    print(f"\nFAULT hanging extender (120 s, httpTimeout 8760h): {', '.join(f'{k}={v:.2f}s' for k, v in took.items())}")
    assert all(v < 1.0 for v in took.values()), took
