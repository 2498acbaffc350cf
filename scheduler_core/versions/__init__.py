"""Kubernetes versions as data: what kube-scheduler, and the kube-apiserver beside it, is at each supported version.

``v1_30`` is the base table; each later module states only its differences from the one before (gates added,
changed or removed, in-tree plugins added or removed, the default profile's changes, the kinds its informers
follow, the named differences of behaviour, ``CHANGES``, and kube-apiserver's: the group versions it serves and
the fields it knows of each object, read by ``objects.apifields``). ``kube_version(v)`` folds them into a ``KubeVersion``; ``features(v, feature_gates)``
applies a run's ``--feature-gates`` to it and gives the ``Features`` every plugin reads when it is built (kube's
``plfeature.Features``): ``enabled(gate)`` for a gate, ``has(change)`` for a difference of behaviour. Nothing
reads a version per node or per pod: plugins keep what they need as attributes.

Adding a version: a module ``v1_NN.py`` with its differences from the previous one, listed in ``_RELEASES``.
"""
from __future__ import annotations

import re
from functools import lru_cache

from . import v1_30, v1_36
from .featuregates import FeatureGateError, Gate, parse_gate_settings, resolve_gates

__all__ = ["SUPPORTED_VERSIONS", "DEFAULT_VERSION", "LATEST_VERSION", "VersionError", "FeatureGateError",
           "KubeVersion", "Features", "kube_version", "features", "nearest_supported", "Gate"]

_RELEASES = (v1_30, v1_36)
SUPPORTED_VERSIONS = tuple(r.VERSION for r in _RELEASES)
DEFAULT_VERSION = "1.30"       # what a caller that names no version gets (the command line, older callers)
LATEST_VERSION = SUPPORTED_VERSIONS[-1]
_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


class VersionError(ValueError):
    """A Kubernetes version this implementation does not have."""


def _minor(text) -> tuple:
    m = _VERSION_RE.match(text.strip()) if isinstance(text, str) else None
    if not m:
        raise VersionError(f"invalid Kubernetes version {text!r}: expected e.g. \"1.36\" or \"v1.36.2\"")
    return int(m.group(1)), int(m.group(2))


def parse_version(text) -> str:
    """"1.36", "v1.36" or "v1.36.2" -> "1.36"; a version that is not supported is a VersionError."""
    major, minor = _minor(text)
    name = f"{major}.{minor}"
    if name not in SUPPORTED_VERSIONS:
        raise VersionError(f"Kubernetes version {text} is not supported: supported versions are "
                           f"{', '.join(SUPPORTED_VERSIONS)}")
    return name


def nearest_supported(git_version: str) -> str:
    """The supported version closest to a server's ``gitVersion`` (``v1.35.4-eks-1`` -> "1.36"); on a tie the
    newer one."""
    major, minor = _minor(git_version)
    if major != 1:
        raise VersionError(f"invalid Kubernetes version {git_version!r}: not a 1.x release")
    return min(SUPPORTED_VERSIONS, key=lambda v: (abs(int(v.split(".")[1]) - minor), -int(v.split(".")[1])))


class KubeVersion:
    """Everything that differs by version, folded from the base table and each later version's differences."""

    def __init__(self, releases):
        base = releases[0]
        self.name = releases[-1].VERSION
        self.release = releases[-1].RELEASE
        self.gates = dict(base.GATES)
        self.gate_dependencies = dict(base.GATE_DEPENDENCIES)
        self.implemented_gates = dict(base.IMPLEMENTED_GATES)
        self.in_tree_plugins = list(base.IN_TREE_PLUGINS)
        self.default_plugins = list(base.DEFAULT_PLUGINS)
        self.gated_default_plugins = tuple(base.GATED_DEFAULT_PLUGINS)
        self.changes = dict(base.CHANGES)
        self.change_versions = {name: base.VERSION for name in base.CHANGES}
        self.unknown_gate_is_error = base.UNKNOWN_GATE_IS_ERROR
        self.informers = tuple(base.INFORMERS)
        self.api_group_versions = tuple(base.API_GROUP_VERSIONS)
        self.api_fields = dict(base.API_FIELDS)
        self.pod_gated_fields = dict(base.POD_GATED_FIELDS)
        for rel in releases[1:]:
            for name in rel.GATES_REMOVED:
                self.gates.pop(name, None)
            self.gates.update(rel.GATES)
            self.gate_dependencies = dict(rel.GATE_DEPENDENCIES)
            for name in rel.IMPLEMENTED_GATES_REMOVED:
                self.implemented_gates.pop(name, None)
            self.implemented_gates.update(rel.IMPLEMENTED_GATES)
            self.in_tree_plugins = [p for p in self.in_tree_plugins if p not in rel.IN_TREE_PLUGINS_REMOVED]
            self.in_tree_plugins += [p for p in rel.IN_TREE_PLUGINS_ADDED if p not in self.in_tree_plugins]
            self.default_plugins = [p for p in self.default_plugins if p[0] not in rel.DEFAULT_PLUGINS_REMOVED]
            self.gated_default_plugins = tuple(rel.GATED_DEFAULT_PLUGINS)
            self.changes.update(rel.CHANGES)
            self.change_versions.update({name: rel.VERSION for name in rel.CHANGES})
            self.unknown_gate_is_error = rel.UNKNOWN_GATE_IS_ERROR
            self.informers += rel.INFORMERS_ADDED
            self.api_group_versions += rel.API_GROUP_VERSIONS_ADDED
            for message, numbers in rel.API_FIELDS_REMOVED.items():
                self.api_fields[message] = {n: f for n, f in self.api_fields[message].items() if n not in numbers}
            for message, fields in rel.API_FIELDS_ADDED.items():
                self.api_fields[message] = {**self.api_fields.get(message, {}), **fields}

    def __repr__(self):
        return f"KubeVersion({self.name})"

    def default_multi_point(self, enabled) -> list:
        """getDefaultPlugins + applyFeatureGates: [(name, weight)] of the default profile's MultiPoint set, for
        ``enabled`` ({gate: bool})."""
        plugins = list(self.default_plugins)
        for gate, name, weight, before in self.gated_default_plugins:
            if not enabled.get(gate):
                continue
            at = next((i for i, (n, _w) in enumerate(plugins) if n == before), None) if before else None
            if at is None:
                plugins.append((name, weight))
            else:
                plugins.insert(at, (name, weight))
        return plugins


