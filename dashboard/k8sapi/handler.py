"""The Kubernetes API's own ASGI handler: Django's request and response objects and URL resolution, without the
pages' middleware stack and per-request thread.

The API authenticates with its bearer tokens and answers as kube-apiserver does: no session, cookie, CSRF,
messages, login redirect or browser security headers apply to it. Under ASGI each of those (synchronous)
middlewares costs a hop to a worker thread and back, and Django's handler gives every request a thread of its own
for thread-sensitive code and sends request_started/finished through it; the API's view runs its database work in
the shared executor (``views.api``), so it needs none of that. The body limit, an ASGI wrapper around both
handlers, still holds, and a client that disconnects still cancels its request (a watch stops streaming). The
pages below the API's prefix (the Connect page and the kubeconfig download) keep the full stack.
"""
from __future__ import annotations

import asyncio
import re

from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.exception import convert_exception_to_response
from django.urls import ResolverMatch, set_script_prefix

from . import views

# dashboard.k8sapi.urls below clusters/<slug:name>/k8s/: every path but the two pages is the API's, with the
# token in the path or not
API_PATH = re.compile(r"^/clusters/(?P<name>[-a-zA-Z0-9_]+)/k8s/(?!connect/$|kubeconfig$)"
                      r"(?:t/(?P<token>[0-9a-f]+)/)?(?P<path>.*)$", re.DOTALL)


class ApiHandler(ASGIHandler):
    """Django's ASGI handler with no middleware, no per-request thread and no request signals."""

    def load_middleware(self, is_async=False):
        self._view_middleware, self._template_response_middleware, self._exception_middleware = [], [], []
        self._middleware_chain = convert_exception_to_response(
            self._get_response_async if is_async else self._get_response)

    def resolve_request(self, request):
        """The API's one view, with the name, token and path from API_PATH (the project's URL patterns, walked
        in order for every request, would find the same)."""
        m = API_PATH.match(request.path_info)
        kwargs = {"name": m["name"], "path": m["path"]}
        if m["token"] is not None:
            kwargs["token"] = m["token"]
        request.resolver_match = ResolverMatch(views.api, (), kwargs,
                                               url_name="k8s-api-token" if m["token"] is not None else "k8s-api")
        return request.resolver_match

    async def __call__(self, scope, receive, send):
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            await self._respond(error_response, send)
        else:   # answered (a watch: streamed) while the client's disconnect is listened for, which cancels it
            answer = asyncio.create_task(self._answer(request, send))
            disconnect = asyncio.create_task(self.listen_for_disconnect(receive))
            await asyncio.wait([answer, disconnect], return_when=asyncio.FIRST_COMPLETED)
            for task in (disconnect, answer):
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, RequestAborted):
                    pass
        body_file.close()

    async def _answer(self, request, send) -> None:
        await self._respond(await self.run_get_response(request), send)

    async def _respond(self, response, send) -> None:
        try:
            await self.send_response(response, send)
        finally:
            for closer in response._resource_closers:   # what response.close() does, without its signal
                try:
                    closer()
                except Exception:
                    pass


def split(pages, api):
    """An ASGI app sending the Kubernetes API's HTTP requests to ``api`` and everything else to ``pages``."""
    async def app(scope, receive, send):
        target = api if scope["type"] == "http" and API_PATH.match(scope.get("path", "")) else pages   # else 404s
        return await target(scope, receive, send)
    return app
