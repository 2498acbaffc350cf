"""The live path of one process: one channel-layer member per group, fanned out to the process's websockets.

A websocket used to be a member of its cluster's and its user's groups: each connect cost two group adds, each
close two discards (200 closing together exhausted the Redis pool and left their members behind), and every
broadcast was copied to each socket's channel. Now each process (per event loop) has one ``LiveHub`` with one
channel: it joins a group when a local socket first needs it and leaves when the last one goes, renews its
memberships while it has sockets (the layer's ``group_expiry`` then drops a member left by a process that died),
encodes each update once for all its sockets, and keeps what a new socket's hello needs (queue counts, rate,
latest cycle) from the updates it receives, reading the database only when they are older than HELLO_MAX_AGE.
When the layer fails, every local socket is closed (browsers reconnect and refetch) and the hub starts afresh.
"""
from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import weakref
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from channels.layers import get_channel_layer
from django.db import InterfaceError, OperationalError, connection

from ..access import visible_to
from . import queries
from .broadcast import ACCESS_GROUP, attach_loop, group_name

log = logging.getLogger("dashboard.live")
HELLO_MAX_AGE = 2.0          # seconds a hello's counts may be old when no update refreshed them
LAYER_FAILED = 4503          # close code when the channel layer fails (the browser reconnects); servers may
                             # send only 1000 and 3000-4999 (autobahn refuses 1011)

_hubs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# The live path's database work (a connect's one query, hello counts, access checks) runs in these threads, which
# keep their connections: not in Channels' one sync thread, where it would queue behind page views, and with no
# new PostgreSQL connection per call (database_sync_to_async closes it each time with CONN_MAX_AGE 0). Several,
# because a connect mostly waits (for Redis, then PostgreSQL).
DB_THREADS = 4
_db = ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="live-db")


def _with_connection(fn, *args):
    try:
        return fn(*args)
    except (InterfaceError, OperationalError):   # the server closed the kept connection: once more on a new one
        connection.close()
        return fn(*args)


async def run_db(fn, *args):
    """``fn(*args)`` in the live path's database thread."""
    return await asyncio.get_running_loop().run_in_executor(_db, _with_connection, fn, *args)


def close_db() -> None:
    """Close the live database threads' connections (tests, before their database is dropped)."""
    barrier = threading.Barrier(DB_THREADS)

    def close():   # one call per thread: each waits for the others, then closes its own connection
        barrier.wait(10)
        connection.close()
    for future in [_db.submit(close) for _ in range(DB_THREADS)]:
        future.result()


def current() -> LiveHub:
    """The hub of the running event loop (the web process has one; each test's loop gets its own)."""
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = LiveHub(get_channel_layer())
        attach_loop(loop)
    return hub


def _still_visible(pairs: set) -> set:
    """Of (user id, cluster id) pairs, those whose user may still see the cluster: one query per user."""
    by_user = defaultdict(set)
    for user_id, cluster_id in pairs:
        by_user[user_id].add(cluster_id)
    return {(user_id, cid) for user_id, ids in by_user.items()
            for cid in visible_to(user_id).filter(pk__in=ids).values_list("pk", flat=True)}


