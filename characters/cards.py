"""Login cards: make, revoke and use them (writes), and where a card sends its player.

A card holds a code of ``CODE_LENGTH`` characters from an alphabet without look-alikes (no 0/O,
1/I/L): about 50 bits, too many to guess, few enough to type. Only its SHA-256 is stored (the
code is random, so no salt is needed to keep it from being looked up). Each player has at most
one good card a night: making a new one revokes the old, so a reprinted sheet voids the first.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from characters.models import Character, Chronicle, GameNight, LoginCard
from combat import selectors as scenes
from combat import services as scene_services
from combat.live import LOGOUT_EVENT, session_group
from combat.models import Scene
from combat.services import SceneError

log = logging.getLogger(__name__)

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 10
# A session a card opened lasts the evening, not the two weeks of a password login.
CARD_SESSION_SECONDS = 12 * 60 * 60

WRONG_CODE = (
    "That code is not a login card for tonight. Check it, or ask the storyteller for a new card."
)
NO_OPEN_NIGHT = "Open a game night first: a login card is good for one game night."
NOT_A_PLAYER = "That is no player of this chronicle."
NIGHT_CLOSED = "That game night is closed: its cards are worth nothing now."


class CardError(Exception):
    """A card refused; the message is a sentence for the person holding it."""


@dataclass(frozen=True)
class PrintedCard:
    card: LoginCard
    code: str  # shown this once, never stored
    player: Any
    characters: list[Character]

    @property
    def code_display(self) -> str:
        return format_code(self.code)


def normalize_code(raw: str) -> str:
    """What was typed or scanned, upper-cased, with spaces and dashes dropped."""
    return "".join(ch for ch in (raw or "").upper() if ch.isalnum())[: CODE_LENGTH * 2]


def format_code(code: str) -> str:
    return f"{code[:5]}-{code[5:]}"


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def _new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def players_of(chronicle: Chronicle) -> list[Any]:
    """Active users who play a character of the chronicle, by name. Staff accounts (the
    storytellers, the admin) get no card: a lost card must never open the admin."""
    return list(
        get_user_model()
        .objects.filter(is_active=True, characters__chronicle=chronicle, characters__npc=False)
        .exclude(is_staff=True)
        .exclude(is_superuser=True)
        .distinct()
        .order_by("username")
    )


def open_night(chronicle: Chronicle) -> GameNight | None:
    return GameNight.objects.filter(chronicle=chronicle, closed_at__isnull=True).first()


def valid_cards(night: GameNight) -> dict[int, LoginCard]:
    """Tonight's good card of each player, by user id."""
    return {c.user_id: c for c in night.login_cards.filter(revoked_at__isnull=True)}


# Writes ------------------------------------------------------------------------------------


def _lock_open_night(night: GameNight) -> GameNight:
    night = GameNight.objects.select_for_update().get(pk=night.pk)
    if night.closed_at is not None:
        raise CardError(NIGHT_CLOSED)
    return night


def _revoke(cards: list[LoginCard]) -> None:
    """Revoke (in the caller's transaction) and end their sessions once it commits."""
    now = timezone.now()
    keys = [key for card in cards for key in card.session_keys]
    LoginCard.objects.filter(pk__in=[c.pk for c in cards]).update(revoked_at=now)
    for card in cards:
        card.revoked_at = now
    if keys:
        transaction.on_commit(lambda: end_sessions(keys))


def card_make(*, night: GameNight, user: AbstractBaseUser, by: AbstractBaseUser) -> tuple:
    """A new card for ``user`` for ``night`` (the player's earlier card of the night is revoked).
    Returns the card and its code, which is not kept."""
    with transaction.atomic():
        night = _lock_open_night(night)
        _revoke(list(LoginCard.objects.filter(night=night, user=user, revoked_at__isnull=True)))
        code = _new_code()
        card = LoginCard.objects.create(night=night, user=user, code_hash=_hash(code), made_by=by)
    return card, code


