"""Websocket consumers: a cluster's live updates, through the process's LiveHub."""
from __future__ import annotations

import json
import logging
from importlib import import_module

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from .access import websocket_viewer
from .services import livehub

log = logging.getLogger("dashboard.live")


def _viewer(session_key: str, name: str):
    return websocket_viewer(import_module(settings.SESSION_ENGINE).SessionStore(session_key), name)


class ClusterConsumer(AsyncWebsocketConsumer):
    """ws/clusters/<name>/: a ``hello`` with the current queue counts, then ``update`` messages.
    Signed-in users only (the session cookie); others are refused (4401). A cluster the user may not see is
    refused as one that does not exist (4404: reading needs only the viewer role, which every user who can see a
    cluster has, and a distinct code would tell that the name exists). When access changes (a membership
    revoked, the cluster restricted, the user deactivated: ``broadcast.access_changed``), the open sockets
    concerned check their user again and close with 4404 if the cluster is no longer visible.

    A connect reads the session (from its cache) and makes one query (``access.websocket_viewer``), in the live
    path's database thread; the socket has no channel of its own: the process's hub is the one member of the
    groups and pushes to its sockets."""

    channel_layer_alias = None   # no per-socket channel (see livehub)
    cluster_id = user_id = None
    _held = None

    async def __call__(self, scope, receive, send):
        try:
            await super().__call__(scope, receive, send)
        finally:   # also when the server kills the instance (a handshake or shutdown timeout)
            if self.cluster_id is not None:
                self.hub.leave(self)

    async def dispatch(self, message):
        """Channels' dispatch without its hop to the sync thread to close old database connections before every
        handler: this consumer uses the database only through livehub.run_db."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self):
        name = self.scope["url_route"]["kwargs"]["name"]
        session_key = self.scope.get("cookies", {}).get(settings.SESSION_COOKIE_NAME)
        viewer = await livehub.run_db(_viewer, session_key, name) if session_key else None
        if viewer is None:
            await self.close(code=4401)
            return
        user_id, cluster_id, state = viewer
        if cluster_id is None:
            await self.close(code=4404)
            return
        self.user_id, self.cluster_id, self.hub = user_id, cluster_id, livehub.current()
        self._held = []   # updates that arrive before the hello is sent, sent right after it
        try:
            await self.hub.join(self)
        except Exception as err:  # the channel layer is away: refuse; the browser retries
            log.warning("websocket for %s refused: live updates unavailable (%s)", name, err)
            self.cluster_id = None
            await self.close(code=livehub.LAYER_FAILED)
            return
        await self.accept()
        counts = await self.hub.hello(cluster_id)
        await self.send(text_data=json.dumps({"kind": "hello", "cluster": name, "state": state, **counts}))
        while self._held:
            await self.send(text_data=self._held.pop(0))
        self._held = None

    async def disconnect(self, code):
        if self.cluster_id is not None:
            self.hub.leave(self)

    async def push(self, text: str):
        """An update from the hub, already encoded (held until the hello has gone)."""
        if self._held is not None:
            self._held.append(text)
        else:
            await self.send(text_data=text)
