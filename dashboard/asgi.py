"""ASGI entry point (``python -m dashboard.serve``, uvicorn): HTTP (with static files) and websockets."""
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")

import django  # noqa: E402

django.setup(set_prefix=False)

from .pages_handler import PagesHandler  # noqa: E402

django_app = PagesHandler()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.sessions import CookieMiddleware  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from .bodylimit import BodySizeLimit  # noqa: E402
from .k8sapi.handler import ApiHandler, split  # noqa: E402
from .origin import SameOriginValidator  # noqa: E402

from .routing import websocket_urlpatterns  # noqa: E402
from .services.embedded import autostart  # noqa: E402

application = ProtocolTypeRouter({
    # the simulated clusters' Kubernetes API skips the pages' middleware (dashboard.k8sapi.handler)
    "http": BodySizeLimit(split(ASGIStaticFilesHandler(django_app), ApiHandler()), settings.SCHEDSCOPE["MAX_BODY_BYTES"]),
    # the consumer reads the session and checks its user, with the cluster, in one query (access.websocket_viewer);
    # only pages of the site itself (or of CSRF_TRUSTED_ORIGINS) open one (dashboard.origin)
    "websocket": SameOriginValidator(CookieMiddleware(URLRouter(websocket_urlpatterns))),
})
autostart()
