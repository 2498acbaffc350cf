"""The Redis channel layer against the real Redis: it waits out its own blocking pops and replaces a pooled
connection that the server closed (as after a Redis restart) instead of failing the websocket consumer."""
from __future__ import annotations

import pytest
from channels.layers import get_channel_layer
from channels_redis.utils import create_pool
from redis.asyncio import Redis


def test_socket_reads_outlast_the_blocking_pop():
    layer = get_channel_layer()
    pool = create_pool(layer.hosts[0])
    connection = pool.connection_class(**pool.connection_kwargs)
    assert connection.socket_timeout is None or connection.socket_timeout > layer.brpop_timeout


@pytest.mark.asyncio
async def test_a_connection_closed_by_the_server_is_replaced():
    layer = get_channel_layer()
    group, channel = "layer-test", None
    try:
        redis = layer.connection(layer.consistent_hash(group))
        doomed = await redis.client_id()          # the pooled connection the next command reuses
        killer = Redis.from_url(layer.hosts[0]["address"])
        await killer.client_kill_filter(_id=doomed)
        await killer.aclose()
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
        await layer.group_send(group, {"type": "probe", "n": 1})
        assert (await layer.receive(channel))["n"] == 1
    finally:
        if channel:
            await layer.group_discard(group, channel)
