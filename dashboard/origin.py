"""Websockets open only from the site's own pages, as Django's CSRF check accepts a form: the ``Origin`` header
equal, by scheme, host and port, to the site the socket was opened on (its ``Host``, ``ws`` as http and ``wss`` as
https) or to one of CSRF_TRUSTED_ORIGINS (``https://*.example.com`` admits its subdomains); the ``Host`` one of
ALLOWED_HOSTS."""
from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain


def _header(scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


def origin_allowed(scope) -> bool:
    """Whether the websocket ``scope`` comes from a page of this site or of a trusted origin."""
    origin, host = _header(scope, b"origin"), _header(scope, b"host")
    if not origin or not host or not validate_host(split_domain_port(host)[0], settings.ALLOWED_HOSTS):
        return False
    site = f"{'https' if scope.get('scheme') == 'wss' else 'http'}://{host}"
    if origin == site or origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    parsed = urlsplit(origin)
    return any(parsed.scheme == trusted.scheme and is_same_domain(parsed.netloc, trusted.netloc.lstrip("*"))
               for trusted in map(urlsplit, settings.CSRF_TRUSTED_ORIGINS) if "*" in trusted.netloc)


class SameOriginValidator:
    """ASGI middleware: a websocket whose origin is not allowed (``origin_allowed``) is refused (403)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.app(scope, receive, send)
