"""The API's permissions: signed-in users read; writes need the editor role (on the cluster, for cluster-scoped
views), a view's admin_actions admin; a cluster the user may not see answers 404 (dashboard.access)."""
from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

from ..access import ADMIN, EDITOR, VIEWER, at_least, cluster_role, is_admin, is_editor
from ..models import Cluster


def _admin_action(view) -> bool:
    return getattr(view, "action", None) in getattr(view, "admin_actions", ())


class RolePermission(BasePermission):
    """Read: any authenticated user. Write: editors; actions named in the view's ``admin_actions``: admins."""

    def has_permission(self, request, view):
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if request.method in SAFE_METHODS:
            return True
        if _admin_action(view):
            return is_admin(user)
        return is_editor(user)


class ClusterRolePermission(BasePermission):
    """Cluster-scoped views. Below ``clusters/<cluster_name>/`` the view's ``cluster_role()`` (404 for a cluster
    the user may not see) decides: viewers read, editors write, admins do the ``admin_actions``. On the cluster
    views themselves the queryset holds only visible clusters and the object check asks for the editor role on
    writes; their ``admin_actions`` (creating, changing, deleting clusters) are for admins."""

    def has_permission(self, request, view):
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if "cluster_name" in view.kwargs:
            role = view.cluster_role()
            if _admin_action(view):
                return at_least(role, ADMIN)
            return at_least(role, VIEWER if request.method in SAFE_METHODS else EDITOR)
        if _admin_action(view):
            return is_admin(user)
        return True

    def has_object_permission(self, request, view, obj):
        if isinstance(obj, Cluster) and request.method not in SAFE_METHODS and not _admin_action(view):
            return at_least(cluster_role(request.user, obj), EDITOR)
        return True
