"""Reads of scenes: what the storyteller's board and each phone show, in fixed queries."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from characters.selectors import SHEET_PREFETCH, chronicles_run_by, sheet
from combat.models import Participant, Presence, Scene, SceneLogEntry


def open_scenes_run_by(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Scene]:
    """Every open scene of the chronicles the user storytells (the overview)."""
    return Scene.objects.filter(
        chronicle__in=chronicles_run_by(user), closed_at__isnull=True
    ).select_related("chronicle", "storyteller")


def active_participants(scene: Scene) -> list[Participant]:
    return list(
        Participant.objects.filter(scene=scene, removed_at__isnull=True).select_related(
            "character", "character__player"
        )
    )


def connected_user_ids(scene: Scene) -> set[int]:
    return set(Presence.objects.filter(scene=scene).values_list("user_id", flat=True))


def player_participants(scene: Scene, user: AbstractBaseUser) -> list[Participant]:
    """The user's own characters in the scene."""
    return list(
        Participant.objects.filter(
            scene=scene, removed_at__isnull=True, character__player=user
        ).select_related("character")
    )


def log_for_storyteller(scene: Scene, limit: int | None = None) -> list[SceneLogEntry]:
    entries = SceneLogEntry.objects.filter(scene=scene).order_by("-seq", "-pk")
    if limit:
        entries = entries[:limit]
    return list(entries)[::-1]


def log_for_player(
    scene: Scene, user: AbstractBaseUser, limit: int | None = None
) -> list[SceneLogEntry]:
    """What concerned the player's characters, and what every player of the scene saw."""
    entries = (
        SceneLogEntry.objects.filter(scene=scene)
        .filter(Q(public=True) | Q(characters__player=user))
        .distinct()
        .order_by("-seq", "-pk")
    )
    if limit:
        entries = entries[:limit]
    return list(entries)[::-1]


def public_state(scene: Scene) -> dict[str, Any]:
    """What every player of the scene sees: who is here (hidden NPCs never), clock, situation."""
    participants = [p for p in active_participants(scene) if not p.hidden]
    return {"scene": scene, "participants": participants}


def board_state(scene: Scene) -> dict[str, Any]:
    """The storyteller's board: everyone (hidden NPCs too) with presence, clock, the log."""
    connected = connected_user_ids(scene)
    participants = active_participants(scene)
    rows = [
        {
            "participant": p,
            "connected": p.player_id in connected if p.player_id else None,
        }
        for p in participants
    ]
    return {
        "scene": scene,
        "rows": rows,
        "log": log_for_storyteller(scene, limit=30),
    }


def private_state(scene: Scene, user: AbstractBaseUser) -> dict[str, Any]:
    """One player's own part: their characters' current sheets and prompts addressed to them."""
    sheets = []
    for participant in player_participants(scene, user):
        character = (
            type(participant.character)
            .objects.prefetch_related(*SHEET_PREFETCH)
            .get(pk=participant.character_id)
        )
        sheets.append({"participant": participant, **sheet(character)})
    return {
        "scene": scene,
        "player": user,
        "sheets": sheets,
        "log": log_for_player(scene, user, limit=20),
    }
