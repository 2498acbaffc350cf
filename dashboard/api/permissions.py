"""The API's permission: signed-in users read; writes need the editor role, a view's admin_actions admin."""
from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

from ..access import is_admin, is_editor


class RolePermission(BasePermission):
    """Read: any authenticated user. Write: editors; actions named in the view's ``admin_actions``: admins."""

    def has_permission(self, request, view):
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if request.method in SAFE_METHODS:
            return True
        if getattr(view, "action", None) in getattr(view, "admin_actions", ()):
            return is_admin(user)
        return is_editor(user)
