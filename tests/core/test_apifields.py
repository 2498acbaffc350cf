"""The fields kube-apiserver knows by version (versions' tables, objects.apifields): what its decoder drops, and the
strict decoding errors it reports, with sigs.k8s.io/json's paths."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler_core import versions
from scheduler_core.objects import apifields


def _decode(version: str, text: str, api_version: str = "v1", kind: str = "Pod"):
    obj, duplicates = apifields.load_with_duplicates(text)
    return apifields.decode(versions.kube_version(version), api_version, kind, obj, duplicates)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"resources": {"requests": {"cpu": "1"}}, "hostnameOverride": "h",
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                "containers": [{"name": "c", "image": "i", "restartPolicyRules": [{"action": "Restart"}],
                                "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                                "resources": {"claims": [{"name": "gpu", "request": "one"}]}}]}}


def test_each_version_knows_its_fields():
    old, new = _decode("1.30", json.dumps(POD)), _decode("1.36", json.dumps(POD))
    assert old.errors == ['unknown field "spec.resources"', 'unknown field "spec.hostnameOverride"',
                          'unknown field "spec.resourceClaims[0].resourceClaimTemplateName"',
                          'unknown field "spec.containers[0].restartPolicyRules"',
                          'unknown field "spec.containers[0].resources.claims[0].request"']
    assert old.obj["spec"] == {"resourceClaims": [{"name": "gpu"}], "containers": [
        {"name": "c", "image": "i", "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
         "resources": {"claims": [{"name": "gpu"}]}}]}
    assert new.errors == [] and new.obj is not None and new.obj == POD
    # a 1.30 field 1.36 no longer has: PodResourceClaim.source
    gone = dict(POD, spec={"containers": [], "resourceClaims": [{"name": "a", "source": {"resourceClaimName": "a"}}]})
    assert _decode("1.36", json.dumps(gone)).errors == ['unknown field "spec.resourceClaims[0].source"']
    assert _decode("1.30", json.dumps(gone)).errors == []


def test_an_object_without_unknown_fields_is_kept_as_it_is():
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}}}
    assert apifields.decode(versions.kube_version("1.30"), "v1", "Node", obj).obj is obj


def test_paths_name_list_items_and_map_keys_and_duplicates_are_reported_once():
    text = ('{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s",'
            '"labels":{"a":"1","a":"2"}},"spec":{"driver":"d","driver":"e","devices":[{"name":"x",'
            '"attributes":{"d/model":{"string":"a","foo":1,"foo":2}},"Name":"y"}]}}')
    decoded = _decode("1.36", text, "resource.k8s.io/v1", "ResourceSlice")
    assert decoded.errors == ['duplicate field "metadata.labels.a"', 'duplicate field "spec.driver"',
                              'unknown field "spec.devices[0].attributes.d/model.foo"',
                              'unknown field "spec.devices[0].Name"']
    assert decoded.obj["spec"]["driver"] == "e" and decoded.obj["metadata"]["labels"] == {"a": "2"}
    assert decoded.obj["spec"]["devices"] == [{"name": "x", "attributes": {"d/model": {"string": "a"}}}]


def test_every_value_of_a_name_given_twice_is_read():
    text = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"foo":1}],"containers":[]}}'
    decoded = _decode("1.36", text)
    assert decoded.errors == ['unknown field "spec.containers[0].foo"', 'duplicate field "spec.containers"']
    assert decoded.obj["spec"] == {"containers": []}


def test_embedded_fields_and_type_meta_are_known():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [], "volumes": [{"name": "v", "emptyDir": {}, "hostPath": {"path": "/x"}}]}}
    assert _decode("1.30", json.dumps(pod)).errors == []


def test_served_group_versions():
    assert not apifields.served(versions.kube_version("1.30"), "resource.k8s.io/v1")
    assert apifields.served(versions.kube_version("1.36"), "resource.k8s.io/v1")
    assert apifields.served(versions.kube_version("1.30"), "storage.k8s.io/v1")


WIRE = Path(__file__).resolve().parents[3] / "shared" / "k8s-wire"   # ../shared/k8s-wire: the real v1.30 bodies


@pytest.mark.skipif(not WIRE.is_dir(), reason="no k8s-wire fixtures")
def test_the_real_v1_30_clients_bodies_have_no_field_either_version_does_not_know():
    checked = 0
    for path in sorted(WIRE.glob("*.json")):
        obj, duplicates = apifields.load_with_duplicates(path.read_bytes())
        if not isinstance(obj, dict) or (obj.get("apiVersion"), obj.get("kind")) not in apifields.ROOTS:
            continue   # patches, watch events and DeleteOptions are not decoded as objects
        for version in ("1.30", "1.36"):
            decoded = apifields.decode(versions.kube_version(version), obj["apiVersion"], obj["kind"], obj,
                                       duplicates)
            assert decoded.errors == [], (path.name, version)
        checked += 1
    assert checked >= 10