@lru_cache(maxsize=None)
def kube_version(version=None) -> KubeVersion:
    """The KubeVersion of a supported version ("1.36", "v1.36.2"; None: DEFAULT_VERSION)."""
    name = parse_version(version) if version is not None else DEFAULT_VERSION
    upto = [r for r in _RELEASES if _minor(r.VERSION) <= _minor(name)]
    return KubeVersion(upto)


class Features:
    """One run's version and feature gates: what plugins, defaults and validation read when they are built."""

    __slots__ = ("version", "gates", "warnings", "settings")

    def __init__(self, version: KubeVersion, gates: dict, warnings=(), settings=None):
        self.version = version
        self.gates = gates
        self.warnings = list(warnings)
        self.settings = dict(settings or {})

    @property
    def name(self) -> str:
        """"1.30", "1.36", ..."""
        return self.version.name

    def enabled(self, gate: str) -> bool:
        """Whether a gate is on (a gate the version does not know is a KeyError, as kube panics)."""
        return self.gates[gate]

    def has(self, change: str) -> bool:
        """Whether this version has a named difference of behaviour (``CHANGES`` of its version or an earlier one)."""
        return change in self.version.changes

    def default_multi_point(self) -> list:
        return self.version.default_multi_point(self.gates)

    def pod_as_read(self, pod):
        """A parsed Pod as this version's kube-scheduler reads it: without pod-level resources (a field before
        PodLevelResources) and with its status resources unread (InPlacePodVerticalScaling off) when this version
        has neither (the implemented gates allow no other mix), with its pod-level status resources unread when
        InPlacePodLevelResourcesVerticalScaling is off; the pod itself otherwise."""
        if not (self.gates.get("PodLevelResources") and self.gates.get("InPlacePodVerticalScaling")):
            return pod.without_newer_resources()
        if not self.gates.get("InPlacePodLevelResourcesVerticalScaling"):
            return pod.without_pod_level_status()
        return pod

    def __eq__(self, other):
        return isinstance(other, Features) and other.version is self.version and other.gates == self.gates

    def __hash__(self):
        return hash((self.version.name, tuple(sorted(self.settings.items()))))

    def __repr__(self):
        extra = ",".join(f"{k}={'true' if v else 'false'}" for k, v in self.settings.items())
        return f"Features({self.name}{', ' + extra if extra else ''})"


def features(version=None, feature_gates=None) -> Features:
    """A version's Features with ``feature_gates`` applied (kube's ``--feature-gates`` text, a {name: bool}
    mapping, or None). Raises VersionError or FeatureGateError (kube's text; a gate whose value this
    implementation does not have is refused too, naming it)."""
    if isinstance(version, Features):
        if feature_gates:
            raise FeatureGateError("feature gates are already applied to these Features")
        return version
    kv = kube_version(version)
    settings = parse_gate_settings(feature_gates)
    enabled, warnings = resolve_gates(kv.gates, settings, unknown_is_error=kv.unknown_gate_is_error,
                                      dependencies=kv.gate_dependencies)
    for gate, values in kv.implemented_gates.items():
        if gate in enabled and enabled[gate] not in values:
            raise FeatureGateError(f"feature gate {gate}={'true' if enabled[gate] else 'false'}: this implementation "
                                   f"of Kubernetes {kv.name} has only {gate}="
                                   f"{'|'.join('true' if v else 'false' for v in values)}")
    return Features(kv, enabled, warnings, settings)
