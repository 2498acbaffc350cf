"""Pod-level resources (``spec.resources``) are validated as the real kube-apiserver v1.36.2 validates them: the
same causes (field, reason, message) for each invalid pod, and both accept the valid one."""
from __future__ import annotations

import json

import pytest

from scheduler_core.objects.validation import object_errors


def _pod(name, resources, containers=None, **spec):
    containers = containers or [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "500m"}}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": containers, "resources": resources, **spec}}


def _container(name, requests=None, limits=None):
    return {"name": name, "image": "registry.k8s.io/pause:3.10",
            "resources": {k: v for k, v in (("requests", requests), ("limits", limits)) if v}}


CASES = {
    "unsupported-resource": _pod("unsupported", {"requests": {"cpu": "1", "ephemeral-storage": "1Gi"}}),
    "not-a-standard-name": _pod("nonstandard", {"requests": {"cpu": "1", "gpus": "1"}}),
    "below-the-containers": _pod("below", {"requests": {"cpu": "2", "memory": "64Mi"}},
                                 [_container("a", {"cpu": "1500m", "memory": "64Mi"}),
                                  _container("b", {"cpu": "1", "memory": "32Mi"})]),
    "container-limit-above": _pod("above", {"limits": {"cpu": "2"}},
                                  [_container("a", {"cpu": "1"}, {"cpu": "3"})]),
    "requests-above-limits": _pod("reqlim", {"requests": {"cpu": "3"}, "limits": {"cpu": "2"}}),
    "hugepages-alone": _pod("huge", {"requests": {"hugepages-2Mi": "2Mi"}}),
    "windows": _pod("win", {"requests": {"cpu": "1"}}, os={"name": "windows"}),
}


def _causes(status: dict) -> list:
    return sorted((c.get("field", ""), c.get("reason", ""), c.get("message", ""))
                  for c in (status.get("details") or {}).get("causes") or ())


def test_pod_level_resources_validated_as_the_apiserver_does(admin_client):
    """One control plane for every case (each start costs tens of seconds on a loaded machine)."""
    from kubernetes import client as kclient
    from kubernetes.client.rest import ApiException
    core = kclient.CoreV1Api(admin_client)
    differences = {}
    for case, raw in sorted(CASES.items()):
        with pytest.raises(ApiException) as refused:
            core.create_namespaced_pod("default", raw)
        assert refused.value.status == 422, case
        kube = _causes(json.loads(refused.value.body))
        ours = sorted((e.path, e.reason, e.body()) for e in object_errors("Pod", raw))
        assert kube, case
        if ours != kube:
            differences[case] = (kube, ours)
    assert not differences
    valid = _pod("fine", {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "4", "memory": "2Gi"}},
                 [_container("a", {"cpu": "1", "memory": "512Mi"}, {"cpu": "2"}), _container("b")])
    assert object_errors("Pod", valid) == []
    core.create_namespaced_pod("default", valid)
