"""deploy/: the in-cluster manifests grant what KubeCluster uses, and carry a configuration the core accepts."""
import os

import yaml

from scheduler_core.cluster.kube import WATCHED
from scheduler_core.config import build_frameworks, load_config
from scheduler_core.framework.handle import Handle
from scheduler_core.plugins.registry import build_registry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = list(yaml.safe_load_all(open(os.path.join(ROOT, "deploy", "schedscope-scheduler.yaml"))))


def by_kind(kind):
    return [d for d in DOCS if d["kind"] == kind]


def granted(rules):
    """{(group, resource): verbs}."""
    out = {}
    for rule in rules:
        for group in rule["apiGroups"]:
            for res in rule["resources"]:
                out.setdefault((group, res), set()).update(rule["verbs"])
    return out


def test_cluster_role_covers_every_watched_kind_and_the_writes():
    rules = granted(by_kind("ClusterRole")[0]["rules"])
    for _kind, path in WATCHED:
        parts = path.strip("/").split("/")
        group = "" if parts[0] == "api" else parts[1]
        assert {"list", "watch"} <= rules.get((group, parts[-1]), set()), path
    assert "create" in rules[("", "pods/binding")]
    assert "patch" in rules[("", "pods/status")]
    assert "delete" in rules[("", "pods")]          # preemption evicts victims
    assert "create" in rules[("events.k8s.io", "events")]
    assert not any("*" in verbs for verbs in rules.values())


def test_lease_rights_are_namespaced_to_the_lease():
    role = by_kind("Role")[0]
    config = yaml.safe_load(by_kind("ConfigMap")[0]["data"]["config.yaml"])
    assert role["metadata"]["namespace"] == config["leaderElection"]["resourceNamespace"]
    assert granted(role["rules"])[("coordination.k8s.io", "leases")] == {"get", "create", "update"}


def test_config_map_is_a_valid_configuration_and_the_deployment_uses_it():
    doc = yaml.safe_load(by_kind("ConfigMap")[0]["data"]["config.yaml"])
    cfg = load_config(doc, build_registry())
    frameworks = build_frameworks(cfg, build_registry(), Handle)
    assert list(frameworks) == ["schedscope-scheduler"]
    assert cfg.leader_election["leaderElect"] is True
    dep = by_kind("Deployment")[0]
    spec = dep["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == by_kind("ServiceAccount")[0]["metadata"]["name"]
    assert spec["containers"][0]["command"][:3] == ["python", "-m", "scheduler_core.kuberun"]
    assert dep["spec"]["replicas"] >= 2
