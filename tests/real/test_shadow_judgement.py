"""The shadow's verdicts on the real kube-scheduler v1.36's bindings (tests/envtest.py), both running kube's default
profile: a burst of pods, bound by kube asynchronously (bindings land out of the order kube decided them), every
binding judged in kube's order on the state kube decided on agrees within ties."""
from __future__ import annotations

import json

from kubernetes import client as kclient
from kubernetes import config as kconfig

from scheduler_core.cluster.kube import KubeCluster
from scheduler_core.config import load_config
from scheduler_core.plugins.registry import in_tree_registry
from scheduler_core.shadow import ShadowScheduler
from tests.envtest import ControlPlane, ensure_namespace, require_assets
from tests.real.conftest import add_ready_node, wait_for
from tests.real.test_observe import pod

PROFILE = {"schedulerName": "default-scheduler"}


def test_a_burst_agrees_within_ties(tmp_path):
    require_assets()
    cp_dir = tmp_path / "cp"
    cp_dir.mkdir()
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [PROFILE]}
    (tmp_path / "sched.json").write_text(json.dumps(
        {**doc, "clientConnection": {"kubeconfig": str(cp_dir / "admin.kubeconfig")},
         "leaderElection": {"leaderElect": False}}))
    plane = ControlPlane(cp_dir, scheduler=True, scheduler_config=tmp_path / "sched.json").start()
    try:
        admin = kconfig.new_client_from_config(config_file=str(plane.kubeconfig))
        core = kclient.CoreV1Api(admin)
        ensure_namespace(admin, "default")
        for i, (cpu, memory) in enumerate((("2", "4Gi"), ("4", "8Gi"), ("4", "16Gi"), ("8", "8Gi"))):
            add_ready_node(admin, f"node-{i}", cpu=cpu, memory=memory, labels={"zone": f"z{i % 2}"})
        kube = KubeCluster(kubeconfig=str(plane.kubeconfig), read_only=True, backoff_initial=0.2)
        kube.start(wait=True)
        config = load_config(doc, in_tree_registry(), kube_version="1.36")
        shadow = ShadowScheduler(kube, config, kube_version="1.36", tie_break="name", order_window=1.0)
        sizes = ("100m", "250m", "500m", "1", "300m", "750m", "1500m", "200m")
        for i in range(30):
            core.create_namespaced_pod("default", pod(f"p{i}", cpu=sizes[i % len(sizes)]))
        wait_for(lambda: kube.pump(0.1) is not None and shadow.judge_due() is not None and shadow.decisions == 30, 90,
                 what="30 bindings judged")
        kube.close()
        admin.close()
    finally:
        plane.stop()
    wrong = [(r.pod, r.actual, r.shadow, r.actual_score, r.shadow_score) for r in shadow.records if not r.within_ties]
    assert shadow.agreed_within_ties == 30, wrong
