from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

app_name = "profiles"
urlpatterns = [
    path("", views.profile_list, name="list"),
    path("login/", auth_views.LoginView.as_view(template_name="profiles/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="profiles:list"), name="logout"),
    path("<int:pk>/", views.edit, name="edit"),
    path("<int:pk>/convert/", views.convert, name="convert"),
    path("<int:pk>/v/<int:number>/", views.version_view, name="version"),
    path("<int:pk>/v/<int:number>/rollback/", views.rollback, name="rollback"),
    path("<int:pk>/v/<int:number>/apply/", views.apply, name="apply"),
    path("<int:pk>/v/<int:number>/dry-run/", views.dry_run, name="start_dry_run"),
    path("dry-runs/<int:run_id>/", views.dry_run_view, name="dry_run"),
    path("dry-runs/<int:run_id>/status/", views.dry_run_status, name="dry_run_status"),
]
