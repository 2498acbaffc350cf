"""The Kubernetes version of clusters and profiles: whose rules a cluster's scheduler runs, with which feature gates,
the scheduler configuration built for a cluster, and the one check of a change of version, gates or profile.

A cluster's ``kube_version`` names a supported version ("1.30", "1.36"). Blank, on a real cluster, follows the
server: the supported version nearest its /version (``server_version``, read when its loop connects; the latest
supported one before it ever has). ``feature_gates`` is kube-scheduler's ``--feature-gates`` text, applied to the
version's defaults with kube's rules (scheduler_core.versions). A profile's ``kube_version`` is the version its
document is written for: a document is checked there and at the version of every cluster that runs it.
"""
from __future__ import annotations

from scheduler_core import versions
from scheduler_core.config import config_for
from scheduler_core.plugins.registry import in_tree_registry

from ..models import Cluster
from ..profiles import validate
from .admitted import ValidationFailed

_UNCHANGED = object()


def parse_version(text: str, *, blank_ok: bool = False) -> str:
    """"1.36", "v1.36" or "v1.36.2" -> "1.36" ("" stays "" when ``blank_ok``); VersionError otherwise."""
    text = (text or "").strip()
    if not text and blank_ok:
        return ""
    return versions.parse_version(text)


def cluster_version(cluster: Cluster) -> str:
    """The version whose rules the cluster's scheduler runs."""
    if cluster.kube_version:
        return cluster.kube_version
    if cluster.server_version:
        try:
            return versions.nearest_supported(cluster.server_version)
        except versions.VersionError:
            pass
    return versions.LATEST_VERSION


def cluster_features(cluster: Cluster) -> versions.Features:
    """The cluster's version with its feature gates applied (versions.Features)."""
    return versions.features(cluster_version(cluster), cluster.feature_gates or None)


def scheduler_config(cluster: Cluster, doc):
    """The SchedulerConfig a scheduler of ``cluster`` runs with profile document ``doc`` (None or {}: kube's
    defaults), at the cluster's version and feature gates. Raises ConfigError with kube's text."""
    return config_for(doc or None, in_tree_registry(), kube_version=cluster_features(cluster))


def release(cluster: Cluster) -> str:
    """The Kubernetes release of the cluster's version ("v1.36.2"), as its simulated API reports it."""
    return versions.kube_version(cluster_version(cluster)).release


def describe(cluster: Cluster) -> dict:
    """What a cluster's page says of its version: ``text`` ("Kubernetes 1.36 (kube-scheduler v1.36.2's rules)"),
    the version, its release, the gates set, whether it follows the server, and the server's version."""
    version, release_name = cluster_version(cluster), release(cluster)
    return {"version": version, "release": release_name, "feature_gates": cluster.feature_gates,
            "follows_server": cluster.kind == Cluster.REAL and not cluster.kube_version,
            "server_version": cluster.server_version,
            "text": f"Kubernetes {version} (kube-scheduler {release_name}'s rules)"}


def profile_problems(doc, profile_version: str, clusters=()) -> list:
    """kube's objections (validate.Problem) to a profile document at the profile's version and at the version and
    feature gates of each of ``clusters`` that run it; a cluster's problems name it."""
    if not doc:
        return []
    problems = validate.check(doc, versions.features(profile_version))
    if problems:
        return problems
    seen = {versions.features(profile_version)}
    for cluster in clusters:
        features = cluster_features(cluster)
        if features in seen:
            continue
        seen.add(features)
        for p in validate.check(doc, features):
            problems.append(validate.Problem(f"at Kubernetes {features.name} (cluster {cluster.name}): {p.message}",
                                             p.stage, p.path))
    return problems


def check_change(cluster: Cluster | None, *, kind=None, kube_version=_UNCHANGED, feature_gates=_UNCHANGED,
                 profile=_UNCHANGED) -> dict:
    """The one check of a change of a cluster's version, feature gates or profile (``cluster`` None: a new
    cluster, simulated at the latest version, real following its server; what is not given stays as it is).
    Returns {"kube_version", "feature_gates"} as stored (the version normalized, e.g. "v1.36.2" -> "1.36");
    raises ValidationFailed({field: [message]}) with kube's text for gates kube-scheduler refuses and for a
    profile its loader refuses at the resulting version."""
    kind = kind or (cluster.kind if cluster is not None else Cluster.SIMULATED)
    if kube_version is not _UNCHANGED:
        text = kube_version
    elif cluster is not None:
        text = cluster.kube_version
    else:
        text = "" if kind == Cluster.REAL else versions.LATEST_VERSION
    gates = feature_gates if feature_gates is not _UNCHANGED else (cluster.feature_gates if cluster else "")
    gates = (gates or "").strip()
    if profile is _UNCHANGED:
        profile = cluster.profile if cluster is not None else None
    try:
        version = parse_version(text, blank_ok=kind == Cluster.REAL)
    except versions.VersionError as err:
        raise ValidationFailed({"kube_version": [str(err)]}) from None
    probe = Cluster(kind=kind, kube_version=version, feature_gates=gates,
                    server_version=cluster.server_version if cluster is not None else "")
    try:
        features = cluster_features(probe)
    except versions.FeatureGateError as err:
        raise ValidationFailed({"feature_gates": [str(err)]}) from None
    if profile is not None and profile.document:
        problems = validate.check(profile.document, features)
        if problems:
            raise ValidationFailed({"profile": [f"profile {profile.name} at Kubernetes {features.name}: {p.message}"
                                                for p in problems]})
    return {"kube_version": version, "feature_gates": gates}
