"""The fault tests' processes: a private Redis and a cluster of ``manage.py serve`` on the test
database; the test process publishes its own set-up changes on the same layer."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from tests.faults.cluster import Cluster, Redis


def why_not() -> str | None:
    """Why the fault tests cannot run here (None: they can)."""
    if "postgresql" not in settings.DATABASES["default"]["ENGINE"]:
        return (
            "fault tests run two server processes on PostgreSQL and Redis (CI's PostgreSQL + "
            "Redis pass: set DATABASE_URL and REDIS_URL); the embedded default is one process"
        )
    if not os.environ.get("REDIS_URL"):
        return "fault tests need Redis: set REDIS_URL (they start a private redis-server)"
    if shutil.which("redis-server") is None:
        return "fault tests start a private redis-server: none on PATH (apt-get install redis)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = why_not()
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.faults)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
async def cluster(tmp_path: Path, settings) -> AsyncIterator[Cluster]:
    redis = Redis(tmp_path)
    await redis.start()
    cluster = Cluster(tmp_path, redis)
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [
                    {"address": redis.url, "socket_timeout": 15, "socket_connect_timeout": 2}
                ],
                "prefix": cluster.prefix,
            },
        }
    }
    try:
        yield cluster
    finally:
        await cluster.stop()
        await redis.kill()
        await sync_to_async(connections.close_all)()  # the test's own, back to the pool
