"""URLs below /clusters/<name>/k8s/: the Connect page (tokens), the kubeconfig of a new token (POST), and the API.

The API also answers below ``t/<token>/``: kubectl sends no credentials over plain HTTP, so the kubeconfig of an
HTTP deployment carries the token in the server URL.
"""
from django.urls import path, re_path

from . import views

urlpatterns = [
    path("connect/", views.connect, name="k8s-connect"),
    path("kubeconfig", views.kubeconfig, name="k8s-kubeconfig"),
    re_path(r"^t/(?P<token>[0-9a-f]+)/(?P<path>.*)$", views.api, name="k8s-api-token"),
    re_path(r"^(?P<path>.*)$", views.api, name="k8s-api"),
]
