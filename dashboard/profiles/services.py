"""Every write of a profile (create, save a version, roll back, apply, delete), each checked and audited; diffs,
permissions, and the worker's version hook.

A profile's document runs on every cluster that uses it, so a write needs the editor role on each of them
(``check_can_change``); its refusal names no cluster, as the user may not see some.
"""
from __future__ import annotations

import difflib

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Exists, Max, OuterRef
from django.utils.crypto import salted_hmac

from scheduler_core.versions import LATEST_VERSION, SUPPORTED_VERSIONS, VersionError

from .. import access
from ..models import Cluster, SchedulerProfile
from ..services import control, kubeversions
from .forms import dump_yaml
from .models import ActiveVersion, AuditLog, ProfileVersion, VersionSpan
from .validate import Problem, permission_problems

EDITOR_GROUP = access.EDITOR_GROUP
# kube-scheduler with no configuration file: the built-in profile of each version, which new profiles start from.
BUILTIN_DOCUMENT = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                    "profiles": [{"schedulerName": "default-scheduler"}]}


def builtin_name(kube_version: str) -> str:
    """The address of a version's built-in profile ("v1.36-default")."""
    return f"v{kube_version}-default"


def builtin_label(kube_version: str) -> str:
    return f"v{kube_version} default"


RESERVED_NAMES = frozenset({builtin_name(v) for v in SUPPORTED_VERSIONS} | {"login", "logout", "password", "dry-runs"})
# paths of the profile pages


class Invalid(ValueError):
    """The document fails the core's loader; ``problems`` are validate.Problem."""

    def __init__(self, problems):
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems


def is_editor(user) -> bool:
    """Editors save, dry-run and apply (dashboard.access: admins, the "editor" group, profiles.edit_profiles)."""
    return access.is_editor(user)


def _user_or_none(user):
    return user if user is not None and user.is_authenticated else None


def _reload_after_commit(clusters) -> None:
    """Tell the loops of ``clusters`` to rebuild their scheduler once the change is committed."""
    ids = [c.pk for c in clusters]
    transaction.on_commit(lambda: [control.send(pk, "reload") for pk in ids if control.is_driven(pk)])


def visible_profiles(user, profiles=None):
    """``profiles`` (default: all) narrowed to those ``user`` may know of: one no cluster uses, or one that a
    cluster the user sees uses (admins: all). A profile only restricted clusters use does not exist for others."""
    profiles = SchedulerProfile.objects.all() if profiles is None else profiles
    if access.is_admin(user):
        return profiles
    using = Cluster.objects.filter(profile=OuterRef("pk"))
    return profiles.filter(~Exists(using) | Exists(access.visible_clusters(user, using)))


def scenario_profile_name(cluster: Cluster, scenario_name: str) -> str:
    """The name of the profile a scenario's configuration becomes in ``cluster``: the same for every load of that
    scenario there, and telling neither the cluster's nor the scenario's name."""
    digest = salted_hmac("schedscope.scenario-profile", f"{cluster.pk}/{scenario_name}").hexdigest()
    return f"scenario-{digest[:12]}"


def _using(profile: SchedulerProfile) -> list:
    return list(Cluster.objects.filter(profile=profile).order_by("name"))


def can_change(user, profile: SchedulerProfile, target: Cluster | None = None) -> bool:
    """Whether ``user`` is an editor with the editor role on every cluster that uses ``profile`` (and on
    ``target``, a cluster the change would move to it). ``None`` is a command (manage.py), which may."""
    if user is None:
        return True
    if not is_editor(user):
        return False
    clusters = _using(profile) + ([target] if target is not None else [])
    return all(access.at_least(access.cluster_role(user, c), access.EDITOR) for c in clusters)


def check_can_change(user, profile: SchedulerProfile, target: Cluster | None = None) -> None:
    """PermissionDenied unless ``can_change``; the message names no cluster."""
    if not can_change(user, profile, target):
        raise PermissionDenied(f"changing profile {profile.name} needs the editor role on every cluster that "
                               "uses it" + (" and on the cluster it is applied to" if target is not None else ""))


def _locked(profile: SchedulerProfile, user, target: Cluster | None = None) -> SchedulerProfile:
    """The profile's row locked for the transaction, after checking the user may change it (under the lock)."""
    row = SchedulerProfile.objects.select_for_update().get(pk=profile.pk)
    check_can_change(user, row, target)
    return row


def _check_document(doc, user, kube_version: str, clusters=()) -> None:
    """Invalid unless the core's loader accepts ``doc`` at the profile's ``kube_version`` and at the version of
    each of ``clusters`` (that run it), and ``user`` may save it (extender URLs: validate.permission_problems)."""
    problems = (kubeversions.profile_problems(doc, kube_version, clusters) + permission_problems(doc, user)
                if doc else [])
    if problems:
        raise Invalid(problems)


