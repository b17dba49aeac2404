"""Who has a socket of a scene open: a row per socket, written when it opens and closes; the
storyteller's board is told on commit (the hub gathers a burst of connections into one push)."""

from __future__ import annotations

from functools import partial

from django.db import transaction
from django.utils import timezone

from combat import live
from combat.models import Presence


def presence_connect(
    *, scene_id: int, user_id: int, channel_name: str, announce: bool = True
) -> None:
    """A socket of the scene opened: the storyteller's board shows who is connected.

    ``announce=False``: the caller tells the board itself (the socket's hub gathers the
    presence changes of a burst of connections into one push).
    """
    with transaction.atomic():
        Presence.objects.update_or_create(
            channel_name=channel_name,
            defaults={"scene_id": scene_id, "user_id": user_id, "connected_at": timezone.now()},
        )
        if announce:
            transaction.on_commit(partial(live.presence_changed, scene_id))


def presence_disconnect(*, channel_name: str, announce: bool = True) -> None:
    with transaction.atomic():
        gone = Presence.objects.filter(channel_name=channel_name).first()
        if gone is None:
            return
        gone.delete()
        if announce:
            transaction.on_commit(partial(live.presence_changed, gone.scene_id))