def cards_make_for_chronicle(
    *, chronicle: Chronicle, by: AbstractBaseUser, only: str = ""
) -> list[PrintedCard]:
    """A new card for every player of the chronicle for its open game night (or for the one
    player whose user id is ``only``)."""
    night = open_night(chronicle)
    if night is None:
        raise CardError(NO_OPEN_NIGHT)
    players = players_of(chronicle)
    if only:
        players = [p for p in players if str(p.pk) == only.strip()]
        if not players:
            raise CardError(NOT_A_PLAYER)
    characters: dict[int, list[Character]] = {}
    for character in Character.objects.filter(chronicle=chronicle, npc=False).order_by("name"):
        characters.setdefault(character.player_id, []).append(character)
    printed = []
    with transaction.atomic():
        for player in players:
            card, code = card_make(night=night, user=player, by=by)
            printed.append(PrintedCard(card, code, player, characters.get(player.pk, [])))
    return printed


def card_revoke(*, card: LoginCard) -> None:
    """The card is worth nothing from now on, and the phones it logged in are logged out."""
    with transaction.atomic():
        card = LoginCard.objects.select_for_update().get(pk=card.pk)
        if card.revoked_at is None:
            _revoke([card])


def card_for_code(raw: str) -> LoginCard:
    """The good card with this code, or CardError with one plain sentence (wrong, revoked and
    past nights read the same: a guess learns nothing)."""
    code = normalize_code(raw)
    card = (
        LoginCard.objects.select_related("night", "user")
        .filter(code_hash=_hash(code), revoked_at__isnull=True, night__closed_at__isnull=True)
        .first()
        if len(code) == CODE_LENGTH
        else None
    )
    if card is None or not card.user.is_active or card.user.is_staff or card.user.is_superuser:
        raise CardError(WRONG_CODE)
    return card


def card_used(*, card: LoginCard, session_key: str) -> None:
    """Note the session the card just opened, so revoking the card ends it."""
    with transaction.atomic():
        card = LoginCard.objects.select_for_update().get(pk=card.pk)
        card.session_keys = [*card.session_keys, session_key][-20:]
        card.last_used_at = timezone.now()
        card.save(update_fields=["session_keys", "last_used_at"])


def card_destination(card: LoginCard) -> str:
    """Where a card sends its player: the phone of the open scene their character is in, or
    joined to the night's one open scene when they have one character, else the join page."""
    user, night = card.user, card.night
    joined = list(scenes.open_scenes_played_by(user).filter(chronicle_id=night.chronicle_id))
    if len(joined) == 1:
        return reverse("scene_phone", kwargs={"pk": joined[0].pk})
    if not joined:
        open_scenes = list(Scene.objects.filter(game_night=night, closed_at__isnull=True)[:2])
        own = Character.objects.filter(player=user, chronicle_id=night.chronicle_id, npc=False)
        own = list(own[:2])
        if len(open_scenes) == 1 and len(own) == 1:
            try:
                scene_services.scene_join(
                    code=open_scenes[0].join_code, user=user, character=own[0]
                )
            except SceneError:
                log.info("a card's player could not join %s", open_scenes[0].pk)
            else:
                return reverse("scene_phone", kwargs={"pk": open_scenes[0].pk})
    return reverse("scene_join")


# Ending sessions -----------------------------------------------------------------------------


def end_sessions(session_keys: list[str]) -> None:
    """Delete these sessions and close their sockets (as a logout does)."""
    store = import_module(settings.SESSION_ENGINE).SessionStore
    layer = get_channel_layer()
    for key in session_keys:
        store(session_key=key).delete()
        if layer is None:
            continue
        try:
            group = session_group(key)
            async_to_sync(layer.group_send)(group, {"type": LOGOUT_EVENT, "group": group})
        except Exception:  # the session is gone all the same: its next page asks for a login
            log.exception("could not close the sockets of a revoked card's session")


def end_sessions_of_night(sender: Any, night: GameNight, **kwargs: Any) -> None:
    """On ``night_closed``: the sessions that night's cards opened end with it."""
    keys = [
        key
        for keys in LoginCard.objects.filter(night=night).values_list("session_keys", flat=True)
        for key in keys
    ]
    if keys:
        end_sessions(keys)
