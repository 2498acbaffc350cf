"""NodeDeclaredFeatures (framework/plugins/nodedeclaredfeatures, 1.35 alpha, 1.36 beta): a pod that needs a node
feature fits only nodes whose ``status.declaredFeatures`` list it. The features and what makes a pod need them are
k8s.io/component-helpers/nodedeclaredfeatures' (``DEFAULT_FRAMEWORK``)."""
from __future__ import annotations

from typing import Callable, NamedTuple

from ...framework.handle import features_of
from ...framework.interface import QUEUE, QUEUE_SKIP, FilterPlugin, PreFilterPlugin
from ...framework.status import Code, Status
from ...framework import signers
from .. import names

STATE_KEY = "PreFilter" + names.NODE_DECLARED_FEATURES
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"


class NodeFeature(NamedTuple):
    """types.Feature: a name, whether a pod spec needs it to be scheduled, and the last version it is inferred
    at ((major, minor, patch) or None)."""

    name: str
    infer_for_scheduling: Callable
    max_version: tuple | None = None


def _never(spec: dict) -> bool:
    return False


def _restarts_all_containers(spec: dict) -> bool:
    """restartallcontainers: a (init) container rule with action RestartAllContainers."""
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            for rule in (c.get("restartPolicyRules") or ()) if isinstance(c, dict) else ():
                if isinstance(rule, dict) and rule.get("action") == "RestartAllContainers":
                    return True
    return False


def _user_namespaces_host_network(spec: dict) -> bool:
    """usernamespaceshostnetwork: host network without host users."""
    return bool(spec.get("hostNetwork")) and spec.get("hostUsers") is False


class FeatureFramework:
    """nodedeclaredfeatures.Framework: its features sorted by name."""

    def __init__(self, features):
        self.features = tuple(sorted(features, key=lambda f: f.name))
        self.names = frozenset(f.name for f in self.features)

    def infer_for_pod_scheduling(self, spec: dict, version: tuple) -> frozenset:
        """InferForPodScheduling: the features the pod needs at ``version`` (features past their max version are
        not required)."""
        return frozenset(f.name for f in self.features
                         if not (f.max_version is not None and version > f.max_version) and f.infer_for_scheduling(spec))

    def try_map(self, declared) -> frozenset:
        """TryMap: the known features among the declared names (unknown ones are ignored)."""
        return frozenset(n for n in declared or () if n in self.names)


# features.AllFeatures of v1.36.2 (only two are ever required to schedule a pod; the others matter for updates).
DEFAULT_FRAMEWORK = FeatureFramework((
    NodeFeature("RestartAllContainersOnContainerExits", _restarts_all_containers),
    NodeFeature("InPlacePodLevelResourcesVerticalScaling", _never),
    NodeFeature("ExtendWebSocketsToKubelet", _never),
    NodeFeature("InPlacePodVerticalScalingInitContainers", _never),
    NodeFeature("UserNamespacesHostNetworkSupport", _user_namespaces_host_network),
))


def release_version(release: str) -> tuple:
    """"v1.36.2" -> (1, 36, 2)."""
    return tuple(int(x) for x in release.lstrip("v").split("-")[0].split("+")[0].split("."))


class NodeDeclaredFeatures(PreFilterPlugin, FilterPlugin):
    name = names.NODE_DECLARED_FEATURES
    filter_depends_on = "node"

    def __init__(self, enabled: bool, framework: FeatureFramework = DEFAULT_FRAMEWORK, version=(0, 0, 0)):
        self.enabled = enabled
        self.framework = framework
        self.version = version

    @classmethod
    def new(cls, args, handle):
        """New: disabled without the NodeDeclaredFeatures gate; the component version is the release's."""
        features = features_of(handle)
        if not features.enabled("NodeDeclaredFeatures"):
            return cls(False)
        return cls(True, DEFAULT_FRAMEWORK, release_version(features.version.release))

    def pre_filter(self, state, pod):
        if not self.enabled:
            return None, Status(Code.SKIP)
        reqs = self.framework.infer_for_pod_scheduling(pod.raw.get("spec") or {}, self.version)
        if not reqs:
            return None, Status(Code.SKIP)
        state.write(STATE_KEY, reqs)
        return None, None

    def pre_filter_extensions(self):
        return None

    def filter(self, state, pod, node_info):
        if not self.enabled:
            return None
        reqs = state.get(STATE_KEY)
        if reqs is None:
            return Status.error(f'error reading "{STATE_KEY}" from cycle-state: not found')
        declared = self.framework.try_map((node_info.node.raw.get("status") or {}).get("declaredFeatures"))
        if not reqs <= declared:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)
        return None

    def events_to_register(self):
        if not self.enabled:
            return ()
        return (("Node", ("Add", "UpdateNodeDeclaredFeature"), self.is_schedulable_after_node_change),
                ("Pod", ("Update",), self.is_schedulable_after_pod_update))

    def is_schedulable_after_pod_update(self, pod, old, new):
        """The pod's own update changed the features it needs."""
        if pod.uid != new.uid:
            return QUEUE_SKIP
        infer = self.framework.infer_for_pod_scheduling
        same = infer(old.raw.get("spec") or {}, self.version) == infer(new.raw.get("spec") or {}, self.version)
        return QUEUE_SKIP if same else QUEUE

    @staticmethod
    def is_schedulable_after_node_change(pod, old, new):
        """A new node, or one whose declared features changed."""
        if old is not None and (((old.raw.get("status") or {}).get("declaredFeatures") or []) ==
                                ((new.raw.get("status") or {}).get("declaredFeatures") or [])):
            return QUEUE_SKIP
        return QUEUE

    def sign_pod(self, pod):
        """Feasibility depends on the node features the pod requires."""
        reqs = self.framework.infer_for_pod_scheduling(pod.raw.get("spec") or {}, self.version)
        return [(signers.FEATURES, sorted(reqs))], None
