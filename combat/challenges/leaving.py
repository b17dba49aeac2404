"""A player leaves a finished challenge: its card goes from that player's phone.

A finished card stays on the phone of each player who took part until that player leaves it,
however many other challenges finish in the scene (``selectors.KEPT`` at most). Leaving
changes that player's own part alone: a change no other phone sees (the players' ``seq``
stays, no log line), which the scene's ``seq`` and the player's ``Participant.own_seq``
count, so a lost push of it is caught up like any other (``combat.hub``).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from combat import services
from combat.challenges.refusals import ChallengeError
from combat.models import Challenge, Scene

STILL_OPEN = "This challenge is not over yet: it stays until it is."


def challenge_leave(*, scene: Scene, challenge: Challenge, by: AbstractBaseUser) -> Challenge:
    """Note that ``by`` left the finished ``challenge``; leaving twice changes nothing."""
    with transaction.atomic():
        locked = Scene.objects.select_for_update().get(pk=scene.pk)  # the scene, then the row
        ch = Challenge.objects.select_for_update().get(pk=challenge.pk, scene=scene)
        if ch.is_open or ch.options.get("choose"):
            raise ChallengeError(STILL_OPEN)
        left = list(ch.options.get("left", []))
        if by.pk not in left:
            ch.options = {**ch.options, "left": [*left, by.pk]}
            ch.save(update_fields=["options"])
            services.record_change(
                locked, by=by, regions=(), private_user_ids=[by.pk], players=False
            )
    return ch