def name_problem(name: str) -> str:
    """Why ``name`` cannot name a new profile ("" when it can): profiles are addressed by name
    (/profiles/<name>/)."""
    if not name.strip():
        return "a profile needs a name"
    if name in RESERVED_NAMES:
        return f'"{name}" is the address of another page; choose another name'
    return ""


def create(name: str, doc: dict, user, comment: str = "created", kube_version: str = LATEST_VERSION) -> SchedulerProfile:
    """A new profile for Kubernetes ``kube_version`` (no cluster uses it yet) with ``doc`` as its version 1, active;
    audited. ``user`` None: a command. Invalid when the name is not allowed (``name_problem``), the version is
    not supported or the document is refused at it."""
    if user is not None and not is_editor(user):
        raise PermissionDenied("only editors can create scheduler profiles")
    problem = name_problem(name)
    if problem:
        raise Invalid([Problem(f"name: {problem}", "name", "name")])
    try:
        kube_version = kubeversions.parse_version(kube_version)
    except VersionError as err:
        raise Invalid([Problem(f"kube_version: {err}", "version", "kube_version")]) from None
    _check_document(doc, user, kube_version)
    with transaction.atomic():
        profile = SchedulerProfile.objects.create(name=name, document=doc, kube_version=kube_version)
        version = ProfileVersion.objects.create(profile=profile, number=1, document=doc, author=_user_or_none(user),
                                                comment=comment)
        ActiveVersion.objects.create(profile=profile, version=version)
        AuditLog.objects.create(user=version.author, action="create", profile=profile, version=version,
                                detail={"comment": comment})
    return profile


def delete(profile: SchedulerProfile, user) -> list:
    """Delete ``profile``: the clusters that used it run kube's defaults from now on (reloaded). Audited (the
    entry keeps the name). Returns those clusters."""
    with transaction.atomic():
        row = _locked(profile, user)
        targets = _using(row)
        AuditLog.objects.create(user=_user_or_none(user), action="delete", profile=None, cluster=None,
                                detail={"profile": row.name, "clusters": [c.name for c in targets]})
        ActiveVersion.objects.filter(profile=row).delete()   # it protects its version from the cascade
        row.delete()
        _reload_after_commit(targets)
    return targets


def ensure_versions(profile: SchedulerProfile) -> ProfileVersion:
    """A profile edited here for the first time gets version 1 (its current document), which is active."""
    with transaction.atomic():
        latest = profile.versions.order_by("-number").first()
        if latest is None:
            latest = ProfileVersion.objects.create(profile=profile, number=1, document=profile.document,
                                                   comment="initial (existing document)")
            ActiveVersion.objects.get_or_create(profile=profile, defaults={"version": latest})
    return latest


def active_version(profile: SchedulerProfile):
    av = ActiveVersion.objects.filter(profile=profile).select_related("version").first()
    return av.version if av else None


def find_version(ref: str):
    """The version ``NAME:N`` of profile NAME, or for ``NAME`` its active (else latest) version; None if none."""
    name, _, number = str(ref).partition(":")
    versions = ProfileVersion.objects.filter(profile__name=name).select_related("profile")
    if number:
        number = number.removeprefix("v")
        return versions.filter(number=number).first() if number.isdigit() else None
    profile = SchedulerProfile.objects.filter(name=name).first()
    return (active_version(profile) or versions.order_by("-number").first()) if profile is not None else None


def save_version(profile: SchedulerProfile, doc: dict, user, comment: str = "") -> ProfileVersion:
    """A new version of the profile (not applied); raises Invalid unless the core's loader accepts the
    document and ``user`` may save it (validate.permission_problems), PermissionDenied unless ``can_change``.
    Audited."""
    with transaction.atomic():
        row = _locked(profile, user)
        _check_document(doc, user, row.kube_version, _using(row))
        number = (profile.versions.aggregate(m=Max("number"))["m"] or 0) + 1
        version = ProfileVersion.objects.create(profile=profile, number=number, document=doc,
                                                author=_user_or_none(user), comment=comment)
        AuditLog.objects.create(user=version.author, action="save", profile=profile, version=version,
                                detail={"comment": comment})
    return version


def rollback(version: ProfileVersion, user) -> ProfileVersion:
    """A new version with an older version's document (it is not applied until someone applies it)."""
    with transaction.atomic():
        new = save_version(version.profile, version.document, user, f"roll back to v{version.number}")
        AuditLog.objects.create(user=new.author, action="rollback", profile=version.profile, version=new,
                                detail={"from": version.number})
    return new


def diff(a: ProfileVersion, b: ProfileVersion) -> str:
    """Unified diff of the two documents as YAML."""
    return "".join(difflib.unified_diff(dump_yaml(a.document).splitlines(True), dump_yaml(b.document).splitlines(True),
                                        f"v{a.number}", f"v{b.number}"))


