"""kube's pkg/scheduler/apis/config/validation/validation_test.go, TestValidateKubeSchedulerConfigurationV1.

kube validates the internal (not defaulted) configuration and compares the errors' type and field only
(``ignoreBadValueDetail``); so do these cases, on the internal dict ``validate_configuration`` reads. A nil
``Plugins`` is the zero PluginSet. Durations are in nanoseconds.
"""
from __future__ import annotations

import copy

import pytest

from scheduler_core.config.validation import validate_configuration

UPSTREAM = "pkg/scheduler/apis/config/validation/validation_test.go"
UPSTREAM_VERSION = "v1.28+ (TestValidateKubeSchedulerConfigurationV1 with ptr.To; stored copy id 711543260)"
UPSTREAM_CASES = 21

SECOND = 1_000_000_000


def plugin_set(*names):
    return {"enabled": [{"name": n, "weight": 0} for n in names], "disabled": []}


def plugins(**sets):
    out = {s: plugin_set() for s in ("queueSort", "score", "bind")}
    out.update(sets)
    return out


def valid_config() -> dict:
    """validConfig of the upstream test."""
    return {
        "parallelism": 8,
        "clientConnection": {"acceptContentTypes": "application/json", "contentType": "application/json",
                             "qps": 10, "burst": 10},
        "leaderElection": {"resourceLock": "leases", "leaderElect": True, "leaseDuration": 30 * SECOND,
                           "renewDeadline": 15 * SECOND, "retryPeriod": 5 * SECOND,
                           "resourceNamespace": "name", "resourceName": "name"},
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 1,
        "percentageOfNodesToScore": None,
        "profiles": [
            {"schedulerName": "me", "percentageOfNodesToScore": 35,
             "plugins": plugins(queueSort=plugin_set("CustomSort"),
                                score={"enabled": [], "disabled": [{"name": "*", "weight": 0}]}),
             "pluginConfig": [{"name": "DefaultPreemption", "argsKind": "DefaultPreemptionArgs",
                               "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}}]},
            {"schedulerName": "other", "percentageOfNodesToScore": 35,
             "plugins": plugins(queueSort=plugin_set("CustomSort"), bind=plugin_set("CustomBind")),
             "pluginConfig": []},
        ],
        "extenders": [{"prioritizeVerb": "prioritize", "weight": 1, "bindVerb": "", "managedResources": []}],
    }


def _set(path, value):
    def change(cfg):
        obj = cfg
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value
    return change


def _mismatch_queue_sort(cfg):
    cfg["profiles"] = [
        {"schedulerName": "me", "percentageOfNodesToScore": None, "plugins": plugins(queueSort=plugin_set("PrioritySort")),
         "pluginConfig": [{"name": "PrioritySort", "argsKind": None, "args": None}]},
        {"schedulerName": "other", "percentageOfNodesToScore": None, "plugins": plugins(queueSort=plugin_set("CustomSort")),
         "pluginConfig": [{"name": "CustomSort", "argsKind": None, "args": None}]},
    ]


def _duplicate_bind(cfg):
    cfg["extenders"][0]["bindVerb"] = "foo"
    cfg["extenders"].append({"prioritizeVerb": "prioritize", "bindVerb": "bar", "weight": 1, "managedResources": []})


def _valid_plugins(cfg):
    cfg["profiles"][0]["plugins"]["score"]["enabled"].append({"name": "PodTopologySpread", "weight": 2})


CASES = {
    "good": (lambda cfg: None, []),
    "bad-parallelism-invalid-value": (_set(["parallelism"], 0), [("Invalid", "parallelism")]),
    "bad-resource-name-not-set": (_set(["leaderElection", "resourceName"], ""),
                                  [("Invalid", "leaderElection.resourceName")]),
    "bad-resource-namespace-not-set": (_set(["leaderElection", "resourceNamespace"], ""),
                                       [("Invalid", "leaderElection.resourceNamespace")]),
    "bad-resource-lock-not-leases": (_set(["leaderElection", "resourceLock"], "configmap"),
                                     [("Invalid", "leaderElection.resourceLock")]),
    "bad-percentage-of-nodes-to-score": (_set(["percentageOfNodesToScore"], 101),
                                         [("Invalid", "percentageOfNodesToScore")]),
    "negative-percentage-of-nodes-to-score": (_set(["percentageOfNodesToScore"], -1),
                                              [("Invalid", "percentageOfNodesToScore")]),
    "scheduler-name-not-set": (_set(["profiles", 1, "schedulerName"], ""),
                               [("Required", "profiles[1].schedulerName")]),
    "repeated-scheduler-name": (_set(["profiles", 0, "schedulerName"], "other"),
                                [("Duplicate", "profiles[1].schedulerName")]),
    "greater-than-100-profile-percentage-of-nodes-to-score": (
        _set(["profiles", 1, "percentageOfNodesToScore"], 101), [("Invalid", "profiles[1].percentageOfNodesToScore")]),
    "negative-profile-percentage-of-nodes-to-score": (
        _set(["profiles", 1, "percentageOfNodesToScore"], -1), [("Invalid", "profiles[1].percentageOfNodesToScore")]),
    "different-queue-sort": (_set(["profiles", 1, "plugins", "queueSort"], plugin_set("AnotherSort")),
                             [("Invalid", "profiles[1].plugins.queueSort")]),
    # Profiles[0].Plugins = nil: the zero PluginSets.
    "one-empty-queue-sort": (_set(["profiles", 0, "plugins"], plugins()), [("Invalid", "profiles[1].plugins.queueSort")]),
    "extender-negative-weight": (_set(["extenders", 0, "weight"], -1), [("Invalid", "extenders[0].weight")]),
    "extender-duplicate-managed-resources": (
        _set(["extenders", 0, "managedResources"], [{"name": "example.com/foo", "ignoredByScheduler": False},
                                                    {"name": "example.com/foo", "ignoredByScheduler": False}]),
        [("Invalid", "extenders[0].managedResources[1].name")]),
    "extender-duplicate-bind": (_duplicate_bind, [("Invalid", "extenders")]),
    "invalid-node-percentage": (
        _set(["profiles", 0, "pluginConfig"], [{"name": "DefaultPreemption", "argsKind": "DefaultPreemptionArgs",
                                                "args": {"minCandidateNodesPercentage": 200,
                                                         "minCandidateNodesAbsolute": 100}}]),
        [("Invalid", "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage")]),
    "invalid-plugin-args": (
        _set(["profiles", 0, "pluginConfig"], [{"name": "DefaultPreemption", "argsKind": "InterPodAffinityArgs",
                                                "args": {"hardPodAffinityWeight": 0,
                                                         "ignorePreferredTermsOfExistingPods": False}}]),
        [("Invalid", "profiles[0].pluginConfig[0].args")]),
    "duplicated-plugin-config": (
        _set(["profiles", 0, "pluginConfig"], [{"name": "config", "argsKind": None, "args": None},
                                               {"name": "config", "argsKind": None, "args": None}]),
        [("Duplicate", "profiles[0].pluginConfig[1]")]),
    "mismatch-queue-sort": (_mismatch_queue_sort, [("Invalid", "profiles[1].plugins.queueSort")]),
    "valid-plugins": (_valid_plugins, []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_validate_kube_scheduler_configuration_v1(name):
    change, want = CASES[name]
    cfg = valid_config()
    change(cfg)
    got = [(e.kind, e.path) for e in validate_configuration(copy.deepcopy(cfg))]
    assert got == want
