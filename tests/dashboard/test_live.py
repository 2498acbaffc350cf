"""The live path under load (Channels' WebsocketCommunicator, the Redis layer): a connect makes one query and,
after the process's first socket of a cluster, no group add; a process is one member of a group however many
sockets it holds, so closing them all at once raises nothing and leaves no member; a member left by a process
that died expires; a failing layer closes the sockets (browsers reconnect) and the next connect joins afresh."""
from __future__ import annotations

import asyncio
import json
import logging

import pytest
from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db.backends.utils import CursorWrapper
from django.test import Client

from dashboard.channel_layer import RedisChannelLayer
from dashboard.models import Cluster
from dashboard.services import broadcast, livehub

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://localhost")
HOST = (b"host", b"localhost")


def _signed_in(users: int, prefix: str) -> list:
    """Cookie headers of ``users`` new users, signed in as a page does (the session engine in settings)."""
    from django.contrib.auth.models import User
    cookies = []
    for user in User.objects.bulk_create([User(username=f"{prefix}{i}") for i in range(users)]):
        client = Client()
        client.force_login(user)
        cookies.append(f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode())
    return cookies


async def _open(cookie: bytes, cluster: str) -> WebsocketCommunicator:
    from dashboard.asgi import application
    comm = WebsocketCommunicator(application, f"/ws/clusters/{cluster}/", headers=[ORIGIN, HOST, (b"cookie", cookie)])
    connected, code = await comm.connect(timeout=30)
    assert connected, code
    hello = await comm.receive_json_from(timeout=30)
    assert hello["kind"] == "hello" and hello["cluster"] == cluster
    return comm


async def _members(group: str) -> int:
    layer = get_channel_layer()
    return await layer.connection(layer.consistent_hash(group)).zcard(layer._group_key(group))


async def _is_member(group: str, channel: str) -> bool:
    layer = get_channel_layer()
    redis = layer.connection(layer.consistent_hash(group))
    return await redis.zscore(layer._group_key(group), channel) is not None


async def _still_member_after_leaving(channel: str, *groups: str) -> list:
    """Whether ``channel`` (a hub's) is in each of ``groups`` once the hub's leaving tasks (started by the last
    socket's close) are done. (Other tests' hubs may have left members: their event loops ended first.)"""
    for _ in range(100):
        found = [await _is_member(g, channel) for g in groups]
        if not any(found):
            break
        await asyncio.sleep(0.05)
    return found


@pytest.fixture
def counted(monkeypatch):
    """Counts of SQL statements (in any thread) and of group adds on the channel layer."""
    counts = {"queries": 0, "group_adds": 0}
    execute, group_add = CursorWrapper._execute, get_channel_layer().group_add

    def counting_execute(self, *args, **kw):
        counts["queries"] += 1
        return execute(self, *args, **kw)

    async def counting_group_add(*args, **kw):
        counts["group_adds"] += 1
        return await group_add(*args, **kw)
    monkeypatch.setattr(CursorWrapper, "_execute", counting_execute)
    monkeypatch.setattr(get_channel_layer(), "group_add", counting_group_add)
    return counts


@pytest.mark.asyncio
async def test_a_connect_makes_one_query_and_updates_are_sent_once_per_process(counted):
    cluster = await database_sync_to_async(Cluster.objects.create)(name="cheap")
    cookies = await database_sync_to_async(_signed_in)(31, "cheap")
    first = await _open(cookies[0], "cheap")     # joins the groups and reads the counts for hellos
    counted.update(queries=0, group_adds=0)
    rest = [await _open(cookie, "cheap") for cookie in cookies[1:]]
    assert counted == {"queries": 30, "group_adds": 0}
    group = broadcast.group_name(cluster.id)
    assert await _members(group) == 1
    channel = livehub.current()._channel
    update = {"type": "cluster.update", "epoch": "e", "seq": 1, "queue": {"active": 7, "bound": 3, "rate": 2.5},
              "cycles": [{"seq": 41}], "new_cycles": 1, "events": [], "new_events": 0}
    await asyncio.to_thread(broadcast.publish, group, update)
    for comm in [first, *rest]:
        got = await comm.receive_json_from(timeout=10)
        assert got == {"kind": "update", **{k: v for k, v in update.items() if k != "type"}}
    # a hello after an update starts from it, without reading the counts again
    late = await _open(cookies[1], "cheap")
    assert counted["queries"] == 31
    for comm in [first, *rest, late]:
        await comm.disconnect()
    assert await _still_member_after_leaving(channel, group, broadcast.ACCESS_GROUP) == [False, False]