def apply(version: ProfileVersion, user, cluster: Cluster | None = None) -> list:
    """Make ``version`` the profile's running document; with ``cluster``, that cluster uses the profile.
    Every cluster on the profile reloads its scheduler (no restart). PermissionDenied unless ``can_change``
    (with ``cluster`` as the target). Audited. Returns the clusters told."""
    profile = version.profile
    with transaction.atomic():
        row = _locked(profile, user, cluster)
        # saved already (the user's extender check was made then); checked again at the versions it will run at
        _check_document(version.document, None, row.kube_version,
                        _using(row) + ([cluster] if cluster is not None and cluster.profile_id != row.pk else []))
        SchedulerProfile.objects.filter(pk=profile.pk).update(document=version.document)
        ActiveVersion.objects.update_or_create(profile=profile, defaults={"version": version})
        if cluster is not None:
            Cluster.objects.filter(pk=cluster.pk).update(profile=profile)
        targets = _using(profile)
        AuditLog.objects.create(user=_user_or_none(user), action="apply",
                                profile=profile, version=version, cluster=cluster,
                                detail={"clusters": [c.name for c in targets], "number": version.number})
        _reload_after_commit(targets)
    return targets


def save_and_apply(name: str, doc: dict, user, cluster: Cluster, comment: str) -> SchedulerProfile:
    """The profile ``name`` (created if there is none) with ``doc`` as its newest version, applied with
    ``cluster`` moved to it (a scenario's configuration), checked and audited as every write."""
    with transaction.atomic():
        profile = SchedulerProfile.objects.filter(name=name).first()
        if profile is None:
            profile = create(name, doc, user, comment, kubeversions.cluster_version(cluster))
            version = active_version(profile)
        else:
            ensure_versions(profile)
            version = save_version(profile, doc, user, comment)
        apply(version, user, cluster)
    return profile


def running_document(cluster: Cluster) -> tuple:
    """(the cluster's row read now, the document its scheduler runs (None: kube's defaults), the ProfileVersion
    that document is (None: a document not managed here))."""
    row = Cluster.objects.select_related("profile").filter(pk=cluster.pk).first() or cluster
    if not row.profile_id:
        return row, None, None
    # SchedulerProfile.document is what runs (apply writes it; a scenario load may replace it);
    # the active version names it only while their documents agree.
    doc = row.profile.document
    av = ActiveVersion.objects.filter(profile_id=row.profile_id).select_related("version").first()
    version = av.version if av is not None and av.version.document == doc else None
    return row, doc or None, version


def note_span(cluster: Cluster, recorder, version, features, feature_gates: str) -> None:
    """Note that from the recorder's next cycle on the cluster runs profile ``version`` at ``features``' Kubernetes
    version with ``feature_gates`` (a new span only when one of them changed)."""
    first_seq = getattr(recorder, "next_seq", None)
    if first_seq is None:
        return
    last = VersionSpan.objects.filter(cluster_id=cluster.pk).order_by("-first_seq", "-id").first()
    now = (version.pk if version else None, features.name, feature_gates)
    if last is None or (last.version_id, last.kube_version, last.feature_gates) != now:
        VersionSpan.objects.create(cluster_id=cluster.pk, version=version, first_seq=first_seq,
                                   kube_version=features.name, feature_gates=feature_gates)


def engine_profile(cluster: Cluster, recorder) -> tuple:
    """(the document a scheduler of ``cluster`` runs now, its versions.Features); notes from which cycle on it runs
    them. Called by the engine whenever it builds the scheduler (start, reload after an apply or a version
    change)."""
    row, doc, version = running_document(cluster)
    features = kubeversions.cluster_features(row)
    note_span(cluster, recorder, version, features, row.feature_gates)
    return doc, features


def span_of_cycle(cluster: Cluster, seq: int):
    """The VersionSpan cycle ``seq`` of the cluster was made in (None: before any was noted)."""
    return (VersionSpan.objects.filter(cluster=cluster, first_seq__lte=seq).select_related("version")
            .order_by("-first_seq", "-id").first())


def version_of_cycle(cluster: Cluster, seq: int):
    """The ProfileVersion that made cycle ``seq`` (None: a document not managed here)."""
    span = span_of_cycle(cluster, seq)
    return span.version if span else None


def spans(cluster: Cluster, limit: int = 10) -> list:
    """Recent version spans of a cluster with their cycle counts, newest first."""
    from ..models import SchedulingCycle
    out, upper = [], None
    for span in VersionSpan.objects.filter(cluster=cluster).select_related("version").order_by("-first_seq", "-id")[:limit]:
        qs = SchedulingCycle.objects.filter(cluster=cluster, seq__gte=span.first_seq)
        if upper is not None:
            qs = qs.filter(seq__lt=upper)
        out.append({"span": span, "version": span.version, "cycles": qs.count()})
        upper = span.first_seq
    return out
