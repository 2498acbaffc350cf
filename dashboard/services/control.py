"""Commands to a cluster's scheduler loop (``loops`` starts the loop where it belongs).

Embedded mode: the loop is a thread of this process and commands go through an in-process queue.
Celery mode: the loop runs in a worker (task ``run_cluster``) and commands go through a Redis list.
Changes of a cluster's objects are not commands: the loop follows the store (``objectstore``). Commands change
its state (start, pause, step, reload); a few are requests (``request``): the loop decides and writes, and
answers through a reply queue (a Redis list, or an in-process queue), e.g. a manual binding, which must not race
the loop's own.
"""
from __future__ import annotations

import json
import queue
import threading
import time
import uuid

from django.conf import settings

from . import locks

_queues = {}
_queues_guard = threading.Lock()
_replies = {}   # request id -> queue.Queue of its answer (embedded mode)
REPLY_GRACE_SECONDS = 5.0
BLOCK_SECONDS = 3   # longest single blocking Redis read (below the client's socket timeout)


class NoAnswer(Exception):
    """No loop answered a request in time (it is not applied later: the loop drops expired requests)."""


def _key(cluster_id: int) -> str:
    return f"schedscope:cluster:{cluster_id}:control"


def _celery() -> bool:
    return settings.SCHEDULER_MODE == "celery"


def _local_queue(cluster_id: int) -> queue.Queue:
    with _queues_guard:
        return _queues.setdefault(cluster_id, queue.Queue())


def send(cluster_id: int, op: str, **args) -> None:
    """Deliver a command to the cluster's loop (it picks it up on its next turn)."""
    cmd = dict(args, op=op)
    if _celery():
        client = locks.redis_client()
        client.rpush(_key(cluster_id), json.dumps(cmd))
        client.expire(_key(cluster_id), 3600)
    else:
        _local_queue(cluster_id).put(cmd)


def request(cluster_id: int, op: str, timeout: float, start=None, **args) -> dict:
    """Send a command the loop answers (``reply``), calling ``start(cluster_id)`` if no loop drives the cluster
    (``loops.request``), and wait for the answer. The loop ignores the request once ``timeout`` seconds have
    passed; NoAnswer if none came."""
    rid = uuid.uuid4().hex
    args.update(reply=rid, expires=time.time() + timeout)
    wait = timeout + REPLY_GRACE_SECONDS
    local = None
    if not _celery():
        local = queue.Queue(maxsize=1)
        with _queues_guard:
            _replies[rid] = local
    try:
        send(cluster_id, op, **args)
        if start is not None and not is_driven(cluster_id):
            start(cluster_id)
        if local is not None:
            return local.get(timeout=wait)
        deadline = time.monotonic() + wait
        while True:  # short waits: the client's socket timeout (redis-py's default 5 s) must outlast each
            left = deadline - time.monotonic()
            got = locks.redis_client().blpop([_reply_key(rid)], timeout=max(1, min(BLOCK_SECONDS, round(left))))
            if got is not None:
                return json.loads(got[1])
            if time.monotonic() >= deadline:
                raise NoAnswer(op)
    except queue.Empty:
        raise NoAnswer(op) from None
    finally:
        if local is not None:
            with _queues_guard:
                _replies.pop(rid, None)


def expired(cmd: dict) -> bool:
    """Whether a request's sender has stopped waiting for it."""
    return "expires" in cmd and time.time() > cmd["expires"]


def reply(cmd: dict, answer: dict) -> None:
    """The loop's answer to a request (see ``request``)."""
    if _celery():
        client = locks.redis_client()
        client.rpush(_reply_key(cmd["reply"]), json.dumps(answer))
        client.expire(_reply_key(cmd["reply"]), 60)
        return
    with _queues_guard:
        waiting = _replies.get(cmd["reply"])
    if waiting is not None:
        waiting.put(answer)


def _reply_key(rid: str) -> str:
    return f"schedscope:reply:{rid}"


def receive(cluster_id: int, timeout: float) -> list:
    """Commands waiting for the loop; waits up to ``timeout`` seconds for the first one."""
    out = []
    if _celery():
        client = locks.redis_client()
        if timeout > 0:
            first = client.blpop([_key(cluster_id)], timeout=max(timeout, 0.01))
            if first is None:
                return out
            out.append(json.loads(first[1]))
        while True:
            item = client.lpop(_key(cluster_id))
            if item is None:
                return out
            out.append(json.loads(item))
    q = _local_queue(cluster_id)
    try:
        out.append(q.get(timeout=timeout) if timeout > 0 else q.get_nowait())
        while True:
            out.append(q.get_nowait())
    except queue.Empty:
        return out


def waiting(cluster_id: int, ops) -> bool:
    """Whether a command with one of ``ops`` waits for the loop (it is left queued)."""
    if _celery():
        return any(json.loads(item).get("op") in ops for item in locks.redis_client().lrange(_key(cluster_id), 0, -1))
    q = _local_queue(cluster_id)
    with q.mutex:
        return any(cmd.get("op") in ops for cmd in q.queue)


def is_driven(cluster_id: int) -> bool:
    """Whether some loop holds the cluster's lock right now."""
    return locks.cluster_lock(cluster_id).holder() is not None
