"""Websocket consumers: a cluster's live updates, through the process's LiveHub."""
from __future__ import annotations

import json
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from .access import websocket_viewer
from .services import livehub

log = logging.getLogger("dashboard.live")


class ClusterConsumer(AsyncWebsocketConsumer):
    """ws/clusters/<name>/: a ``hello`` with the current queue counts, then ``update`` messages.
    Signed-in users only (the session cookie); others are refused (4401). A cluster the user may not see is
    refused as one that does not exist (4404: reading needs only the viewer role, which every user who can see a
    cluster has, and a distinct code would tell that the name exists). When access changes (a membership
    revoked, the cluster restricted, the user deactivated: ``broadcast.access_changed``), the open sockets
    concerned check their user again and close with 4404 if the cluster is no longer visible.

    A connect reads the session (from its cache) and makes one query (``access.websocket_viewer``); the socket
    has no channel of its own: the process's hub is the one member of the groups and pushes to its sockets."""

    channel_layer_alias = None   # no per-socket channel (see livehub)
    cluster_id = user_id = None
    _held = None

    async def connect(self):
        name = self.scope["url_route"]["kwargs"]["name"]
        session = self.scope.get("session")
        viewer = await database_sync_to_async(websocket_viewer)(session, name) if session is not None else None
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
