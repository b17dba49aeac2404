"""The Redis cache (config.cache): every backend instance of a process (Django makes one per
request under ASGI) shares one client, so one pool of connections, and one ``redis.Redis`` for
every command. Needs Redis (REDIS_URL)."""

from __future__ import annotations

import os
import uuid

import pytest

from config.cache import RedisCache

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs REDIS_URL")


def _backend(location: str, prefix: str) -> RedisCache:
    return RedisCache(location, {"KEY_PREFIX": prefix, "OPTIONS": {"socket_timeout": 0.5}})


def test_a_backend_a_request_opens_one_connection_between_them(monkeypatch) -> None:
    import redis

    connects = []
    original = redis.Connection._connect

    def counted(self):  # a TCP connection made
        connects.append(self)
        return original(self)

    monkeypatch.setattr(redis.Connection, "_connect", counted)
    prefix = f"{os.environ.get('CACHE_PREFIX', 'test')}-{uuid.uuid4()}"
    backends = [_backend(os.environ["REDIS_URL"], prefix) for _ in range(10)]  # ten requests
    for n, backend in enumerate(backends):
        backend.set("n", n)
        assert backend.get("n") == n
    assert len({id(b._cache) for b in backends}) == 1
    assert backends[0]._cache.get_client() is backends[1]._cache.get_client(write=True)
    assert len(connects) == 1
    backends[0].delete("n")


def test_other_servers_or_options_get_a_client_of_their_own() -> None:
    url = os.environ["REDIS_URL"]
    one = _backend(url, "a")
    assert _backend(url, "b")._cache is one._cache  # the key prefix is the backend's
    assert _backend(url + "?db=1", "a")._cache is not one._cache
    other = RedisCache(url, {"OPTIONS": {"socket_timeout": 2}})
    assert other._cache is not one._cache
