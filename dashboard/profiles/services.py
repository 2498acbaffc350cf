"""Versions (save, diff, roll back), apply with audit, permissions, and the worker's version hook."""
from __future__ import annotations

import difflib

from django.db import transaction
from django.db.models import Max

from .. import access
from ..models import Cluster, SchedulerProfile
from ..services import clusters as cluster_svc
from .forms import dump_yaml
from .models import ActiveVersion, AuditLog, ProfileVersion, VersionSpan
from .validate import check, permission_problems

EDITOR_GROUP = access.EDITOR_GROUP


class Invalid(ValueError):
    """The document fails the core's loader; ``problems`` are validate.Problem."""

    def __init__(self, problems):
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems


def is_editor(user) -> bool:
    """Editors save, dry-run and apply (dashboard.access: admins, the "editor" group, profiles.edit_profiles)."""
    return access.is_editor(user)


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


def save_version(profile: SchedulerProfile, doc: dict, user, comment: str = "") -> ProfileVersion:
    """A new version of the profile; raises Invalid unless the core's loader accepts the document and ``user``
    may save it (validate.permission_problems)."""
    problems = (check(doc) + permission_problems(doc, user)) if doc else []
    if problems:
        raise Invalid(problems)
    with transaction.atomic():
        SchedulerProfile.objects.select_for_update().get(pk=profile.pk)
        number = (profile.versions.aggregate(m=Max("number"))["m"] or 0) + 1
        version = ProfileVersion.objects.create(profile=profile, number=number, document=doc,
                                                author=user if user and user.is_authenticated else None,
                                                comment=comment)
        AuditLog.objects.create(user=version.author, action="save", profile=profile, version=version,
                                detail={"comment": comment})
    return version


def rollback(version: ProfileVersion, user) -> ProfileVersion:
    """A new version with an older version's document (it is not applied until someone applies it)."""
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
    Every cluster on the profile reloads its scheduler (no restart). Audited. Returns the clusters told."""
    problems = check(version.document) if version.document else []
    if problems:
        raise Invalid(problems)
    profile = version.profile
    with transaction.atomic():
        SchedulerProfile.objects.filter(pk=profile.pk).update(document=version.document)
        ActiveVersion.objects.update_or_create(profile=profile, defaults={"version": version})
        if cluster is not None:
            Cluster.objects.filter(pk=cluster.pk).update(profile=profile)
        targets = list(Cluster.objects.filter(profile=profile))
        AuditLog.objects.create(user=user if user and user.is_authenticated else None, action="apply",
                                profile=profile, version=version, cluster=cluster,
                                detail={"clusters": [c.name for c in targets], "number": version.number})
    for c in targets:
        cluster_svc.notify(c, "reload")
    return targets


def engine_profile(cluster: Cluster, recorder) -> dict | None:
    """The document a scheduler of ``cluster`` runs now; notes from which cycle on it runs that version.

    Called by the engine whenever it builds the scheduler (start, reload after an apply)."""
    row = Cluster.objects.select_related("profile").filter(pk=cluster.pk).first() or cluster
    if not row.profile_id:
        doc, version = None, None
    else:
        # SchedulerProfile.document is what runs (apply writes it; a scenario load may replace it);
        # the active version names it only while their documents agree.
        doc = row.profile.document
        av = ActiveVersion.objects.filter(profile_id=row.profile_id).select_related("version").first()
        version = av.version if av is not None and av.version.document == doc else None
    first_seq = getattr(recorder, "next_seq", None)
    if first_seq is not None:
        last = VersionSpan.objects.filter(cluster_id=cluster.pk).order_by("-first_seq", "-id").first()
        if last is None or last.version_id != (version.pk if version else None):
            VersionSpan.objects.create(cluster_id=cluster.pk, version=version, first_seq=first_seq)
    return doc or None


def version_of_cycle(cluster: Cluster, seq: int):
    """The ProfileVersion that made cycle ``seq`` (None: a document not managed here)."""
    span = VersionSpan.objects.filter(cluster=cluster, first_seq__lte=seq).order_by("-first_seq", "-id").first()
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
