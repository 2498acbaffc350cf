"""The pages' and REST API's ASGI handler: Django's middleware as one synchronous chain, entered once.

The project's views (pages, DRF) and its middleware are synchronous. Django's ASGI handler keeps the middleware
chain asynchronous, so every middleware (MiddlewareMixin) hops to the request's worker thread and back for its
process_request and again for its process_response: about twenty hops for nine middlewares, then one more for the
view. Built as the WSGI handler builds it, the chain runs whole in that thread after a single hop; what it does is
the same (the same middleware, in the same order, in the same thread-sensitive context, with the same request
signals). The Kubernetes API has a handler of its own (``k8sapi.handler``).
"""
from __future__ import annotations

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import FileResponse


class PagesHandler(ASGIHandler):
    """Django's ASGI handler with the synchronous middleware chain of its WSGI handler."""

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    async def run_get_response(self, request):
        response = await sync_to_async(self.get_response, thread_sensitive=True)(request)
        response._handler_class = self.__class__
        if isinstance(response, FileResponse):   # as ASGIHandler: ASGI servers chunk it
            response.block_size = self.chunk_size
        return response
