"""The Redis channel layer against the real Redis: it waits out its own blocking pops, replaces a pooled
connection that the server closed (as after a Redis restart) instead of failing the websocket consumer, and
bounds its pool, making a burst of commands wait for a connection rather than fail (MaxConnectionsError)."""
from __future__ import annotations

import asyncio

import pytest
from channels.layers import get_channel_layer
from redis.asyncio import BlockingConnectionPool, Redis


def test_socket_reads_outlast_the_blocking_pop():
    layer = get_channel_layer()
    pool = layer.create_pool(0)
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


@pytest.mark.asyncio
async def test_a_burst_beyond_the_pool_waits_instead_of_failing():
    layer = get_channel_layer()
    pool = layer.create_pool(0)
    assert isinstance(pool, BlockingConnectionPool) and pool.max_connections <= 50
    group = "burst-test"
    channels = [await layer.new_channel() for _ in range(5 * pool.max_connections)]
    try:
        await asyncio.gather(*(layer.group_add(group, c) for c in channels))
        await asyncio.gather(*(layer.group_discard(group, c) for c in channels))
        redis = layer.connection(layer.consistent_hash(group))
        assert await redis.zcard(layer._group_key(group)) == 0
    finally:
        await layer.flush()
