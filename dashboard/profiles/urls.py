from django.contrib.auth import views as auth_views
import re
from urllib.parse import quote, unquote

from django.urls import path, register_converter

from scheduler_core.versions import SUPPORTED_VERSIONS

from . import views
from ..signin import PasswordChangeView


class ProfileName:
    """A profile's name as one path segment: any name (a "/" or "%" too) is quoted in the URL."""

    regex = "[^/]+"

    def to_python(self, value):
        return unquote(value)

    def to_url(self, value):
        return quote(value, safe="")


class KubeVersion:
    """A supported Kubernetes version ("1.36"), as a built-in profile's address names it."""

    regex = "|".join(re.escape(v) for v in SUPPORTED_VERSIONS)

    def to_python(self, value):
        return value

    def to_url(self, value):
        return value


register_converter(ProfileName, "profile")
register_converter(KubeVersion, "kubeversion")

app_name = "profiles"
urlpatterns = [
    path("", views.profile_list, name="list"),
    path("login/", auth_views.LoginView.as_view(template_name="profiles/login.html"), name="login"),
    path("password/", PasswordChangeView.as_view(), name="password_change"),
    path("logout/", auth_views.LogoutView.as_view(next_page="profiles:list"), name="logout"),
    path("dry-runs/<int:run_id>/", views.dry_run_view, name="dry_run"),
    path("dry-runs/<int:run_id>/status/", views.dry_run_status, name="dry_run_status"),
    path("v<kubeversion:kube_version>-default/", views.builtin, name="builtin"),
    path("<profile:name>/", views.edit, name="edit"),
    path("<profile:name>/convert/", views.convert, name="convert"),
    path("<profile:name>/copy/", views.copy, name="copy"),
    path("<profile:name>/v/<int:number>/", views.version_view, name="version"),
    path("<profile:name>/v/<int:number>/rollback/", views.rollback, name="rollback"),
    path("<profile:name>/v/<int:number>/apply/", views.apply, name="apply"),
    path("<profile:name>/v/<int:number>/dry-run/", views.dry_run, name="start_dry_run"),
]
