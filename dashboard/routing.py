from django.urls import path

from .consumers import ClusterConsumer

websocket_urlpatterns = [path("ws/clusters/<slug:name>/", ClusterConsumer.as_asgi())]
