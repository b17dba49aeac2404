"""A bare Channels app: one group, one ``group_send`` to every socket in it.

Served like the real app (uvicorn, ``websockets-sansio``, the project's settings, so the same
channel layer: in-memory, or channels-redis with ``REDIS_URL`` and ``CHANNELS_PREFIX``).
Phones connect to ``/ws/bench/`` and join the group; a message on ``/ws/bench/trigger/`` (a
sequence number) sends the payload (``BENCH_PAYLOAD_FILE``) with that ``data-seq`` to the
group once. No auth, no database, no rendering: what Channels itself costs for a broadcast.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

GROUP = "bench.fanout"
SEQ = re.compile(r'data-seq="\d+"')
PAYLOAD = Path(os.environ["BENCH_PAYLOAD_FILE"]).read_text(encoding="utf-8")


class PhoneConsumer(AsyncWebsocketConsumer):
    groups = [GROUP]

    async def live_fragment(self, event: dict[str, Any]) -> None:
        await self.send(text_data=event["html"])


class TriggerConsumer(AsyncWebsocketConsumer):
    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        html = SEQ.sub(f'data-seq="{int(text_data or 0)}"', PAYLOAD)
        await self.channel_layer.group_send(GROUP, {"type": "live.fragment", "html": html})


application = ProtocolTypeRouter(
    {
        "websocket": URLRouter(
            [
                path("ws/bench/", PhoneConsumer.as_asgi()),
                path("ws/bench/trigger/", TriggerConsumer.as_asgi()),
            ]
        )
    }
)
