"""Hypothesis over the scenario/manifest and configuration parsers: whatever the input, the only
exceptions are the clean validation errors (ScenarioError, ConfigError, FrameworkError)."""
from __future__ import annotations

import os

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from scheduler_core.config import ConfigError, load_config  # noqa: E402
from scheduler_core.framework.profile import FrameworkError  # noqa: E402
from scheduler_core.plugins.registry import in_tree_registry  # noqa: E402
from scheduler_core.scenario import ScenarioError, load_documents, scenario_from_data  # noqa: E402

EXAMPLES = int(os.environ.get("SCHEDSCOPE_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
TRIED = {}

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                    st.text(max_size=12),
                    st.sampled_from(["100m", "1Gi", "-1", "1e3", "0.5", "abc", "", "In", "NotIn", "Exists",
                                     "NoSchedule", "DoNotSchedule", "kubernetes.io/hostname", "v1", "Pod", "Node"]))
KEYS = ["metadata", "name", "namespace", "uid", "labels", "spec", "status", "containers", "resources",
        "requests", "limits", "cpu", "memory", "pods", "allocatable", "capacity", "nodeSelector", "affinity",
        "nodeAffinity", "podAffinity", "podAntiAffinity", "tolerations", "taints", "key", "operator", "values",
        "effect", "topologySpreadConstraints", "maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector",
        "matchLabels", "matchExpressions", "priority", "nodeName", "schedulingGates", "initContainers", "ports",
        "hostPort", "volumes", "nodes", "pods", "pending", "items", "kind", "apiVersion", "config", "overhead",
        "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", "weight", "image"]
json_like = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), inner, max_size=5)), max_leaves=40)


def _node(extra):
    return {"metadata": {"name": "n1", "labels": extra.get("labels", {})}, "spec": extra.get("spec", {}),
            "status": extra.get("status", {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}})}


structured = st.fixed_dictionaries({
    "nodes": st.lists(st.one_of(json_like, st.dictionaries(st.sampled_from(["labels", "spec", "status"]),
                                                            json_like).map(_node)), max_size=3),
    "pending": st.lists(st.one_of(json_like, st.fixed_dictionaries({
        "metadata": st.fixed_dictionaries({"name": st.text(min_size=1, max_size=5)}, optional={"labels": json_like}),
        "spec": st.dictionaries(st.sampled_from(KEYS), json_like, max_size=4)})), max_size=3),
}, optional={"pods": json_like, "config": json_like, "kind": scalars, "items": json_like})


def _count(name):
    TRIED[name] = TRIED.get(name, 0) + 1


@FUZZ
@given(st.one_of(json_like, structured))
def test_scenario_parser_raises_only_scenario_error(data):
    _count("scenario")
    try:
        scenario_from_data(data, label="fuzz")
    except ScenarioError:
        pass


@FUZZ
@given(st.one_of(st.text(max_size=200), st.sampled_from([
    "a: &x [1, 2]\nb: *x\n", "!!python/object/apply:os.system ['true']\n", "- !!binary AAAA\n",
    "--- {a: 1}\n--- [\n", "x: !!python/name:os.system\n", "? [a]\n: b\n", "\t- a\n", "a: b: c\n"])))
def test_yaml_documents_raise_only_scenario_error(text):
    _count("yaml")
    try:
        load_documents(text, "fuzz.yaml")
    except ScenarioError:
        pass


config_like = st.one_of(json_like, st.fixed_dictionaries({
    "apiVersion": st.sampled_from(["kubescheduler.config.k8s.io/v1", "v1", ""]),
    "kind": st.sampled_from(["KubeSchedulerConfiguration", "Pod"]),
}, optional={
    "profiles": st.lists(st.fixed_dictionaries({}, optional={
        "schedulerName": st.one_of(st.text(max_size=8), scalars),
        "plugins": st.dictionaries(st.sampled_from(["filter", "score", "preFilter", "multiPoint", "queueSort", "bind"]),
                                   st.dictionaries(st.sampled_from(["enabled", "disabled"]), st.lists(
                                       st.fixed_dictionaries({"name": st.sampled_from(
                                           ["NodeResourcesFit", "TaintToleration", "*", "Nope", "PrioritySort",
                                            "DefaultBinder", "ImageLocality"])},
                                           optional={"weight": st.integers(-5, 2**40)}), max_size=3)), max_size=2),
        "pluginConfig": st.lists(st.fixed_dictionaries({"name": st.sampled_from(
            ["NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "DefaultPreemption", "x"])},
            optional={"args": json_like}), max_size=2),
        "percentageOfNodesToScore": scalars}), max_size=2),
    "extenders": json_like,
    "percentageOfNodesToScore": scalars,
    "parallelism": scalars,
}))


@FUZZ
@given(config_like)
def test_config_parser_raises_only_config_errors(doc):
    _count("config")
    try:
        load_config(doc, in_tree_registry())
    except (ConfigError, FrameworkError):
        pass


def test_report_fuzz_counts():
    """Prints how many inputs each parser was given (run with -s)."""
    print(f"\nFUZZ cases tried: {TRIED} (max_examples={EXAMPLES} per parser)")
