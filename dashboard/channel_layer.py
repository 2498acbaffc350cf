"""channels_redis's layer with a bounded pool that waits: ``max_connections`` per process and event loop, and a
command that finds them all busy waits up to ``timeout`` seconds for one (redis-py's BlockingConnectionPool)
instead of failing with MaxConnectionsError, as 200 websockets closing at once used to."""
from __future__ import annotations

from channels_redis import core
from redis.asyncio import BlockingConnectionPool


class RedisChannelLayer(core.RedisChannelLayer):
    def create_pool(self, index):
        host = dict(self.hosts[index])
        return BlockingConnectionPool.from_url(host.pop("address"), **host)
