"""Changing who may see and edit a cluster (memberships, the restricted flag), each change in the AuditLog.

The admin's Cluster page and the API's /api/clusters/<name>/members/ both go through here.
"""
from __future__ import annotations

from django.db import transaction

from ..models import Cluster, ClusterMembership
from ..profiles.models import AuditLog
from . import broadcast


def _by(user):
    return user if user is not None and user.is_authenticated else None


def save(membership: ClusterMembership, by) -> ClusterMembership:
    """Create ``membership``, or store the unsaved changes made to it; audited as membership.grant or .change."""
    with transaction.atomic():
        before = (ClusterMembership.objects.select_related("user").filter(pk=membership.pk).first()
                  if membership.pk else None)
        membership.save()
        detail = {"user": membership.user.get_username(), "role": membership.role}
        if before is not None:
            detail["was"] = {"user": before.user.get_username(), "role": before.role}
        AuditLog.objects.create(user=_by(by), action="membership.change" if before else "membership.grant",
                                cluster=membership.cluster, detail=detail)
        if before is not None and before.user_id != membership.user_id:
            broadcast.access_changed(user_id=before.user_id)
    return membership


def delete(membership: ClusterMembership, by) -> None:
    """Remove ``membership``; audited as membership.revoke."""
    with transaction.atomic():
        AuditLog.objects.create(user=_by(by), action="membership.revoke", cluster=membership.cluster,
                                detail={"user": membership.user.get_username(), "role": membership.role})
        membership.delete()
        broadcast.access_changed(user_id=membership.user_id)


def record_restricted(cluster: Cluster, by) -> None:
    """Audit a change of ``cluster.restricted`` (already saved) as cluster.restrict or cluster.unrestrict."""
    AuditLog.objects.create(user=_by(by), action="cluster.restrict" if cluster.restricted else "cluster.unrestrict",
                            cluster=cluster, detail={"restricted": cluster.restricted})
    if cluster.restricted:
        broadcast.access_changed(cluster_id=cluster.id)


def user_changed(sender, instance, created=False, update_fields=None, **kwargs) -> None:
    """post_save / post_delete of a user: deactivation or a lost staff flag may hide clusters from them (a login,
    which saves only last_login, changes nothing)."""
    if not created and update_fields != frozenset({"last_login"}):
        broadcast.access_changed(user_id=instance.pk)
