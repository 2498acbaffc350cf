"""Access control: who is signed in, and roles as Django groups.

viewer  any signed-in user (the "viewer" group is for clarity): reads every page and the API;
editor  the "editor" group: scheduler profiles, dry runs, simulated-cluster edits (scenario loads, node and pod
        adds, start/stop/step, manual binds), the simulated clusters' kubeconfig;
admin   staff and superusers: clusters, credentials, users (and everything an editor does).
"""
from __future__ import annotations

from functools import wraps

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.core.exceptions import PermissionDenied

VIEWER_GROUP = "viewer"
EDITOR_GROUP = "editor"

# The simulated clusters' Kubernetes API checks its own bearer tokens (dashboard.k8sapi).
TOKEN_URLS = frozenset({"k8s-api", "k8s-api-token"})
# Pages that hand out a simulated cluster's token, which binds and deletes pods: editors only.
EDITOR_URLS = frozenset({"k8s-connect", "k8s-kubeconfig"})


def is_admin(user) -> bool:
    """Staff and superusers administer clusters, credentials and users."""
    return bool(user and user.is_authenticated and user.is_active and (user.is_staff or user.is_superuser))


def is_editor(user) -> bool:
    """Editors: admins, the "editor" group, or holders of profiles.edit_profiles."""
    if not (user and user.is_authenticated and user.is_active):
        return False
    return (is_admin(user) or user.has_perm("profiles.edit_profiles")
            or user.groups.filter(name=EDITOR_GROUP).exists())


def editor_required(view):
    """A page view only editors may use (403 otherwise; anonymous users were sent to sign in already)."""
    @wraps(view)
    def wrapper(request, *args, **kw):
        if not is_editor(request.user):
            raise PermissionDenied("only editors can change this")
        return view(request, *args, **kw)
    return wrapper


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Django's LoginRequiredMiddleware (sign-in redirect for every page), except for DRF views, which
    authenticate by session or token themselves and answer 401/403, and the token-checked Kubernetes API.
    Pages also accept an API token (``Authorization: Token ...``), e.g. ``curl`` fetching a kubeconfig."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        from rest_framework.authentication import TokenAuthentication  # not at import time: DRF's settings
        from rest_framework.exceptions import AuthenticationFailed  # import this package
        from rest_framework.views import APIView
        cls = getattr(view_func, "cls", None)
        if isinstance(cls, type) and issubclass(cls, APIView):
            return None
        name = request.resolver_match.url_name if request.resolver_match else None
        if name in TOKEN_URLS:
            return None
        if not request.user.is_authenticated:
            try:
                found = TokenAuthentication().authenticate(request)
            except AuthenticationFailed:
                found = None
            if found:
                request.user = found[0]
        response = super().process_view(request, view_func, view_args, view_kwargs)
        if response is None and name in EDITOR_URLS and not is_editor(request.user):
            raise PermissionDenied("only editors can see a cluster's token")
        return response


def role_context(request):
    """Template context: ``can_edit`` and ``is_admin`` for the signed-in user."""
    return {"can_edit": is_editor(request.user), "is_admin": is_admin(request.user)}
