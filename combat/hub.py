"""One subscription per audience per server process: the fan-out of Phoenix PubSub.

A change is rendered once per audience and published once per audience (``group_send`` of
:mod:`combat.live`). Each server process holds one :class:`Hub` (one per event loop, in fact:
a test process runs several loops): the hub owns one channel of the channel layer and adds that
channel, not each socket's, to the groups its local sockets watch. So the layer carries one
message per audience per process, and the hub writes it to its own sockets of that audience.
A socket never has a channel of its own; nothing is rendered per socket on a broadcast.

The hub also keeps the scene presence of its process honest (see :func:`heartbeat`): every
``HEARTBEAT`` seconds it touches its sockets' ``Presence`` rows, and rows nobody touched for
``STALE_AFTER`` seconds (a process that crashed or was killed) are deleted, and the boards of
their scenes told.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Iterable
from datetime import timedelta
from typing import Any, Protocol
from weakref import WeakKeyDictionary

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

log = logging.getLogger(__name__)

# Every socket's id (``Presence.channel_name``) starts with its process's: ``PROCESS_ID``.
PROCESS_ID = f"{socket.gethostname()[:40]}.{os.getpid()}.{secrets.token_hex(4)}"
HEARTBEAT = 30  # seconds between two touches of this process's presence rows
STALE_AFTER = 90  # a presence row untouched this long belongs to a process that is gone
RETRY = 1.0  # seconds before the hub reads the layer again after an error
PRESENCE_DELAY = 0.2  # (dis)connections within this many seconds make one presence push


class Subscriber(Protocol):
    """A socket the hub writes to (a :class:`combat.consumers.SceneConsumer`)."""

    def hub_message(self, message: dict[str, Any]) -> None: ...


def new_socket_id() -> str:
    """An id for one socket of this process, unique across processes."""
    return f"{PROCESS_ID}.{secrets.token_hex(8)}"


def presence_heartbeat_seconds() -> float:
    return float(getattr(settings, "LIVE_PRESENCE_HEARTBEAT", HEARTBEAT))


class Hub:
    """This process's one reader of the channel layer, for every socket of its event loop."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.channel = ""
        self.local: dict[str, set[Subscriber]] = {}
        self.lock = asyncio.Lock()
        self.reader: asyncio.Task | None = None
        self.keeper: asyncio.Task | None = None
        self.delivered = 0  # layer messages read, for tests and the curious
        self.presence_due: set[int] = set()

    async def start(self) -> None:
        if self.channel:
            return
        async with self.lock:
            if self.channel:
                return
            # The layer's default prefix: channels-redis reads every process-local channel
            # of an instance through one list, and a channel of another prefix would wait
            # behind the other sockets' blocking reads (5 s).
            self.channel = await self.layer.new_channel()
            self.reader = asyncio.ensure_future(self._read())
            self.keeper = asyncio.ensure_future(self._keep())

    @property
    def groups(self) -> list[str]:
        return sorted(self.local)

    async def subscribe(self, subscriber: Subscriber, groups: Iterable[str]) -> None:
        """The socket hears the groups; the first local socket of a group subscribes the hub."""
        await self.start()
        async with self.lock:
            for group in groups:
                members = self.local.get(group)
                if members is None:
                    await self.layer.group_add(group, self.channel)
                    members = self.local[group] = set()
                members.add(subscriber)

    async def unsubscribe(self, subscriber: Subscriber, groups: Iterable[str]) -> None:
        """The last local socket of a group gone: the hub leaves the group."""
        async with self.lock:
            for group in groups:
                members = self.local.get(group)
                if members is None:
                    continue
                members.discard(subscriber)
                if not members:
                    del self.local[group]
                    try:
                        await self.layer.group_discard(group, self.channel)
                    except Exception:  # Redis away: the group expires by itself
                        log.warning("could not leave %s", group, exc_info=True)

    def presence_soon(self, scene_id: int) -> None:
        """Tell the scene's board who is connected, once for a burst of (dis)connections."""
        if scene_id in self.presence_due:
            return
        self.presence_due.add(scene_id)
        asyncio.get_running_loop().call_later(
            PRESENCE_DELAY, lambda: asyncio.ensure_future(self._announce_presence(scene_id))
        )

    async def _announce_presence(self, scene_id: int) -> None:
        from combat import live

        self.presence_due.discard(scene_id)
        try:
            await database_sync_to_async(live.presence_changed)(scene_id)
        except Exception:
            log.warning("could not tell scene %s's board who is here", scene_id, exc_info=True)

    def dispatch(self, message: dict[str, Any]) -> int:
        """Hand one layer message to every local socket of its group; how many got it."""
        members = self.local.get(message.get("group", ""), ())
        for subscriber in list(members):
            try:
                subscriber.hub_message(message)
            except Exception:  # one broken socket must not cost the others their push
                log.exception("a socket refused a hub message")
        return len(members)

    async def _read(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("hub could not read the channel layer; retrying", exc_info=True)
                await asyncio.sleep(RETRY)
                continue
            self.delivered += 1
            self.dispatch(message)

    async def _keep(self) -> None:
        """Renew the hub's groups (they expire in the layer) and this process's presence."""
        while True:
            await asyncio.sleep(presence_heartbeat_seconds())
            try:
                for group in list(self.local):
                    await self.layer.group_add(group, self.channel)
                await database_sync_to_async(heartbeat)()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("hub upkeep failed; next time then", exc_info=True)

    async def stop(self) -> None:
        for task in (self.reader, self.keeper):
            if task is not None:
                task.cancel()
        for group in list(self.local):
            with contextlib.suppress(Exception):  # stopping: the groups expire anyway
                await self.layer.group_discard(group, self.channel)
        self.local.clear()
        self.channel = ""


_hubs: WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = WeakKeyDictionary()


def get_hub() -> Hub:
    """The hub of the running event loop (made on first use)."""
    loop = asyncio.get_running_loop()
    layer = get_channel_layer()
    hub = _hubs.get(loop)
    if hub is None or hub.layer is not layer:  # a test swapped the layer: a fresh hub
        hub = _hubs[loop] = Hub(layer)
    return hub


def heartbeat() -> list[int]:
    """Touch this process's presence rows; delete the ones of processes gone. Returns the
    scenes whose presence changed (their boards are told)."""
    from combat import live
    from combat.models import Presence

    now = timezone.now()
    Presence.objects.filter(channel_name__startswith=PROCESS_ID + ".").update(connected_at=now)
    stale = Presence.objects.filter(connected_at__lt=now - timedelta(seconds=STALE_AFTER))
    scenes = sorted(set(stale.values_list("scene_id", flat=True)))
    if scenes:
        stale.delete()
        for scene_id in scenes:
            live.presence_changed(scene_id)
    return scenes


def fresh_since() -> Any:
    """Presence rows touched since then count as connected (older ones are a dead process's)."""
    return timezone.now() - timedelta(seconds=STALE_AFTER)
