"""/healthz: 200 when the database and the channel layer answer, else 503."""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET

log = logging.getLogger(__name__)

HEALTH_TIMEOUT = 3.0  # seconds each check may take before it counts as unreachable


def _database_answers() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:
        log.warning("health: the database does not answer", exc_info=True)
        return False
    finally:
        connection.close()


async def _layer_answers() -> bool:
    layer = get_channel_layer()
    if layer is None:
        return False
    try:
        channel = await layer.new_channel("healthz.")
        await layer.send(channel, {"type": "health.ping"})
        message = await asyncio.wait_for(layer.receive(channel), HEALTH_TIMEOUT)
        return message.get("type") == "health.ping"
    except Exception:
        log.warning("health: the channel layer does not answer", exc_info=True)
        return False


async def _within(check, timeout: float) -> bool:
    try:
        return await asyncio.wait_for(check, timeout)
    except TimeoutError:
        return False


@require_GET
async def healthz(request: HttpRequest) -> HttpResponse:
    """200 when the database and the channel layer answer, else 503; says nothing more."""
    database = sync_to_async(_database_answers, thread_sensitive=False)()
    database_ok, layer_ok = await asyncio.gather(
        _within(database, HEALTH_TIMEOUT), _within(_layer_answers(), HEALTH_TIMEOUT + 1)
    )
    ok = database_ok and layer_ok
    response = JsonResponse(
        {"ok": ok, "database": database_ok, "channel_layer": layer_ok}, status=200 if ok else 503
    )
    add_never_cache_headers(response)
    return response
