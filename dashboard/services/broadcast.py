"""Coalesced live updates to the Channels group of a cluster.

Messages carry (epoch, seq): seq counts the messages of one broadcaster (epoch), so a client that sees
a gap, or a new epoch after a reconnect or a worker takeover, knows it missed updates and refetches.

Whatever happens between two ticks (queue counts, any number of new cycles and events) goes out as one
message per tick: counts plus the latest few items, so a burst of 1,000 cycles a second costs the
browser a couple of small messages a second.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

log = logging.getLogger("dashboard.broadcast")
MAX_ITEMS = 20
_server_loop = None


def group_name(cluster_id: int) -> str:
    return f"cluster-{cluster_id}"


# Access changes of one user go to this group (every process with websockets is in it), with the user's id.
ACCESS_GROUP = "access"


def access_changed(cluster_id: int | None = None, user_id: int | None = None) -> None:
    """After the transaction commits, tell the open websockets of a cluster and/or of a user to check their access
    again. If the channel layer is unreachable they are not told (logged); a new connection is checked anyway."""
    sends = [(group_name(cluster_id), {"type": "access.changed"})] if cluster_id is not None else []
    if user_id is not None:
        sends.append((ACCESS_GROUP, {"type": "access.changed", "user_id": user_id}))

    def send():
        for group, message in sends:
            try:
                publish(group, message)
            except Exception:  # the channel layer is unreachable: the change itself is committed
                log.warning("could not tell the open websockets of %s that access changed", group, exc_info=True)
    transaction.on_commit(send)


def attach_loop(loop) -> None:
    """Remember the ASGI server's event loop (the in-memory layer only works from that loop)."""
    global _server_loop
    _server_loop = loop


def publish(group: str, message: dict) -> None:
    """group_send from any thread; the message names its group (a process's LiveHub receives all its groups
    on one channel)."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = dict(message, group=group)
    if isinstance(layer, InMemoryChannelLayer):
        loop = _server_loop
        if loop is None or loop.is_closed():
            return  # no websocket was ever opened in this process: nobody listens
        asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop).result(timeout=5)
    else:
        async_to_sync(layer.group_send)(group, message)


def cycle_summary(rec: dict) -> dict:
    return {"seq": rec.get("seq"), "pod": rec.get("pod"), "result": rec.get("result"),
            "node": rec.get("bound_node") or "", "message": rec.get("error") or rec.get("message") or "",
            "attempt": rec.get("attempt"), "ms": (rec.get("durations_ms") or {}).get("total")}


def event_summary(ev: dict) -> dict:
    return {"time": ev["time"].isoformat(), "type": ev["type"], "reason": ev["reason"],
            "pod": f"{ev['pod_namespace']}/{ev['pod_name']}" if ev.get("pod_name") else "",
            "node": ev.get("node") or "", "message": ev["message"], "key": ev.get("key") or ""}


class Broadcaster:
    """Collects what changed and sends one coalesced ``cluster.update`` per interval."""

    def __init__(self, cluster_id: int, interval: float = 0.5):
        self.group = group_name(cluster_id)
        self.interval = interval
        self.seq = 0
        self.epoch = uuid.uuid4().hex[:12]   # a new broadcaster restarts seq: clients resync on a new epoch
        self._lock = threading.Lock()
        self._cycles, self._events = [], []
        self._new_cycles = self._new_events = 0
        self._queue = None
        self._dirty = False
        self._failing = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"broadcast-{cluster_id}", daemon=True)
        self._thread.start()

    def committed(self, records) -> None:
        """Recorder callback: records that are now in the database."""
        with self._lock:
            for kind, payload in records:
                if kind == "cycle":
                    self._new_cycles += 1
                    self._cycles.append(cycle_summary(payload))
                elif kind == "event":
                    self._new_events += 1
                    self._events.append(event_summary(payload))
            del self._cycles[:-MAX_ITEMS]
            del self._events[:-MAX_ITEMS]
            self._dirty = True

    def queue_state(self, counts: dict, rate: float, p50: float = 0.0, p99: float = 0.0) -> None:
        with self._lock:
            state = dict(counts, rate=round(rate, 1), p50=round(p50, 2), p99=round(p99, 2))
            if state != self._queue:
                self._queue = state
                self._dirty = True

    def _take(self):
        with self._lock:
            if not self._dirty:
                return None
            self.seq += 1
            msg = {"type": "cluster.update", "epoch": self.epoch, "seq": self.seq, "at": time.time(), "queue": self._queue,
                   "cycles": self._cycles, "new_cycles": self._new_cycles,
                   "events": self._events, "new_events": self._new_events}
            self._cycles, self._events = [], []
            self._new_cycles = self._new_events = 0
            self._dirty = False
            return msg

    def _run(self):
        while not self._stop.wait(self.interval):
            self.send_now()
        self.send_now()

    def send_now(self):
        msg = self._take()
        if msg is None:
            return
        try:
            publish(self.group, msg)
        except Exception as err:  # the channel layer being down must not stop scheduling
            if not self._failing:   # once per outage, not once per tick
                log.warning("broadcast to %s failed: %s; updates are dropped until it works again (clients see "
                            "the gap in seq and refetch)", self.group, err)
            self._failing = True
        else:
            if self._failing:
                log.warning("broadcast to %s works again", self.group)
            self._failing = False

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)
