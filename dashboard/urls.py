from django.contrib import admin
from django.urls import include, path

from . import views

handler404 = "dashboard.errors.not_found"
handler403 = "dashboard.errors.forbidden"

urlpatterns = [
    path("", views.index, name="index"),
    path("admin/", admin.site.urls),
    path("api/", include("dashboard.api.urls")),
    path("metrics", views.metrics_view, name="metrics"),
    path("clusters/<slug:name>/", views.overview, name="overview"),
    path("clusters/<slug:name>/control/<str:op>/", views.control, name="control"),
    path("clusters/<slug:name>/pending/", views.pending, name="pending"),
    path("clusters/<slug:name>/scenario/", views.scenario_upload, name="scenario-upload"),
    path("clusters/<slug:name>/kube-version/", views.kube_version, name="kube-version"),
    path("clusters/<slug:name>/new/node/", views.node_new, name="node-new"),
    path("clusters/<slug:name>/new/pod/", views.pod_new, name="pod-new"),
    path("clusters/<slug:name>/pods/<str:namespace>/<str:pod_name>/edit/", views.pod_edit, name="pod-edit"),
    path("clusters/<slug:name>/pods/<str:namespace>/<str:pod_name>/delete/", views.pod_delete, name="pod-delete"),
    path("clusters/<slug:name>/nodes/<str:node_name>/edit/", views.node_edit, name="node-edit"),
    path("clusters/<slug:name>/nodes/<str:node_name>/delete/", views.node_delete, name="node-delete"),
    path("clusters/<slug:name>/pods/<str:namespace>/<str:pod_name>/", views.pod, name="pod"),
    path("clusters/<slug:name>/pods/<str:namespace>/<str:pod_name>/bind/", views.pod_bind, name="pod-bind"),
    path("clusters/<slug:name>/shadow/", views.shadow, name="shadow"),
    path("clusters/<slug:name>/nodes/", views.nodes, name="nodes"),
    path("clusters/<slug:name>/nodes/<str:node_name>/", views.node, name="node"),
    path("clusters/<slug:name>/events/", views.events, name="events"),
    path("clusters/<slug:name>/whatif/", views.whatif_page, name="whatif"),
    path("clusters/<slug:name>/whatif/<int:run_id>/", views.whatif_run, name="whatif-run"),
    path("clusters/<slug:name>/whatif/<int:run_id>/pods/<slug:section>/", views.whatif_drain_pods,
         name="whatif-drain-pods"),
    path("clusters/<slug:name>/whatif/<int:run_id>/status/", views.whatif_status, name="whatif-status"),
    path("clusters/<slug:name>/whatif/<int:run_id>/traces/<int:number>/", views.whatif_trace, name="whatif-trace"),
    path("clusters/<slug:name>/k8s/", include("dashboard.k8sapi.urls")),
    path("profiles/", include("dashboard.profiles.urls")),
]
