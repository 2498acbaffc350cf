"""The pages' and REST API's ASGI handler: a request's synchronous work in one hop to a pooled thread.

The project's views (pages, DRF) and its middleware are synchronous. Django's ASGI handler keeps the middleware
chain asynchronous, so every middleware (MiddlewareMixin) hops to the request's worker thread and back for its
process_request and again for its process_response, and it gives every request a new thread of its own (asgiref's
ThreadSensitiveContext) that request_started, the view and request_finished each reach in another hop. Here the
chain is built as the WSGI handler builds it, and a request's synchronous part runs whole in one call on one of
PAGE_THREADS long-lived threads, as under WSGI: request_started, the middleware and the view, and, for a response
that is not streamed, request_finished (which returns the request's database connection) once its content is
rendered; then the content is sent. A streamed response is sent as Django sends it and closed in the same pool.
The Kubernetes API has a handler of its own (``k8sapi.handler``).
"""
from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import FileResponse
from django.urls import set_script_prefix

PAGE_THREADS = int(os.environ.get("SCHEDSCOPE_PAGE_THREADS", "16"))
_pool = ThreadPoolExecutor(max_workers=PAGE_THREADS, thread_name_prefix="pages")


class PagesHandler(ASGIHandler):
    """Django's ASGI handler with the synchronous middleware chain of its WSGI handler, run in a thread pool."""

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        loop = asyncio.get_running_loop()
        try:
            response = await loop.run_in_executor(_pool, self._respond, scope, body_file)
            try:
                await self.send_response(response, send)
            finally:
                if response.streaming:
                    await loop.run_in_executor(_pool, response.close)
        finally:
            body_file.close()

    def _respond(self, scope, body_file):
        """The request's synchronous part, in a pool thread: a non-streamed response comes back closed."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            response._handler_class = self.__class__
            if isinstance(response, FileResponse):   # as ASGIHandler: ASGI servers chunk it
                response.block_size = self.chunk_size
        if not response.streaming:
            response.close()
        return response
