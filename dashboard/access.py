"""Access control: who is signed in, and roles as Django groups.

viewer  any signed-in user (the "viewer" group is for clarity): reads every page and the API;
editor  the "editor" group: scheduler profiles, dry runs, simulated-cluster edits (scenario loads, node and pod
        adds, start/stop/step, manual binds), the simulated clusters' kubeconfig;
admin   staff and superusers: clusters, credentials, users (and everything an editor does).

Per cluster (``cluster_role``): a ClusterMembership (viewer or editor) raises the global role on that cluster; a
restricted cluster is seen only by its members (with their membership's role) and admins; to everyone else it
does not exist (404, as for a cluster that is not there, so its name does not leak).
"""
from __future__ import annotations

from functools import wraps

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q
from django.http import Http404

from .models import Cluster, ClusterMembership

VIEWER_GROUP = "viewer"
EDITOR_GROUP = "editor"
VIEWER, EDITOR, ADMIN = "viewer", "editor", "admin"
ROLE_ORDER = (None, VIEWER, EDITOR, ADMIN)

# The simulated clusters' Kubernetes API checks its own bearer tokens (dashboard.k8sapi).
TOKEN_URLS = frozenset({"k8s-api", "k8s-api-token"})
# Pages that hand out a simulated cluster's token, which binds and deletes pods: editors of that cluster only.
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


def global_role(user) -> str | None:
    """The role outside any cluster: "admin", "editor", "viewer", or None for anonymous and inactive users."""
    if not (user and user.is_authenticated and user.is_active):
        return None
    if is_admin(user):
        return ADMIN
    return EDITOR if is_editor(user) else VIEWER


def at_least(role: str | None, needed: str) -> bool:
    """Whether ``role`` includes ``needed`` (admin > editor > viewer > None)."""
    return ROLE_ORDER.index(role) >= ROLE_ORDER.index(needed)


def cluster_role(user, cluster: Cluster) -> str | None:
    """The user's role on ``cluster``: admins are admin everywhere; on an unrestricted cluster the global role,
    raised by a membership; on a restricted one only the membership's role (None: the cluster is hidden)."""
    role = global_role(user)
    if role is None or role == ADMIN:
        return role
    member = ClusterMembership.objects.filter(cluster=cluster, user=user).values_list("role", flat=True).first()
    if cluster.restricted:
        return member
    return max(role, member, key=ROLE_ORDER.index)


def visible_clusters(user, clusters=None):
    """``clusters`` (default: all) narrowed to those the user has a role on: one query, for lists and searches."""
    clusters = Cluster.objects.all() if clusters is None else clusters
    role = global_role(user)
    if role is None:
        return clusters.none()
    if role == ADMIN:
        return clusters
    member = ClusterMembership.objects.filter(cluster=OuterRef("pk"), user=user)
    return clusters.filter(Q(restricted=False) | Exists(member))


def get_cluster(user, name: str, needed: str = VIEWER, **filters) -> tuple[Cluster, str]:
    """(cluster, the user's role on it) for a cluster named ``name`` (and ``filters``). Http404 when there is none
    the user may see, PermissionDenied when the role is below ``needed``."""
    cluster = Cluster.objects.filter(name=name, **filters).first()
    role = cluster_role(user, cluster) if cluster is not None else None
    if role is None:
        raise Http404(f"no cluster named {name!r}")
    if not at_least(role, needed):
        raise PermissionDenied(f"this needs the {needed} role on cluster {name}")
    return cluster, role


def cluster_view(needed: str = VIEWER, **filters):
    """Decorator of a page under clusters/<name>/: the view receives ``cluster`` instead of ``name`` (404 if the
    user may not see it, 403 below ``needed``); ``request.cluster_role`` is the user's role there."""
    def decorate(view):
        @wraps(view)
        def wrapper(request, name, *args, **kw):
            cluster, request.cluster_role = get_cluster(request.user, name, needed, **filters)
            return view(request, cluster, *args, **kw)
        return wrapper
    return decorate


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Django's LoginRequiredMiddleware (sign-in redirect for every page), except for DRF views, which
    authenticate by session or token themselves and answer 401/403, and the token-checked Kubernetes API.
    Pages also accept an API token (``Authorization: Token ...``, knox), e.g. ``curl`` fetching a page."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        from knox.auth import TokenAuthentication  # not at import time: DRF's settings
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
        if response is None and name in EDITOR_URLS:
            request.cluster_role = get_cluster(request.user, view_kwargs["name"], EDITOR)[1]
        return response


def role_context(request):
    """Template context: ``can_edit`` (on the page's cluster, if it has one) and ``is_admin``."""
    role = getattr(request, "cluster_role", None)
    can_edit = at_least(role, EDITOR) if role is not None else is_editor(request.user)
    return {"can_edit": can_edit, "is_admin": is_admin(request.user)}
