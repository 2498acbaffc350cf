"""Refuse request bodies over ``SCHEDSCOPE["MAX_BODY_BYTES"]`` with 413 before they are read.

Django's ASGI handler receives the whole body (spooling it to a temporary file) before any middleware
or view runs, so the limit is enforced around it: a declared Content-Length over the limit is answered
at once without reading a byte; a body without one (chunked) is counted as it arrives and cut off at
the limit. DATA_UPLOAD_MAX_MEMORY_SIZE is the second line for code that reads ``request.body``.
"""
from __future__ import annotations

import json


def _too_large(limit: int) -> bytes:
    return json.dumps({"detail": f"request body larger than {limit} bytes"}).encode()


class BodySizeLimit:
    """ASGI middleware for the ``http`` scope."""

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        for name, value in scope.get("headers") or ():
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    return await self._refuse(send, 400, b'{"detail": "invalid Content-Length"}')
                if declared > self.limit:
                    return await self._refuse(send, 413, _too_large(self.limit))
        seen = 0
        over = False
        started = False

        async def counting_receive():
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    over = True
                    return {"type": "http.disconnect"}   # Django stops reading and answers nothing
            return message

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counting_receive, tracking_send)
        if over and not started:
            await self._refuse(send, 413, _too_large(self.limit))

    @staticmethod
    async def _refuse(send, status: int, body: bytes):
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
