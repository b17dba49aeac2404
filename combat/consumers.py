"""Websocket consumers: authorize, send the whole current state, relay pushes.

A consumer never takes an action for a player: actions are HTTP posts handled by services.

Refusals accept the handshake and then close with a code in the private 4000-4999 range, so
the browser's ``close`` event carries the code (a handshake refused before ``accept`` reaches
the browser as 1006, and htmx would retry it forever). htmx reconnects only after 1006, 1011,
1012 and 1013, so none of these codes is retried.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string
from django.utils import timezone

from combat.live import session_group, user_group

CLOSE_LOGGED_OUT = 4001  # the session this socket belonged to logged out
CLOSE_UNAUTHENTICATED = 4401  # nobody is logged in
CLOSE_NOT_FOUND = 4404  # no websocket lives at that path


class LiveConsumer(AsyncWebsocketConsumer):
    """The one socket each logged-in page keeps open (``/ws/live/``)."""

    groups: list[str] = []

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.accept()
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.joined = [user_group(user.pk)]
        session_key = getattr(self.scope.get("session"), "session_key", None)
        if session_key:
            self.joined.append(session_group(session_key))
        for group in self.joined:
            await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()
        await self.send(text_data=await self.current_state())

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

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

    async def live_logout(self, event: dict[str, Any]) -> None:
        """``live.logout``: the session logged out, so this socket closes and stays closed."""
        await self.close(code=CLOSE_LOGGED_OUT)


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any other websocket path: closed cleanly with 4404, never a server error."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_NOT_FOUND)
