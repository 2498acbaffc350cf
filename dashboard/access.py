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

from functools import cache, wraps

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Exists, OuterRef, Q, Subquery
from django.http import Http404
from django.utils.crypto import constant_time_compare

from .compiled import ANY_CLUSTER_ID, ANY_CLUSTER_NAME, ANY_USER_ID, fetch_one, instance, width
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
    """Editors: admins, the "editor" group, or holders of profiles.edit_profiles (given to the user or to one of
    their groups, as Django's ModelBackend grants it): one query."""
    if not (user and user.is_authenticated and user.is_active):
        return False
    return is_admin(user) or fetch_one(_editor_sql(), {ANY_USER_ID: user.pk}) is not None


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


def event_messages(events, role: str | None) -> list:
    """SchedulingEvents with the message a user of ``role`` on their cluster reads (``message_for``): a remote
    API server's error text and a kubeconfig file's problem only for its editors and admins."""
    events = list(events)
    editor = at_least(role, EDITOR)
    for ev in events:
        ev.message = ev.message_for(editor)
    return events


def cluster_role(user, cluster: Cluster) -> str | None:
    """The user's role on ``cluster``: admins are admin everywhere; on an unrestricted cluster the global role,
    raised by a membership; on a restricted one only the membership's role (None: the cluster is hidden)."""
    role = global_role(user)
    if role is None or role == ADMIN:
        return role
    member = fetch_one(_membership_sql(), {ANY_USER_ID: user.pk, ANY_CLUSTER_ID: cluster.pk})
    return _with_membership(role, member[0] if member is not None else None, cluster.restricted)


def _with_membership(role: str, member: str | None, restricted: bool) -> str | None:
    """A viewer's or editor's role on a cluster, given their membership role there (None: not a member)."""
    if restricted:
        return member
    return max(role, member, key=ROLE_ORDER.index)


def visible_clusters(user, clusters=None):
    """``clusters`` (default: all) narrowed to those the user has a role on: one query, for lists and searches."""
    clusters = Cluster.objects.all() if clusters is None else clusters
    if not (user and user.is_authenticated):
        return clusters.none()
    return visible_to(user.pk, clusters)


def visible_to(user_id: int, clusters=None):
    """``visible_clusters`` for a user known by id, decided in SQL from the user's row (active; admin, or the
    cluster unrestricted, or a member), so a caller holding no user object (the websocket) pays no query for it."""
    clusters = Cluster.objects.all() if clusters is None else clusters
    users = get_user_model().objects.filter(pk=user_id, is_active=True)
    admin = users.filter(Q(is_staff=True) | Q(is_superuser=True))
    member = ClusterMembership.objects.filter(cluster=OuterRef("pk"), user_id=user_id)
    return clusters.filter(Exists(users), Exists(admin) | Q(restricted=False) | Exists(member))


@cache
def _editor_sql() -> tuple[str, tuple]:
    """``is_editor``'s query: the user is in the editor group or holds profiles.edit_profiles, directly or
    through a group."""
    return (get_user_model().objects.filter(pk=ANY_USER_ID).filter(_editor_condition(OuterRef("pk")))
            .values_list("pk")[:1].query.sql_with_params())


def _editor_condition(user_id):
    """A condition on any query: the user ``user_id`` (a value or an OuterRef) is in the editor group or holds
    profiles.edit_profiles, directly or through a group."""
    from django.contrib.auth.models import Group, Permission
    perm = Permission.objects.filter(content_type__app_label="profiles", codename="edit_profiles")
    return (Exists(Group.objects.filter(user=user_id, name=EDITOR_GROUP)) | Exists(perm.filter(user=user_id))
            | Exists(perm.filter(group__user=user_id)))


@cache
def _membership_sql() -> tuple[str, tuple]:
    """``cluster_role``'s query: the user's membership role on the cluster."""
    return (ClusterMembership.objects.filter(cluster_id=ANY_CLUSTER_ID, user_id=ANY_USER_ID)
            .values_list("role")[:1].query.sql_with_params())


