"""The API machinery of dashboard.k8sapi on its own: patches, selectors, tables, the change log and watches."""
from __future__ import annotations

import json

import pytest

from dashboard.k8sapi import patch, tables
from dashboard.k8sapi.errors import ApiError
from dashboard.k8sapi.resources import BY_PATH
from dashboard.k8sapi.selectors import FieldSelector, LabelSelector
from dashboard.k8sapi.store import ApiCluster
from dashboard.k8sapi.watch import Query, Watcher
from scheduler_core.objects import Node
from tests.k8s_api_server import node, pod

PODS = BY_PATH[("", "v1", "pods")]


def test_strategic_merge_patch_directives():
    orig = {"metadata": {"finalizers": ["a", "b"], "labels": {"x": "1"}},
            "spec": {"containers": [{"name": "a", "image": "1", "env": [{"name": "E", "value": "1"}]},
                                    {"name": "b", "image": "1"}],
                     "tolerations": [{"key": "t1"}], "volumes": [{"name": "v", "emptyDir": {}}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "X", "status": "False"}]}}
    out = patch.strategic_merge_patch(orig, {
        "metadata": {"finalizers": ["c"], "labels": {"x": None, "y": "2"}},
        "spec": {"containers": [{"name": "b", "$patch": "delete"},
                                {"name": "a", "env": [{"name": "F", "value": "2"}]},
                                {"name": "c", "image": "3"}],
                 "tolerations": [{"key": "t2"}],
                 "volumes": [{"name": "v", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/d"}}]},
        "status": {"conditions": [{"type": "X", "status": "True"}],
                   "$setElementOrder/conditions": [{"type": "X"}, {"type": "Ready"}]}}, "Pod")
    assert out["metadata"] == {"finalizers": ["a", "b", "c"], "labels": {"y": "2"}}
    assert [(c["name"], c.get("image"), [e["name"] for e in c.get("env", [])]) for c in out["spec"]["containers"]] \
        == [("a", "1", ["E", "F"]), ("c", "3", [])]
    assert out["spec"]["tolerations"] == [{"key": "t2"}]       # no merge key: the list is replaced
    assert out["spec"]["volumes"] == [{"name": "v", "hostPath": {"path": "/d"}}]
    assert out["status"]["conditions"] == [{"type": "X", "status": "True"}, {"type": "Ready", "status": "True"}]
    assert orig["spec"]["containers"][0]["env"] == [{"name": "E", "value": "1"}]   # the original is untouched
    out = patch.strategic_merge_patch(orig, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]},
                                             "spec": {"$patch": "replace", "containers": []}}, "Pod")
    assert out["metadata"]["finalizers"] == ["b"] and out["spec"] == {"containers": []}
    node_out = patch.strategic_merge_patch({"status": {"addresses": [{"type": "InternalIP", "address": "a"}]}},
                                           {"status": {"addresses": [{"type": "Hostname", "address": "h"}]}}, "Node")
    assert [a["type"] for a in node_out["status"]["addresses"]] == ["InternalIP", "Hostname"]
    with pytest.raises(ApiError):
        patch.strategic_merge_patch(orig, {"spec": {"containers": [{"image": "no-name"}]}}, "Pod")


def test_merge_and_json_patch():
    assert patch.merge_patch({"a": {"b": 1, "c": 2}, "d": [1]}, {"a": {"b": None, "e": 3}, "d": [2]}) == \
        {"a": {"c": 2, "e": 3}, "d": [2]}
    doc = {"metadata": {"labels": {"a/b": "1"}}, "spec": {"list": [1, 2]}}
    out = patch.json_patch(doc, [{"op": "add", "path": "/spec/list/-", "value": 3},
                                 {"op": "remove", "path": "/metadata/labels/a~1b"},
                                 {"op": "copy", "from": "/spec/list/0", "path": "/spec/first"},
                                 {"op": "move", "from": "/spec/first", "path": "/spec/moved"},
                                 {"op": "replace", "path": "/spec/list/1", "value": 9},
                                 {"op": "test", "path": "/spec/moved", "value": 1}])
    assert out == {"metadata": {"labels": {}}, "spec": {"list": [1, 9, 3], "moved": 1}}
    assert doc["spec"]["list"] == [1, 2]
    with pytest.raises(ApiError) as err:
        patch.json_patch(doc, [{"op": "replace", "path": "/spec/missing", "value": 1}])
    assert err.value.code == 422


