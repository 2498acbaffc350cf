"""deploy/: each overlay (kubectl kustomize) grants what its mode of KubeCluster uses, and carries a configuration
the core accepts."""
import os
import shutil
import subprocess

import pytest
import yaml

from scheduler_core import versions
from scheduler_core.config import build_frameworks, load_config
from scheduler_core.framework.handle import Handle
from scheduler_core.plugins.registry import build_registry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WRITES = {"create", "update", "patch", "delete", "deletecollection", "*"}


def rendered(mode: str) -> list:
    """The documents of ``deploy/overlays/<mode>`` as kubectl's built-in kustomize renders them."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl (apt-get install -y kubernetes-client)")
    out = subprocess.run([kubectl, "kustomize", os.path.join(ROOT, "deploy", "overlays", mode)],
                         capture_output=True, text=True, check=True).stdout
    return list(yaml.safe_load_all(out))


def by_kind(docs, kind):
    return [d for d in docs if d["kind"] == kind]


def granted(rules):
    """{(group, resource): verbs}."""
    out = {}
    for rule in rules:
        for group in rule["apiGroups"]:
            for res in rule["resources"]:
                out.setdefault((group, res), set()).update(rule["verbs"])
    return out


def watched_resources():
    for _kind, path, _query in versions.kube_version(versions.LATEST_VERSION).informers:
        parts = path.strip("/").split("/")
        yield ("" if parts[0] == "api" else parts[1]), parts[-1]


@pytest.mark.parametrize("mode", ["scheduler", "observe"])
def test_each_mode_reads_every_watched_kind_with_its_own_service_account(mode):
    docs = rendered(mode)
    rules = granted(by_kind(docs, "ClusterRole")[0]["rules"])
    for resource in watched_resources():
        assert {"list", "watch"} <= rules.get(resource, set()), resource
    assert not any("*" in verbs for verbs in rules.values())
    account = by_kind(docs, "ServiceAccount")[0]["metadata"]["name"]
    assert account == f"schedscope-{mode}"
    for binding in by_kind(docs, "ClusterRoleBinding") + by_kind(docs, "RoleBinding"):
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": "kube-system"}]
    spec = by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == account
    assert spec["containers"][0]["command"][:4] == ["python", "-m", "scheduler_core.kuberun", "--in-cluster"]


def test_the_scheduler_mode_writes_what_a_scheduler_writes_and_its_lease_only():
    docs = rendered("scheduler")
    rules = granted(by_kind(docs, "ClusterRole")[0]["rules"])
    assert "create" in rules[("", "pods/binding")]
    assert "patch" in rules[("", "pods/status")]
    assert "delete" in rules[("", "pods")]          # preemption evicts victims
    assert "create" in rules[("events.k8s.io", "events")]
    assert {"update", "create", "delete"} <= rules[("resource.k8s.io", "resourceclaims")]   # DRA's PreBind
    assert "update" in rules[("resource.k8s.io", "resourceclaims/status")]
    role = by_kind(docs, "Role")[0]
    config = yaml.safe_load(by_kind(docs, "ConfigMap")[0]["data"]["config.yaml"])
    assert role["metadata"]["namespace"] == config["leaderElection"]["resourceNamespace"]
    assert granted(role["rules"])[("coordination.k8s.io", "leases")] == {"get", "create", "update"}
    assert by_kind(docs, "Deployment")[0]["spec"]["replicas"] >= 2


def test_the_observe_mode_writes_nothing():
    docs = rendered("observe")
    rules = granted(by_kind(docs, "ClusterRole")[0]["rules"])
    assert all(not (verbs & WRITES) for verbs in rules.values()), rules
    assert not by_kind(docs, "Role") and not by_kind(docs, "RoleBinding")
    assert "--shadow" in by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["command"]


@pytest.mark.parametrize("mode,profile,elect", [("scheduler", "schedscope-scheduler", True),
                                                 ("observe", "default-scheduler", False)])
def test_config_maps_are_valid_configurations_and_the_deployments_mount_them(mode, profile, elect):
    docs = rendered(mode)
    config_map = by_kind(docs, "ConfigMap")[0]
    cfg = load_config(yaml.safe_load(config_map["data"]["config.yaml"]), build_registry())
    assert list(build_frameworks(cfg, build_registry(), Handle)) == [profile]
    assert cfg.leader_election["leaderElect"] is elect
    spec = by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]
    assert spec["volumes"] == [{"name": "config", "configMap": {"name": config_map["metadata"]["name"]}}]