@pytest.mark.asyncio
async def test_two_hundred_sockets_closing_together_raise_nothing_and_leave_no_member(caplog):
    cluster = await database_sync_to_async(Cluster.objects.create)(name="storm")
    cookies = await database_sync_to_async(_signed_in)(200, "storm")
    comms = await asyncio.gather(*(_open(cookie, "storm") for cookie in cookies))
    group, channel = broadcast.group_name(cluster.id), livehub.current()._channel
    assert await _members(group) == 1 and await _is_member(broadcast.ACCESS_GROUP, channel)
    with caplog.at_level(logging.INFO):
        await asyncio.gather(*(comm.disconnect() for comm in comms))
        assert await _still_member_after_leaving(channel, group, broadcast.ACCESS_GROUP) == [False, False]
    assert await _members(group) == 0
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and r.name.startswith(
        ("dashboard", "channels", "uvicorn", "redis"))] == []


class FakeSocket:
    """What the hub needs of a websocket consumer."""

    def __init__(self, cluster_id: int, user_id: int = 1):
        self.cluster_id, self.user_id = cluster_id, user_id
        self.got, self.closed = [], None

    async def push(self, text):
        self.got.append(json.loads(text))

    async def close(self, code):
        self.closed = code


@pytest.mark.asyncio
async def test_a_member_left_by_a_dead_process_expires():
    layer = RedisChannelLayer(hosts=get_channel_layer().hosts, prefix="expiry-test", group_expiry=2)
    dead, alive = livehub.LiveHub(layer), livehub.LiveHub(layer)
    alive.renew_every = 0.3
    dead_socket, alive_socket = FakeSocket(99), FakeSocket(99)
    try:
        await dead.join(dead_socket)
        await alive.join(alive_socket)
        dead._drop_channel()    # the process dies: nobody leaves, nobody renews
        group = broadcast.group_name(99)
        redis = layer.connection(layer.consistent_hash(group))
        assert await redis.zcard(layer._group_key(group)) == 2
        await asyncio.sleep(3)
        await layer.group_send(group, {"type": "cluster.update", "group": group, "seq": 1})
        assert await redis.zcard(layer._group_key(group)) == 1   # the dead process's member expired
        for _ in range(100):
            if alive_socket.got:
                break
            await asyncio.sleep(0.05)
        assert alive_socket.got == [{"kind": "update", "seq": 1}]
    finally:
        alive.leave(alive_socket)
        await asyncio.sleep(0.2)
        await layer.flush()


class FailingLayer(InMemoryChannelLayer):
    """An in-memory layer whose receive fails once when told to (as the Redis layer does when Redis goes away)."""

    fail = False

    async def receive(self, channel):
        while not self.fail:
            try:
                return await asyncio.wait_for(super().receive(channel), 0.05)
            except asyncio.TimeoutError:
                continue
        self.fail = False
        raise ConnectionError("Error 111 connecting to redis")


@pytest.mark.asyncio
async def test_a_failing_layer_closes_the_sockets_and_the_next_connect_joins_afresh():
    layer = FailingLayer()
    hub = livehub.LiveHub(layer)
    first = FakeSocket(5)
    await hub.join(first)
    layer.fail = True
    for _ in range(100):
        if first.closed:
            break
        await asyncio.sleep(0.05)
    assert first.closed == livehub.LAYER_FAILED and hub.joined == set()
    assert 3000 <= first.closed <= 4999   # a code a server may send (autobahn refused 1011: the socket stayed open)
    again = FakeSocket(5)
    await hub.join(again)
    await layer.group_send(broadcast.group_name(5), {"type": "cluster.update", "group": "cluster-5", "seq": 2})
    for _ in range(100):
        if again.got:
            break
        await asyncio.sleep(0.05)
    assert again.got == [{"kind": "update", "seq": 2}] and first.got == []
    hub.leave(again)