def test_label_and_field_selectors():
    sel = LabelSelector("app in (web, db),tier!=back,!canary,env,rank>2")
    assert sel.matches({"app": "web", "env": "p", "rank": "3"})
    assert not sel.matches({"app": "web", "env": "p", "rank": "2"})
    assert not sel.matches({"app": "web", "env": "p", "rank": "3", "canary": ""})
    assert not sel.matches({"app": "web", "tier": "back", "env": "p", "rank": "3"})
    assert LabelSelector("").matches({}) and LabelSelector("a=").matches({"a": ""})
    for bad in ("a in (b", "a b", "a=b,", "!", "Bad Key=1"):
        with pytest.raises(ApiError) as err:
            LabelSelector(bad)
        assert err.value.code == 400
    fs = FieldSelector(r"spec.nodeName!=,metadata.name=a\,b", PODS.field_labels)
    assert fs.matches({"spec.nodeName": "n1", "metadata.name": "a,b"})
    assert not fs.matches({"spec.nodeName": "", "metadata.name": "a,b"})
    with pytest.raises(ApiError) as err:
        FieldSelector("spec.foo=1", PODS.field_labels)
    assert err.value.message == "field label not supported: spec.foo"
    with pytest.raises(ApiError):
        FieldSelector("metadata.namespace=x", BY_PATH[("", "v1", "nodes")].field_labels)


def test_human_duration_matches_kube():
    cases = {0: "0s", 59: "59s", 119: "119s", 120: "2m", 125: "2m5s", 600: "10m", 10799: "179m", 10800: "3h",
             3 * 3600 + 1800: "3h30m", 8 * 3600: "8h", 47 * 3600: "47h", 48 * 3600: "2d", 50 * 3600: "2d2h",
             8 * 86400: "8d", 800 * 86400: "2y70d", -1: "0s", -5: "<invalid>"}
    assert {k: tables.human_duration(k) for k in cases} == cases


def _watch(api, since, res=PODS, **kw):
    w = Watcher(api, Query(res, "", LabelSelector(""), FieldSelector("", res.field_labels)), since,
                bookmarks=False, timeout=5, bookmark_interval=60, **kw)
    events, _done = w.poll()
    w.detach()
    return [json.loads(line) for chunk in events for line in chunk.splitlines()]


def test_change_log_is_compacted_per_kind():
    api = ApiCluster("t", [Node(node("n1"))], [], window=3, start_rv=100)
    start = api.rv
    for i in range(8):
        api.create(PODS, "default", pod(f"p{i}"))
    assert api.oldest_rv("pods") > start and api.oldest_rv("nodes") == api.base_rv
    gone = _watch(api, str(start))
    assert gone[0]["type"] == "ERROR" and gone[0]["object"]["code"] == 410
    assert _watch(api, str(start), BY_PATH[("", "v1", "nodes")]) == []      # no node change was dropped
    recent = _watch(api, str(api.rv - 2))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in recent] == [("ADDED", "p6"), ("ADDED", "p7")]
    initial = _watch(api, "0")
    assert [e["object"]["metadata"]["name"] for e in initial] == [f"p{i}" for i in range(8)]


def test_an_in_process_scheduler_writes_bindings_and_events_to_the_api():
    from scheduler_core.scheduler import Scheduler
    api = ApiCluster("t", [Node(node("n1"))], [], window=100)
    rv = api.rv
    with api.lock:
        sched = Scheduler(api, tie_break="name")
        api.create(PODS, "default", pod("p"))
        sched.run_until_idle()
    changes = api.changes_since(rv, "pods")
    assert [(c.store, c.type) for c in changes if c.store in ("pods", "Event")] == [
        ("pods", "ADDED"), ("pods", "MODIFIED"), ("Event", "ADDED")]
    ev = changes[-1].obj
    assert (ev["reason"], ev["message"], ev["involvedObject"]["name"], ev["reportingComponent"]) == (
        "Scheduled", "Successfully assigned default/p to n1", "p", "default-scheduler")
