"""Websocket consumers: authorize, send the whole current state, relay pushes.

A consumer never takes an action for a player: actions are HTTP posts handled by services.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string
from django.utils import timezone

from combat.live import user_group

# Close codes in the private 4000-4999 range: the browser sees why it was refused.
CLOSE_UNAUTHENTICATED = 4401


class LiveConsumer(AsyncWebsocketConsumer):
    """The one socket each logged-in page keeps open (``/ws/live/``)."""

    groups: list[str] = []

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user_group = user_group(user.pk)
        await self.channel_layer.group_add(self.user_group, self.channel_name)
        await self.accept()
        await self.send(text_data=await self.current_state())

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "user_group"):
            await self.channel_layer.group_discard(self.user_group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # Websockets only push. htmx's ws-send is not used: actions go over HTTP with CSRF.
        return

    @database_sync_to_async
    def current_state(self) -> str:
        """Everything this user's page shows live, rendered from the database."""
        return render_to_string(
            "live_status.html", {"user": self.scope["user"], "now": timezone.localtime()}
        )

    async def live_fragment(self, event: dict[str, Any]) -> None:
        """``live.fragment``: out-of-band HTML for htmx to swap in by id."""
        await self.send(text_data=event["html"])