class LiveHub:
    """Websockets register with ``join`` (their cluster's group and the access group) and ``leave``; the hub
    calls their ``push(text)``, ``close(code=...)`` and reads ``user_id`` and ``cluster_id``."""

    def __init__(self, layer):
        self.layer = layer
        self.renew_every = getattr(layer, "group_expiry", 86400) / 4
        self.sockets = defaultdict(set)      # group -> local sockets in it
        self.joined = set()                  # groups this hub's channel is a member of
        self.counts = {}                     # cluster group -> (monotonic time, hello counts)
        self.seen_cycle = {}                 # cluster group -> latest cycle seq an update brought
        self._locks = defaultdict(asyncio.Lock)
        self._loading = {}                   # cluster group -> task reading its counts
        self._channel = None
        self._workers = []                   # the channel's receiver and renewer
        self._tasks = set()

    # -- sockets' side ----------------------------------------------------------------------------
    async def join(self, socket) -> None:
        """Register a socket in its cluster's group and the access group, joining them on the layer first if
        this process is not in them yet. Raises if the layer fails (the socket is then not registered)."""
        groups = (group_name(socket.cluster_id), ACCESS_GROUP)
        for group in groups:
            self.sockets[group].add(socket)   # first: a concurrent last leave must not discard the group
        try:
            for group in groups:
                if group not in self.joined:
                    async with self._locks[group]:
                        if group not in self.joined:
                            channel = await self._channel_name()
                            await self.layer.group_add(group, channel)
                            if channel != self._channel:   # the layer failed meanwhile
                                raise ConnectionError("the channel layer was reset")
                            self.joined.add(group)
        except BaseException:
            self.leave(socket)
            raise

    def leave(self, socket) -> None:
        """Unregister a socket; a group left without local sockets is discarded on the layer (in a task: a close
        waits for nothing and raises nothing)."""
        for group in (group_name(socket.cluster_id), ACCESS_GROUP):
            members = self.sockets.get(group)
            if members is not None:
                members.discard(socket)
                if not members:
                    self._spawn(self._discard_if_unused(group))

    async def hello(self, cluster_id: int) -> dict:
        """Queue counts, rate and latest cycle of a cluster whose group this hub is in: as the last update left
        them, or read from the database (one read at a time per cluster) if that is older than HELLO_MAX_AGE."""
        group = group_name(cluster_id)
        cached = self.counts.get(group)
        if cached is None or time.monotonic() - cached[0] > HELLO_MAX_AGE:
            task = self._loading.get(group)
            if task is None:
                task = self._loading[group] = asyncio.ensure_future(self._load_counts(group, cluster_id))
            await asyncio.shield(task)
            cached = self.counts.get(group) or (0, await task)
        counts = dict(cached[1])
        counts["last_cycle"] = max(counts["last_cycle"] or 0, self.seen_cycle.get(group, 0)) or None
        return counts

    # -- the layer's side ----------------------------------------------------------------------------
    async def _channel_name(self) -> str:
        """This hub's channel, with its receiver and renewer (started with the first group it joins)."""
        if self._channel is None:
            self._channel = await self.layer.new_channel()
            self._workers = [asyncio.ensure_future(self._receive(self._channel)),
                             asyncio.ensure_future(self._renew(self._channel))]
        return self._channel

    def _drop_channel(self):
        """Forget the channel and stop its receiver and renewer (no group left, or the layer failed)."""
        self._channel = None
        current_task = asyncio.current_task()
        for task in self._workers:
            if task is not current_task:
                task.cancel()
        self._workers = []

    async def _receive(self, channel):
        while channel == self._channel:
            try:
                message = await self.layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception as err:
                if channel == self._channel:
                    await self._lost(err)
                return
            try:
                await self._deliver(message)
            except Exception:  # one bad message must not end the live path of every socket
                log.exception("live message %s not delivered", message.get("type"))

    async def _deliver(self, message: dict):
        group, kind = message.get("group"), message.get("type")
        if kind == "cluster.update":
            body = {k: v for k, v in message.items() if k not in ("type", "group")}
            self._note_update(group, body)
            text = json.dumps({"kind": "update", **body})
            for socket in list(self.sockets.get(group, ())):
                try:
                    await socket.push(text)
                except Exception:  # a socket closing meanwhile
                    log.debug("update not sent to a closing websocket", exc_info=True)
        elif kind == "access.changed":
            if group == ACCESS_GROUP:
                user_id = message.get("user_id")
                sockets = [s for s in self.sockets.get(ACCESS_GROUP, ()) if s.user_id == user_id]
            else:
                sockets = list(self.sockets.get(group, ()))
            visible = await run_db(_still_visible, {(s.user_id, s.cluster_id) for s in sockets})
            for socket in sockets:
                if (socket.user_id, socket.cluster_id) not in visible:
                    await socket.close(code=4404)

    def _note_update(self, group: str, body: dict):
        cycles = body.get("cycles") or []
        if cycles and cycles[-1].get("seq"):
            self.seen_cycle[group] = max(self.seen_cycle.get(group, 0), cycles[-1]["seq"])
        cached = self.counts.get(group)
        if cached is not None and body.get("queue"):
            queue = body["queue"]
            counts = dict(cached[1], queue={k: v for k, v in queue.items() if k not in ("rate", "p50", "p99")},
                          rate=queue.get("rate", cached[1]["rate"]))
            self.counts[group] = (time.monotonic(), counts)

    async def _load_counts(self, group: str, cluster_id: int) -> dict:
        try:
            counts = await run_db(queries.live_counts, cluster_id)
            if group in self.joined:
                self.counts[group] = (time.monotonic(), counts)
            return counts
        finally:
            self._loading.pop(group, None)

    async def _renew(self, channel):
        """Renew this hub's memberships (their timestamps) well within the layer's group_expiry."""
        while channel == self._channel:
            await asyncio.sleep(self.renew_every)
            for group in list(self.joined):
                try:
                    async with self._locks[group]:   # not after a leave of the group has discarded it
                        if group in self.joined and channel == self._channel:
                            await self.layer.group_add(group, channel)
                except Exception as err:  # the receiver sees the outage too and resets the hub
                    log.warning("live group %s not renewed: %s", group, err)

    async def _discard_if_unused(self, group: str):
        async with self._locks[group]:
            if self.sockets.get(group) or group not in self.joined:
                return
            self.joined.discard(group)
            self.sockets.pop(group, None)
            self.counts.pop(group, None)
            self.seen_cycle.pop(group, None)
            try:
                await self.layer.group_discard(group, self._channel)
            except Exception as err:  # the membership expires after group_expiry without renewals
                log.info("live group %s not left (%s); its member expires", group, err)
            if not self.joined and not any(self.sockets.values()) and self._channel is not None:
                self._drop_channel()

    async def _lost(self, err):
        """The layer failed: forget every membership and close every local socket (their browsers reconnect)."""
        log.warning("live updates lost the channel layer (%s); closing %d websockets", err,
                    len(self.sockets.get(ACCESS_GROUP, ())))
        sockets = set().union(*self.sockets.values()) if self.sockets else set()
        self._drop_channel()
        self.joined.clear()
        self.sockets.clear()
        self.counts.clear()
        self.seen_cycle.clear()
        for socket in sockets:
            try:
                await socket.close(code=LAYER_FAILED)
            except Exception:
                log.debug("websocket already closed", exc_info=True)

    def _spawn(self, coro):
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