@cache
def _websocket_viewer_sql() -> tuple[str, tuple]:
    """The SQL of a websocket connect's query, with markers for the user id and cluster name: compiled once per
    process (Django's compiler took about 15 ms of CPU per connect, 10x the query itself)."""
    cluster = visible_to(ANY_USER_ID).filter(name=ANY_CLUSTER_NAME)
    return (get_user_model().objects.filter(pk=ANY_USER_ID, is_active=True)
            .annotate(cluster_id=Subquery(cluster.values("pk")[:1]),
                      cluster_state=Subquery(cluster.values("desired_state")[:1]))
            .values_list("password", "cluster_id", "cluster_state")[:1].query.sql_with_params())


def websocket_viewer(session, cluster_name: str) -> tuple[int, int | None, str] | None:
    """For a websocket connect: (user id, id of the cluster named ``cluster_name`` or None when the user may not
    see it, its desired state), or None when ``session`` signs no active user in. Django's session check (backend,
    the password-derived hash, fallback keys) on the user's row fetched with the cluster: one query (the session
    itself comes from its cache), its SQL compiled once."""
    user_model = get_user_model()
    try:
        user_id = user_model._meta.pk.to_python(session[SESSION_KEY])
        backend, session_hash = session[BACKEND_SESSION_KEY], session.get(HASH_SESSION_KEY) or ""
    except (KeyError, ValidationError):
        return None
    if backend not in settings.AUTHENTICATION_BACKENDS:
        return None
    row = fetch_one(_websocket_viewer_sql(), {ANY_USER_ID: user_id, ANY_CLUSTER_NAME: cluster_name})
    if row is None:
        return None
    user = user_model(pk=user_id, password=row[0])
    if not session_hash or not any(constant_time_compare(session_hash, h) for h in
                                   (user.get_session_auth_hash(), *user.get_session_auth_fallback_hash())):
        return None
    return user_id, row[1], row[2] or ""


@cache
def _cluster_by_name_sql() -> tuple[str, tuple]:
    """``get_cluster``'s query without filters (every request below clusters/<name>/ makes it), for an admin."""
    return Cluster.objects.filter(name=ANY_CLUSTER_NAME).order_by("pk")[:1].query.sql_with_params()


@cache
def _cluster_and_role_sql() -> tuple[str, tuple]:
    """``_cluster_by_name_sql`` with what decides a user's role on it: ``user_is_editor`` (``is_editor``'s
    condition) and ``member_role`` (their membership's role there, or NULL)."""
    member = ClusterMembership.objects.filter(cluster=OuterRef("pk"), user_id=ANY_USER_ID)
    return (Cluster.objects.filter(name=ANY_CLUSTER_NAME)
            .annotate(user_is_editor=_editor_condition(ANY_USER_ID),
                      member_role=Subquery(member.values("role")[:1]))
            .order_by("pk")[:1].query.sql_with_params())


def _cluster_with_role(user, name: str) -> tuple[Cluster | None, str | None]:
    """(the cluster named ``name`` or None, the user's role on it: ``cluster_role``) in one query."""
    if not (user and user.is_authenticated and user.is_active):
        return None, None
    if is_admin(user):
        row = fetch_one(_cluster_by_name_sql(), {ANY_CLUSTER_NAME: name})
        return (instance(Cluster, row), ADMIN) if row is not None else (None, None)
    row = fetch_one(_cluster_and_role_sql(), {ANY_CLUSTER_NAME: name, ANY_USER_ID: user.pk})
    if row is None:
        return None, None
    cluster = instance(Cluster, row)
    user_is_editor, member_role = row[width(Cluster):]
    return cluster, _with_membership(EDITOR if user_is_editor else VIEWER, member_role, cluster.restricted)


def get_cluster(user, name: str, needed: str = VIEWER, **filters) -> tuple[Cluster, str]:
    """(cluster, the user's role on it) for a cluster named ``name`` (and ``filters``). Http404 when there is none
    the user may see, PermissionDenied when the role is below ``needed``."""
    if filters:
        cluster = Cluster.objects.filter(name=name, **filters).first()
        role = cluster_role(user, cluster) if cluster is not None else None
    else:
        cluster, role = _cluster_with_role(user, name)
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
        from .api.authentication import TokenAuthentication  # not at import time: DRF's settings
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
