"""Django's Redis cache, one client and one connection pool a process rather than one a request.

Django keeps a cache backend per asynchronous context (``caches`` is an ``asgiref`` ``Local``),
and under ASGI every request is a context of its own: each request made a ``RedisCache``, its
client, a connection pool and a new TCP connection to Redis (its handshake included), which
the garbage collector closed later; and each command built a ``redis.Redis`` (its table of
some 170 reply parsers). A tap's throttle (config/throttle.py) paid about 1-2 ms of CPU for
them. :class:`RedisCache` is Django's, but every instance of a process with the same servers
and options shares one :class:`SharedClient`, which keeps one ``redis.Redis`` a server
(redis-py's clients and pools are thread-safe, and a pool starts afresh in a forked child).
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache as RedisCacheBase
from django.core.cache.backends.redis import RedisCacheClient
from django.utils.functional import cached_property

_clients: dict[str, RedisCacheClient] = {}
_lock = threading.Lock()


class SharedClient(RedisCacheClient):
    """Django's ``RedisCacheClient``, its ``redis.Redis`` of each server made once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._redis: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._redis.get(index)
        if client is None:
            if index not in self._pools:
                self._pools[index] = self._pool_class.from_url(
                    self._servers[index], **self._pool_options
                )
            client = self._redis[index] = self._client(connection_pool=self._pools[index])
        return client


class RedisCache(RedisCacheBase):
    """``django.core.cache.backends.redis.RedisCache``, its client shared (see the module)."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedClient

    @cached_property
    def _cache(self) -> Any:
        key = repr((self._servers, sorted(self._options.items())))
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = _clients[key] = self._class(self._servers, **self._options)
        return client
