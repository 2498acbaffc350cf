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
