from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.routers import DefaultRouter, SimpleRouter

from . import views

root = DefaultRouter()
root.register("clusters", views.ClusterViewSet, basename="cluster")
root.register("profiles", views.ProfileViewSet, basename="profile")

child = SimpleRouter()
child.register("nodes", views.NodeViewSet, basename="node")
child.register("pods", views.PodViewSet, basename="pod")
child.register("cycles", views.CycleViewSet, basename="cycle")
child.register("events", views.EventViewSet, basename="event")

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("clusters/<slug:cluster_name>/", include(child.urls)),
    path("", include(root.urls)),
]
