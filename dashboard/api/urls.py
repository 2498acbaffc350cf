from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.routers import DefaultRouter, SimpleRouter

from . import views


class ChildRouter(SimpleRouter):
    """SimpleRouter where a viewset's ``lookup_pattern``, a regex with named groups of its own, replaces the one
    lookup group (pods: namespace and name)."""

    def get_lookup_regex(self, viewset, lookup_prefix=""):
        return getattr(viewset, "lookup_pattern", None) or super().get_lookup_regex(viewset, lookup_prefix)

root = DefaultRouter()
root.register("clusters", views.ClusterViewSet, basename="cluster")
root.register("profiles", views.ProfileViewSet, basename="profile")

child = ChildRouter()
child.register("nodes", views.NodeViewSet, basename="node")
child.register("pods", views.PodViewSet, basename="pod")
child.register("cycles", views.CycleViewSet, basename="cycle")
child.register("events", views.EventViewSet, basename="event")
child.register("tokens", views.ClusterTokenViewSet, basename="cluster-token")
child.register("members", views.MembershipViewSet, basename="member")
child.register("whatif", views.WhatIfViewSet, basename="whatif")

profile_child = SimpleRouter()
profile_child.register("versions", views.VersionViewSet, basename="profile-version")

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("clusters/<slug:cluster_name>/timeline/", views.TimelineView.as_view(), name="cluster-timeline"),
    path("clusters/<slug:cluster_name>/", include(child.urls)),
    path("profiles/<str:profile_name>/", include(profile_child.urls)),
    path("", include(root.urls)),
]
