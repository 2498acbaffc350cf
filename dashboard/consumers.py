"""Websocket consumers: one Channels group per cluster, fed by the coalescing broadcaster."""
from __future__ import annotations

import asyncio

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth import get_user_model

from .access import visible_clusters
from .services import broadcast, queries


def _still_visible(user_id: int, cluster_id: int) -> bool:
    """Whether the user (read again: it may have been deactivated) may still see the cluster."""
    user = get_user_model().objects.filter(pk=user_id).first()
    return user is not None and visible_clusters(user).filter(pk=cluster_id).exists()


class ClusterConsumer(AsyncJsonWebsocketConsumer):
    """ws/clusters/<name>/: a ``hello`` with the current queue counts, then ``update`` messages.
    Signed-in users only (the session cookie, read by AuthMiddlewareStack); others are refused (4401). A cluster
    the user may not see is refused as one that does not exist (4404: reading needs only the viewer role, which
    every user who can see a cluster has, and a distinct code would tell that the name exists). When access
    changes (a membership revoked, the cluster restricted, the user deactivated: ``broadcast.access_changed``),
    each open socket checks its user again and closes with 4404 if the cluster is no longer visible."""

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        broadcast.attach_loop(asyncio.get_running_loop())
        name = self.scope["url_route"]["kwargs"]["name"]
        cluster = await database_sync_to_async(lambda: visible_clusters(user).filter(name=name).first())()
        if cluster is None:
            await self.close(code=4404)
            return
        self.cluster_id, self.user_id = cluster.id, user.pk
        self.group = broadcast.group_name(cluster.id)
        self.user_group = broadcast.user_group_name(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.channel_layer.group_add(self.user_group, self.channel_name)
        await self.accept()
        hello = await database_sync_to_async(queries.live_state)(cluster)
        await self.send_json({"kind": "hello", **hello})

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)
            await self.channel_layer.group_discard(self.user_group, self.channel_name)

    async def access_changed(self, event):
        if not await database_sync_to_async(_still_visible)(self.user_id, self.cluster_id):
            await self.close(code=4404)

    async def cluster_update(self, event):
        msg = {k: v for k, v in event.items() if k != "type"}
        await self.send_json({"kind": "update", **msg})
