"""Who drives a cluster: a lock with expiry (Redis across workers, or in-process in the embedded mode).

The holder renews it well before it expires; a holder that dies stops renewing and the lock frees
itself after ``ttl`` seconds, so another worker can take the cluster over.
"""
from __future__ import annotations

import os
import socket
import threading
import time
import uuid

import redis
from django.conf import settings

_local_locks = {}
_local_guard = threading.Lock()


def holder_id() -> str:
    """Unique per lock holder (a restarted process reusing a pid or thread id gets a new one)."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}"


class RedisLock:
    """SET NX PX with a token; renew and release only while the token is still ours."""

    _RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
    _RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"

    def __init__(self, client, name: str, ttl: float):
        self.client = client
        self.name = name
        self.ttl = ttl
        self.ttl_ms = int(ttl * 1000)
        self.token = holder_id()

    def acquire(self) -> bool:
        return bool(self.client.set(self.name, self.token, nx=True, px=self.ttl_ms))

    def renew(self) -> bool:
        return bool(self.client.eval(self._RENEW, 1, self.name, self.token, self.ttl_ms))

    def release(self) -> None:
        self.client.eval(self._RELEASE, 1, self.name, self.token)

    def holder(self):
        val = self.client.get(self.name)
        return val.decode() if val else None


class LocalLock:
    """The same interface inside one process (embedded mode)."""

    def __init__(self, name: str, ttl: float):
        self.name = name
        self.ttl = ttl
        self.token = holder_id()

    def acquire(self) -> bool:
        with _local_guard:
            cur = _local_locks.get(self.name)
            if cur and cur[0] != self.token and cur[1] > time.monotonic():
                return False
            _local_locks[self.name] = (self.token, time.monotonic() + self.ttl)
            return True

    def renew(self) -> bool:
        with _local_guard:
            cur = _local_locks.get(self.name)
            if not cur or cur[0] != self.token:
                return False
            _local_locks[self.name] = (self.token, time.monotonic() + self.ttl)
            return True

    def release(self) -> None:
        with _local_guard:
            cur = _local_locks.get(self.name)
            if cur and cur[0] == self.token:
                del _local_locks[self.name]

    def holder(self):
        with _local_guard:
            cur = _local_locks.get(self.name)
            return cur[0] if cur and cur[1] > time.monotonic() else None


_redis = None


def redis_client():
    global _redis
    if _redis is None:
        _redis = redis.Redis.from_url(settings.REDIS_URL)
    return _redis


def cluster_lock(cluster_id: int, ttl: float | None = None):
    ttl = ttl or settings.SCHEDSCOPE["LOCK_TTL_SECONDS"]
    name = f"schedscope:cluster:{cluster_id}:lock"
    if settings.REDIS_URL:
        return RedisLock(redis_client(), name, ttl)
    return LocalLock(name, ttl)
